/**
 * How SQLite stores what the reader and writer pass: u64 values as INTEGER (signed 64-bit) through
 * `BigInt.asIntN(64)` / `asUintN`, timestamps order-preserving, flags as 0/1.
 */
import type { Snapshot } from "../contracts/reader.js";
import { ledgerInfoOf, snapshotValue, type ColumnDecoder, type SnapshotTuple } from "../common/rows.js";

/** A u64 as SQLite INTEGER (signed 64-bit) and back. */
export const u64ToSql = (v: bigint): bigint => BigInt.asIntN(64, v);
export const u64FromSql = (x: bigint): bigint => BigInt.asUintN(64, x);
export const I64_MAX = (1n << 63n) - 1n;
/** Versions are stored as plain INTEGER; a query bound past i64 can only mean "beyond everything". */
export const versionParam = (v: bigint): bigint => (v > I64_MAX ? I64_MAX : v);
/**
 * Timestamps are searched by range, so they are stored order-preserving: the top bit flipped maps
 * u64 order onto SQLite's signed order (0 -> i64 min, u64 max -> i64 max).
 */
const TOP_BIT = 1n << 63n;
export const timestampToSql = (v: bigint): bigint => BigInt.asIntN(64, v ^ TOP_BIT);
export const timestampFromSql = (x: bigint): bigint => BigInt.asUintN(64, x) ^ TOP_BIT;

/** Columns as better-sqlite3 returns them with safe integers on: every INTEGER a bigint. */
export const SQLITE_COLUMNS: ColumnDecoder<bigint, bigint> = {
  u64: u64FromSql,
  timestamp: timestampFromSql,
  flag: (v) => v === 1n,
};

export function versionSnapshot(row: SnapshotTuple<bigint, bigint>): Snapshot<bigint | null> {
  return { info: ledgerInfoOf(row, SQLITE_COLUMNS), value: snapshotValue(row, u64FromSql) };
}
