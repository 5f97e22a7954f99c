/**
 * PostgreSQL's prune steps for the shared loop (`../common/pruneLoop.ts`). In bounded steps, each its own transaction, so that no transaction is large and every commit
 * leaves an exactly pruned ledger (as the SQLite store, `pruneBatch` there):
 * 1. the oldest version moves up a block boundary at a time, about `pruneStepVersions` past the
 *    previous step, deleting the transactions, their history and the blocks below it in the same
 *    commit;
 * 2. then the state tables are walked by version (their `version` indexes), from where the walk
 *    stopped before (`prune_progress.state_from`) up to the oldest version, a version range of
 *    about `pruneStepRows` rows per table a step: of the keys written in the range, the rows at
 *    or below its top that a newer row at or below the oldest version supersedes go, and so do
 *    the deletions in the range that are then the oldest row of their key. No read at or above
 *    the oldest version sees those rows, and the step records how far the walk got in the same
 *    commit, so a prune stopped at any point (crash, timeout, lost connection) leaves a correct
 *    ledger and the next one resumes the walk where it stopped.
 * Pruners take turns: the whole prune holds a session advisory lock on its one connection, and
 * a prune that finds another running returns at once, having done nothing. Readers are never
 * blocked (MVCC). Each step updates the ledger row, which every block commit also updates, in
 * its last statement, so a commit waits at most for the end of one step.
 */
import type pg from "pg";
import type { PoolClient } from "pg";
import type { PruneResult, PruneTarget } from "../contracts/writer.js";
import { runPrune, type OldestStep } from "../common/pruneLoop.js";
import { NOTHING_PRUNED, planPrune, STATE_TABLES } from "../common/prunePlan.js";
import { u64FromColumn, u64Param } from "./columns.js";
import { breaksConnection, storageError } from "./errors.js";
import { existingPartitions, PARTITIONED_TABLES, partitionName, partitionOf } from "./partitions.js";
import type { PostgresSettings } from "./settings.js";

/** Transaction advisory lock held while pruning ("ledgerpr"). */
const PRUNE_LOCK = BigInt("0x6c65646765727072").toString();
/** A prune is maintenance, not a request: its statements may run this long (ms). */
export const PRUNE_STATEMENT_TIMEOUT_MS = 10 * 60_000;

export class PostgresPruner {
  constructor(
    private readonly pool: pg.Pool,
    private readonly settings: PostgresSettings,
  ) {}

  /** One prune on one connection of the pool, under the advisory lock; nothing when another process prunes. */
  async prune(target: PruneTarget): Promise<PruneResult> {
    let c: PoolClient;
    try {
      c = await this.pool.connect();
    } catch (e) {
      throw storageError(e, "prune");
    }
    let broken: Error | undefined;
    // A connection lost between two statements (server restart, a terminated backend) says so on
    // the client; the pool listens only while it is idle, and an unheard 'error' would end the process.
    const lost = (e: Error) => {
      broken = e;
    };
    c.on("error", lost);
    try {
      const locked = await pruneQuery(c, "SELECT pg_try_advisory_lock($1::bigint) AS ok", [PRUNE_LOCK]);
      if (!locked.rows[0]?.ok) return { ...NOTHING_PRUNED }; // another process is pruning right now
      try {
        return await runPrune(
          {
            walkResumes: true,
            moveOldest: (t) => this.inStep(c, () => this.moveOldestInTx(c, t)),
            walkState: () => this.inStep(c, () => this.walkStateInTx(c)),
            finish: async () => undefined,
          },
          target,
        );
      } finally {
        await c.query("SELECT pg_advisory_unlock($1::bigint)", [PRUNE_LOCK]).catch((e: Error) => (broken = e));
      }
    } catch (e) {
      broken ??= breaksConnection(e) ? (e as Error) : undefined;
      throw storageError(e, "prune");
    } finally {
      c.off("error", lost);
      c.release(broken);
    }
  }

  /** One prune step in a transaction of its own on the prune's connection. */
  private async inStep<T>(c: PoolClient, f: () => Promise<T>): Promise<T> {
    await c.query("BEGIN");
    try {
      await c.query(`SET LOCAL statement_timeout = ${PRUNE_STATEMENT_TIMEOUT_MS}`);
      const r = await f();
      await c.query("COMMIT");
      return r;
    } catch (e) {
      await c.query("ROLLBACK").catch(() => undefined);
      throw e;
    }
  }

  /**
   * Step 1 of `prune`: the oldest version up one bounded step toward `target`. While the target
   * lies past the partition holding the oldest version, a step goes to the first block at or above
   * that partition's end, and the partitions then wholly below it (of `transactions` and of the
   * history, `PARTITIONED_TABLES`) are dropped (their files removed) instead of their rows
   * deleted; within the target's partition it moves about `pruneStepVersions` a step, deleting
   * rows. The partitions are dropped at the end of the step, so that their lock on the
   * partitioned tables (their readers wait) is held only until the commit, and a reader sees the
   * new oldest version and the rows gone together.
   */
  private async moveOldestInTx(c: PoolClient, target: PruneTarget): Promise<OldestStep> {
    const row = (
      await pruneQuery(
        c,
        "SELECT l.oldest_version, p.versions AS span FROM ledger l CROSS JOIN transaction_partitions p WHERE l.id = 1 AND l.ledger_version IS NOT NULL",
      )
    ).rows[0] as { oldest_version: string | null; span: string } | undefined;
    const plan = planPrune(row?.oldest_version != null ? u64FromColumn(row.oldest_version) : null, target);
    if (!plan || !row) return { moved: false, done: true, transactionsDeleted: 0, blocksDeleted: 0 };
    const span = BigInt(row.span);
    const previousPartitionEnd = (partitionOf(plan.previousOldestVersion, span) + 1n) * span;
    const stepTo = plan.oldestVersion >= previousPartitionEnd ? previousPartitionEnd : plan.previousOldestVersion + BigInt(this.settings.pruneStepVersions);
    const next = (
      await pruneQuery(c, "SELECT height, first_version FROM blocks WHERE first_version >= $1::numeric ORDER BY first_version LIMIT 1", [u64Param(stepTo)])
    ).rows[0] as { height: string; first_version: string } | undefined;
    const step =
      next && u64FromColumn(next.first_version) < plan.oldestVersion
        ? { oldestVersion: u64FromColumn(next.first_version), oldestBlockHeight: u64FromColumn(next.height) }
        : plan;
    // The state walk starts where the ledger started when no prune ever ran (rows below the first
    // block's version are a follower's base state: at most one per key).
    await pruneQuery(c, "INSERT INTO prune_progress (id, state_from) VALUES (1, $1::numeric) ON CONFLICT (id) DO NOTHING", [
      u64Param(plan.previousOldestVersion),
    ]);
    // No row lies below the previous oldest version; those in partitions wholly below the new one go with them.
    const kept = partitionOf(step.oldestVersion, span);
    const deleteFrom = kept * span > plan.previousOldestVersion ? kept * span : plan.previousOldestVersion;
    let transactionsDeleted =
      (
        await pruneQuery(c, "DELETE FROM transactions WHERE version >= $1::numeric AND version < $2::numeric", [
          u64Param(deleteFrom),
          u64Param(step.oldestVersion),
        ])
      ).rowCount ?? 0;
    // A chunk lies within one block, and blocks go whole: a chunk starting below the oldest version ends below it.
    await pruneQuery(c, "DELETE FROM transaction_history WHERE first_version >= $1::numeric AND first_version < $2::numeric", [
      u64Param(deleteFrom),
      u64Param(step.oldestVersion),
    ]);
    await pruneQuery(c, "DELETE FROM events WHERE version >= $1::numeric AND version < $2::numeric", [u64Param(deleteFrom), u64Param(step.oldestVersion)]);
    const blocksDeleted = (await pruneQuery(c, "DELETE FROM blocks WHERE height < $1::numeric", [u64Param(step.oldestBlockHeight)])).rowCount ?? 0;
    const dropped: string[] = [];
    for (const table of PARTITIONED_TABLES) {
      for (const n of (await existingPartitions(c, table)).filter((p) => p < kept)) {
        if (table === "transactions") transactionsDeleted += Number((await pruneQuery(c, `SELECT count(*) AS n FROM ${partitionName(n)}`)).rows[0]!.n);
        dropped.push(partitionName(n, table));
      }
    }
    // Before the ledger row: a commit holds its lock on the tables while it waits for that row.
    if (dropped.length > 0) await pruneQuery(c, `DROP TABLE ${dropped.join(", ")}`);
    await pruneQuery(c, "UPDATE ledger SET oldest_version = $1::numeric, oldest_block_height = $2::numeric WHERE id = 1", [
      u64Param(step.oldestVersion),
      u64Param(step.oldestBlockHeight),
    ]);
    return { moved: true, done: step === plan, transactionsDeleted, blocksDeleted };
  }

  /**
   * Step 2 of `prune`: the state rows of one version range [state_from, top], top chosen so that
   * no table has much more than `pruneStepRows` rows in it (a version holding more is taken
   * whole), and at most the oldest version. Invariant kept: every key has at most one row below
   * `state_from`, and it is the key's newest at or below the oldest version when the walk passed it.
   */
  private async walkStateInTx(c: PoolClient): Promise<{ deleted: number; done: boolean }> {
    const row = (
      await pruneQuery(c, "SELECT l.oldest_version, p.state_from FROM ledger l JOIN prune_progress p ON p.id = 1 WHERE l.id = 1 AND l.oldest_version IS NOT NULL")
    ).rows[0] as { oldest_version: string; state_from: string } | undefined;
    if (!row) return { deleted: 0, done: true };
    const oldest = u64FromColumn(row.oldest_version);
    const from = u64FromColumn(row.state_from);
    if (from > oldest) return { deleted: 0, done: true };
    let top = oldest;
    for (const { table } of STATE_TABLES) {
      const far = (
        await pruneQuery(c, `SELECT version FROM ${table} WHERE version >= $1::numeric AND version <= $2::numeric ORDER BY version OFFSET $3 LIMIT 1`, [
          u64Param(from),
          u64Param(oldest),
          this.settings.pruneStepRows,
        ])
      ).rows[0] as { version: string } | undefined;
      if (far) {
        const v = u64FromColumn(far.version);
        const end = v > from ? v - 1n : from;
        if (end < top) top = end;
      }
    }
    let deleted = 0;
    for (const { table, keys, value } of STATE_TABLES) {
      const cols = keys.join(", ");
      const sameKey = (a: string, b: string) => keys.map((k) => `${a}.${k} = ${b}.${k}`).join(" AND ");
      // Per key written in the range (one seek each, materialized so that it is not re-run per row):
      // its newest row at or below the oldest version and its one row below the range, if any.
      // Superseded: the key's rows in the range older than that newest one, and the row below.
      const superseded = await pruneQuery(
        c,
        `WITH k AS MATERIALIZED (
           SELECT w.*, (SELECT max(n.version) FROM ${table} n WHERE ${sameKey("n", "w")} AND n.version <= $3::numeric) AS newest,
                       (SELECT max(b.version) FROM ${table} b WHERE ${sameKey("b", "w")} AND b.version < $1::numeric) AS below
           FROM (SELECT DISTINCT ${cols} FROM ${table} WHERE version >= $1::numeric AND version <= $2::numeric) w
         ), in_range AS (
           DELETE FROM ${table} s USING k
           WHERE ${sameKey("s", "k")} AND s.version >= $1::numeric AND s.version <= $2::numeric AND s.version < k.newest
           RETURNING 1
         ), below AS (
           DELETE FROM ${table} s USING k
           WHERE ${sameKey("s", "k")} AND s.version = k.below AND k.below < k.newest
           RETURNING 1
         )
         SELECT (SELECT count(*) FROM in_range) + (SELECT count(*) FROM below) AS n`,
        [u64Param(from), u64Param(top), u64Param(oldest)],
      );
      deleted += Number(superseded.rows[0]?.n ?? 0);
      deleted +=
        (
          await pruneQuery(c, `DELETE FROM ${table} WHERE version >= $1::numeric AND version <= $2::numeric AND ${value} IS NULL`, [
            u64Param(from),
            u64Param(top),
          ])
        ).rowCount ?? 0;
    }
    await pruneQuery(c, "UPDATE prune_progress SET state_from = $1::numeric WHERE id = 1", [u64Param(top + 1n)]);
    return { deleted, done: top >= oldest };
  }
}

/** A statement of a prune: it may run up to PRUNE_STATEMENT_TIMEOUT_MS (the step's SET LOCAL). */
function pruneQuery(c: PoolClient, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  return c.query({ text, values, query_timeout: PRUNE_STATEMENT_TIMEOUT_MS + 1_000 } as pg.QueryConfig);
}
