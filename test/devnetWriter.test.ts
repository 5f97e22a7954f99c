/**
 * `serve --devnet` when writing fails: a write lock held by another process, a read-only
 * database, a full disk and a deleted database file. While the writer fails, `/-/healthy` answers
 * 503 with the reason; once writing works again, the same block is committed and the ledger has
 * every height and every version (checked with SQL on the file itself). Once through the built CLI
 * with its own block timer and log; then in-process with `produceBlock()`, step by step.
 *
 * How each fault is made, as root (the tests run so) and with real files:
 * - lock: a second process holds `BEGIN EXCLUSIVE` on the same file;
 * - full disk: the database lives on a size-limited tmpfs that a filler file fills (when mounting
 *   is not allowed, the file is capped with `PRAGMA max_page_count` on the writer's connection);
 * - read-only: root writes through chmod, `chattr +i` and a read-only remount (EBUSY while files are
 *   open for writing) alike, so the writer's connection is set `PRAGMA query_only`, which fails
 *   every write with SQLITE_READONLY as a read-only file does;
 * - deleted: the file is unlinked while the node runs.
 */
import Database from "better-sqlite3";
import { spawn, spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Devnet } from "../src/ingest/devnet/devnet.js";
import type { LocalWriters } from "../src/ingest/writers.js";
import type { SqliteStore } from "../src/storage/sqlite/SqliteStore.js";
import { CLI, requireBuiltCli } from "./helpers/cli.js";
import { startTestNode, type TestNode } from "./helpers/node.js";
import { holdWriteLock } from "./helpers/sqliteLock.js";
import { setQueryOnly, setSizeLimit } from "../src/storage/sqlite/testing.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-writer-"));
const nodes: TestNode[] = [];
const mounts: string[] = [];
afterAll(async () => {
  for (const n of nodes) await n.close().catch(() => undefined);
  for (const m of mounts) spawnSync("umount", [m]);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A devnet node that only writes when told (produceBlock); a lock wait fails after 100 ms. Its
 * writers stay on the serving thread, so the tests reach the devnet and its store (the built CLI
 * test below runs them on their thread).
 */
async function devnetNode(db: string): Promise<TestNode> {
  const node = await startTestNode(db, { devnet: { blockIntervalMs: 3_600_000 }, busyTimeoutMs: 100, writerThread: false });
  nodes.push(node);
  return node;
}

/** The devnet of a node started by `devnetNode`. */
function devnetOf(node: TestNode): Devnet {
  return (node.devnet as LocalWriters).devnet!;
}

async function healthy(node: TestNode): Promise<{ status: number; message: string }> {
  const res = await fetch(`${node.base}/-/healthy`);
  const body = (await res.json()) as { message: string };
  return { status: res.status, message: body.message };
}

/**
 * Every height from the oldest to the newest block, every version from the oldest to the ledger
 * version, each block starting right after the one before: read from the file, not the API.
 */
function expectNoGap(db: string, blocks: number): void {
  const c = new Database(db, { readonly: true });
  try {
    const l = c.prepare("SELECT ledger_version, block_height, oldest_version FROM ledger WHERE id = 1").get() as {
      ledger_version: number;
      block_height: number;
      oldest_version: number;
    };
    expect(l.block_height).toBe(blocks);
    const hs = c.prepare("SELECT height, first_version, last_version FROM blocks ORDER BY height").all() as Array<{
      height: number;
      first_version: number;
      last_version: number;
    }>;
    expect(hs.map((b) => b.height)).toEqual(Array.from({ length: blocks + 1 }, (_, i) => i));
    for (let i = 1; i < hs.length; i++) expect(hs[i]!.first_version, `block ${i}`).toBe(hs[i - 1]!.last_version + 1);
    expect(hs[hs.length - 1]!.last_version).toBe(l.ledger_version);
    const v = c.prepare("SELECT count(*) AS n, min(version) AS lo, max(version) AS hi FROM transactions").get() as Record<string, number>;
    expect(v).toEqual({ n: l.ledger_version - l.oldest_version + 1, lo: l.oldest_version, hi: l.ledger_version });
  } finally {
    c.close();
  }
}


describe("serve --devnet under a lock held by another process (built CLI, its own timer and log)", () => {
  it("logs each failure and the recovery, answers 503 meanwhile, and leaves no gap", { timeout: 90_000 }, async () => {
    requireBuiltCli();
    const db = join(dir, "cli-lock.db");
    const child = spawn(process.execPath, [CLI, "serve", "--devnet", "--block-interval", "100", "--prune-window", "100000000", "--db", db, "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    try {
      const poll = async <T>(what: string, f: () => Promise<T | undefined>, ms = 40_000): Promise<T> => {
        const deadline = Date.now() + ms;
        for (;;) {
          const v = await f().catch(() => undefined);
          if (v !== undefined) return v;
          if (Date.now() > deadline || child.exitCode !== null) throw new Error(`waiting for ${what}; output: ${out}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      const base = await poll("the server", async () => / at (http:\/\/[0-9.:]+\/v1)/.exec(out)?.[1]);
      const health = async () => {
        const res = await fetch(`${base}/-/healthy`);
        return { status: res.status, message: ((await res.json()) as { message: string }).message };
      };
      await poll("a few blocks", async () => {
        const info = (await (await fetch(`${base}/info`)).json()) as { block_height: string | null };
        return Number(info.block_height) >= 3 ? true : undefined;
      });
      const lock = await holdWriteLock(db);
      // SQLite's 5 s lock wait passes, the block fails, and the health check says why.
      const during = await poll("a 503 from /-/healthy", async () => {
        const h = await health();
        return h.status === 503 ? h : undefined;
      });
      expect(during.message).toMatch(/devnet is failing to write: [0-9]+ attempts? in a row .*locked/);
      const failures = async () => Number(/^ledger_node_writer_consecutive_failures ([0-9]+)$/m.exec(await (await fetch(base.replace(/\/v1$/, "/metrics"))).text())?.[1]);
      expect(await failures()).toBeGreaterThan(0);
      expect(await lock.release()).toBe(0);
      await poll("a 200 from /-/healthy", async () => ((await health()).status === 200 ? true : undefined));
      expect(await failures()).toBe(0);
      expect(out).toContain(`devnet: writing failed (attempt 1): writing SQLite database ${db} failed: database is locked; block `);
      expect(out).toMatch(/database is locked; block [0-9]+ is kept and tried again/);
      // The log line may reach us after the health check already answers 200: wait for it.
      const recovered = /devnet: writing works again after [0-9]+ failed attempts?; block [0-9]+ committed/;
      await poll("the recovery log line", async () => (recovered.test(out) ? true : undefined));
    } finally {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    const c = new Database(db, { readonly: true });
    const { block_height: height } = c.prepare("SELECT block_height FROM ledger").get() as { block_height: number };
    c.close();
    expectNoGap(db, height);
  });
});

describe("devnet writer failures (sqlite)", () => {
  it("another process holds the write lock: 503 while it does, then the same block commits and nothing is missing", async () => {
    const db = join(dir, "lock.db");
    const node = await devnetNode(db);
    for (let i = 0; i < 5; i++) await devnetOf(node).produceBlock();
    const lock = await holdWriteLock(db);
    const height = devnetOf(node).nextHeight;
    for (let attempt = 0; attempt < 3; attempt++) {
      await expect(devnetOf(node).produceBlock()).rejects.toThrow(/locked|busy/i);
      // The block is kept, not skipped: the next attempt is for the same height.
      expect(devnetOf(node).nextHeight).toBe(height);
    }
    const during = await healthy(node);
    expect(during.status).toBe(503);
    // The reason names the database file.
    expect(during.message).toContain(db);
    expect(during.message).toMatch(/devnet is failing to write: 3 attempts/);
    // Reads go on during the hold (WAL): the API still answers from the committed ledger.
    const info = (await (await fetch(`${node.base}/info`)).json()) as { block_height: string };
    expect(info.block_height).toBe(String(height - 1n));
    expect(await lock.release()).toBe(0);
    await devnetOf(node).produceBlock();
    expect(devnetOf(node).nextHeight).toBe(height + 1n);
    expect((await healthy(node)).status).toBe(200);
    for (let i = 0; i < 3; i++) await devnetOf(node).produceBlock();
    expectNoGap(db, 9);
  });

  it("a read-only database: 503 while writes fail, then the same block commits and nothing is missing", async () => {
    const db = join(dir, "readonly.db");
    const node = await devnetNode(db);
    for (let i = 0; i < 4; i++) await devnetOf(node).produceBlock();
    const store = node.store as SqliteStore;
    setQueryOnly(store, true);
    const height = devnetOf(node).nextHeight;
    await expect(devnetOf(node).produceBlock()).rejects.toThrow(/readonly/i);
    await expect(devnetOf(node).produceBlock()).rejects.toThrow(/readonly/i);
    expect(devnetOf(node).nextHeight).toBe(height);
    const during = await healthy(node);
    expect(during.status).toBe(503);
    // The reason names the database file.
    expect(during.message).toContain(db);
    expect(during.message).toMatch(/devnet is failing to write: 2 attempts.*readonly/);
    setQueryOnly(store, false);
    for (let i = 0; i < 3; i++) await devnetOf(node).produceBlock();
    expect((await healthy(node)).status).toBe(200);
    expectNoGap(db, 7);
  });

  it("a full disk: 503 while writes fail, then the same block commits once space is freed, and nothing is missing", async () => {
    const mnt = join(dir, "small-disk");
    mkdirSync(mnt);
    const mounted = process.getuid?.() === 0 && spawnSync("mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt]).status === 0;
    if (mounted) mounts.push(mnt);
    // Root here can mount (this sandbox); say which way the disk was filled.
    console.log(`disk-full case: ${mounted ? "16 MiB tmpfs filled by a filler file" : "max_page_count on the writer's connection"}`);
    const db = join(mnt, "full.db");
    const node = await devnetNode(db);
    for (let i = 0; i < 6; i++) await devnetOf(node).produceBlock();
    let produced = 6;
    const filler = join(mnt, "filler");
    // Each chunk size written until the file system refuses it: the error codes, in order.
    const refusals: unknown[] = [];
    if (mounted) {
      // Fill the file system to the last byte: big chunks, then small ones.
      const fd = openSync(filler, "w");
      for (const size of [1 << 20, 4096, 512, 1]) {
        const chunk = Buffer.alloc(size, 1);
        try {
          for (;;) writeSync(fd, chunk);
        } catch (e) {
          refusals.push((e as NodeJS.ErrnoException).code);
        }
      }
      closeSync(fd);
    } else {
      setSizeLimit(node.store as SqliteStore, true);
    }
    expect(refusals, "the filler's writes end on a full disk").toEqual(mounted ? ["ENOSPC", "ENOSPC", "ENOSPC", "ENOSPC"] : []);
    // Each block needs new pages sooner or later (a small block may still fit a page already had).
    let failure: Error | null = null;
    for (let i = 0; i < 40 && !failure; i++) {
      await devnetOf(node).produceBlock().then(() => produced++, (e: Error) => (failure = e));
    }
    expect(failure, "a block should fail on the full disk").not.toBeNull();
    expect(failure!.message).toMatch(/full/i);
    const height = devnetOf(node).nextHeight;
    await expect(devnetOf(node).produceBlock()).rejects.toThrow(/full/i);
    expect(devnetOf(node).nextHeight).toBe(height);
    const during = await healthy(node);
    expect(during.status).toBe(503);
    // The reason names the database file.
    expect(during.message).toContain(db);
    expect(during.message).toMatch(/devnet is failing to write: 2 attempts.*full/);
    if (mounted) unlinkSync(filler);
    else setSizeLimit(node.store as SqliteStore, false);
    for (let i = 0; i < 3; i++) await devnetOf(node).produceBlock();
    produced += 3;
    expect(devnetOf(node).nextHeight).toBe(height + 3n);
    expect((await healthy(node)).status).toBe(200);
    await node.close();
    nodes.splice(nodes.indexOf(node), 1);
    expectNoGap(db, produced);
  });

  it("a deleted database file: the writer refuses to write into the unlinked file and says so", async () => {
    const db = join(dir, "deleted.db");
    const node = await devnetNode(db);
    for (let i = 0; i < 3; i++) await devnetOf(node).produceBlock();
    expect((await healthy(node)).status).toBe(200);
    unlinkSync(db);
    const height = devnetOf(node).nextHeight;
    await expect(devnetOf(node).produceBlock()).rejects.toThrow(new RegExp(`${db.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} was deleted`));
    expect(devnetOf(node).nextHeight).toBe(height);
    const during = await healthy(node);
    expect(during.status).toBe(503);
    // The reason names the database file.
    expect(during.message).toContain(db);
    expect(during.message).toContain(`the database file ${db} was deleted while it was open`);
  });
});
