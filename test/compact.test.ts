/**
 * `ledger-node compact` (issue 35 target 2): a SQLite ledger rewritten with its module tables at
 * the start of the file, where a node's memory map reads them, and renamed over the old file. Every
 * row kept, every read answered as before; refused while another process has the file open, and
 * for what is not a SQLite ledger.
 */
import Database from "better-sqlite3";
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serialize } from "node:v8";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_APP_ADDRESS } from "../src/ingest/devnet/chain.js";
import { SqliteStore } from "../src/storage/sqlite/SqliteStore.js";
import { CLI, requireBuiltCli, runCli } from "./helpers/cli.js";
import { startServe } from "./helpers/serveProcess.js";
import { modulesAt } from "./helpers/store.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-compact-"));
/** Announces (and holds at) the compaction's steps in a `compact` child: see the file. */
const COMPACT_PHASES = new URL("./helpers/compactPhases.mjs", import.meta.url).pathname;
const MODULE_TABLES = ["module_keys", "modules", "modules_by_address_version", "code"];

/** Where the module tables' pages end and the transactions' leaf pages start (`dbstat`). */
function layoutOf(db: string): { lastModulePage: number; firstTransactionLeaf: number } {
  const c = new Database(db, { readonly: true });
  try {
    const lastModulePage = c.prepare(`SELECT max(pageno) FROM dbstat WHERE name IN (${MODULE_TABLES.map(() => "?").join(", ")})`).pluck().get(...MODULE_TABLES) as number;
    const firstTransactionLeaf = c.prepare("SELECT min(pageno) FROM dbstat WHERE name = 'transactions' AND pagetype = 'leaf'").pluck().get() as number;
    return { lastModulePage, firstTransactionLeaf };
  } finally {
    c.close();
  }
}

/** Resolves once `child` announced compaction step `phase` on stderr; rejects if it exits first. */
function phaseReached(child: ChildProcess, phase: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let err = "";
    const onData = (d: Buffer) => {
      err += d;
      if (err.split("\n").includes(`compact phase: ${phase}`)) {
        child.stderr!.off("data", onData);
        child.off("exit", onExit);
        resolve();
      }
    };
    const onExit = (code: number | null) => reject(new Error(`compact exited (${code}) before step "${phase}": ${err}`));
    child.stderr!.on("data", onData);
    child.once("exit", onExit);
  });
}

/** Waits until process `pid` is stopped (SIGSTOP taken: state T in /proc); fails if it has exited. */
async function stopped(pid: number, where: string): Promise<void> {
  for (let i = 0; ; i++) {
    let state: string;
    try {
      state = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0]!;
    } catch {
      state = "gone";
    }
    expect(state, `${where}: compact had exited before it was stopped`).not.toMatch(/^(gone|Z|X)$/);
    if (state === "T") return;
    expect(i, `${where}: tries until compact is stopped`).toBeLessThan(1000);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** SQLite's journal mode of the file ("wal" for a ledger a writer opened). */
function journalModeOf(db: string): unknown {
  const c = new Database(db, { readonly: true });
  try {
    return c.pragma("journal_mode", { simple: true });
  } finally {
    c.close();
  }
}

/**
 * Every row of every table, in key order, and the file's settings: what a rewrite must keep. Each
 * table is its row count and the SHA-256 of its rows serialized in order, so two files compare by
 * a few strings (a deep comparison of some 100,000 rows is most of a test's time) and a
 * difference names the table. (A kill between the old file's switch out of WAL and the rename
 * leaves it in rollback mode, whole; the next writer's open puts it back in WAL: the journal mode
 * is checked apart.)
 */
function contentsOf(db: string): Record<string, unknown> {
  const c = new Database(db, { readonly: true });
  try {
    const out: Record<string, unknown> = {};
    const tables = c.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[];
    for (const t of tables) {
      const columns = c.prepare("SELECT count(*) FROM pragma_table_info(?)").pluck().get(t) as number;
      const order = Array.from({ length: columns }, (_, i) => i + 1).join(", ");
      const hash = createHash("sha256");
      let count = 0;
      for (const row of c.prepare(`SELECT * FROM "${t}" ORDER BY ${order}`).raw(true).iterate()) {
        hash.update(serialize(row));
        count++;
      }
      out[t] = `${count} rows, sha256 ${hash.digest("hex")}`;
    }
    out.indexes = c.prepare("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name").all();
    out.autoVacuum = c.pragma("auto_vacuum", { simple: true });
    out.check = c.pragma("quick_check", { simple: true });
    return out;
  } finally {
    c.close();
  }
}

/** Every module page of the app account and 0x1 at each version a module changed, through the store's reads. */
async function modulePagesOf(db: string): Promise<unknown[]> {
  const s = new SqliteStore(db, { readonly: true });
  try {
    const c = new Database(db, { readonly: true });
    const versions = c.prepare("SELECT DISTINCT version FROM modules ORDER BY version").pluck().safeIntegers(true).all() as bigint[];
    c.close();
    const pages: unknown[] = [];
    for (const address of [Buffer.from(DEVNET_APP_ADDRESS.slice(2), "hex"), Buffer.alloc(32, 0).fill(1, 31)]) {
      for (const v of versions) pages.push(await modulesAt(s, address, v, null, 1000));
    }
    return pages;
  } finally {
    await s.close();
  }
}

describe("ledger-node compact", () => {
  const original = join(dir, "original.db");
  beforeAll(async () => {
    requireBuiltCli();
    const chain = join(dir, "chain.ndjson");
    // An upgrade of the app module every 50 blocks: module rows written among the transactions.
    const made = await runCli(["devnet", "--out", chain, "--blocks", "400"]);
    expect(made.code, made.stderr).toBe(0);
    const imported = await runCli(["import", "--db", original, chain]);
    expect(imported.code, imported.stderr).toBe(0);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("puts the module tables before the transactions' rows, keeping every row and every module page", async () => {
    const db = join(dir, "compacted.db");
    copyFileSync(original, db);
    const before = layoutOf(db);
    // Written block by block, the module rows of later upgrades lie after the first transactions.
    expect(before.lastModulePage).toBeGreaterThan(before.firstTransactionLeaf);
    const rows = contentsOf(db);
    const pages = await modulePagesOf(db);
    expect(pages.flat().length).toBeGreaterThan(10);

    const r = await runCli(["compact", "--db", db]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`compacted ${db}`);
    const after = layoutOf(db);
    expect(after.lastModulePage).toBeLessThan(after.firstTransactionLeaf);
    expect(contentsOf(db)).toEqual(rows);
    expect(journalModeOf(db)).toBe("wal");
    expect(await modulePagesOf(db)).toEqual(pages);
    expect(existsSync(`${db}.compact-tmp`)).toBe(false);
    expect(existsSync(`${db}.compact-tmp-wal`)).toBe(false);
  });

  it("serves and takes new blocks after compacting: the file is a WAL ledger like any other", async () => {
    const db = join(dir, "grows.db");
    copyFileSync(original, db);
    const r = await runCli(["compact", "--db", db]);
    expect(r.code, r.stderr).toBe(0);
    const longer = join(dir, "longer.ndjson");
    expect((await runCli(["devnet", "--out", longer, "--blocks", "450"])).code).toBe(0);
    const imported = await runCli(["import", "--db", db, longer]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain("in 50 blocks");
    const node = await startServe(["--db", db, "--no-prune"]);
    try {
      const info = (await (await fetch(node.base)).json()) as { block_height: string };
      expect(info.block_height).toBe("450");
    } finally {
      await node.stop();
    }
  }, 60_000);

  it("refuses while a node has the ledger open, and leaves the file as it was", async () => {
    const db = join(dir, "served.db");
    copyFileSync(original, db);
    const rows = contentsOf(db);
    const node = await startServe(["--db", db, "--no-prune"]);
    try {
      const inode = statSync(db).ino;
      const r = await runCli(["compact", "--db", db]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`database ${db} is open in another process: stop the node`);
      expect(statSync(db).ino).toBe(inode);
      expect(existsSync(`${db}.compact-tmp`)).toBe(false);
      expect((await fetch(node.base)).status).toBe(200);
    } finally {
      await node.stop();
    }
    expect(contentsOf(db)).toEqual(rows);
  }, 60_000);

  it("leaves a whole ledger wherever kill -9 lands mid-compaction, and compacts it on the next run", async () => {
    const rows = contentsOf(original);
    // Each kill on a fresh copy, at a step the compaction announced (test/helpers/compactPhases.mjs),
    // held just before it: the new file's copy transaction open; committed into the new file's WAL;
    // the new file complete, the ledger still in WAL mode; the ledger out of WAL mode, the rename
    // next. Or not held: stopped as soon as it starts copying its largest table (within that
    // statement or a little past it; the checks below show it had not reached the rename).
    const kills: { at: string; held: boolean }[] = [
      { at: "copy modules", held: true },
      { at: "copy transactions", held: false },
      { at: "checkpoint", held: true },
      { at: "leave wal", held: true },
      { at: "rename", held: true },
    ];
    for (const { at, held } of kills) {
      const db = join(dir, `killed-${at.replace(" ", "-")}${held ? "-held" : ""}.db`);
      copyFileSync(original, db);
      const inode = statSync(db).ino;
      const child = spawn(process.execPath, ["--import", COMPACT_PHASES, CLI, "compact", "--db", db], {
        stdio: ["ignore", "ignore", "pipe"],
        env: { ...process.env, COMPACT_HOLD_AT: held ? at : "" },
      });
      const exited = new Promise<NodeJS.Signals | null>((r) => child.once("exit", (_code, signal) => r(signal)));
      await phaseReached(child, at);
      // Stopped before anything is looked at, so what is checked is the state the kill lands in.
      const where = `killed at "${at}"${held ? " (held there)" : ""}`;
      child.kill("SIGSTOP");
      await stopped(child.pid!, where);
      // Mid-compaction: the new file is there and not yet renamed over the ledger, which is the old file.
      expect(existsSync(`${db}.compact-tmp`), `${where}: the new file exists`).toBe(true);
      expect(statSync(db).ino, `${where}: the ledger is still the old file`).toBe(inode);
      child.kill("SIGKILL");
      expect(await exited, `${where}: compact was running until the kill`).toBe("SIGKILL");
      expect(contentsOf(db), where).toEqual(rows);
      const again = await runCli(["compact", "--db", db]);
      expect(again.code, again.stderr).toBe(0);
      expect(contentsOf(db)).toEqual(rows);
      expect(journalModeOf(db)).toBe("wal");
      const layout = layoutOf(db);
      expect(layout.lastModulePage).toBeLessThan(layout.firstTransactionLeaf);
      expect(existsSync(`${db}.compact-tmp`)).toBe(false);
    }
  }, 360_000);

  it("replaces the temporary file a killed compaction left", async () => {
    const db = join(dir, "leftover.db");
    copyFileSync(original, db);
    const rows = contentsOf(db);
    writeFileSync(`${db}.compact-tmp`, "half a file from a compaction killed mid-way");
    writeFileSync(`${db}.compact-tmp-wal`, "its WAL");
    const r = await runCli(["compact", "--db", db]);
    expect(r.code, r.stderr).toBe(0);
    expect(contentsOf(db)).toEqual(rows);
    expect(existsSync(`${db}.compact-tmp`)).toBe(false);
  });

  it("refuses a missing file, a file that is not SQLite, :memory: and a PostgreSQL URL, naming each", async () => {
    const missing = join(dir, "missing.db");
    const m = await runCli(["compact", "--db", missing]);
    expect(m.code).toBe(1);
    expect(m.stderr).toContain(`database ${missing} does not exist; compact never creates a database`);
    expect(existsSync(missing)).toBe(false);

    const text = join(dir, "text.db");
    writeFileSync(text, "not a database at all, but long enough to have a header's worth of bytes in it: ".repeat(4));
    const t = await runCli(["compact", "--db", text]);
    expect(t.code).toBe(1);
    expect(t.stderr).toContain(`database ${text} is not a SQLite database`);

    const memory = await runCli(["compact", "--db", ":memory:"]);
    expect(memory.code).toBe(1);
    expect(memory.stderr).toContain("compact rewrites a ledger file; :memory: is not one");

    const p = await runCli(["compact", "--db", "postgres://user:secret@127.0.0.1:1/ledger"]);
    expect(p.code).toBe(1);
    expect(p.stderr).toContain("compact rewrites a SQLite ledger file; postgres://user:***@127.0.0.1:1/ledger is a PostgreSQL database");
  });
});
