import { afterEach, describe, expect, it, vi } from "vitest";
import type { LedgerInfo } from "../../ledger/types.js";
import { PositionMemo } from "./positionMemo.js";

const at = (ledgerVersion: bigint, oldestVersion = 0n): LedgerInfo => ({
  chainId: 4,
  ledgerVersion,
  oldestVersion,
  timestampUsec: ledgerVersion * 10n,
  epoch: 1n,
  blockHeight: ledgerVersion / 2n,
  oldestBlockHeight: oldestVersion / 2n,
});
const answer = (info: LedgerInfo, value: string) => ({ info, value });

describe("PositionMemo", () => {
  let now = 1_000;
  vi.spyOn(performance, "now").mockImplementation(() => now);
  afterEach(() => {
    now = 1_000;
  });

  it("serves the position and its answers for lagMs after the read that confirmed it was asked", () => {
    const memo = new PositionMemo(5);
    expect(memo.ledger()).toBeNull();
    const asked = memo.asking();
    now += 3; // the read took 3 ms: trusted until 5 ms after it was asked, not after it answered
    expect(memo.saw(at(10n), asked)).toBe(true);
    memo.remember("k", answer(at(10n), "v"));
    expect(memo.ledger()).toEqual(at(10n));
    expect(memo.get("k")).toEqual(answer(at(10n), "v"));
    now = 1_005;
    expect(memo.ledger()).toBeNull();
    expect(memo.get("k")).toBeUndefined();
    // A read of the same position renews the trust, and the answers kept at it are good again.
    expect(memo.saw(at(10n), memo.asking())).toBe(true);
    expect(memo.get("k")).toEqual(answer(at(10n), "v"));
  });

  it("drops its answers for a later position (a block, or a prune at the same version), and ignores an earlier one", () => {
    const memo = new PositionMemo(5);
    memo.saw(at(10n), memo.asking());
    memo.remember("k", answer(at(10n), "v"));
    const slow = memo.asking(); // a read overtaken by one that sees a later commit
    expect(memo.saw(at(10n, 4n), memo.asking())).toBe(true);
    expect(memo.get("k")).toBeUndefined();
    expect(memo.ledger()).toEqual(at(10n, 4n));
    expect(memo.saw(at(10n), slow)).toBe(false);
    expect(memo.ledger()).toEqual(at(10n, 4n));
    expect(memo.saw(at(12n, 4n), memo.asking())).toBe(true);
    expect(memo.ledger()).toEqual(at(12n, 4n));
  });

  it("after clear(), takes nothing from a read asked before it", () => {
    const memo = new PositionMemo(5);
    memo.saw(at(10n), memo.asking());
    const before = memo.asking();
    memo.clear(); // this process committed
    expect(memo.ledger()).toBeNull();
    expect(memo.saw(at(11n), before)).toBe(false);
    expect(memo.ledger()).toBeNull();
    expect(memo.saw(at(12n), memo.asking())).toBe(true);
    expect(memo.ledger()).toEqual(at(12n));
  });

  it("with lagMs 0 keeps nothing", () => {
    const memo = new PositionMemo(0);
    expect(memo.saw(at(10n), memo.asking())).toBe(false);
    expect(memo.ledger()).toBeNull();
  });
});
