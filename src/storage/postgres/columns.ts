/** How PostgreSQL's columns travel: u64 (`numeric`) as decimal strings both ways, booleans as booleans. */
import type { Snapshot } from "../contracts/reader.js";
import { ledgerInfoOf, snapshotValue, type ColumnDecoder, type SnapshotTuple } from "../common/rows.js";

export const u64Param = (v: bigint): string => v.toString();
export const u64FromColumn = (v: string): bigint => BigInt(v);

/** Columns as node-postgres returns them: `numeric` a decimal string, `boolean` a boolean. */
export const PG_COLUMNS: ColumnDecoder<string, boolean> = {
  u64: u64FromColumn,
  timestamp: u64FromColumn,
  flag: (v) => v,
};

/** A snapshot read whose value is a version (null: none at or below the bound). */
export function versionSnapshot(row: SnapshotTuple<string, string>): Snapshot<bigint | null> {
  return { info: ledgerInfoOf(row, PG_COLUMNS), value: snapshotValue(row, u64FromColumn) };
}

/** A version bound of a snapshot read: undefined reads at the snapshot's own ledger version. */
export function optionalVersion(v: bigint | undefined): string | null {
  return v === undefined ? null : u64Param(v);
}
