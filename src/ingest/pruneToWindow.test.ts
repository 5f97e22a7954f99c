import { describe, expect, it } from "vitest";
import { parsePruneWindow } from "../ledger/pruning.js";
import type { BlockInfo, LedgerInfo } from "../ledger/types.js";
import { pruneTarget, type PruneTargetSource } from "./pruneToWindow.js";

/** A ledger of 10 blocks of 10 versions, one every minute of chain time. */
function fakeStore(oldestHeight = 0n): PruneTargetSource {
  const blocks: BlockInfo[] = Array.from({ length: 10 }, (_, h) => ({
    height: BigInt(h),
    epoch: 1n,
    timestampUsec: BigInt(h) * 60_000_000n,
    firstVersion: BigInt(h * 10),
    lastVersion: BigInt(h * 10 + 9),
    endInfo: null,
  }));
  const info: LedgerInfo = {
    chainId: 4,
    ledgerVersion: 99n,
    oldestVersion: oldestHeight * 10n,
    timestampUsec: 9n * 60_000_000n,
    epoch: 1n,
    blockHeight: 9n,
    oldestBlockHeight: oldestHeight,
  };
  return {
    getLedgerInfo: async () => info,
    getBlockByVersion: async (v: bigint) => blocks.find((b) => b.firstVersion <= v && v <= b.lastVersion) ?? null,
    getBlockByHeight: async (h: bigint) => blocks[Number(h)] ?? null,
    getFirstBlockAtOrAfter: async (t: bigint) => blocks.find((b) => b.timestampUsec >= t) ?? null,
  };
}

describe("prune target of a window", () => {
  it("keeps the first block kept whole by a version window", async () => {
    // Keep the newest 35 versions: 65..99; block 6 (60..69) is not whole, so block 7 (70) is oldest.
    expect(await pruneTarget(fakeStore(), parsePruneWindow("35"))).toEqual({ oldestVersion: 70n, oldestBlockHeight: 7n });
    // Exactly on a boundary: 40 versions keep 60..99, block 6 whole.
    expect(await pruneTarget(fakeStore(), parsePruneWindow("40"))).toEqual({ oldestVersion: 60n, oldestBlockHeight: 6n });
    expect(await pruneTarget(fakeStore(), parsePruneWindow("1000"))).toBeNull();
  });

  it("measures a time window back from the newest block's timestamp", async () => {
    // Newest block at minute 9; 3 minutes back is minute 6.
    expect(await pruneTarget(fakeStore(), parsePruneWindow("3m"))).toEqual({ oldestVersion: 60n, oldestBlockHeight: 6n });
    expect(await pruneTarget(fakeStore(), parsePruneWindow("150s"))).toEqual({ oldestVersion: 70n, oldestBlockHeight: 7n });
    expect(await pruneTarget(fakeStore(), parsePruneWindow("1d"))).toBeNull();
    // Never backwards: an already higher oldest block stays.
    expect(await pruneTarget(fakeStore(8n), parsePruneWindow("3m"))).toBeNull();
  });
});
