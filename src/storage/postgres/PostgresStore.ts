/**
 * PostgreSQL backend: many stateless API processes over one database (node-postgres `Pool`).
 * This class wires the folder's parts into the three contracts (`Storage`); each part is one
 * concern:
 *
 * - `connection.ts`: the pool, its transactions, the named statements; `preparedRead.ts`: one
 *   execution of a named statement (described once a connection); `pipelined.ts`: the reads'
 *   connections; `settings.ts`: the URL's and the options' settings; `migrations.ts`: the schema
 *   (`schema.ts`) brought up to date;
 * - `sql.ts`: the SQL; `columns.ts`: u64 columns as decimal strings;
 * - `reads.ts`: the reads, each ONE statement (one snapshot); `positionMemo.ts`: the memo's
 *   staleness rule (the position a recent read saw, trusted for `memoLagMs`);
 * - `commit.ts`: a block as the parameters of ONE statement (data-modifying CTEs): visible all at
 *   once or not at all, in one round trip;
 * - `prune.ts`: the prune steps, pruners taking turns under an advisory lock;
 * - on a hot standby (`pg_is_in_recovery()`) nothing is migrated or written: the schema is checked
 *   (`migrations.ts`), a writer is refused, and a read the standby cancels for a recovery conflict
 *   is retried (`connection.ts`);
 * - `followBase.ts`: a replica's base bookkeeping; `errors.ts`: driver errors as storage errors
 *   (connection loss, timeouts, shutdown: `StorageUnavailableError`; the pool reconnects on the
 *   next call); `testing.ts`: test seams.
 *
 * Model and rules as the SQLite store's: versioned rows `(key…, version, value)`, u64 values
 * `numeric(20,0)` (domain `u64`). How the two schemas differ, and why, in `../README.md`.
 */
import pg from "pg";
import type { BlockWrite, PreparedBlock, PruneResult, PruneTarget } from "../contracts/writer.js";
import type { Storage } from "../contracts/storage.js";
import { Forwarding, type MethodsOf } from "../common/forwarding.js";
import type { StandbyReads } from "../contracts/reader.js";
import type { WireReads } from "../contracts/pageReads.js";
import { StandbyWriteError, StorageError, type StorageErrorKind } from "../contracts/errors.js";
import { prepareBlock } from "../common/prepareBlock.js";
import { checkChainId } from "../common/storedCodes.js";
import { commitValues } from "./commit.js";
import { NotifySignal } from "./commitSignal.js";
import { clientConfig, inTransaction, NamedStatements, openPool, poolSender } from "./connection.js";
import { commitError, storageError } from "./errors.js";
import { PostgresFollowBase } from "./followBase.js";
import { checkPartitionVersions, checkStandbySchema, inRecovery, migrate } from "./migrations.js";
import { PipelinedConnections } from "./pipelined.js";
import { PositionMemo } from "./positionMemo.js";
import { primaryProblem } from "./primaryCheck.js";
import { TransactionPartitions } from "./partitions.js";
import { PostgresPruner } from "./prune.js";
import { PostgresReads } from "./reads.js";
import { parsePostgresUrl, redactUrl, type PostgresSettings, type PostgresStoreOptions } from "./settings.js";
import { SQL } from "./sql.js";

export type { PostgresStoreOptions } from "./settings.js";
export { isUnavailableError } from "./errors.js";
export { MIGRATION_STATEMENT_TIMEOUT_MS } from "./migrations.js";
export { PRUNE_STATEMENT_TIMEOUT_MS } from "./prune.js";
export { SQL } from "./sql.js";

/** `PostgresStore.connect`'s options: the backend's settings, and the serving node's read memo. */
export interface PostgresConnectOptions extends PostgresStoreOptions {
  /**
   * How long the position reads may answer from the memo without asking (see `PositionMemo`):
   * 0 (the default) never; the node serves with 10 ms (`memoLagMs` in server.ts).
   */
  memoLagMs?: number;
  /**
   * What will write through this store (a command or flag, e.g. "import", "serve --devnet"): on a
   * hot standby `connect` refuses it, naming it and the primary. Absent: the store only reads
   * (on a primary it still migrates; on a standby it writes nothing).
   */
  writer?: string;
  /**
   * On a hot standby: its primary's URL, whose commit notices tell this store's watchers of each
   * commit the standby is about to replay (`commitSignal`), once checked to be its primary
   * (`primaryCheck.ts`: a wrong one is refused). Not needed on a primary, whose own are
   * heard (a standby promoted since keeps working).
   */
  primary?: string;
}

/** The pool of each store, for the test helpers in `testing.ts` (never for production code). */
export const pools = new WeakMap<PostgresStore, pg.Pool>();
/** The named statements of each store, for the test helpers in `testing.ts` (never for production code). */
export const namedStatements = new WeakMap<PostgresStore, NamedStatements>();

/**
 * The reads of `PostgresReads` and the follow-base calls of `PostgresFollowBase` are forwarded to
 * them whole (`Forwarding`); what is written here is the store's own: the chain id, writes,
 * prunes, and the driver's errors.
 */
export class PostgresStore extends Forwarding<MethodsOf<PostgresReads> & MethodsOf<PostgresFollowBase>>() implements Storage {
  readonly kind = "postgres" as const;
  /** Every read is a round trip: no reads in the calling turn. */
  readonly immediate = null;
  /** The API's JSON written by the page statements (`SQL.summariesJson…`, a module's record). */
  readonly wire: WireReads;
  /** Set when the database was a hot standby at `connect`. */
  readonly standby: StandbyReads | null;
  /** Commits told by a NOTIFY in each (`commitSignal.ts`); on a hot standby, which cannot listen, its primary's, else none. */
  readonly commitSignal: NotifySignal | null;
  private closed = false;
  private readonly memo: PositionMemo;
  /** The partitions (of `transactions` and the history) this process's commits know exist. */
  private readonly partitions = new TransactionPartitions();
  private readonly sql: NamedStatements;
  /** The reads' connections (`read_connections`), or null: the reads go through the pool. */
  private readonly pipelined: PipelinedConnections | null;
  private readonly reads: PostgresReads;
  private readonly pruner: PostgresPruner;
  private readonly followBase: PostgresFollowBase;

  private constructor(
    private readonly pool: pg.Pool,
    connectionString: string,
    readonly settings: PostgresSettings,
    /** The URL without its password. */
    readonly url: string,
    memoLagMs: number,
    standby: boolean,
    primary: { config: pg.ClientConfig; shown: string } | null,
  ) {
    super();
    pools.set(this, pool);
    this.memo = new PositionMemo(memoLagMs);
    // A hot standby ends a connection whose transaction a replayed lock conflicts with: on a
    // pipelined one that fails every statement in flight, on a pooled one only the retried one.
    this.pipelined =
      settings.readConnections > 0 && !standby ? new PipelinedConnections(clientConfig(connectionString, settings), settings.readConnections) : null;
    this.sql = new NamedStatements(this.pipelined ?? poolSender(pool));
    namedStatements.set(this, this.sql);
    this.reads = new PostgresReads(this.sql, this.memo);
    this.wire = this.reads.wire;
    this.pruner = new PostgresPruner(pool, settings);
    this.followBase = new PostgresFollowBase(pool);
    const notices = standby ? primary : { config: clientConfig(connectionString, settings), shown: url };
    const verify = standby ? (session: pg.ClientBase) => primaryProblem(session, pool).then((p) => p && `not this standby's primary (${p})`) : null;
    this.commitSignal = notices ? new NotifySignal(notices.config, notices.shown, verify) : null;
    this.standby = standby ? { replayLagSeconds: () => this.sql.rows<{ s: number }>("replayLag", []).then((r) => Number(r[0]!.s)) } : null;
    this.forwardTo(this.reads, this.followBase);
  }

  /**
   * Connects and brings the schema up to date (migrations under an advisory lock, so processes
   * starting together do not race). Settings: URL query parameters or `opts` (see `settings.ts`).
   * A hot standby is never migrated: its schema must be this build's (`checkStandbySchema`), and
   * a `writer` is refused there before anything is sent that writes.
   */
  static async connect(url: string, opts: PostgresConnectOptions = {}): Promise<PostgresStore> {
    const { memoLagMs = 0, writer, primary, ...backend } = opts;
    const { connectionString, settings } = parsePostgresUrl(url, backend);
    // Parsed before anything connects, so a bad URL is refused at once; its session opens when a watcher listens.
    const notices = primary === undefined ? null : primaryConfig(primary);
    const pool = openPool(connectionString, settings);
    const shown = redactUrl(url);
    try {
      const standby = await inRecovery(pool);
      if (standby && writer !== undefined) {
        throw new StandbyWriteError(
          `${shown} is a hot standby (in recovery, read-only): ${writer} writes, so run it against the primary; ` +
            "a node on a standby only serves (serve without --devnet or --follow, with --no-prune)",
        );
      }
      if (standby) {
        await checkStandbySchema(pool, shown);
        if (settings.partitionVersions !== null) await checkPartitionVersions(pool, settings.partitionVersions);
        const problem = notices === null ? null : await reachablePrimaryProblem(notices.config, pool);
        if (problem !== null) throw new StorageError("standby", `${notices!.shown} is not the primary of the hot standby ${shown}: ${problem}`);
      } else await migrate(pool, settings.partitionVersions);
      return new PostgresStore(pool, connectionString, settings, shown, Math.max(0, memoLagMs), standby, notices);
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw storageError(e, `opening ${shown}`);
    }
  }

  async getChainId(): Promise<number | null> {
    const rows = await this.sql.rows<{ chain_id: number }>("chainId", []);
    return rows[0] ? Number(rows[0].chain_id) : null;
  }

  async initChain(chainId: number): Promise<void> {
    try {
      await this.sql.rows("initChain", [chainId]);
    } finally {
      this.memo.clear();
    }
    checkChainId(await this.getChainId(), chainId);
  }

  /**
   * By PostgreSQL's SQLSTATE: XX001 and XX002 are a damaged table or index. An unreachable or
   * refusing server is a `StorageUnavailableError` already (`storageError`).
   */
  errorKind(e: unknown): StorageErrorKind | null {
    if (e instanceof StorageError) return e.kind;
    return e instanceof pg.DatabaseError && (e.code === "XX001" || e.code === "XX002") ? "corrupt" : null;
  }

  /** A database server's files are its own: nothing for this process to check. */
  fileProblem(): null {
    return null;
  }

  followLag(): null {
    return null;
  }

  async commitBlock(w: BlockWrite): Promise<void> {
    try {
      if (this.partitions.covers(w.block.lastVersion)) {
        await this.pool.query({ name: "ln_commit", text: SQL.commit, values: commitValues(prepareBlock(w)) });
      } else {
        // The block's versions reach a partition this process has not seen: created in the block's transaction.
        const values = commitValues(prepareBlock(w));
        const coveredTo = await inTransaction(this.pool, "commitBlock", async (c) => {
          const to = await this.partitions.create(c, w.block.firstVersion, w.block.lastVersion);
          await c.query({ name: "ln_commit", text: SQL.commit, values });
          return to;
        });
        this.partitions.committed(coveredTo);
      }
    } catch (e) {
      throw commitError(e, [w]);
    } finally {
      this.memo.clear();
    }
  }

  /**
   * Prepares block by block, giving the event loop a turn between blocks: a commit in flight
   * (the Importer's batch before) sends its next statement meanwhile instead of waiting for all.
   */
  async prepareBlocks(writes: BlockWrite[]): Promise<PreparedBlock[]> {
    const prepared: PreparedBlock[] = [];
    for (const w of writes) {
      prepared.push(prepareBlock(w));
      await new Promise<void>((r) => setImmediate(r));
    }
    return prepared;
  }

  /** Several consecutive blocks in one atomic commit: prepared, then written (tests and benches). */
  async commitBlocks(writes: BlockWrite[]): Promise<void> {
    return this.commitPrepared(await this.prepareBlocks(writes));
  }

  /** The prepared blocks in one transaction, one `commit` statement a block. */
  async commitPrepared(blocks: PreparedBlock[]): Promise<void> {
    if (blocks.length === 0) return;
    const first = blocks[0]!.block;
    const last = blocks.at(-1)!.block;
    try {
      const coveredTo = await inTransaction(this.pool, "commitBlocks", async (c) => {
        const to = this.partitions.covers(last.lastVersion) ? null : await this.partitions.create(c, first.firstVersion, last.lastVersion);
        // The next block's parameters are made while the server runs the current block's statement.
        let values = commitValues(blocks[0]!, last.lastVersion);
        for (let i = 0; i < blocks.length; i++) {
          const sent = c.query({ name: "ln_commit", text: SQL.commit, values });
          try {
            if (i + 1 < blocks.length) values = commitValues(blocks[i + 1]!, last.lastVersion);
          } catch (e) {
            await sent.catch(() => undefined); // settled before the rollback, never left unhandled
            throw e;
          }
          await sent;
        }
        return to;
      });
      if (coveredTo !== null) this.partitions.committed(coveredTo);
    } catch (e) {
      throw commitError(e, blocks);
    } finally {
      this.memo.clear();
    }
  }

  /** See `PostgresPruner`: steps of their own transactions, one pruner at a time. */
  async prune(target: PruneTarget): Promise<PruneResult> {
    try {
      return await this.pruner.prune(target);
    } finally {
      this.memo.clear();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.commitSignal?.stopAll();
    await Promise.all([this.pool.end(), this.pipelined?.end()]);
  }
}

/**
 * Why the primary given a standby is not its primary, asked once of a session of its own; null
 * when it is, or when it cannot be asked now (the listening session says why, and checks again).
 */
async function reachablePrimaryProblem(config: pg.ClientConfig, standby: pg.Pool): Promise<string | null> {
  const session = new pg.Client(config);
  session.on("error", () => undefined);
  try {
    await session.connect();
  } catch {
    return null;
  }
  try {
    return await primaryProblem(session, standby);
  } catch {
    return null;
  } finally {
    await session.end().catch(() => undefined);
  }
}

/** The listening session's settings for a standby's primary: its URL's own (`settings.ts`). */
function primaryConfig(url: string): { config: pg.ClientConfig; shown: string } {
  const { connectionString, settings } = parsePostgresUrl(url);
  return { config: clientConfig(connectionString, settings), shown: `the primary ${redactUrl(url)}` };
}
