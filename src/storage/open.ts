/**
 * Opens the store a `--db` value names: a file path is SQLite (the embedded default); a
 * `postgres://` or `postgresql://` URL is PostgreSQL.
 */
import type { LedgerStore } from "./LedgerStore.js";
import { SqliteStore, type SqliteStoreOptions } from "./sqlite/SqliteStore.js";

export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/** A `--db` value fit for logs: a PostgreSQL URL loses its password. */
export function displayDb(db: string): string {
  return isPostgresUrl(db) ? db.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/i, "$1:***@") : db;
}

export async function openStore(db: string, opts: SqliteStoreOptions = {}): Promise<LedgerStore> {
  if (isPostgresUrl(db)) {
    const { PostgresStore } = await import("./postgres/PostgresStore.js");
    return PostgresStore.connect(db);
  }
  return new SqliteStore(db, opts);
}
