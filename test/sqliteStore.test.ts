/** What the SQLite store does beyond the shared suite (`store.suite.ts`): its own settings. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SQLITE_CACHE_SIZE_MIB, SQLITE_MMAP_SIZE_MIB, SqliteStore } from "../src/storage/sqlite/SqliteStore.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-sqlite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const newPath = () => join(dir, `ledger-${n++}.db`);

describe("SQLite store settings", () => {
  it("sizes the page cache and the memory map by default and as asked, for writers and readers", async () => {
    const path = newPath();
    const writer = new SqliteStore(path);
    expect(writer.memorySettings()).toEqual({ cacheBytes: SQLITE_CACHE_SIZE_MIB * 1024 * 1024, mmapBytes: SQLITE_MMAP_SIZE_MIB * 1024 * 1024 });
    const reader = new SqliteStore(path, { readonly: true, cacheSizeMiB: 2, mmapSizeMiB: 0 });
    expect(reader.memorySettings()).toEqual({ cacheBytes: 2 * 1024 * 1024, mmapBytes: 0 });
    await reader.close();
    await writer.close();
  });
});
