/** Store reads the tests share. */
import { summariesJson } from "../../src/api/operations/getAccountTransactionSummaries/encode.js";
import type { LedgerStore, SummariesJsonPage, SummariesPage } from "../../src/storage/LedgerStore.js";

/** A table item's value at `version` (null: absent, deleted, or an empty ledger). */
export async function tableItem(s: LedgerStore, handle: Uint8Array, key: Uint8Array, version: bigint): Promise<Uint8Array | null> {
  return (await s.readTableItem(handle, key, version))?.value ?? null;
}

/** What `readSummariesJson` must give for the page `readSummaries` gave: the API's JSON of its rows. */
export function summariesJsonPageOf(page: SummariesPage): SummariesJsonPage {
  return { newest: page.newest, first: page.rows[0]?.version ?? null, json: summariesJson(page.rows) };
}
