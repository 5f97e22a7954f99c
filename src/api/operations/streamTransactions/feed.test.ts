import type { FastifyBaseLogger } from "fastify";
import { describe, expect, it } from "vitest";
import type { LedgerInfo } from "../../../ledger/types.js";
import type { LedgerReader } from "../../../storage/contracts/reader.js";
import { CommitFeed, type FeedBatch, type FeedEntry, type LiveStream } from "./feed.js";

/** A ledger that grows by `step` versions of 1 KiB texts at each look of the feed. */
function growingLedger(step: number) {
  let head = -1n;
  const info = (): LedgerInfo => ({ chainId: 4, ledgerVersion: head, oldestVersion: 0n, timestampUsec: 0n, epoch: 1n, blockHeight: 0n, oldestBlockHeight: 0n });
  const text = (v: bigint) => Buffer.from(JSON.stringify({ version: String(v), pad: "x".repeat(1000) }));
  const store = {
    async getLedgerInfo() {
      head += BigInt(step);
      return info();
    },
    async readTransactions(start: bigint, limit: number) {
      const texts: Uint8Array[] = [];
      for (let v = start; v <= head && texts.length < limit; v++) texts.push(text(v));
      return { info: info(), value: { start, texts } };
    },
  } as unknown as LedgerReader;
  return { store, head: () => head };
}

const log = { info() {}, warn() {} } as unknown as FastifyBaseLogger;

describe("the commit feed", () => {
  it("hands every commit to a joined stream once, in order, and keeps the newest 8 MiB in its ring", async () => {
    const ledger = growingLedger(700);
    const feed = new CommitFeed(ledger.store, log);
    const got: bigint[] = [];
    const stream: LiveStream = {
      filter: {},
      consider: (_b: FeedBatch, entries: readonly FeedEntry[]) => {
        for (const e of entries) got.push(e.version);
      },
      lost: () => {
        throw new Error("lost");
      },
    };
    feed.start(-1n);
    feed.join(stream);
    try {
      await expect.poll(() => feed.head, { timeout: 20_000 }).toBeGreaterThanOrEqual(20_000n);
      feed.leave(stream);
      const head = feed.head;
      expect(got).toEqual(Array.from({ length: Number(head) + 1 }, (_, i) => BigInt(i)));
      // about 1,030 bytes a text: 8 MiB hold the newest 8,000 or so, and nothing older
      const kept = feed.from(head - 8_000n, 10);
      expect(kept?.map((e) => e.version)).toEqual(Array.from({ length: 10 }, (_, i) => head - 8_000n + BigInt(i)));
      expect(feed.from(head - 9_000n, 10)).toBeNull();
      expect(feed.from(head, 10)?.map((e) => e.version)).toEqual([head]);
    } finally {
      feed.stop();
    }
  });
});
