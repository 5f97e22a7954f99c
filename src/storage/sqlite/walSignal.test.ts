import Database from "better-sqlite3";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { WalSignal } from "./walSignal.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-wal-signal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A WAL-mode file with one table, and a connection of its own that commits to it. */
function walFile(path: string): Database.Database {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (v INTEGER)");
  return db;
}

describe("the WAL signal of a SQLite file", () => {
  it("tells of each commit of another connection, not of other files' writes, and nothing once stopped", async () => {
    const path = join(dir, "a.db");
    const db = walFile(path);
    let told = 0;
    const w = new WalSignal(path).watch(() => told++);
    try {
      expect(w.live).toBe(true);
      writeFileSync(join(dir, "other.txt"), "not the database");
      await sleep(100);
      expect(told).toBe(0);
      db.prepare("INSERT INTO t VALUES (1)").run();
      await expect.poll(() => told, { timeout: 2_000 }).toBeGreaterThan(0);
      w.stop();
      expect(w.live).toBe(false);
      const after = told;
      db.prepare("INSERT INTO t VALUES (2)").run();
      await sleep(100);
      expect(told).toBe(after);
    } finally {
      w.stop();
      db.close();
    }
  });

  it("watches the directory of the file a symbolic link names, where SQLite keeps the WAL", async () => {
    mkdirSync(join(dir, "real"));
    mkdirSync(join(dir, "links"));
    const real = join(dir, "real", "b.db");
    const db = walFile(real);
    symlinkSync(real, join(dir, "links", "b.db"));
    let told = 0;
    const w = new WalSignal(join(dir, "links", "b.db")).watch(() => told++);
    try {
      db.prepare("INSERT INTO t VALUES (1)").run();
      await expect.poll(() => told, { timeout: 2_000 }).toBeGreaterThan(0);
    } finally {
      w.stop();
      db.close();
    }
  });
});
