/**
 * What the API and the ledger services read: domain rows, never API JSON. SQLite (`sqlite/`) and
 * PostgreSQL (`postgres/`) implement it; `test/store.suite.ts` runs the same suite on both. What the
 * API's page strategy reads besides (the versions naming pages, pages with their code or as JSON
 * text, reads in the calling turn) is a contract of its own, `pageReads.ts`.
 *
 * The rules every reader keeps:
 * - A read "at version V" sees the newest value of a key with version <= V; a deleted key reads null.
 * - A snapshot read (`readTableItem`, `readModules`, `readSummaries`, `readResource`, `readResources`,
 *   `readModule`, `readTransactions`, `readTransactionByHash`, `readAccountTransactions`, `readEvents`, and the version reads of `PageReads`) returns its value with the ledger position of the same snapshot, so a caller
 *   judging the requested version against it (404 above, 410 below the oldest version) cannot be
 *   overtaken by a concurrent prune. A version above the position reads as at the position.
 *   Other reads carry no position: a caller that must know they were not pruned meanwhile re-checks
 *   with `getLedgerInfo(true)`.
 * - Every read returns null (or an empty page) on an empty ledger, never throws for it.
 * - An answer may lag another process's commits by a bounded time (`memoLagMs` of either backend);
 *   commits made through the same store are seen at once, and `getLedgerInfo(true)` never lags.
 * - Failures are `StorageError`s (`errors.ts`) or driver errors the reader's `errorKind` classifies.
 * - `LedgerInfo` values are plain values: compare their fields, never their identity.
 */
import type { BlockInfo, LedgerInfo, ModuleEntry, TransactionSummary, UserTxnGas } from "../../ledger/types.js";
import type { StorageErrorKind } from "./errors.js";

export type StorageKind = "sqlite" | "postgres";

/** A value and the ledger position it was read with, from one consistent snapshot. */
export interface Snapshot<T> {
  info: LedgerInfo;
  value: T;
}

/** A summaries page: forward from `start`, else backward from `end`, else the newest (docs/decisions.md §10). */
export interface SummaryQuery {
  sender: Uint8Array;
  /** Forward from this version (inclusive); `end` is then ignored. */
  start?: bigint | undefined;
  /** Backward from this version (inclusive). */
  end?: bigint | undefined;
  limit: number;
}

/** A summaries page with the version that names it, read in one snapshot. */
export interface SummariesPage {
  /** What `PageReads.readSummariesVersion` gives for the same bound in the same snapshot (the page's name). */
  newest: bigint | null;
  /** The page, ascending by version. */
  rows: TransactionSummary[];
}

/** An account's module page with the version it is keyed by, read in one snapshot. */
export interface ModulesPage {
  /** What `PageReads.readModulesVersion` gives for the same account and version in the same snapshot. */
  changed: bigint | null;
  /** The page's modules in state-key order. */
  rows: ModuleEntry[];
}

/** A resource of an account as stored: its type as the API prints it, and its value's JSON text. */
export interface ResourceEntry {
  type: string;
  json: string;
}

/** An account's resources page with the version it is keyed by, read in one snapshot. */
export interface ResourcesPage {
  /** The version of the account's newest resource write or deletion at or below the version read. */
  changed: bigint | null;
  /** The page's resources in state-key order (`resourcesPage`), from the `start` key on. */
  rows: ResourceEntry[];
}

/**
 * Committed transactions as the REST JSON text each was ingested as (docs/decisions.md §20): the
 * texts of versions `start`, `start + 1`, … in order. Shorter than asked where the ledger ends or
 * the history kept does; empty when `start` itself has no history kept (pruned, or never kept).
 */
export interface TransactionTexts {
  start: bigint;
  texts: Uint8Array[];
}

/** A page of an account's sequence-number transactions, ascending by sequence number. */
export interface AccountTransactionsQuery {
  sender: Uint8Array;
  /** From this sequence number (inclusive); absent: the `limit` newest. */
  start?: bigint | undefined;
  limit: number;
}

/** Transactions by version, each with its text (null: its history is not kept). */
export interface VersionTexts {
  versions: bigint[];
  /** The first sequence number of the page (null: an empty page). */
  firstSequence: bigint | null;
  texts: Array<Uint8Array | null>;
}

/** A page of an event handle's events (docs/decisions.md §22), ascending by sequence number. */
export interface EventsQuery {
  /** The handle's GUID: the account's address and the creation number. */
  account: Uint8Array;
  creationNumber: bigint;
  /** From this sequence number (inclusive); absent: the `limit` newest. */
  start?: bigint | undefined;
  limit: number;
  /** The texts stop once they would pass this many bytes (after the first): `EventsPage.texts`. */
  maxBytes?: number;
}

/** Where an event is: its sequence number, its transaction's version, and its place in the transaction's `events`. */
export interface EventRef {
  sequenceNumber: bigint;
  version: bigint;
  index: number;
}

/**
 * An event handle's page: each event, and the text of its transaction for the first
 * `texts.length` of them (null: its history is not kept); fewer texts than events once they would
 * pass the query's `maxBytes`.
 */
export interface EventsPage {
  events: EventRef[];
  texts: Array<Uint8Array | null>;
}

/** How far behind its upstream a ledger that follows a chain is (versions, seconds of chain time). */
export interface FollowLagReport {
  versions: bigint;
  seconds: number;
}

/**
 * Capability of a reader whose database is a hot standby (PostgreSQL in recovery): every write
 * happens on its primary and reaches it by replay.
 */
export interface StandbyReads {
  /**
   * Seconds the replay is behind: 0 when all the WAL received is replayed, else the age of the
   * newest replayed transaction's commit (`pg_last_xact_replay_timestamp`). The primary's head is
   * unknown here, so the lag in versions is not.
   */
  replayLagSeconds(): Promise<number>;
}

/**
 * Capability of a reader whose database tells of each commit as it happens, whichever process
 * made it (SQLite: the file system's notice of a write to the file's WAL; a PostgreSQL primary: a
 * NOTIFY in each commit, which a hot standby's reader hears from its primary): a watcher of the
 * ledger's position need not poll for it.
 */
export interface CommitSignal {
  /**
   * Calls `onCommit` after each commit until stopped (at times also when none came: the caller
   * looks and finds nothing), with the commit's last version where the signal names it. A standby
   * hears of a commit before it has replayed it: its reads reach `version` a little later.
   * `onLost`: the signal cannot tell (its watch failed, its session could not be opened or was
   * lost), with why, once until it tells again, which it then does with `onCommit(null)`.
   */
  watch(onCommit: (version: bigint | null) => void, onLost?: (reason: string) => void): CommitWatch;
}

export interface CommitWatch {
  /** Whether a commit now would be told; false while the signal is set up, or once it is lost (the watcher then polls). */
  readonly live: boolean;
  stop(): void;
}

export interface LedgerReader {
  readonly kind: StorageKind;
  /** Replay facts where the database is a hot standby, else null. */
  readonly standby: StandbyReads | null;
  /** Commits told as they happen, or null where the database cannot tell them (a hot standby). */
  readonly commitSignal: CommitSignal | null;

  /** Chain id stored at the first import, or null for an empty ledger. */
  getChainId(): Promise<number | null>;
  /** The ledger's position, or null before the first block; `fresh` bypasses every memo. */
  getLedgerInfo(fresh?: boolean): Promise<LedgerInfo | null>;

  /** A table item at `version` (the snapshot's ledger version when undefined), with its position. */
  readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Promise<Snapshot<Uint8Array | null> | null>;
  /**
   * Up to `limit` modules of `address` at `version` from state key `start` (inclusive), with the
   * position and the changed version, in one snapshot (without their code: `getModuleCode`).
   */
  readModules(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number): Promise<Snapshot<ModulesPage> | null>;
  /** The bytecode with this content hash (a listed module whose code the page did not bring). */
  getModuleCode(codeHash: string): Promise<Uint8Array | null>;
  /** A summaries page up to the snapshot's ledger version, with its position and its `newest`. */
  readSummaries(q: SummaryQuery): Promise<Snapshot<SummariesPage> | null>;
  /** A resource's JSON text at `version` (the snapshot's ledger version when undefined), or null, with its position. */
  readResource(address: Uint8Array, type: string, version: bigint | undefined): Promise<Snapshot<string | null> | null>;
  /**
   * Up to `limit` resources of `address` at `version` from state key `start` (inclusive), in
   * state-key order, with the position and the changed version, in one snapshot.
   */
  readResources(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number): Promise<Snapshot<ResourcesPage> | null>;
  /** Module `name` of `address` at `version` with its bytecode and ABI text, or null, with its position. */
  readModule(address: Uint8Array, name: string, version: bigint | undefined): Promise<Snapshot<ModuleEntry | null> | null>;
  /**
   * Up to `limit` transactions from version `start` on, up to the snapshot's ledger version, with
   * its position; fewer once their texts would pass `maxBytes` (at least one, when `start` is kept).
   */
  readTransactions(start: bigint, limit: number, maxBytes?: number): Promise<Snapshot<TransactionTexts> | null>;
  /** A page of the sender's sequence-number transactions (orderless ones are not in it), with its position. */
  readAccountTransactions(q: AccountTransactionsQuery): Promise<Snapshot<VersionTexts> | null>;
  /** A page of an event handle's events with their transactions' texts, with its position. */
  readEvents(q: EventsQuery): Promise<Snapshot<EventsPage> | null>;
  /** The committed transaction with this 32-byte hash (null: none), with its position. */
  readTransactionByHash(hash: Uint8Array): Promise<Snapshot<TransactionTexts | null> | null>;
  /** A resource's JSON text at `version`, or null. */
  getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null>;

  /** The block holding `version`, or null (pruned or not yet committed). */
  getBlockByVersion(version: bigint): Promise<BlockInfo | null>;
  getBlockByHeight(height: bigint): Promise<BlockInfo | null>;
  /** First block whose timestamp is >= `timestampUsec` (pruning by time). */
  getFirstBlockAtOrAfter(timestampUsec: bigint): Promise<BlockInfo | null>;
  /** User transactions with first <= version <= last, ascending (the gas estimator's walk). */
  getUserTxnGas(first: bigint, last: bigint): Promise<UserTxnGas[]>;

  /** The kind of a failure this reader's driver threw (by its error code), or null: not a storage fault. */
  errorKind(e: unknown): StorageErrorKind | null;
  /** Why the store's files are not the ones it has open (SQLite: deleted or replaced), or null. A stat. */
  fileProblem(): string | null;
  /** How far behind its upstream a followed ledger is, or null when it follows nothing. */
  followLag(): FollowLagReport | null;

  close(): Promise<void>;
}
