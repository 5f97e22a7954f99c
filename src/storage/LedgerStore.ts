/**
 * The one storage interface. SQLite (`sqlite/`) is the embedded default; PostgreSQL (`postgres/`)
 * serves many stateless API processes over one database. Every backend passes the shared store
 * suite in `test/store.suite.ts`.
 *
 * Rules every backend keeps:
 * - A block commits atomically (`commitBlock`): readers see all of it or none of it.
 * - Reads "at version V" see the newest value of a key with version <= V; a `null` value row is
 *   a deletion (tombstone).
 * - Pruning never removes the newest value of a key at or below the new oldest version, so every
 *   read at V >= oldest version stays exact.
 * - Nothing here knows about HTTP.
 *
 * What the reads guarantee:
 * - Every read returns a Promise. A store whose reads run in process may also offer the reads that
 *   fix a request's ledger position synchronously (`immediate`, same answers): the API's request
 *   wrapper then answers a memoized read without a promise per step.
 * - A snapshot read (`readTableItem`, `readModulesVersion`, `readModules`, `readSummariesVersion`,
 *   `readSummaries`) returns its
 *   value with the ledger position of the same snapshot: the value is what a read at that position
 *   gives, so a caller judging the requested version against that position (404 above it, 410
 *   below its oldest version) cannot be overtaken by a concurrent prune. Other reads carry no
 *   position: a caller that must know they were not pruned meanwhile re-checks with
 *   `getLedgerInfo(true)`.
 * - A memoized answer may lag another process's commits (a block, a prune) by a bounded time:
 *   `memoLagMs` of either backend (0 by default: never; the node serves with 1 ms on SQLite and
 *   10 ms on PostgreSQL, see `memoLagMs` in server.ts), and on SQLite
 *   with `readsPerTurn` any read until the event-loop turn it was made in ends. Commits and prunes made
 *   through the same store object are seen at once, and `getLedgerInfo(true)` never lags.
 * - `LedgerInfo` values are plain values: compare their fields, never their identity. Two reads of
 *   an unchanged ledger may return equal objects or the same one.
 */
import type {
  BlockInfo,
  LedgerInfo,
  ModuleEntry,
  ReplayProtector,
  TransactionSummary,
  UserTxnGas,
} from "../ledger/types.js";

export type StorageKind = "sqlite" | "postgres";

/** A value and the ledger position it was read with, from one consistent snapshot. */
export interface Snapshot<T> {
  info: LedgerInfo;
  value: T;
}

/** Kinds of transaction kept per version (so a re-import can check what it skips). */
export type TxnKind =
  | "genesis_transaction"
  | "block_metadata_transaction"
  | "user_transaction"
  | "state_checkpoint_transaction"
  | "block_epilogue_transaction"
  | "validator_transaction"
  /** A type added to the chain after this version of the reader (`UNKNOWN_TXN_KIND`). */
  | "unknown_transaction";

export interface UserTxnWrite {
  sender: Uint8Array; // 32 bytes
  replayProtector: ReplayProtector;
  gasUnitPrice: bigint;
  gasUsed: bigint;
  success: boolean;
  contractAddress: string | null;
}

export interface TxnWrite {
  version: bigint;
  kind: TxnKind;
  /** 32 bytes; all zeros when the source had no hash (the shared fixture blanks hashes). */
  hash: Uint8Array;
  user: UserTxnWrite | null;
}

export interface ModuleWrite {
  version: bigint;
  address: Uint8Array; // 32 bytes
  name: string;
  stateKey: Uint8Array;
  bytecode: Uint8Array | null; // null: deleted
  /**
   * The source's ABI as JSON text, stored (and served) in place of the decoded one when the
   * bytecode does not decode here (a bytecode version newer than the decoder).
   */
  upstreamAbi?: string;
}

export interface TableItemWrite {
  version: bigint;
  handle: Uint8Array; // 32 bytes
  key: Uint8Array;
  value: Uint8Array | null; // null: deleted
}

export interface ResourceWrite {
  version: bigint;
  address: Uint8Array; // 32 bytes
  /** Struct tag as the source printed it, e.g. `0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>`. */
  type: string;
  json: string | null; // null: deleted
}

/** Everything one block writes. Versions are contiguous and follow the stored ledger. */
export interface BlockWrite {
  block: BlockInfo;
  transactions: TxnWrite[];
  modules: ModuleWrite[];
  tableItems: TableItemWrite[];
  resources: ResourceWrite[];
}

/**
 * State a follower fetched from its upstream because no synced block wrote it (issue 16): rows at
 * the version just before the first synced block, so every read at or above the oldest version
 * sees them until a synced block overwrites them. `what` names what was fetched (an account's
 * module list, a table item, a resource) and is recorded with the rows, once.
 */
export interface BaseStateWrite {
  what: string;
  /** The upstream version the rows were read at (recorded; the rows carry their own version). */
  fetchedAt: bigint;
  modules: ModuleWrite[];
  tableItems: TableItemWrite[];
  resources: ResourceWrite[];
}

/** One state key of the versioned tables a follower may fetch. */
export type StateKeyRef =
  | { kind: "table_item"; handle: Uint8Array; key: Uint8Array }
  | { kind: "resource"; address: Uint8Array; type: string };

export interface StoredTxnFingerprint {
  version: bigint;
  kind: TxnKind;
  hash: Uint8Array;
}

export interface SummaryQuery {
  sender: Uint8Array;
  /** Forward from this version (inclusive); `end` is then ignored. */
  start?: bigint | undefined;
  /** Backward from this version (inclusive). */
  end?: bigint | undefined;
  /** Upper bound for any result (the ledger version the request resolved). */
  ledgerVersion: bigint;
  limit: number;
}

/** A summaries page read in one snapshot with the version that names it (`readSummaries`). */
export interface SummariesPage {
  /** What `readSummariesVersion` gives for the same query in the same snapshot (the page cache key). */
  newest: bigint | null;
  /** The page, ascending by version: exact for the snapshot's ledger position. */
  rows: TransactionSummary[];
}

/** A summaries page as the JSON text the API sends for it (`readSummariesJson`). */
export interface SummariesJsonPage {
  /** As `SummariesPage.newest`. */
  newest: bigint | null;
  /** Version of the page's first summary; null for an empty page. */
  first: bigint | null;
  /**
   * The page as a JSON array of `TransactionSummary` objects (sender, version, transaction_hash,
   * replay_protector), ascending by version: byte for byte what the API writes for the rows
   * `readSummaries` gives for the same query and snapshot.
   */
  json: string;
}

/**
 * What `readModules` reads of a listed module's code: its `bytecode` (and stored `abi` text), or
 * its JSON `record` as the modules operation sends it (`ModuleEntry.record`).
 */
export type ModuleCodeForm = "bytecode" | "record";

/** An account's module page read in one snapshot with the version that names it (`readModules`). */
export interface ModulesPage {
  /** What `readModulesVersion` gives for the same account and version in the same snapshot (the page cache key). */
  changed: bigint | null;
  /** The page, as `getModules` gives it at that version. */
  rows: ModuleEntry[];
}

/**
 * The summaries page a caller reads next unless a cache answers it (`readSummariesVersion`'s
 * `page`): `readSummariesJson` of `query` when `json` (a store that offers it), else `readSummaries`.
 */
export interface SummariesPageAsk {
  query: Omit<SummaryQuery, "ledgerVersion">;
  json: boolean;
}

/** `readSummariesVersion`'s answer: with `page` when the store read the page asked for in the same snapshot. */
export type SummariesVersionSnapshot = Snapshot<bigint | null> & {
  /** The page `SummariesPageAsk` names: JSON when it asked for JSON. */
  page?: SummariesPage | SummariesJsonPage;
};

/**
 * The module page a caller reads next unless a cache answers it (`readModulesVersion`'s `page`):
 * `readModules` at the same account and version, `limit` rows from `start`, every row's code in `form`.
 */
export interface ModulesPageAsk {
  start: Uint8Array | null;
  limit: number;
  form: ModuleCodeForm;
}

/** `readModulesVersion`'s answer: with `rows` when the store read the page asked for in the same snapshot. */
export type ModulesVersionSnapshot = Snapshot<bigint | null> & {
  /** The page `ModulesPageAsk` names, as `readModules` gives it with `code` saying yes to every row. */
  rows?: ModuleEntry[];
};

export interface PruneTarget {
  /** First version kept: the first version of block `oldestBlockHeight`. */
  oldestVersion: bigint;
  oldestBlockHeight: bigint;
}

export interface PruneResult {
  transactionsDeleted: number;
  stateRowsDeleted: number;
  blocksDeleted: number;
}

/**
 * The reads that fix a request's ledger position, answered in the calling turn. Each returns what
 * the `LedgerStore` method of the same name resolves to and keeps the same guarantees.
 */
export interface ImmediateReads {
  getLedgerInfo(fresh?: boolean): LedgerInfo | null;
  readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Snapshot<Uint8Array | null> | null;
  readModulesVersion(address: Uint8Array, version: bigint | undefined, page?: ModulesPageAsk): ModulesVersionSnapshot | null;
  readSummariesVersion(sender: Uint8Array, end: bigint | undefined, page?: SummariesPageAsk): SummariesVersionSnapshot | null;
}

export interface LedgerStore {
  readonly kind: StorageKind;
  /** Optional: the same position reads, synchronous (see `ImmediateReads`). */
  readonly immediate?: ImmediateReads;

  /** Chain id stored at the first import, or null for an empty ledger. */
  getChainId(): Promise<number | null>;
  /** Sets the chain id once; throws if a different one is stored. */
  initChain(chainId: number): Promise<void>;

  /**
   * The ledger's position, or null when no block was committed yet. May come from a memo that lags
   * another process's commits (see above); `fresh` asks the database itself, for a check that must
   * see every commit made before it, such as "was this version pruned while I read".
   */
  getLedgerInfo(fresh?: boolean): Promise<LedgerInfo | null>;

  /** Modules of `address` at `version` from state key `start` (inclusive), at most `limit`. */
  getModules(
    address: Uint8Array,
    version: bigint,
    start: Uint8Array | null,
    limit: number,
  ): Promise<ModuleEntry[]>;
  /** The bytecode with this content hash (module code is stored once per hash). */
  getModuleCode(codeHash: string): Promise<Uint8Array | null>;
  /**
   * A table item together with the ledger position, in one statement and so one snapshot: the
   * value is read at `version`, or at the ledger version of that same snapshot when `version` is
   * undefined. The caller decides 404/410 from `info`, which a concurrent prune cannot have
   * overtaken. Null when no block was committed yet.
   */
  readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Promise<Snapshot<Uint8Array | null> | null>;
  /**
   * The version of the newest module write or deletion of `address` at or below `version` (the
   * snapshot's ledger version when undefined), with the ledger position of the same snapshot.
   * Every module page of the account at `version` is the page at that version: the API keys its
   * page cache by it. Null when no block was committed yet.
   *
   * `page`, optional: the page the caller reads next unless its cache answers it. A store whose
   * reads are round trips (PostgreSQL) reads it in the same statement when it would ask the
   * database anyway (the version is not memoized), and returns it as `rows`: one round trip for a
   * page no cache holds, where the position and then the page took two. A store may ignore it.
   */
  readModulesVersion(address: Uint8Array, version: bigint | undefined, page?: ModulesPageAsk): Promise<ModulesVersionSnapshot | null>;
  /**
   * `getModules` at `version` (the snapshot's ledger version when undefined) with the ledger
   * position and the account's `changed` version (as `readModulesVersion`), all from one snapshot
   * (SQLite: one read transaction; PostgreSQL: one statement): no re-check is needed afterwards.
   * Null when no block was committed yet.
   *
   * `code`, optional: asked once per listed row; a store may then read the `bytecode` of the rows
   * it says yes to with the list (SQLite: in the same read transaction, no read lock per module;
   * PostgreSQL: in the page's own statement, not one round trip per module), and with it the
   * `abi` text stored when the code was written. Rows without it are read with `getModuleCode`.
   * With `form` "record" a store may give the module's JSON `record` instead (SQLite does, where
   * the ABI text is stored); the caller takes whichever it gets.
   */
  readModules(
    address: Uint8Array,
    version: bigint | undefined,
    start: Uint8Array | null,
    limit: number,
    code?: (codeHash: string) => boolean,
    form?: ModuleCodeForm,
  ): Promise<Snapshot<ModulesPage> | null>;
  /** A resource's JSON text at `version`, or null. */
  getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null>;
  /** Summaries ascending by version (window rules: DECISIONS §9 and `summaryRange` in rules.ts). */
  getTransactionSummaries(q: SummaryQuery): Promise<TransactionSummary[]>;
  /**
   * The version of the newest transaction sent by `sender` at or below `end` and the snapshot's
   * ledger version, with the ledger position of the same snapshot. Summary pages of the account
   * change only when it does: the API keys its page cache by it. Null when no block was committed yet.
   *
   * `page`, optional: the page the caller reads next unless its cache answers it; read with the
   * position by a store whose reads are round trips, as `readModulesVersion`'s `page`.
   */
  readSummariesVersion(sender: Uint8Array, end: bigint | undefined, page?: SummariesPageAsk): Promise<SummariesVersionSnapshot | null>;

  /**
   * A summaries page (`start`, `end`, `limit` as in `getTransactionSummaries`, up to the snapshot's
   * ledger version) with the ledger position it is exact for and its `newest` version, all from
   * one snapshot (SQLite: one read transaction; PostgreSQL: one statement). No re-check is needed
   * afterwards: a prune that commits later does not change what this position answers. Null when
   * no block was committed yet.
   */
  readSummaries(q: Omit<SummaryQuery, "ledgerVersion">): Promise<Snapshot<SummariesPage> | null>;
  /**
   * Optional: `readSummaries` with the page as its JSON text, for a store that writes the text
   * for less than the rows cost. Both backends build it in the page's statement (SQLite at 10M
   * versions: a page of 100 took 75-80 µs of CPU against 115-150 for the rows and their JSON in
   * JavaScript). Same snapshot rules; the API reads typed rows from a store without it.
   */
  readSummariesJson?(q: Omit<SummaryQuery, "ledgerVersion">): Promise<Snapshot<SummariesJsonPage> | null>;

  /** The block holding `version`, or null (pruned or not yet committed). */
  getBlockByVersion(version: bigint): Promise<BlockInfo | null>;
  getBlockByHeight(height: bigint): Promise<BlockInfo | null>;
  /** First block whose timestamp is >= `timestampUsec` (for time-window pruning). */
  getFirstBlockAtOrAfter(timestampUsec: bigint): Promise<BlockInfo | null>;
  /** User transactions with first <= version <= last, ascending. */
  getUserTxnGas(first: bigint, last: bigint): Promise<UserTxnGas[]>;
  /** Kinds and hashes of stored versions in [from, to], ascending. */
  getFingerprints(from: bigint, to: bigint): Promise<StoredTxnFingerprint[]>;

  /** Commits one block atomically. */
  commitBlock(write: BlockWrite): Promise<void>;
  /**
   * Optional: commits several consecutive whole blocks in one atomic commit (bulk import; fewer
   * syncs). Readers see all of them or none, so a half block is still never visible.
   */
  commitBlocks?(writes: BlockWrite[]): Promise<void>;
  /** The upstream version `what` was fetched at (`writeBaseState`), or null when it never was. */
  getBaseRecord(what: string): Promise<bigint | null>;
  /** Writes the rows and records `what` in one transaction; when `what` is recorded already, nothing. */
  writeBaseState(write: BaseStateWrite): Promise<void>;
  /** The version of the newest row (write or deletion) of `key` at or below `upTo`, or null. */
  newestStateVersion(key: StateKeyRef, upTo: bigint): Promise<bigint | null>;

  /**
   * Raises the oldest kept version; removes what no read at or above it can see. A store may do
   * it in several commits (SQLite does, in bounded steps): the oldest version then moves up in
   * steps, each step commits with the transactions and blocks below it gone, and the rows left for
   * later steps are ones no read at or above the oldest version sees. So at every moment a read at
   * a version >= the oldest version is exact.
   */
  prune(target: PruneTarget): Promise<PruneResult>;

  /**
   * Optional: why the store's files are not the ones it has open (SQLite: the database file was
   * deleted or replaced), or null. Cheap (a stat): the health check asks on every call.
   */
  fileProblem?(): string | null;

  /**
   * Optional: how far behind its upstream a ledger that follows a chain is (versions, seconds of
   * chain time), for /v1/info; null or absent when it follows nothing.
   */
  followLag?(): { versions: bigint; seconds: number } | null;

  close(): Promise<void>;
}

/** The store could not be reached or failed (maps to 503/500 at the API edge). */
export class StorageUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StorageUnavailableError";
  }
}

/**
 * The state a read asked for at `version` cannot be answered exactly, though the version is in the
 * ledger's window: the history it needs is gone (a follower's upstream pruned it). Maps to 410.
 */
export class StatePrunedError extends Error {
  constructor(
    readonly version: bigint,
    message: string,
  ) {
    super(message);
    this.name = "StatePrunedError";
  }
}
