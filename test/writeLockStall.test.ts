/**
 * A serving node whose devnet writes while another process holds SQLite's write lock: the writers
 * wait on their own thread, so requests keep being answered while a block waits for the lock
 * (issue: a lock wait in better-sqlite3 is synchronous, and on the serving thread it froze every
 * request for up to the busy timeout). The same hold against writers on the serving thread shows
 * what the test would catch. No clocks: what is asserted is the order of events (answers while
 * the write is still pending; the write settling before the answer).
 *
 * The same for `serve --follow` (issue 31, §4: its follower committed on the serving thread):
 * its commits, and the base state it fetches for a read, wait on the writer thread, and requests
 * are answered while the lock is held; the lag still reaches /v1/info and the metrics.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { requireBuiltCli } from "./helpers/cli.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";
import { startTestNode, type TestNode } from "./helpers/node.js";
import { type ServeProcess, startServe } from "./helpers/serveProcess.js";
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

describe("an external write-lock hold while serve --follow syncs", () => {
  let up: FakeUpstream | undefined;
  let replica: ServeProcess | undefined;
  afterAll(async () => {
    await replica?.stop();
    await up?.close();
  });

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const infoOf = async (base: string) =>
    (await (await fetch(`${base}/info`)).json()) as { ledger_version: string; follow_lag_versions?: string };
  const lagMetric = async (base: string) =>
    /^ledger_node_writer_lag_versions (\d+)$/m.exec(await (await fetch(`${base.replace(/\/v1$/, "")}/metrics`)).text())?.[1] ?? null;
  async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 600; i++) {
      if (await probe().catch(() => false)) return;
      await sleep(50);
    }
    throw new Error(`${what}: not seen within 30 s`);
  }

  /**
   * Holds the lock while `pending` waits on it, sends `/v1/info` requests one after another,
   * and releases the lock once they are all answered, or after `HOLD_MS` (below the serving
   * connection's busy timeout of 5 s): an event loop held by the wait answers only after that.
   * Returns the order of the answers and the release.
   */
  const HOLD_MS = 4_000;
  async function answeredWhileHeld(base: string, lock: Awaited<ReturnType<typeof holdWriteLock>>, check: (i: { ledger_version: string; follow_lag_versions?: string }) => void) {
    const order: string[] = [];
    const answers = (async () => {
      for (let i = 0; i < 20; i++) {
        check(await infoOf(base));
        order.push("answer");
      }
    })();
    await Promise.race([answers, sleep(HOLD_MS)]);
    order.push("release");
    expect(await lock.release()).toBe(0);
    await answers;
    return order;
  }

  it("answers requests while the follower's commit waits for the lock; then it catches up, its lag in /v1/info and the metrics", async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: 10 });
    const db = join(dir, "follow.db");
    replica = await startServe(["--follow", up.base, "--from", "genesis", "--db", db, "--no-prune", "--max-rps", "5000", "--poll", "50"]);
    const r = replica;
    await until("caught up", async () => (await infoOf(r.base)).ledger_version === String(up!.ledgerVersion));
    const before = up.ledgerVersion;
    const lock = await holdWriteLock(db);
    const pages = up.count("/v1/transactions");
    await up.extend(5);
    const behind = String(up.ledgerVersion - before);
    // The follower asked for the new versions; its commit of them now waits for the lock.
    await until("the new versions asked for", async () => up!.count("/v1/transactions") > pages);
    await sleep(200);
    // The metric is read while the lock is held: once it is released the commit may land at once.
    expect(await lagMetric(r.base)).toBe(behind);
    const order = await answeredWhileHeld(r.base, lock, (i) => {
      // The ledger as it was, and the lag the follower reported from its thread.
      expect(i).toMatchObject({ ledger_version: String(before), follow_lag_versions: behind });
    });
    expect(order).toEqual([...Array(20).fill("answer"), "release"]);
    // The commit that waited goes through once the lock is free.
    await until("caught up again", async () => (await infoOf(r.base)).ledger_version === String(up!.ledgerVersion));
    await until("lag 0", async () => (await infoOf(r.base)).follow_lag_versions === "0");
    expect(await lagMetric(r.base)).toBe("0");
    expect(r.proc.exitCode).toBeNull();
    await r.stop();
    replica = undefined;
  }, 120_000);

  it("answers requests while a read's base state, fetched from the upstream, waits for the lock to be written", async () => {
    requireBuiltCli();
    // More blocks than the gas estimator's history of 120 that a replica started at the head syncs
    // first, so its first block comes after genesis.
    await up?.close();
    up = await FakeUpstream.start({ blocks: 140 });
    const db = join(dir, "follow-latest.db");
    // Started at the head: 0x1's modules were written by genesis, before its first block.
    replica = await startServe(["--follow", up.base, "--from", "latest", "--db", db, "--no-prune", "--max-rps", "5000", "--poll", "50", "--upstream-timeout", "30000"]);
    const r = replica;
    await until("caught up", async () => (await infoOf(r.base)).ledger_version === String(up!.ledgerVersion));
    const lock = await holdWriteLock(db);
    const modules = fetch(`${r.base}/accounts/0x1/modules?limit=3`).then(async (res) => ({ status: res.status, body: await res.text() }));
    const asked = up.count("/v1/*");
    await until("0x1's modules asked of the upstream", async () => up!.count("/v1/*") > asked);
    await sleep(200);
    const order = await answeredWhileHeld(r.base, lock, (i) => expect(i.ledger_version).toBe(String(up!.ledgerVersion)));
    expect(order).toEqual([...Array(20).fill("answer"), "release"]);
    // Written once the lock is free, and answered as the upstream answers.
    const ours = await modules;
    const theirs = await fetch(`${up.base}/accounts/0x1/modules?limit=3&ledger_version=${(await infoOf(r.base)).ledger_version}`);
    expect(ours).toEqual({ status: 200, body: await theirs.text() });
    await r.stop();
    replica = undefined;
  }, 120_000);
});
