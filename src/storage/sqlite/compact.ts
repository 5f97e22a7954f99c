/**
 * `ledger-node compact`: a SQLite ledger rewritten into a new file with the module tables at its
 * start, then renamed over the old one. A ledger written block by block spreads each table's pages
 * over the whole file in version order; a node maps only the file's first `mmapSizeMiB`, so most
 * module pages of a large ledger are read by `pread` into SQLite's page cache. Rewritten, the
 * module tables (the bulk of a random module page's reads) lie in the mapped part. Blocks written
 * later append their pages at the end again: compacting once more gathers them.
 */
import Database from "better-sqlite3";
import type { Database as Db } from "better-sqlite3";
import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { StorageUnavailableError } from "../contracts/errors.js";
import { openDatabase } from "./connection.js";

/**
 * The tables copied first, in this order: the small ones every read looks up (ledger row,
 * interned ids), then the module tables and their code. The rest follow in schema order.
 */
export const COMPACT_FIRST_TABLES: readonly string[] = ["ledger", "addresses", "resource_types", "follow_base", "module_keys", "modules", "code"];

export interface CompactResult {
  bytesBefore: number;
  bytesAfter: number;
  /** The tables in the order they were copied. */
  tables: string[];
}

/** Where the new file is written before it replaces the ledger (same directory: the rename is atomic). */
export const compactTempPath = (path: string): string => `${path}.compact-tmp`;

/**
 * Rewrites the ledger at `path` (an existing SQLite file) with the module tables first, and renames
 * the new file over it. Refused while any other process has the file open: SQLite's exclusive lock
 * is held from the first read until the new file is in place, so no block is committed meanwhile.
 * Until the rename the ledger's rows are untouched: a failure or a kill leaves them as they were
 * (the file maybe out of WAL mode, which the next writer's open restores, and a leftover temporary
 * file, removed by the next compaction).
 */
export function compactSqliteLedger(path: string, opts: { busyTimeoutMs?: number } = {}): CompactResult {
  const bytesBefore = statSync(path).size;
  // Bring the file to this build's schema first, as any writer's open does.
  openDatabase(path, { busyTimeoutMs: opts.busyTimeoutMs }).close();
  const temp = compactTempPath(path);
  removeLeftover(temp);
  const source = lockExclusively(path, opts.busyTimeoutMs ?? 5000);
  try {
    // The new file: this build's schema (every migration, on empty tables), WAL, incremental vacuum.
    openDatabase(temp, {}).close();
    source.prepare("ATTACH DATABASE ? AS compacted").run(temp);
    // FULL: the checkpoint below syncs the new file to disk before it is renamed into place.
    source.pragma("compacted.synchronous = FULL");
    const tables = copyOrder(source);
    source.transaction(() => {
      for (const table of tables) copyTable(source, table);
    })();
    // Every page of the new file in the file itself (no WAL left beside it), then closed.
    source.pragma("compacted.wal_checkpoint(TRUNCATE)");
    source.exec("DETACH DATABASE compacted");
    removeLeftover(`${temp}-wal`, true);
    // The old file's WAL is emptied and removed while the lock is held, so no WAL of the old file
    // is ever found beside the new one (SQLite would replay it into the new file).
    source.pragma("journal_mode = DELETE");
    renameSync(temp, path);
    fsyncDirectory(dirname(path));
    return { bytesBefore, bytesAfter: statSync(path).size, tables };
  } catch (e) {
    removeLeftover(temp);
    throw e;
  } finally {
    source.close();
  }
}

/**
 * A connection to `path` in SQLite's exclusive locking mode, its lock taken: SQLite refuses it
 * (SQLITE_BUSY) while another connection, in any process, has the file open in WAL mode.
 */
function lockExclusively(path: string, busyTimeoutMs: number): Db {
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.prepare("SELECT count(*) FROM sqlite_master").pluck().get();
    return db;
  } catch (e) {
    db.close();
    if ((e as { code?: unknown }).code === "SQLITE_BUSY") {
      throw new StorageUnavailableError(`database ${path} is open in another process: stop the node (and any other tool using it) before compacting`, {
        cause: e,
      });
    }
    throw e;
  }
}

/** Every table of the ledger: `COMPACT_FIRST_TABLES`, then the others in schema order; the two files must list the same. */
function copyOrder(db: Db): string[] {
  const names = (schema: string): string[] =>
    db
      .prepare(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'schema_version' ORDER BY rootpage`)
      .pluck()
      .all() as string[];
  const source = names("main");
  const target = names("compacted");
  if (source.length !== target.length || source.some((t) => !target.includes(t))) {
    throw new Error(`the file's tables (${source.join(", ")}) are not a ledger's of this build (${target.join(", ")}): compact copies a ledger's own tables only`);
  }
  return [...COMPACT_FIRST_TABLES.filter((t) => source.includes(t)), ...source.filter((t) => !COMPACT_FIRST_TABLES.includes(t))];
}

/** One table's rows into the new file, in its key order: each page is filled once, appended. */
function copyTable(db: Db, table: string): void {
  const info = db.prepare("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?").get(table) as { wr: number };
  const columns = db.prepare("SELECT name, pk FROM pragma_table_info(?, 'main')").all(table) as { name: string; pk: number }[];
  const list = columns.map((c) => `"${c.name}"`).join(", ");
  const key = info.wr
    ? columns
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => `"${c.name}"`)
        .join(", ")
    : "rowid";
  db.exec(`INSERT INTO compacted."${table}" (${list}) SELECT ${list} FROM main."${table}" ORDER BY ${key}`);
}

/** Removes a file left by an earlier compaction; `onlyEmpty`: only when it holds nothing (an emptied WAL). */
function removeLeftover(file: string, onlyEmpty = false): void {
  for (const f of onlyEmpty ? [file] : [file, `${file}-wal`, `${file}-shm`]) {
    let size: number;
    try {
      size = statSync(f).size;
    } catch {
      continue;
    }
    if (!onlyEmpty || size === 0) rmSync(f, { force: true });
  }
}

/** Flushes a directory's entries to disk (the rename's durability); never a database file (SQLite syncs those). */
function fsyncDirectory(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
