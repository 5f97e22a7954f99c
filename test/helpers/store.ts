/** Store reads the tests share. */
import type { LedgerStore } from "../../src/storage/LedgerStore.js";

/** A table item's value at `version` (null: absent, deleted, or an empty ledger). */
export async function tableItem(s: LedgerStore, handle: Uint8Array, key: Uint8Array, version: bigint): Promise<Uint8Array | null> {
  return (await s.readTableItem(handle, key, version))?.value ?? null;
}
