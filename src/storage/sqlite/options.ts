/** The SQLite store's options and their defaults. */
export interface SqliteStoreOptions {
  readonly?: boolean;
  /**
   * How long, in milliseconds, a memoized answer is served without asking SQLite whether another
   * connection has committed since (`PRAGMA data_version`: the largest single cost of a point
   * read, since it takes and drops a WAL read lock). 0, the default, asks on every read. The node
   * serves with 1: a block committed by another process (an import, a prune, the devnet of a
   * `--workers` node) is then answered from the next millisecond on. Reads that miss the memo, and
   * `getLedgerInfo(true)`, always ask first.
   */
  memoLagMs?: number;
  /** How long a statement waits for another connection's lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * SQLite's page cache for this connection, in MiB (default 32): pages of the WAL and pages
   * written. Another connection's commit empties it, so it serves mostly a node that writes itself.
   */
  cacheSizeMiB?: number;
  /**
   * How much of the database file is read through a memory map, in MiB (default 256; 0: none). SQLite
   * maps the file's first bytes only, and the pages a read touched count in the process's RSS: the
   * bound keeps a node's memory the same whatever the ledger's size (issue 17 item 6).
   * Mapped pages are the operating system's file cache, shared and reclaimable: a read needs no
   * copy, and the page cache emptied by another connection's commit costs nothing to refill.
   */
  mmapSizeMiB?: number;
  /** Bounds of one prune transaction (default `DEFAULT_PRUNE_BATCH`). */
  pruneBatch?: Partial<PruneBatch>;
  /**
   * A read-only connection's reads in one event-loop turn share one read transaction, ended on
   * the next turn (`setImmediate`), instead of one each: a WAL read lock is a few system calls
   * (`fcntl` on the -shm file, `fstat`), paid once for the requests one turn serves. Their
   * snapshot is the turn's first read's, so another process's commit is seen from the next turn on
   * (as the memo lags by `memoLagMs`); `getLedgerInfo(true)` ends the turn's transaction first.
   * Ignored on a connection that writes: its commits must not wait for a turn to end.
   */
  readsPerTurn?: boolean;
  /**
   * How many pages the WAL may hold before a commit copies them into the file (SQLite's
   * `wal_autocheckpoint`; default SQLite's 1,000, about 4 MiB). `import` takes `BATCH_WAL_PAGES`:
   * a page that several of its commits rewrite (an index's above all) is then copied once for
   * them, not once each. Everything else keeps the default, so that no commit of a serving node
   * also copies tens of MiB; `follow` gained nothing from it (bench/RESULTS.md, "Import and follow with the history kept").
   */
  walAutocheckpointPages?: number;
}

/** `walAutocheckpointPages` of an import: 64 MiB of 4 KiB pages. */
export const BATCH_WAL_PAGES = 16_384;

/** Bounds of one prune transaction (`SqliteStoreOptions.pruneBatch`). */
export interface PruneBatch {
  /** Versions whose transactions, summaries and blocks one step removes (rounded up to a block). */
  versions: number;
  /** State rows one step visits, in key order. */
  stateRows: number;
  /** Free pages one step gives back to the file system (files with incremental vacuum). */
  pages: number;
}

export const DEFAULT_PRUNE_BATCH: Readonly<PruneBatch> = Object.freeze({ versions: 10_000, stateRows: 20_000, pages: 2_048 });

/** Defaults of `SqliteStoreOptions.cacheSizeMiB` and `mmapSizeMiB`. */
export const SQLITE_CACHE_SIZE_MIB = 32;
export const SQLITE_MMAP_SIZE_MIB = 256;

