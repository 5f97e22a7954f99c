/**
 * The importer when commits fail: every push or finish that throws is retried with the same
 * argument, and the ledger ends with every block, once, in order. The store is a real SQLite file;
 * a wrapper makes some commits fail before they reach it, as a locked database would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { BlockWrite, PreparedBlock } from "../storage/contracts/writer.js";
import { SqliteStore } from "../storage/sqlite/SqliteStore.js";
import { DevnetChain, defaultDevnetChainOptions } from "./devnet/chain.js";
import { type ImportStore, Importer } from "./importer.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-importer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `store` whose commits fail whenever `fail()` says so, and whose batches' preparations whenever `failPrepare()` does. */
function flaky(store: SqliteStore, fail: () => boolean, failPrepare: () => boolean): ImportStore {
  const boom = async () => {
    throw new Error("database is locked");
  };
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "prepareBlocks") return (ws: BlockWrite[]) => (failPrepare() ? boom() : target.prepareBlocks(ws));
      if (prop === "commitPrepared") return (bs: PreparedBlock[]) => (fail() ? boom() : target.commitPrepared(bs));
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/**
 * `store` whose first batch is written only once the second batch's preparation has ended, and
 * where `failing` fails: the second batch's preparation, or the first batch's write. Records the
 * batches written.
 */
function overlapping(store: SqliteStore, failing: "prepare" | "write"): { store: ImportStore; written: PreparedBlock[][]; heal: () => void } {
  let prepares = 0;
  let healed = false;
  let secondPrepared!: () => void;
  const second = new Promise<void>((r) => (secondPrepared = r));
  const written: PreparedBlock[][] = [];
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "prepareBlocks") {
        return async (ws: BlockWrite[]) => {
          const n = prepares++;
          try {
            if (n === 1 && failing === "prepare" && !healed) throw new Error("packing failed");
            return await target.prepareBlocks(ws);
          } finally {
            if (n === 1) setImmediate(secondPrepared);
          }
        };
      }
      if (prop === "commitPrepared") {
        return async (bs: PreparedBlock[]) => {
          if (!healed) await second;
          if (written.length === 0 && failing === "write" && !healed) throw new Error("database is locked");
          await target.commitPrepared(bs);
          written.push(bs);
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  }) as ImportStore;
  return { store: wrapped, written, heal: () => (healed = true) };
}

async function retry(f: () => Promise<unknown>, counter: { failures: number }): Promise<void> {
  for (;;) {
    try {
      await f();
      return;
    } catch (e) {
      expect((e as Error).message).toBe("database is locked");
      counter.failures++;
    }
  }
}

describe("Importer under failing commits", () => {
  // Bursts of 300-transaction blocks: the batched path passes its 5,000-transaction flush point
  // several times (a failure of a commit in flight is thrown by the next flush: by a push only
  // when another flush follows it before finish).
  const BLOCKS = 360;
  const chain = DevnetChain.fresh(defaultDevnetChainOptions);
  const txns = [...chain.genesis()];
  for (let b = 0; b < BLOCKS; b++) txns.push(...chain.nextBlock(1_700_000_000_000_000n + BigInt(b)));

  it("retries the same transaction or finish until it commits, leaving no gap", async () => {
    const db = join(dir, "flaky.db");
    const real = new SqliteStore(db);
    let calls = 0;
    let prepares = 0;
    // Two of every three commit attempts fail, and one of every three preparations of a batch.
    const store = flaky(real, () => calls++ % 3 !== 2, () => prepares++ % 3 === 0);
    const imp = await Importer.open(store, 4);
    const pushes = { failures: 0 };
    for (const t of txns) await retry(() => imp.push(t), pushes);
    const finish = { failures: 0 };
    await retry(() => imp.finish(), finish);
    // Commits failed both inside a push (a block start flushing the queue) and in finish.
    expect(pushes.failures).toBeGreaterThan(0);
    expect(finish.failures).toBeGreaterThan(0);
    const info = await real.getLedgerInfo(true);
    expect(info!.ledgerVersion).toBe(BigInt(txns.length - 1));
    expect(info!.blockHeight).toBe(BigInt(BLOCKS));
    const fps = await real.getFingerprints(0n, info!.ledgerVersion);
    expect(fps.map((f) => f.version)).toEqual(txns.map((_, i) => BigInt(i)));
    for (let h = 1n; h <= BigInt(BLOCKS); h++) {
      const [b, prev] = [await real.getBlockByHeight(h), await real.getBlockByHeight(h - 1n)];
      expect(b!.firstVersion, `block ${h}`).toBe(prev!.lastVersion + 1n);
    }
    expect(imp.stats.committedTxns).toBe(txns.length);
    expect(imp.stats.committedBlocks).toBe(BLOCKS + 1);
    await real.close();
  });

  // 400 blocks, four 5,000-transaction batches: the second is prepared while the first is in flight.
  const few = [...DevnetChain.fresh(defaultDevnetChainOptions).genesis()];
  {
    const c = DevnetChain.fresh(defaultDevnetChainOptions);
    c.genesis();
    for (let b = 0; b < 400; b++) few.push(...c.nextBlock(1_700_000_000_000_000n + BigInt(b)));
  }

  /** Imports `few` until the failure; then, healed, the rest, and checks every version is there once. */
  async function importAcrossFailure(failing: "prepare" | "write") {
    const real = new SqliteStore(join(dir, `overlap-${failing}.db`));
    const { store, written, heal } = overlapping(real, failing);
    const imp = await Importer.open(store, 4);
    let taken = 0;
    const failed = await (async () => {
      for (const t of few) {
        await imp.push(t);
        taken++;
      }
      await imp.finish();
    })().then(
      () => null,
      (e: Error) => e.message,
    );
    const info = await real.getLedgerInfo(true);
    const importerVersion = imp.ledgerVersion;
    const writtenThen = written.length;
    const rest = async () => {
      heal();
      for (const t of few.slice(taken)) await imp.push(t);
      await imp.finish();
      const after = await real.getLedgerInfo(true);
      expect(after!.ledgerVersion).toBe(BigInt(few.length - 1));
      const fps = await real.getFingerprints(0n, after!.ledgerVersion);
      expect(fps.map((f) => f.version)).toEqual(few.map((_, i) => BigInt(i)));
      expect(imp.stats.committedTxns).toBe(few.length);
      await real.close();
    };
    return { failed, info, importerVersion, writtenThen, written, real, rest };
  }

  it("a failed preparation of the next batch leaves the batch before it committed whole, and a retry commits the rest", async () => {
    const r = await importAcrossFailure("prepare");
    expect(r.failed).toBe("packing failed");
    expect(r.writtenThen).toBe(1);
    const firstEnd = r.written[0]![r.written[0]!.length - 1]!.block.lastVersion;
    expect(r.info!.ledgerVersion).toBe(firstEnd);
    expect(r.importerVersion).toBe(firstEnd);
    expect(await r.real.getFingerprints(firstEnd + 1n, firstEnd + 20_000n)).toEqual([]);
    await r.rest();
  });

  it("a failed write of a batch leaves the next batch, prepared meanwhile, unwritten, and a retry commits them", async () => {
    const r = await importAcrossFailure("write");
    expect(r.failed).toBe("database is locked");
    expect(r.writtenThen).toBe(0);
    expect(r.info).toBeNull();
    expect(r.importerVersion).toBeNull();
    await r.rest();
  });

  it("commitPushed starts the commit of the whole blocks pushed and returns before it is written; finish waits for it", async () => {
    const real = new SqliteStore(join(dir, "commit-pushed.db"));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const store = new Proxy(real, {
      get(target, prop, receiver) {
        if (prop === "commitPrepared") return async (bs: PreparedBlock[]) => gate.then(() => target.commitPrepared(bs));
        const v = Reflect.get(target, prop, receiver);
        return typeof v === "function" ? v.bind(target) : v;
      },
    }) as ImportStore;
    const imp = await Importer.open(store, 4);
    const some = few.slice(0, few.findIndex((t) => (t as { type: string }).type === "block_metadata_transaction") + 40);
    for (const t of some) await imp.push(t);
    await imp.commitPushed();
    // Returned with the commit held back: nothing written, nothing counted as committed.
    expect(await real.getLedgerInfo(true)).toBeNull();
    expect(imp.ledgerVersion).toBeNull();
    release();
    const stats = await imp.finish();
    const last = (await real.getLedgerInfo(true))!.ledgerVersion;
    expect(imp.ledgerVersion).toBe(last);
    expect(stats.committedTxns).toBe(Number(last) + 1);
    await real.close();
  });
});
