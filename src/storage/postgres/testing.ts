/**
 * Test seams of the PostgreSQL store, kept out of its class: the pool a test runs its own
 * statements on (to look at rows, or to make the database misbehave under the store).
 */
import type pg from "pg";
import { pools, type PostgresStore } from "./PostgresStore.js";

/** The pool `store` runs on. */
export function poolOf(store: PostgresStore): pg.Pool {
  const pool = pools.get(store);
  if (!pool) throw new Error("not a PostgresStore opened by this module");
  return pool;
}
