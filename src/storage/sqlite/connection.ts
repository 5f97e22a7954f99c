/**
 * Opening a SQLite ledger file: the connection's pragmas, the functions migrations call, the
 * migrations themselves (`schema.ts`), and the checks that turn a wrong file into a plain error.
 */
import Database from "better-sqlite3";
import type { Database as Db } from "better-sqlite3";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { moduleAbiJson } from "../../move/abi.js";
import { StorageCorruptError, StorageUnavailableError } from "../contracts/errors.js";
import { packResourceValue } from "../common/resourceValue.js";
import { SQLITE_CACHE_SIZE_MIB, SQLITE_MMAP_SIZE_MIB, type SqliteStoreOptions } from "./options.js";
import { MIGRATIONS } from "./schema.js";

/** `PRAGMA auto_vacuum` of a file whose free pages `PRAGMA incremental_vacuum` gives back. */
export const AUTO_VACUUM_INCREMENTAL = 2;

/** A file whose schema is older than this build's, opened read-only (`checkSchemaCurrent`). */
class OlderSchemaError extends Error {}

/** The file is not a SQLite database: SQLite refused its header (SQLITE_NOTADB) on the first read. */
export class NotADatabaseError extends StorageCorruptError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NotADatabaseError";
  }
}

/** Opens `path` with the store's pragmas; a writer migrates it to this build's schema. */
export function openDatabase(path: string, opts: SqliteStoreOptions): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  let db: Db;
  try {
    db = new Database(path, { readonly: opts.readonly ?? false });
  } catch (e) {
    throw new StorageUnavailableError(`cannot open SQLite database ${path}: ${(e as Error).message}`, { cause: e });
  }
  try {
    // The busy timeout first: setting WAL mode already waits for another process's lock.
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
    // A new file gives pruned pages back to the file system (`prune`); only possible before its
    // first table. (An existing file keeps reusing its free pages for new blocks.)
    if (!opts.readonly && Number(db.pragma("page_count", { simple: true })) === 0) {
      db.pragma(`auto_vacuum = ${AUTO_VACUUM_INCREMENTAL}`);
    }
    // A reader does not set the mode: the writer did, and it is stored in the file. Asking a
    // read-only connection to set it fails on a file this process cannot write.
    if (!opts.readonly) db.pragma("journal_mode = WAL");
    // FULL: a committed block survives power loss, not only a crash of the process.
    db.pragma("synchronous = FULL");
    if (!opts.readonly && opts.walAutocheckpointPages !== undefined) db.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(opts.walAutocheckpointPages))}`);
    // Negative: KiB. SQLite caps the map at its compile-time limit (2 GiB here).
    db.pragma(`cache_size = ${-Math.max(0, Math.floor((opts.cacheSizeMiB ?? SQLITE_CACHE_SIZE_MIB) * 1024))}`);
    db.pragma(`mmap_size = ${Math.max(0, Math.floor((opts.mmapSizeMiB ?? SQLITE_MMAP_SIZE_MIB) * 1024 * 1024))}`);
    if (opts.readonly) checkSchemaCurrent(db);
    if (!opts.readonly) {
      // Migration 4 packs the resource values it copies.
      db.function("pack_resource_value", { deterministic: true }, (owner: unknown, json: unknown) =>
        json === null ? null : packResourceValue(owner as Buffer, json as string),
      );
      // Migration 5 stores the ABI of the code already there.
      db.function("module_abi_json", { deterministic: true }, (bytecode: unknown) => moduleAbiJson(bytecode as Buffer));
      // Migration 7 names the base records by the SHA-256 (hex) of their old names.
      db.function("base_record_digest", { deterministic: true }, (name: unknown) => createHash("sha256").update(name as string).digest("hex"));
      migrate(db);
    }
  } catch (e) {
    db.close();
    // The first statements above read the header; a file that is not SQLite fails there.
    if (e instanceof Database.SqliteError && e.code === "SQLITE_NOTADB") {
      throw new NotADatabaseError(`${path} is not a SQLite database: ${e.message}`, { cause: e });
    }
    // A reader of a WAL database creates PATH-wal and PATH-shm when they are missing.
    const hint = opts.readonly && !(e instanceof OlderSchemaError) ? ` (reading needs ${path}-wal and ${path}-shm: they must exist or the directory must be writable)` : "";
    throw new StorageUnavailableError(`cannot ${opts.readonly ? "read" : "write"} SQLite database ${path}: ${(e as Error).message}${hint}`, { cause: e });
  }
  return db;
}

/**
 * A reader does not migrate: a file an older version wrote must be opened by a writer first,
 * said plainly here rather than as the first statement that names a newer table.
 */
function checkSchemaCurrent(db: Db): void {
  const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").pluck().get() !== undefined;
  if (!hasTable) return; // a file no writer has created anything in: the reads say it is empty
  const current = Number(db.prepare("SELECT max(version) FROM schema_version").pluck().get() ?? 0);
  if (current < MIGRATIONS.length) {
    throw new OlderSchemaError(
      `its schema is version ${current} and this build reads version ${MIGRATIONS.length}: a read-only open does not migrate; ` +
        "open it once with a writer (serve without --no-prune, or an import) to migrate it",
    );
  }
}

/** Runs the migrations the file has not had, each in its own transaction. */
function migrate(db: Db): void {
  db.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  const row = db.prepare("SELECT max(version) AS v FROM schema_version").get() as { v: number | null };
  const current = row.v ?? 0;
  for (const [i, sql] of MIGRATIONS.entries()) {
    const version = i + 1;
    if (version <= current) continue;
    db.transaction(() => {
      db.exec(sql);
      db.prepare("INSERT INTO schema_version (version) VALUES (?)").run(version);
    })();
  }
}
