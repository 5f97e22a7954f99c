/**
 * The importer when commits fail: every push or finish that throws is retried with the same
 * argument, and the ledger ends with every block, once, in order. The store is a real SQLite file;
 * a wrapper makes some commits fail before they reach it, as a locked database would.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Storage } from "../storage/storage.js";
import { SqliteStore } from "../storage/sqlite/SqliteStore.js";
import { DevnetChain, defaultDevnetChainOptions } from "./devnetChain.js";
import { Importer } from "./importer.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-importer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `store` whose commits fail whenever `fail()` says so; `batched` false hides commitBlocks. */
function flaky(store: SqliteStore, fail: () => boolean, batched: boolean): Storage {
  const boom = async () => {
    throw new Error("database is locked");
  };
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "commitBlocks") {
        if (!batched) return undefined;
        return (ws: Parameters<NonNullable<Storage["commitBlocks"]>>[0]) => (fail() ? boom() : target.commitBlocks(ws));
      }
      if (prop === "commitBlock") return (w: Parameters<Storage["commitBlock"]>[0]) => (fail() ? boom() : target.commitBlock(w));
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  }) as Storage;
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

  for (const batched of [true, false]) {
    it(`retries the same transaction or finish until it commits, leaving no gap (${batched ? "commitBlocks" : "commitBlock"})`, async () => {
      const db = join(dir, `${batched}.db`);
      const real = new SqliteStore(db);
      let calls = 0;
      // Two of every three commit attempts fail.
      const store = flaky(real, () => calls++ % 3 !== 2, batched);
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
  }
});
