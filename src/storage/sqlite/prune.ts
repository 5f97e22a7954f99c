/**
 * SQLite's prune steps for the shared loop (`../common/pruneLoop.ts`), each its own `BEGIN IMMEDIATE`
 * transaction (a step reads before it writes: it waits its turn behind another process's write
 * rather than failing on a snapshot that write made stale), a WAL checkpoint that restarts the WAL
 * and a turn of the event loop between them:
 * 1. the oldest version moves up a block boundary at a time, at most `pruneBatch.versions` past
 *    the previous step, with the transactions, their history, events, summaries and blocks below it;
 * 2. each state table is walked in key order, `pruneBatch.stateRows` rows a step (no version
 *    index: one index fewer to write per row on import). Keys are never split across steps;
 * 3. code no module refers to any more goes, `pruneBatch.stateRows` code rows a step, and free
 *    pages go back to the file system (files created with incremental vacuum), `pruneBatch.pages` a step.
 */
import type { Database as Db, Statement } from "better-sqlite3";
import type { LedgerInfo } from "../../ledger/types.js";
import type { PruneResult, PruneTarget } from "../contracts/writer.js";
import { runPrune, type OldestStep, type PruneSteps } from "../common/pruneLoop.js";
import { planPrune, STATE_TABLES, type StateTable } from "../common/prunePlan.js";
import { AUTO_VACUUM_INCREMENTAL } from "./connection.js";
import type { PruneBatch } from "./options.js";
import { I64_MAX } from "./columns.js";
import { BOUND, type Statements } from "./statements.js";

/** The smallest id a code row can have: where the prune's code steps start. */
const I64_MIN = -I64_MAX - 1n;

/**
 * How long a checkpoint between steps waits for readers to leave the WAL (ms): a server's read
 * transaction lasts one event-loop turn, and another process's write waits meanwhile.
 */
const CHECKPOINT_WAIT_MS = 100;

/** Statements of the prune's walk over one state table in key order. */
interface StateWalk {
  /** The key of the row N rows into the table / from a key on. */
  keyAfterRows: Statement<unknown[], unknown[]>;
  keyAfterRowsFrom: Statement<unknown[], unknown[]>;
  /** The first key after a key. */
  nextKey: Statement<unknown[], unknown[]>;
  /** Deletions in a key range, by [has lower bound * 2 + has upper bound]. */
  ranges: Array<{ superseded: Statement<unknown[]>; deletions: Statement<unknown[]> }>;
}

/** A batch of the state walk: rows deleted, and the key the next batch starts at (null: table done). */
interface StateBatch {
  deleted: number;
  next: unknown[] | null;
}

export class SqlitePruner {
  private readonly moveOldestTx: (t: PruneTarget) => OldestStep;
  private readonly walkStateTx: (table: StateTable, from: unknown[] | null) => StateBatch;
  private readonly pruneCodeTx: (from: bigint) => bigint | null;
  private readonly stateWalks = new Map<string, StateWalk>();

  constructor(
    private readonly db: Db,
    private readonly statements: Statements,
    private readonly batch: PruneBatch,
    private readonly readLedgerInfo: () => LedgerInfo | null,
    /** Runs one write of the store (file checks, the memo cleared). */
    private readonly write: <T>(f: () => T) => T,
  ) {
    // IMMEDIATE: a prune step reads, then writes. A deferred transaction whose snapshot another
    // process's commit made stale fails at its first write (SQLITE_BUSY) instead of waiting its turn.
    this.moveOldestTx = db.transaction((t: PruneTarget) => this.moveOldestInTx(t)).immediate;
    this.walkStateTx = db.transaction((table: StateTable, from: unknown[] | null) => this.walkStateInTx(table, from)).immediate;
    this.pruneCodeTx = db.transaction((from: bigint) => this.pruneCodeInTx(from)).immediate;
  }

  prune(target: PruneTarget): Promise<PruneResult> {
    return runPrune(this.steps(), target);
  }

  /** The steps of one prune: the state walk starts at the first key of the first table. */
  private steps(): PruneSteps {
    let table = 0;
    let from: unknown[] | null = null;
    return {
      walkResumes: false,
      moveOldest: async (target) => {
        const step = this.write(() => this.moveOldestTx(target));
        if (step.moved) await this.betweenSteps();
        return step;
      },
      walkState: async () => {
        const batch = this.write(() => this.walkStateTx(STATE_TABLES[table]!, from));
        from = batch.next;
        if (from === null) table++;
        await this.betweenSteps();
        return { deleted: batch.deleted, done: table >= STATE_TABLES.length };
      },
      finish: async () => {
        for (let from: bigint | null = I64_MIN; from !== null; ) {
          const stepFrom: bigint = from;
          from = this.write(() => this.pruneCodeTx(stepFrom));
          await this.betweenSteps();
        }
        if (!this.hasIncrementalVacuum()) return;
        while (Number(this.db.pragma("freelist_count", { simple: true })) > 0) {
          this.write(() => this.db.pragma(`incremental_vacuum(${this.batch.pages})`));
          await this.betweenSteps();
        }
      },
    };
  }

  /** Lets the WAL's pages back into the database file and other work on this thread run. */
  private async betweenSteps(): Promise<void> {
    this.checkpointForRestart();
    await new Promise((resolve) => setImmediate(resolve));
  }

  /**
   * Copies the WAL into the database file and waits, at most `CHECKPOINT_WAIT_MS`, for the readers
   * still on older snapshots to end (RESTART), so that the next step writes the WAL from its start.
   * A passive checkpoint stops at the oldest reader's snapshot: under a server's steady reads some
   * read transaction is nearly always open, and the WAL grew step after step. Readers never wait;
   * a reader that outlasts the wait leaves this step's frames to the next checkpoint.
   */
  private checkpointForRestart(): void {
    const busyTimeout = Number(this.db.pragma("busy_timeout", { simple: true }));
    this.db.pragma(`busy_timeout = ${CHECKPOINT_WAIT_MS}`);
    try {
      this.db.pragma("wal_checkpoint(RESTART)");
    } finally {
      this.db.pragma(`busy_timeout = ${busyTimeout}`);
    }
  }

  /**
   * One step of deleting code no module refers to any more: the code rows from id `from` on,
   * `batch.stateRows` of them (a row holds a module's bytecode and ABI: about a kilobyte). Returns
   * the id the next step starts at (null: the table is done).
   */
  private pruneCodeInTx(from: bigint): bigint | null {
    const next = this.statements.codeIdAfterRows.get(from, this.batch.stateRows)?.id ?? null;
    this.statements.pruneCode.run(from, next === null ? I64_MAX : next - 1n);
    return next;
  }

  /** One step of moving the oldest version up. */
  private moveOldestInTx(target: PruneTarget): OldestStep {
    const st = this.statements;
    const plan = planPrune(this.readLedgerInfo()?.oldestVersion ?? null, target);
    if (!plan) return { moved: false, done: true, transactionsDeleted: 0, blocksDeleted: 0 };
    const next = st.firstBlockFrom.get(plan.previousOldestVersion + BigInt(Math.max(1, this.batch.versions)));
    const step =
      next && next.first_version < plan.oldestVersion ? { oldestVersion: next.first_version, oldestBlockHeight: next.height } : plan;
    st.pruneAccountTransactions.run(plan.previousOldestVersion, step.oldestVersion);
    const transactionsDeleted = st.pruneTransactions.run(step.oldestVersion).changes;
    st.pruneHistory.run(step.oldestVersion);
    st.pruneEvents.run(step.oldestVersion);
    const blocksDeleted = st.pruneBlocks.run(step.oldestBlockHeight).changes;
    st.setOldest.run(step.oldestVersion, step.oldestBlockHeight);
    return { moved: true, done: step === plan, transactionsDeleted, blocksDeleted };
  }

  /**
   * One batch of the state walk: the keys from `from` (inclusive; null: the first) to the key of
   * the row `batch.stateRows` further on (exclusive; null: to the end), at the oldest version
   * stored now. Keys are never split: all rows of a key go in one batch. Deletes rows superseded
   * at or below the oldest version and deletions that are then the oldest row of their key: no
   * read at or above the oldest version sees them, so any step order gives the same answers.
   */
  private walkStateInTx(table: StateTable, from: unknown[] | null): StateBatch {
    const oldest = this.readLedgerInfo()?.oldestVersion;
    if (oldest === undefined) return { deleted: 0, next: null };
    const walk = this.stateWalkOf(table);
    let next = (from ? walk.keyAfterRowsFrom.get(...from, this.batch.stateRows) : walk.keyAfterRows.get(this.batch.stateRows)) ?? null;
    // A key with more rows than a batch: its rows go whole, to the next key.
    if (next && from && next.every((c, i) => Buffer.isBuffer(c) ? c.equals(from[i] as Buffer) : c === from[i])) next = walk.nextKey.get(...from) ?? null;
    const bounds = [...(from ?? []), ...(next ?? [])];
    const sql = walk.ranges[(from ? 2 : 0) + (next ? 1 : 0)]!;
    const deleted = sql.superseded.run(...bounds, oldest, oldest).changes + sql.deletions.run(...bounds, oldest).changes;
    return { deleted, next };
  }

  /** The state walk's statements of one table, prepared at its first prune. */
  private stateWalkOf(table: StateTable): StateWalk {
    const prepared = this.stateWalks.get(table.table);
    if (prepared) return prepared;
    const { table: t, keys, value } = table;
    const cols = keys.join(", ");
    const marks = keys.map(() => "?").join(", ");
    const sameKey = keys.map((c) => `n.${c} = ${t}.${c}`).join(" AND ");
    const keyTuple = (sql: string) => this.db.prepare<unknown[], unknown[]>(sql).raw(true).safeIntegers(true);
    /** Deletions between a lower bound (inclusive) and an upper bound (exclusive) when given. */
    const range = (lower: boolean, upper: boolean) => {
      const where = [lower ? `(${cols}) >= (${marks})` : "", upper ? `(${cols}) < (${marks})` : ""].filter((c) => c).join(" AND ") || "1";
      return {
        superseded: this.db.prepare<unknown[]>(
          `DELETE FROM ${t} WHERE ${where} AND version < ? AND EXISTS (
             SELECT 1 FROM ${t} n WHERE ${sameKey} AND n.version > ${t}.version AND n.version <= ?)`,
        ),
        deletions: this.db.prepare<unknown[]>(`DELETE FROM ${t} WHERE ${where} AND version <= ? AND ${value} IS NULL`),
      };
    };
    const walk: StateWalk = {
      keyAfterRows: keyTuple(`SELECT ${cols} FROM ${t} ORDER BY ${cols}, version LIMIT 1 OFFSET ${BOUND}`),
      keyAfterRowsFrom: keyTuple(`SELECT ${cols} FROM ${t} WHERE (${cols}) >= (${marks}) ORDER BY ${cols}, version LIMIT 1 OFFSET ${BOUND}`),
      nextKey: keyTuple(`SELECT ${cols} FROM ${t} WHERE (${cols}) > (${marks}) ORDER BY ${cols}, version LIMIT 1`),
      ranges: [range(false, false), range(false, true), range(true, false), range(true, true)],
    };
    this.stateWalks.set(t, walk);
    return walk;
  }

  /**
   * Converts a file made before incremental vacuum (auto_vacuum NONE) so that later prunes give
   * their free pages back to the file system; a no-op on a file that has it. Rewrites the whole
   * file (VACUUM): it holds the write lock throughout and needs free disk space for a second
   * copy in the WAL; readers go on meanwhile. For an operator's maintenance command, not for a
   * serving node's start.
   */
  enableIncrementalVacuum(): boolean {
    if (this.hasIncrementalVacuum()) return false;
    this.write(() => {
      this.db.pragma(`auto_vacuum = ${AUTO_VACUUM_INCREMENTAL}`);
      this.db.exec("VACUUM");
    });
    return true;
  }

  /** Whether later prunes give free pages back to the file system (see `enableIncrementalVacuum`). */
  hasIncrementalVacuum(): boolean {
    return Number(this.db.pragma("auto_vacuum", { simple: true })) === AUTO_VACUUM_INCREMENTAL;
  }
}
