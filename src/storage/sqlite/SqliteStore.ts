/**
 * The embedded default backend: one SQLite file in WAL mode (better-sqlite3). This class wires
 * the folder's parts into the three contracts (`Storage`); each part is one concern:
 *
 * - `connection.ts`: opening the file (pragmas, migrations of `schema.ts`, wrong-file errors);
 * - `statements.ts`: the SQL, prepared once per connection; `columns.ts`: u64, timestamp and
 *   flag columns;
 * - `reads.ts`: the reads; `readTransactions.ts`: read transactions (per read, or per event-loop turn);
 *   `dataVersionMemo.ts`: the memo's staleness rule (`PRAGMA data_version`);
 * - `commit.ts`: writing blocks; `intern.ts`: address and type ids; `resourcePacker.ts`: packing
 *   a large commit's resource values on a thread of their own;
 * - `prune.ts`: the prune steps; `followBase.ts`: a replica's base bookkeeping;
 * - `fileIdentity.ts`: a file deleted or replaced under the writer; `testing.ts`: test seams.
 *
 * How the two schemas differ, and why, in `../README.md`.
 */
import type { Database as Db } from "better-sqlite3";
import type { LedgerInfo } from "../../ledger/types.js";
import type { BlockWrite, PreparedBlock, PruneResult, PruneTarget } from "../contracts/writer.js";
import type { CommitSignal, Snapshot } from "../contracts/reader.js";
import type { ImmediateReads, WireReads } from "../contracts/pageReads.js";
import type { Storage } from "../contracts/storage.js";
import { Forwarding, type MethodsOf } from "../common/forwarding.js";
import { StorageError, StorageUnavailableError, type StorageErrorKind } from "../contracts/errors.js";
import { keepLastWrites, prepareBlock, prepareKept } from "../common/prepareBlock.js";
import { checkChainId } from "../common/storedCodes.js";
import { BlockCommitter } from "./commit.js";
import { openDatabase } from "./connection.js";
import { FileIdentity } from "./fileIdentity.js";
import { SqliteFollowBase } from "./followBase.js";
import { Interner } from "./intern.js";
import { DataVersionMemo } from "./dataVersionMemo.js";
import { DEFAULT_PRUNE_BATCH, type SqliteStoreOptions } from "./options.js";
import { SqlitePruner } from "./prune.js";
import { ledgerInfoReader, SqliteReads } from "./reads.js";
import { ResourcePacker, type ResourceToPack } from "./resourcePacker.js";
import { prepareStatements, type Statements } from "./statements.js";
import { WalSignal } from "./walSignal.js";
import { ReadTurns } from "./readTransactions.js";

export { NotADatabaseError } from "./connection.js";
export { BATCH_WAL_PAGES, DEFAULT_PRUNE_BATCH, SQLITE_CACHE_SIZE_MIB, SQLITE_MMAP_SIZE_MIB, type PruneBatch, type SqliteStoreOptions } from "./options.js";

/** The connection of each store, for the test helpers in `testing.ts` (never for production code). */
export const connections = new WeakMap<SqliteStore, Db>();

/**
 * The reads of `SqliteReads` and the follow-base calls of `SqliteFollowBase` are forwarded to them
 * whole (`Forwarding`); what is written here is the store's own: the chain id, the position reads
 * in the calling turn made promises, writes, prunes, and the file checks.
 */
export class SqliteStore extends Forwarding<MethodsOf<SqliteReads> & MethodsOf<SqliteFollowBase>>() implements Storage {
  readonly kind = "sqlite" as const;
  /** The position reads in the calling turn: better-sqlite3 reads synchronously in process. */
  readonly immediate: ImmediateReads;
  /** A SQLite file has no standby. */
  readonly standby = null;
  /** Any process's commits, seen as writes to the file's WAL (none for a database in memory). */
  readonly commitSignal: CommitSignal | null;
  /** The API's JSON written by the statements: cheaper than rows and their encoding. */
  readonly wire: WireReads;
  private readonly db: Db;
  private readonly statements: Statements;
  private readonly turns: ReadTurns;
  private readonly memo: DataVersionMemo;
  private readonly reads: SqliteReads;
  private readonly committer: BlockCommitter;
  private readonly ids: Interner;
  private readonly packer = new ResourcePacker();
  private readonly pruner: SqlitePruner;
  private readonly followBase: SqliteFollowBase;
  private readonly file: FileIdentity;

  constructor(readonly path: string, opts: SqliteStoreOptions = {}) {
    super();
    this.db = openDatabase(path, opts);
    connections.set(this, this.db);
    this.file = new FileIdentity(path);
    this.commitSignal = path === ":memory:" ? null : new WalSignal(path);
    this.statements = prepareStatements(this.db);
    const readLedgerInfo = ledgerInfoReader(this.statements);
    this.turns = new ReadTurns(this.db, (opts.readsPerTurn ?? false) && (opts.readonly ?? false), readLedgerInfo);
    this.memo = new DataVersionMemo(opts.memoLagMs ?? 0, this.statements.dataVersion, this.turns);
    this.reads = new SqliteReads(this.statements, this.turns, this.memo);
    this.immediate = this.reads.immediate;
    this.wire = this.reads.wire;
    this.ids = new Interner(this.statements);
    this.committer = new BlockCommitter(this.db, this.statements, this.ids);
    const write = <T>(f: () => T): T => this.write(f);
    this.pruner = new SqlitePruner(this.db, this.statements, { ...DEFAULT_PRUNE_BATCH, ...opts.pruneBatch }, readLedgerInfo, write);
    this.followBase = new SqliteFollowBase(this.db, this.committer, this.ids, write);
    this.forwardTo(this.reads, this.followBase);
  }

  async getChainId(): Promise<number | null> {
    const row = this.statements.chainId.get();
    return row ? Number(row.chain_id) : null;
  }

  async initChain(chainId: number): Promise<void> {
    this.statements.initChain.run(chainId);
    this.memo.clear();
    checkChainId(await this.getChainId(), chainId);
  }

  async getLedgerInfo(fresh = false): Promise<LedgerInfo | null> {
    return this.immediate.getLedgerInfo(fresh);
  }

  async readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Promise<Snapshot<Uint8Array | null> | null> {
    return this.immediate.readTableItem(handle, key, version);
  }

  async readModulesVersion(address: Uint8Array, version: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    return this.immediate.readModulesVersion(address, version);
  }

  async readSummariesVersion(sender: Uint8Array, end: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    return this.immediate.readSummariesVersion(sender, end);
  }

  /**
   * By SQLite's result code: a damaged file is SQLITE_CORRUPT (extended codes included) or
   * SQLITE_NOTADB. Failures this store could not reach the file for are `StorageError`s already.
   */
  errorKind(e: unknown): StorageErrorKind | null {
    if (e instanceof StorageError) return e.kind;
    const code = (e as { code?: unknown } | null)?.code;
    return typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") ? "corrupt" : null;
  }

  followLag(): null {
    return null;
  }

  /**
   * Why the database file is not the one this connection writes, or null when it is (deleted, or
   * replaced by a copy): the writer checks before every commit, the health check on each call.
   */
  fileProblem(): string | null {
    return this.file.problem();
  }

  async commitBlock(write: BlockWrite): Promise<void> {
    const prepared = prepareBlock(write);
    return this.write(() => this.ids.interning(() => this.committer.commitTx(prepared)));
  }

  /**
   * Packs the resource values on the packer's thread for a large batch (an import's: the Importer
   * parses on, and writes the batch before, meanwhile), those not packed already where they were
   * parsed (the follower's); nothing is written.
   */
  async prepareBlocks(writes: BlockWrite[]): Promise<PreparedBlock[]> {
    const kept = writes.map(keepLastWrites);
    const toPack: ResourceToPack[] = [];
    for (const w of kept) for (const r of w.resources) if (typeof r.json === "string") toPack.push(r as ResourceToPack);
    const packed = await this.packer.pack(toPack);
    let at = 0;
    const next = (): Buffer => {
      const v = packed[at++];
      if (v === undefined) throw new Error("internal: fewer packed resource values than resource writes");
      return v;
    };
    return kept.map((w) => prepareKept(w, next));
  }

  /** Several consecutive blocks in one atomic commit: prepared, then written (tests and benches). */
  async commitBlocks(writes: BlockWrite[]): Promise<void> {
    return this.commitPrepared(await this.prepareBlocks(writes));
  }

  /** The prepared blocks in one transaction. */
  async commitPrepared(blocks: PreparedBlock[]): Promise<void> {
    return this.write(() => this.ids.interning(() => this.committer.commitManyTx(blocks)));
  }

  prune(target: PruneTarget): Promise<PruneResult> {
    return this.pruner.prune(target);
  }

  /** See `SqlitePruner.enableIncrementalVacuum`: an operator's maintenance command. */
  enableIncrementalVacuum(): boolean {
    return this.pruner.enableIncrementalVacuum();
  }

  /** Whether later prunes give free pages back to the file system. */
  hasIncrementalVacuum(): boolean {
    return this.pruner.hasIncrementalVacuum();
  }

  /**
   * Every write: refused when the file was deleted or replaced, its failure naming the file, and
   * the read memo cleared whatever happened.
   */
  private write<T>(f: () => T): T {
    const problem = this.fileProblem();
    if (problem) throw new StorageUnavailableError(`${problem}; not writing into it: restart the node to open the file there now`);
    try {
      return f();
    } catch (e) {
      throw this.writeError(e);
    } finally {
      this.memo.clear();
    }
  }

  /**
   * A failed write names the file: "database is locked" or "database or disk is full" alone does
   * not say which database, in the log of a process that may open several. SQLite's code is kept.
   */
  private writeError(e: unknown): unknown {
    if (!(e instanceof Error) || e.message.includes(this.path)) return e;
    const wrapped = new Error(`writing SQLite database ${this.path} failed: ${e.message}`, { cause: e });
    (wrapped as Error & { code?: unknown }).code = (e as Error & { code?: unknown }).code;
    return wrapped;
  }

  async close(): Promise<void> {
    await this.packer.close();
    this.turns.closeTurn();
    if (this.db.open) this.db.close();
  }
}
