/**
 * Storage rules above the backends: what both the SQLite and the PostgreSQL store decide the same
 * way. The backends hold the SQL and the driver code; they run these rules, never their own copy.
 * See README.md in this folder for where the two schemas differ and why.
 */
import type {
  BlockInfo,
  LedgerInfo,
  ModuleEntry,
  ReplayProtector,
  TransactionSummary,
  UserTxnGas,
} from "../ledger/types.js";
import { moduleAbiJson } from "../move/abi.js";
import type { ModuleWrite, PruneResult, PruneTarget, StoredTxnFingerprint, TxnKind } from "./writer.js";
import type { SummaryQuery } from "./reader.js";

// ---------------------------------------------------------------------------------------------
// Stored codes
// ---------------------------------------------------------------------------------------------

/** Stored kind codes: the index in this list. Append only. */
export const TXN_KINDS: readonly TxnKind[] = [
  "genesis_transaction",
  "block_metadata_transaction",
  "user_transaction",
  "state_checkpoint_transaction",
  "block_epilogue_transaction",
  "validator_transaction",
  "unknown_transaction",
];

export function txnKindCode(kind: TxnKind): number {
  return TXN_KINDS.indexOf(kind);
}

/**
 * The ABI text stored with a module's bytecode: decoded here (`moduleAbiJson`), or the source's
 * own when the bytecode does not decode and the source sent one. Null for a deletion.
 */
export function storedAbiText(m: ModuleWrite): string | null {
  if (!m.bytecode) return null;
  const decoded = moduleAbiJson(m.bytecode);
  return decoded === "null" && m.upstreamAbi !== undefined ? m.upstreamAbi : decoded;
}

/** Stored `replay_kind`: 0 for a nonce, 1 for a sequence number. */
export function replayKindCode(p: ReplayProtector): number {
  return p.type === "nonce" ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// Chain
// ---------------------------------------------------------------------------------------------

/** After "insert the chain id unless one is stored": the stored one must be the one asked for. */
export function checkChainId(stored: number | null, chainId: number): void {
  if (stored !== chainId) throw new Error(`this ledger has chain id ${stored}, not ${chainId}`);
}

// ---------------------------------------------------------------------------------------------
// Typed rows and their mappers
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Read memo (both backends memoize the position reads at the newest version)
// ---------------------------------------------------------------------------------------------

/** Bounds of a store's read memo: all of it, and one entry (key and value), in bytes. */
export const MEMO_BYTES = 8 * 1024 * 1024;
export const MEMO_ENTRY_BYTES = 4 * 1024;
/** Fixed cost counted per memo entry besides its key and value bytes. */
export const MEMO_ENTRY_OVERHEAD = 64;
/** Bytes as a memo key (one char per byte); request parameters arrive as Buffers already. */
export const memoKeyOf = (b: Uint8Array): string =>
  (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)).toString("latin1");
/**
 * The memo keys of the position reads, or null for a read that is not memoized: one at an explicit
 * version, and a table key too large for an entry (read every time: its memo key is not built).
 */
export const memoKeys = {
  tableItem: (handle: Uint8Array, key: Uint8Array, version: bigint | undefined): string | null =>
    version === undefined && key.length <= MEMO_ENTRY_BYTES ? `t|${memoKeyOf(handle)}|${memoKeyOf(key)}` : null,
  modulesVersion: (address: Uint8Array, version: bigint | undefined): string | null => (version === undefined ? `m|${memoKeyOf(address)}` : null),
  summariesVersion: (sender: Uint8Array, end: bigint | undefined): string | null => (end === undefined ? `s|${memoKeyOf(sender)}` : null),
};
/** What a memo entry counts against `MEMO_BYTES`: its key, a fixed overhead, and its value's bytes. */
export const memoEntrySize = (key: string, valueBytes: number): number => key.length + MEMO_ENTRY_OVERHEAD + valueBytes;

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

// ---------------------------------------------------------------------------------------------
// Summaries window
// ---------------------------------------------------------------------------------------------

/**
 * The rows a summaries query asks for, never past the ledger version it resolved: forward from
 * `start`, or backward from `end` (at most the ledger version). Null when `limit <= 0`: nothing.
 */
export type SummaryRange =
  | { direction: "forward"; from: bigint; to: bigint; limit: number }
  | { direction: "backward"; to: bigint; limit: number };

/** What a page read brings of a listed module's code: its bytecode and ABI text, or its JSON record (`WireReads`). */
export type ModuleCodeForm = "bytecode" | "record";

/** A summaries query bounded by the ledger version of the snapshot that reads it. */
export type SummaryWindow = SummaryQuery & { ledgerVersion: bigint };

/** The window of `q` at `ledgerVersion`. */
export function summaryWindow(q: SummaryQuery, ledgerVersion: bigint): SummaryWindow {
  return { ...q, ledgerVersion };
}

export function summaryRange(q: SummaryWindow): SummaryRange | null {
  if (q.limit <= 0) return null;
  if (q.start !== undefined) return { direction: "forward", from: q.start, to: q.ledgerVersion, limit: q.limit };
  const to = q.end !== undefined && q.end < q.ledgerVersion ? q.end : q.ledgerVersion;
  return { direction: "backward", to, limit: q.limit };
}

// ---------------------------------------------------------------------------------------------
// State tables and pruning
// ---------------------------------------------------------------------------------------------

/**
 * The versioned state tables, `(key columns…, version, value column)`: a read at V takes the newest
 * row of a key with version <= V, and a NULL value column is a deletion. (A module's value column
 * is its code hash: it is NULL exactly when the module was deleted, in both schemas.)
 */
export const STATE_TABLES = [
  { table: "modules", keys: ["address", "state_key"], value: "code_hash" },
  { table: "table_items", keys: ["handle_id", "key"], value: "value" },
  { table: "resources", keys: ["address_id", "type_id"], value: "value" },
] as const;

export type StateTable = (typeof STATE_TABLES)[number];

export const NOTHING_PRUNED: Readonly<PruneResult> = Object.freeze({ transactionsDeleted: 0, stateRowsDeleted: 0, blocksDeleted: 0 });

/**
 * What a prune deletes, inside the transaction that raises the oldest version to
 * `oldestVersion` (readers see the raise and the deletions together):
 * - transactions (and their per-sender summary rows) below `oldestVersion`;
 * - blocks below `oldestBlockHeight`;
 * - in each of `stateTables`: rows at or below `oldestVersion` that a newer row of the same key at
 *   or below it supersedes, and deletions at or below it (the oldest row of their key now, so
 *   they hide nothing). Only keys written in [`previousOldestVersion`, `oldestVersion`] can hold
 *   such rows: after every prune each key keeps at most one row at or below the oldest version.
 *
 * The newest value of every key at or below `oldestVersion` is kept, so every read at a version
 * >= `oldestVersion` stays exact.
 */
export interface PrunePlan extends PruneTarget {
  previousOldestVersion: bigint;
  stateTables: readonly StateTable[];
}

/**
 * The plan for raising the oldest version to `target`, given the oldest version stored now (null:
 * an empty ledger). Null when there is nothing to do: an empty ledger, or a target that does not
 * raise the oldest version (a prune never moves it back).
 */
export function planPrune(oldestVersionNow: bigint | null, target: PruneTarget): PrunePlan | null {
  if (oldestVersionNow === null || target.oldestVersion <= oldestVersionNow) return null;
  return { ...target, previousOldestVersion: oldestVersionNow, stateTables: STATE_TABLES };
}
