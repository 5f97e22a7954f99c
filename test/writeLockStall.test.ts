/**
 * A serving node whose devnet and pruner write while another process holds SQLite's write lock:
 * the writers wait on their own thread, so requests keep being answered at once (issue: a lock
 * wait in better-sqlite3 is synchronous, and on the serving thread it froze every request for up
 * to the busy timeout). The same hold against writers on the serving thread shows what the test
 * would catch.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "./helpers/node.js";
import { holdWriteLock } from "./helpers/sqliteLock.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-stall-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Latencies (ms) of GET /v1/info sent one after another for `ms` while another process holds the lock. */
async function latenciesDuringHold(node: TestNode, db: string, ms: number): Promise<number[]> {
  // Let the devnet write a few blocks first, so a write is due during the hold.
  const first = Number(((await (await fetch(`${node.base}/info`)).json()) as { block_height: string }).block_height);
  for (let h = first; h < first + 3; ) h = Number(((await (await fetch(`${node.base}/info`)).json()) as { block_height: string }).block_height);
  const lock = await holdWriteLock(db);
  const out: number[] = [];
  const end = performance.now() + ms;
  try {
    while (performance.now() < end) {
      const t0 = performance.now();
      const res = await fetch(`${node.base}/info`);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      out.push(performance.now() - t0);
    }
  } finally {
    await lock.release();
  }
  return out;
}

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!;

describe("an external write-lock hold while the node writes", () => {
  let node: TestNode | undefined;
  afterAll(async () => node?.close());

  it("stalls no request when the writers run on their own thread: /v1/info p99 below 50 ms", async () => {
    const db = join(dir, "threaded.db");
    node = await startTestNode(db, { devnet: { blockIntervalMs: 50 }, pruneWindow: "50", pruneIntervalMs: 50, busyTimeoutMs: 5_000 });
    const lat = await latenciesDuringHold(node, db, 2_500);
    expect(lat.length).toBeGreaterThan(50);
    console.log(`threaded writers: ${lat.length} requests during the hold, p99 ${p99(lat).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms`);
    expect(p99(lat)).toBeLessThan(50);
    // The writers went on once the lock was released: the chain grows again.
    const before = BigInt(((await (await fetch(`${node.base}/info`)).json()) as { ledger_version: string }).ledger_version);
    const base = node.base;
    await expect.poll(async () => BigInt(((await (await fetch(`${base}/info`)).json()) as { ledger_version: string }).ledger_version), { timeout: 10_000 }).toBeGreaterThan(before);
    await node.close();
    node = undefined;
  });

  it("(the contrast) stalls requests for the whole wait when the writers share the serving thread", async () => {
    const db = join(dir, "inline.db");
    node = await startTestNode(db, { devnet: { blockIntervalMs: 50 }, busyTimeoutMs: 5_000, writerThread: false });
    const lat = await latenciesDuringHold(node, db, 1_500);
    console.log(`writers on the serving thread: ${lat.length} requests during the hold, max ${Math.max(...lat).toFixed(0)} ms`);
    expect(Math.max(...lat)).toBeGreaterThan(1_000);
    await node.close();
    node = undefined;
  });
});
