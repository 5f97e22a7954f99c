/**
 * The PostgreSQL store's connections: one pool with time limits on everything (`settings.ts`),
 * transactions on one of its connections that discard it when it broke, and the named statements
 * the reads send (through the pool, or the pipelined connections of `pipelined.ts`).
 */
import pg from "pg";
import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from "pg";
import { setTimeout as sleep } from "node:timers/promises";
import { breaksConnection, isMissingStatement, isRecoveryConflict, storageError } from "./errors.js";
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

/** Where the named statements are sent: a pool, or pipelined connections (`pipelined.ts`). */
export interface StatementSender {
  query<R extends QueryResultRow>(q: QueryConfig & { rowMode?: "array" }): Promise<QueryResult<R>>;
}

/** Whether a statement that failed with `e` is sent again (`NamedStatements`). */
const sentAgain = (e: unknown): boolean => isRecoveryConflict(e) || isMissingStatement(e);

/**
 * The named statements of `SQL`, each run on any of the sender's connections. A statement a hot
 * standby cancelled for a recovery conflict, or one bound behind a Parse of its name that failed
 * (`isMissingStatement`), is sent again (bounded, `RECOVERY_CONFLICT_ATTEMPTS`); a recovery
 * conflict then fails as a `RecoveryConflictError`. The path that succeeds is unchanged.
 */
export class NamedStatements {
  /** Statements sent so far, retries included: the round trips the reads made (`testing.ts`). */
  sent = 0;

  /** Statements sent through `sender`: the pool itself, or the reads' pipelined connections. */
  constructor(private readonly sender: StatementSender) {}

  /** Runs one named statement; rows by column name. */
  async rows<R extends QueryResultRow>(name: StatementName, values: unknown[]): Promise<R[]> {
    this.sent++;
    try {
      return (await this.sender.query<R>({ name: `ln_${name}`, text: SQL[name], values })).rows;
    } catch (e) {
      if (!sentAgain(e)) throw storageError(e, name);
      return (await this.retried(() => this.sender.query<R>({ name: `ln_${name}`, text: SQL[name], values }), e, name)).rows;
    }
  }

  /** `rows`, as arrays in select-list order: the typed tuples rules.ts maps. */
  async tuples<R extends unknown[]>(name: StatementName, values: unknown[]): Promise<R[]> {
    this.sent++;
    try {
      return (await this.sender.query<R & QueryResultRow>({ name: `ln_${name}`, text: SQL[name], values, rowMode: "array" })).rows;
    } catch (e) {
      if (!sentAgain(e)) throw storageError(e, name);
      return (await this.retried(() => this.sender.query<R & QueryResultRow>({ name: `ln_${name}`, text: SQL[name], values, rowMode: "array" }), e, name)).rows;
    }
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
