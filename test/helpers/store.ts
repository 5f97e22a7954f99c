/** Store reads the tests share. */
import { summariesJson } from "../../src/api/operations/getAccountTransactionSummaries/encode.js";
import type { ModuleEntry, TransactionSummary } from "../../src/ledger/types.js";
import type { SummariesJsonPage } from "../../src/storage/contracts/pageReads.js";
import type { LedgerReader, SummariesPage, SummaryQuery } from "../../src/storage/contracts/reader.js";

/** A table item's value at `version` (null: absent, deleted, or an empty ledger). */
export async function tableItem(s: LedgerReader, handle: Uint8Array, key: Uint8Array, version: bigint): Promise<Uint8Array | null> {
  return (await s.readTableItem(handle, key, version))?.value ?? null;
}

/** What `readSummariesJson` must give for the page `readSummaries` gave: the API's JSON of its rows. */
export function summariesJsonPageOf(page: SummariesPage): SummariesJsonPage {
  return { newest: page.newest, first: page.rows[0]?.version ?? null, json: summariesJson(page.rows) };
}

/** An account's modules at `version` from `start` (the page `readModules` reads, its rows alone). */
export async function modulesAt(s: LedgerReader, address: Uint8Array, version: bigint, start: Uint8Array | null, limit: number): Promise<ModuleEntry[]> {
  return (await s.readModules(address, version, start, limit))?.value.rows ?? [];
}

/**
 * A summaries page as of ledger version `ledgerVersion` (at or below the stored one): forward from
 * `start`, else backward from `end`, else the newest (`readSummaries`' window rules).
 */
export async function summariesAt(s: LedgerReader, q: SummaryQuery & { ledgerVersion: bigint }): Promise<TransactionSummary[]> {
  if (q.start !== undefined) {
    const rows = (await s.readSummaries({ sender: q.sender, start: q.start, limit: q.limit }))?.value.rows ?? [];
    return rows.filter((r) => r.version <= q.ledgerVersion);
  }
  const end = q.end !== undefined && q.end < q.ledgerVersion ? q.end : q.ledgerVersion;
  return (await s.readSummaries({ sender: q.sender, end, limit: q.limit }))?.value.rows ?? [];
}

/** A 32-byte address whose last byte is `n` (the rest zeros). */
export function byteAddress(n: number): Uint8Array {
  const a = new Uint8Array(32);
  a[31] = n;
  return a;
}
