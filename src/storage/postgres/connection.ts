/**
 * The PostgreSQL store's connections: one pool with time limits on everything (`settings.ts`),
 * transactions on one of its connections that discard it when it broke, and the named statements
 * the reads send (through the pool, or the pipelined connections of `pipelined.ts`).
 */
import pg from "pg";
import type { PoolClient, QueryResultRow } from "pg";
import { setTimeout as sleep } from "node:timers/promises";
import { breaksConnection, isChangedResultType, isMissingStatement, isRecoveryConflict, storageError } from "./errors.js";
import { NamedStatement, PreparedRead, type Answered } from "./preparedRead.js";
import type { PostgresSettings } from "./settings.js";
import { SQL, type StatementName } from "./sql.js";

/** A connection's settings for `connectionString`: time limits on everything (`settings.ts`). */
export function clientConfig(connectionString: string, settings: PostgresSettings): pg.ClientConfig {
  return {
    connectionString,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    // Client-side bound for a server that accepts the statement and then goes silent.
    query_timeout: settings.statementTimeoutMs + 1_000,
    lock_timeout: settings.statementTimeoutMs,
    idle_in_transaction_session_timeout: Math.max(settings.statementTimeoutMs * 2, 10_000),
    keepAlive: true,
    fallback_application_name: "ledger-node",
  };
}

/** A pool for `connectionString` with the store's settings. */
export function openPool(connectionString: string, settings: PostgresSettings): pg.Pool {
  const pool = new pg.Pool({ ...clientConfig(connectionString, settings), max: settings.poolSize, idleTimeoutMillis: settings.idleTimeoutMs });
  // An idle pooled connection that the server closes (restart, failover) emits here; the pool
  // has already dropped it and the next query opens a new one. Without a listener the process
  // would crash.
  pool.on("error", () => undefined);
  return pool;
}

/** Runs `f` in one transaction on one connection; a broken connection is discarded. */
export async function inTransaction<T>(pool: pg.Pool, what: string, f: (c: PoolClient) => Promise<T>): Promise<T> {
  let c: PoolClient;
  try {
    c = await pool.connect();
  } catch (e) {
    throw storageError(e, what);
  }
  try {
    await c.query("BEGIN");
    const r = await f(c);
    await c.query("COMMIT");
    c.release();
    return r;
  } catch (e) {
    let broken = breaksConnection(e);
    if (!broken) await c.query("ROLLBACK").catch(() => (broken = true));
    c.release(broken ? (e as Error) : undefined);
    throw storageError(e, what);
  }
}

/**
 * How often a read a hot standby cancelled for a recovery conflict is sent, in all: each attempt
 * is a new snapshot, so a retried read is as exact as the first would have been.
 */
export const RECOVERY_CONFLICT_ATTEMPTS = 8;
/** Pause before the retry after attempt `n` (1-based), ms: the replay that conflicted moves on (at most 630 ms in all). */
const retryPauseMs = (n: number): number => Math.min(160, 10 * 2 ** (n - 1));

/** Where the named statements are sent: the pool (`poolSender`), or pipelined connections (`pipelined.ts`). */
export interface StatementSender {
  /** Sends `read` on one of its connections; `done` is called once, with its rows or its error. */
  send(read: PreparedRead, done: Answered): void;
}

/**
 * The pool as a sender: pg-pool lends a submittable one of its connections and calls back with
 * its answer once it has the connection back (@types/pg types only the promise form for a
 * submittable, which pg-pool gives when no callback is passed).
 */
export function poolSender(pool: pg.Pool): StatementSender {
  return { send: pool.query.bind(pool) as unknown as StatementSender["send"] };
}

/** Whether a statement that failed with `e` is sent again (`NamedStatements`). */
const sentAgain = (e: unknown): boolean => isRecoveryConflict(e) || isMissingStatement(e) || isChangedResultType(e);

/**
 * The named statements of `SQL`, each run on any of the sender's connections (`PreparedRead`: a
 * connection that has described a statement sends Bind + Execute + Sync alone). A statement a hot
 * standby cancelled for a recovery conflict, one bound behind a Parse of its name that failed
 * (`isMissingStatement`), or one whose result type a migration changed (`isChangedResultType`:
 * parsed again) is sent again (bounded, `RECOVERY_CONFLICT_ATTEMPTS`); a recovery conflict then
 * fails as a `RecoveryConflictError`. The path that succeeds is unchanged.
 */
export class NamedStatements {
  /** Statements sent so far, retries included: the round trips the reads made (`testing.ts`). */
  sent = 0;
  /** Each statement of `SQL` by its name, with what each connection holds of it. */
  private readonly statements = Object.fromEntries(
    (Object.keys(SQL) as StatementName[]).map((name) => [name, new NamedStatement(`ln_${name}`, SQL[name])]),
  ) as Record<StatementName, NamedStatement>;

  /** Statements sent through `sender`: the pool (`poolSender`), or the reads' pipelined connections. */
  constructor(private readonly sender: StatementSender) {}

  /** Runs one named statement; rows by column name. */
  async rows<R extends QueryResultRow>(name: StatementName, values: unknown[]): Promise<R[]> {
    this.sent++;
    try {
      return await this.execute<R>(name, values, false);
    } catch (e) {
      if (!sentAgain(e)) throw storageError(e, name);
      return this.retried(() => this.execute<R>(name, values, false), e, name);
    }
  }

  /** `rows`, as arrays in select-list order: the typed tuples `common/rows.ts` maps. */
  async tuples<R extends unknown[]>(name: StatementName, values: unknown[]): Promise<R[]> {
    this.sent++;
    try {
      return await this.execute<R>(name, values, true);
    } catch (e) {
      if (!sentAgain(e)) throw storageError(e, name);
      return this.retried(() => this.execute<R>(name, values, true), e, name);
    }
  }

  /** One execution of statement `name` on the sender's next connection: its rows as arrays when `arrays`, else objects. */
  private execute<R>(name: StatementName, values: unknown[], arrays: boolean): Promise<R[]> {
    const read = new PreparedRead(this.statements[name], values, arrays);
    return new Promise((resolve, reject) => this.sender.send(read, (err, rows) => (err ? reject(err) : resolve(rows as R[]))));
  }

  /** The attempts after the first one of `query` failed with `first`, a recovery conflict. */
  private async retried<T>(query: () => Promise<T>, first: unknown, name: string): Promise<T> {
    let last = first;
    for (let attempt = 1; attempt < RECOVERY_CONFLICT_ATTEMPTS; attempt++) {
      await sleep(retryPauseMs(attempt));
      this.sent++;
      try {
        return await query();
      } catch (e) {
        if (!sentAgain(e)) throw storageError(e, name);
        last = e;
      }
    }
    throw storageError(last, `${name} (${RECOVERY_CONFLICT_ATTEMPTS} attempts)`);
  }
}
