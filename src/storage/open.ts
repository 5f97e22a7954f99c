/**
 * Opens the store a `--db` value names: a file path is SQLite (the embedded default); a
 * `postgres://` or `postgresql://` URL is PostgreSQL.
 *
 * A SQLite path is checked, so that a mistyped path or a wrong file is an error naming it rather
 * than a new empty database: a missing file is created only when `create` says so; a directory, an
 * empty (0-byte) file or a file without the SQLite header is refused.
 *
 * Only SQLite opens the file. Closing any descriptor of a file drops every POSIX lock the process
 * holds on it, SQLite's included: another process closing the database would then take itself for
 * the last connection and checkpoint and delete the WAL this process still writes into. So the
 * checks here use stat and access, which open nothing, and the header is SQLite's to judge.
 */
import { accessSync, constants, statSync } from "node:fs";
import type { Storage } from "./contracts/storage.js";
import { NotADatabaseError, SqliteStore, type SqliteStoreOptions } from "./sqlite/SqliteStore.js";
import { compactSqliteLedger, type CompactResult } from "./sqlite/compact.js";
import { parsePostgresUrl } from "./postgres/settings.js";

export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/** A `--db` value fit for logs: a PostgreSQL URL loses its password. */
export function displayDb(db: string): string {
  return isPostgresUrl(db) ? db.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/i, "$1:***@") : db;
}

/** A `--db` file that cannot be used as it is; the message names the path. */
export class DatabaseFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DatabaseFileError";
  }
}

export interface OpenOptions extends SqliteStoreOptions {
  /**
   * SQLite: create the file when it does not exist (default true for programmatic use; the CLI
   * decides per command). `missingHint` ends the error when it does not and may not be created.
   */
  create?: boolean;
  missingHint?: string;
  /**
   * PostgreSQL: what will write through the store (a command or flag), refused on a hot standby
   * (`PostgresConnectOptions.writer`).
   */
  writer?: string;
  /** PostgreSQL on a hot standby: its primary's URL, heard for commits (`PostgresConnectOptions.primary`). */
  primary?: string;
}

/**
 * Whether `path` may be opened as a SQLite ledger: "missing" (and allowed to be created), "ok", or
 * a thrown DatabaseFileError naming the path and what is wrong with it. Opens nothing: whether the
 * file is SQLite is found when SQLite opens it (`openStore`).
 */
export function checkSqliteFile(path: string, create: boolean, missingHint = "pass --create to create a new database there"): "ok" | "missing" {
  if (path === ":memory:") return "ok";
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      if (create) return "missing";
      throw new DatabaseFileError(`database ${path} does not exist; ${missingHint}`);
    }
    throw new DatabaseFileError(`cannot read database ${path}: ${(e as Error).message}`);
  }
  if (st.isDirectory()) throw new DatabaseFileError(`database ${path} is a directory, not a SQLite database file`);
  if (st.size === 0) {
    throw new DatabaseFileError(`database ${path} is an empty file (0 bytes), not a SQLite database; remove it or give another path`);
  }
  try {
    accessSync(path, constants.R_OK);
  } catch (e) {
    throw new DatabaseFileError(`cannot read database ${path}: ${(e as Error).message}`);
  }
  return "ok";
}

/** Whether this process may write the SQLite file `path` (an existing file; false for a read-only one). */
export function sqliteWritable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** What is wrong with the PostgreSQL URL `url` (its form, or one of our settings in it), else null; connects nowhere. */
export function postgresUrlProblem(url: string): string | null {
  if (!isPostgresUrl(url)) return `${JSON.stringify(displayDb(url).slice(0, 200))} is not a postgres:// URL`;
  try {
    parsePostgresUrl(url);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

export async function openStore(db: string, opts: OpenOptions = {}): Promise<Storage> {
  const { create = true, missingHint, writer, primary, ...sqlite } = opts;
  if (isPostgresUrl(db)) {
    const { PostgresStore } = await import("./postgres/PostgresStore.js");
    return PostgresStore.connect(db, { memoLagMs: sqlite.memoLagMs, ...(writer !== undefined ? { writer } : {}), ...(primary !== undefined ? { primary } : {}) });
  }
  const hint = sqlite.readonly && create ? "a read-only open (serve without --devnet, with --no-prune) cannot create it" : missingHint;
  checkSqliteFile(db, create && !sqlite.readonly, hint);
  try {
    return new SqliteStore(db, sqlite);
  } catch (e) {
    if (e instanceof NotADatabaseError) {
      throw new DatabaseFileError(`database ${db} is not a SQLite database (it does not start with the SQLite header)`);
    }
    throw e;
  }
}

/**
 * `ledger-node compact`: the SQLite ledger at `db` rewritten with its module tables first
 * (`sqlite/compact.ts`). PostgreSQL places rows itself: refused with a plain error.
 */
export function compactLedger(db: string): CompactResult {
  if (isPostgresUrl(db)) throw new DatabaseFileError(`compact rewrites a SQLite ledger file; ${displayDb(db)} is a PostgreSQL database`);
  if (db === ":memory:") throw new DatabaseFileError("compact rewrites a ledger file; :memory: is not one");
  checkSqliteFile(db, false, "compact never creates a database: check the path");
  try {
    return compactSqliteLedger(db);
  } catch (e) {
    if (e instanceof NotADatabaseError) {
      throw new DatabaseFileError(`database ${db} is not a SQLite database (it does not start with the SQLite header)`);
    }
    throw e;
  }
}
