/**
 * Typed rows and their mappers, above the backends: how both the SQLite and the PostgreSQL store
 * turn the rows their SQL selects into the ledger's values. The backends hold the SQL and the
 * driver code; they map with these, never their own copy. See ../README.md for where the two
 * schemas differ and why.
 */
import type { BlockInfo, LedgerInfo, ModuleEntry, TransactionSummary, UserTxnGas } from "../../ledger/types.js";
import type { StoredTxnFingerprint } from "../contracts/writer.js";
import { TXN_KINDS } from "./storedCodes.js";

/**
 * How a backend's driver hands back the column types the mappers read: `U64` is a u64 column as
 * the driver returns it (SQLite: a signed 64-bit bigint; PostgreSQL: a decimal string), `Flag` a
 * boolean column (SQLite: 0n/1n; PostgreSQL: boolean). Small integer columns (chain id, kind
 * codes) are read with `Number`.
 */
export interface ColumnDecoder<U64, Flag> {
  u64(v: U64): bigint;
  /** A timestamp column (SQLite stores timestamps order-preserving, not as plain u64). */
  timestamp(v: U64): bigint;
  flag(v: Flag): boolean;
}

type SmallInt = number | bigint;

/**
 * The ledger row's columns, in the order snapshot reads select them (the API's ledger position
 * comes from these seven), followed by the read's value in `SnapshotTuple`.
 */
export const LEDGER_COLUMNS = [
  "chain_id",
  "ledger_version",
  "timestamp_usec",
  "epoch",
  "block_height",
  "oldest_version",
  "oldest_block_height",
] as const;

/** `LEDGER_COLUMNS` of the ledger row aliased `alias`, for a select list. */
export function ledgerColumnList(alias: string): string {
  return LEDGER_COLUMNS.map((c) => `${alias}.${c}`).join(", ");
}

/**
 * A ledger read as a row array (cheaper to read than a row object on the hot path): the
 * `LEDGER_COLUMNS`, then for a snapshot read its value (null: none).
 */
export type LedgerTuple<U64> = [
  chainId: SmallInt,
  ledgerVersion: U64,
  timestampUsec: U64,
  epoch: U64,
  blockHeight: U64,
  oldestVersion: U64,
  oldestBlockHeight: U64,
];
export type SnapshotTuple<U64, V> = [...LedgerTuple<U64>, value: V | null];

/** The one mapping of the ledger columns (first in a ledger or snapshot row) to `LedgerInfo`. */
export function ledgerInfoOf<U64>(t: readonly [...LedgerTuple<U64>, ...unknown[]], d: ColumnDecoder<U64, unknown>): LedgerInfo {
  const [chainId, ledgerVersion, timestampUsec, epoch, blockHeight, oldestVersion, oldestBlockHeight] = t;
  return {
    chainId: Number(chainId),
    ledgerVersion: d.u64(ledgerVersion),
    oldestVersion: d.u64(oldestVersion),
    timestampUsec: d.timestamp(timestampUsec),
    epoch: d.u64(epoch),
    blockHeight: d.u64(blockHeight),
    oldestBlockHeight: d.u64(oldestBlockHeight),
  };
}

/** The value of a snapshot read (after the ledger columns); `convert` maps a non-null one. */
export function snapshotValue<U64, V, T>(t: SnapshotTuple<U64, V>, convert: (v: V) => T): T | null {
  const value = t[LEDGER_COLUMNS.length] as V | null;
  return value === null ? null : convert(value);
}

export interface BlockRow<U64, Flag> {
  height: U64;
  epoch: U64;
  timestamp_usec: U64;
  first_version: U64;
  last_version: U64;
  gas_limit_reached: Flag | null;
  output_limit_reached: Flag | null;
}

export function blockOf<U64, Flag>(r: BlockRow<U64, Flag>, d: ColumnDecoder<U64, Flag>): BlockInfo {
  const gas = r.gas_limit_reached;
  const output = r.output_limit_reached;
  return {
    height: d.u64(r.height),
    epoch: d.u64(r.epoch),
    timestampUsec: d.timestamp(r.timestamp_usec),
    firstVersion: d.u64(r.first_version),
    lastVersion: d.u64(r.last_version),
    endInfo: gas === null || output === null ? null : { blockGasLimitReached: d.flag(gas), blockOutputLimitReached: d.flag(output) },
  };
}

/**
 * The columns of a summary read as a row array, in `SummaryTuple` order; `hex` is the backend's
 * expression for a blob column as lowercase hex. The hash is read as text: a blob would be a byte
 * buffer per row on the JavaScript side, and the JSON page sends hex anyway.
 */
export const summaryColumns = (hex: (column: string) => string): string => `version, ${hex("hash")} AS hash, replay_kind, replay_value`;
export type SummaryTuple<U64> = [version: U64, hashHex: string, replayKind: SmallInt, replayValue: U64];

export function summaryOf<U64>(sender: Uint8Array, t: SummaryTuple<U64>, d: ColumnDecoder<U64, unknown>): TransactionSummary {
  const [version, hashHex, replayKind, replayValue] = t;
  const value = d.u64(replayValue);
  return {
    sender,
    version: d.u64(version),
    hashHex,
    replayProtector: Number(replayKind) === 0 ? { type: "nonce", value } : { type: "sequence_number", value },
  };
}

export interface UserTxnGasRow<U64> {
  version: U64;
  gas_unit_price: U64;
  gas_used: U64;
  contract: string | null;
}

export function userTxnGasOf<U64>(r: UserTxnGasRow<U64>, d: ColumnDecoder<U64, unknown>): UserTxnGas {
  return { version: d.u64(r.version), gasUnitPrice: d.u64(r.gas_unit_price), gasUsed: d.u64(r.gas_used), contractAddress: r.contract ?? null };
}

export interface FingerprintRow<U64> {
  version: U64;
  kind: SmallInt;
  hash: Buffer;
}

export function fingerprintOf<U64>(r: FingerprintRow<U64>, d: ColumnDecoder<U64, unknown>): StoredTxnFingerprint {
  return { version: d.u64(r.version), kind: TXN_KINDS[Number(r.kind)]!, hash: r.hash };
}

export interface ModuleRow {
  state_key: Buffer;
  name: string;
  code_hash: string;
}

export function moduleEntryOf(r: ModuleRow): ModuleEntry {
  return { stateKey: r.state_key, name: r.name, codeHash: r.code_hash };
}

/** What a page read brings of a listed module's code: its bytecode and ABI text, or its JSON record (`WireReads`). */
export type ModuleCodeForm = "bytecode" | "record";
