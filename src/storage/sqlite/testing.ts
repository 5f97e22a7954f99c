/**
 * Test seams of the SQLite store, kept out of its class: pragmas a test sets on a store's own
 * connection to make SQLite fail as a read-only file or a full disk does.
 */
import { connections, type SqliteStore } from "./SqliteStore.js";

function connectionOf(store: SqliteStore) {
  const db = connections.get(store);
  if (!db) throw new Error("not a SqliteStore opened by this module");
  return db;
}

/**
 * While on, every write fails as on a read-only database file (`PRAGMA query_only`; SQLITE_READONLY).
 * As root, chmod does not stop writes through an open descriptor, so the tests make one this way.
 */
export function setQueryOnly(store: SqliteStore, on: boolean): void {
  connectionOf(store).pragma(`query_only = ${on ? 1 : 0}`);
}

/** While on, the file cannot grow past its size now (`PRAGMA max_page_count`; SQLITE_FULL, as on a full disk). */
export function setSizeLimit(store: SqliteStore, on: boolean): void {
  const db = connectionOf(store);
  const pages = on ? Number(db.pragma("page_count", { simple: true })) : 0xfffffffe;
  db.pragma(`max_page_count = ${pages}`);
}

/** The page cache and memory map the store's connection runs with, in bytes. */
export function memorySettings(store: SqliteStore): { cacheBytes: number; mmapBytes: number } {
  const db = connectionOf(store);
  const cache = Number(db.pragma("cache_size", { simple: true }));
  const pageSize = Number(db.pragma("page_size", { simple: true }));
  // cache_size: pages when positive, KiB when negative
  return { cacheBytes: cache < 0 ? -cache * 1024 : cache * pageSize, mmapBytes: Number(db.pragma("mmap_size", { simple: true })) };
}
