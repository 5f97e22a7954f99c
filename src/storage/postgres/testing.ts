/**
 * Test seams of the PostgreSQL store, kept out of its class: the pool a test runs its own
 * statements on (to look at rows, or to make the database misbehave under the store), and the
 * count of statements its reads sent (round trips).
 */
import type pg from "pg";
import { namedStatements, pools, type PostgresStore } from "./PostgresStore.js";

/** The pool `store` runs on. */
export function poolOf(store: PostgresStore): pg.Pool {
  const pool = pools.get(store);
  if (!pool) throw new Error("not a PostgresStore opened by this module");
  return pool;
}

/** Statements `store`'s reads have sent so far (each one round trip), retries included. */
export function statementsSent(store: PostgresStore): number {
  const sql = namedStatements.get(store);
  if (!sql) throw new Error("not a PostgresStore opened by this module");
  return sql.sent;
}
