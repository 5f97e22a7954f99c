/**
 * A serving node whose devnet writes while another process holds SQLite's write lock: the writers
 * wait on their own thread, so requests keep being answered while a block waits for the lock
 * (issue: a lock wait in better-sqlite3 is synchronous, and on the serving thread it froze every
 * request for up to the busy timeout). The same hold against writers on the serving thread shows
 * what the test would catch. No clocks: what is asserted is the order of events (answers while
 * the write is still pending; the write settling before the answer).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "./helpers/node.js";
import { holdWriteLock } from "./helpers/sqliteLock.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-stall-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const height = async (node: TestNode): Promise<number> =>
  Number(((await (await fetch(`${node.base}/info`)).json()) as { block_height: string }).block_height);

/** Tracks whether a promise has settled, and how. */
function track(p: Promise<void>): { settled: () => string | null; done: Promise<void> } {
  let state: string | null = null;
  const done = p.then(
    () => {
      state = "committed";
    },
    (e: unknown) => {
      state = `failed: ${(e as Error).message}`;
    },
  );
  return { settled: () => state, done };
}

describe("an external write-lock hold while the node writes", () => {
  let node: TestNode | undefined;
  afterAll(async () => node?.close());

  it("answers every request while a block waits for the lock, when the writers run on their own thread", async () => {
    const db = join(dir, "threaded.db");
    // Blocks only when told; a lock wait lasts as long as the hold (up to a minute).
    node = await startTestNode(db, { devnet: { blockIntervalMs: 3_600_000 }, busyTimeoutMs: 60_000 });
    await node.devnet!.produceBlock();
    const before = await height(node);
    const lock = await holdWriteLock(db);
    let write: ReturnType<typeof track>;
    try {
      write = track(node.devnet!.produceBlock());
      for (let i = 0; i < 50; i++) {
        const res = await fetch(`${node.base}/info`);
        expect(res.status).toBe(200);
        expect(((await res.json()) as { block_height: string }).block_height).toBe(String(before));
      }
      // All 50 answered while the block was still waiting for the lock.
      expect(write.settled()).toBeNull();
    } finally {
      expect(await lock.release()).toBe(0);
    }
    // The wait ends with the hold: the same block commits, and the chain grows.
    await write.done;
    expect(write.settled()).toBe("committed");
    expect(await height(node)).toBe(before + 1);
    await node.close();
    node = undefined;
  });

  it("(the contrast) answers a request only after the lock wait ends when the writers share the serving thread", async () => {
    const db = join(dir, "inline.db");
    node = await startTestNode(db, { devnet: { blockIntervalMs: 3_600_000 }, busyTimeoutMs: 1_000, writerThread: false });
    await node.devnet!.produceBlock();
    const before = await height(node);
    const lock = await holdWriteLock(db);
    const order: string[] = [];
    try {
      const answer = fetch(`${node.base}/info`).then(async (r) => {
        order.push(`answer ${r.status}`);
        await r.arrayBuffer();
      });
      const write = track(node.devnet!.produceBlock());
      void write.done.then(() => order.push("write settled"));
      await Promise.all([answer, write.done]);
      // The wait (the whole busy timeout) held the serving thread: the write gave up before the
      // request already sent could be answered.
      expect(order).toEqual(["write settled", "answer 200"]);
      expect(write.settled()).toMatch(/^failed: .*locked/);
    } finally {
      expect(await lock.release()).toBe(0);
    }
    // The block kept from the failed attempt commits once the lock is free.
    await node.devnet!.produceBlock();
    expect(await height(node)).toBe(before + 1);
    await node.close();
    node = undefined;
  });
});
