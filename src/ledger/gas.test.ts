import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  GAS_SCHEDULE_LEGACY_TYPE,
  GAS_SCHEDULE_V2_TYPE,
  GasEstimator,
  GasScheduleError,
  defaultGasConfig,
  minGasPriceFromSchedule,
  nextBucket,
  type GasEstimate,
  type GasEstimationConfig,
  type GasHistorySource,
} from "./gas.js";
import { EXECUTION_CONFIG_TYPE, OnChainExecutionConfigBcs, type OnChainExecutionConfigInput } from "./executionConfig.js";
import type { BlockEndInfo, BlockInfo, LedgerInfo, UserTxnGas } from "./types.js";

// ---------------------------------------------------------------------------------------------
// Synthetic chains
// ---------------------------------------------------------------------------------------------

const FIXTURES = path.resolve(fileURLToPath(new URL("../../", import.meta.url)), "test/fixtures");

interface BlockSpec {
  /** Number of user transactions (default 0). */
  users?: number;
  /** Gas unit price of each user transaction (default 100), or one price per transaction. */
  price?: bigint | bigint[];
  gasUsed?: bigint;
  /** Contract address of each user transaction (default null), or a function of its index. */
  contract?: string | null | ((i: number) => string | null);
  epoch?: bigint;
  endInfo?: BlockEndInfo | null;
  /** Whether the block ends with a non-user transaction (state checkpoint / epilogue). Default true. */
  trailer?: boolean;
}

/** An in-memory chain and GasHistorySource that counts its reads. */
class FakeChain implements GasHistorySource {
  blocks: BlockInfo[] = [];
  txns: UserTxnGas[] = [];
  blockReads = 0;
  txnReads = 0;
  /** Blocks whose first version is below this read as pruned (null). */
  prunedBelow = 0n;
  /** When set, every read waits for it. */
  gate: Promise<void> | null = null;
  failNext = false;
  /** The gas schedule's minimum price (the reference tests' chains have 0); null: no schedule. */
  minPrice: bigint | null = 0n;
  /** The execution config resource's JSON (`{"config": "0x…"}`); null: absent. */
  execution: string | null = null;
  resourceReads = 0;

  /** Starts with a genesis block at version 0 (in epoch `genesisEpoch`). */
  constructor(
    readonly epoch = 1n,
    genesisEpoch = 0n,
  ) {
    this.blocks.push({
      height: 0n,
      epoch: genesisEpoch,
      timestampUsec: 0n,
      firstVersion: 0n,
      lastVersion: 0n,
      endInfo: null,
    });
  }

  get nextVersion(): bigint {
    return this.blocks[this.blocks.length - 1]!.lastVersion + 1n;
  }

  /** Appends a block: block metadata, the user transactions, then (by default) a trailer. */
  add(spec: BlockSpec = {}): BlockInfo {
    const first = this.nextVersion;
    const users = spec.users ?? 0;
    let v = first + 1n; // block metadata
    for (let i = 0; i < users; i++) {
      const price = Array.isArray(spec.price) ? spec.price[i]! : (spec.price ?? 100n);
      const c = spec.contract;
      this.txns.push({
        version: v++,
        gasUnitPrice: price,
        gasUsed: spec.gasUsed ?? 10n,
        contractAddress: typeof c === "function" ? c(i) : (c ?? null),
      });
    }
    if (spec.trailer ?? true) v++;
    const prev = this.blocks[this.blocks.length - 1]!;
    const b: BlockInfo = {
      height: prev.height + 1n,
      epoch: spec.epoch ?? this.epoch,
      timestampUsec: (prev.height + 1n) * 1_000_000n,
      firstVersion: first,
      lastVersion: v - 1n,
      endInfo: spec.endInfo ?? null,
    };
    this.blocks.push(b);
    return b;
  }

  addMany(n: number, spec: BlockSpec = {}): void {
    for (let i = 0; i < n; i++) this.add(spec);
  }

  ledger(epoch?: bigint): LedgerInfo {
    const last = this.blocks[this.blocks.length - 1]!;
    return {
      chainId: 4,
      ledgerVersion: last.lastVersion,
      oldestVersion: this.prunedBelow,
      timestampUsec: last.timestampUsec,
      epoch: epoch ?? last.epoch,
      blockHeight: last.height,
      oldestBlockHeight: 0n,
    };
  }

  resetCounts(): void {
    this.blockReads = 0;
    this.txnReads = 0;
  }

  async getBlockByVersion(v: bigint): Promise<BlockInfo | null> {
    this.blockReads++;
    if (this.gate !== null) await this.gate;
    if (this.failNext) {
      this.failNext = false;
      throw new Error("store down");
    }
    const b = this.blocks.find((x) => x.firstVersion <= v && v <= x.lastVersion) ?? null;
    return b !== null && b.firstVersion < this.prunedBelow ? null : b;
  }

  /** Sets the gas schedule's minimum price; returns the chain (for `estimate(ledger, chain.withMin(n))`). */
  withMin(price: bigint): this {
    this.minPrice = price;
    return this;
  }

  async getResource(address: Uint8Array, type: string, _version: bigint): Promise<string | null> {
    this.resourceReads++;
    if (address.length !== 32 || address[31] !== 1 || address.slice(0, 31).some((b) => b !== 0)) return null;
    if (type === GAS_SCHEDULE_V2_TYPE && this.minPrice !== null) {
      return JSON.stringify({ feature_version: "12", entries: [{ key: "txn.min_price_per_gas_unit", val: String(this.minPrice) }] });
    }
    if (type === EXECUTION_CONFIG_TYPE) return this.execution;
    return null;
  }

  async getUserTxnGas(first: bigint, last: bigint): Promise<UserTxnGas[]> {
    this.txnReads++;
    if (this.gate !== null) await this.gate;
    return this.txns.filter((t) => first <= t.version && t.version <= last);
  }
}

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

/** An estimator with `cfg` over the defaults, built as the node builds its config. */
function estimator(cfg: Partial<GasEstimationConfig> = {}, now?: () => number): GasEstimator {
  return new GasEstimator({ ...defaultGasConfig, ...cfg }, now ?? clock().now);
}

const est = (low: number, market: number, aggressive: number): GasEstimate => ({
  deprioritized_gas_estimate: low,
  gas_estimate: market,
  prioritized_gas_estimate: aggressive,
});

/** Appends walked blocks giving these per-block prices (newest first), then a skipped newest block. */
function chainWithPrices(prices: readonly bigint[], min: bigint): FakeChain {
  const chain = new FakeChain();
  for (const p of [...prices].reverse()) {
    // A full block's price is next_bucket(min price); pick a min price just below the bucket.
    chain.add(p === min ? { users: 1 } : { users: 250, price: p - 1n });
  }
  chain.add({ users: 250, price: 999_999n }); // newest: skipped
  return chain;
}

/** The execution config resource's JSON, as import stores it: `{"config": "0x<BCS>"}`. */
function configJson(c: OnChainExecutionConfigInput): string {
  return JSON.stringify({ config: "0x" + Buffer.from(OnChainExecutionConfigBcs.serialize(c).toBytes()).toString("hex") });
}
const NO_SHUFFLING = { NoShuffling: true } as const;
const useCaseAware = (user: bigint) => ({
  UseCaseAware: { sender_spread_factor: 32n, platform_use_case_spread_factor: 0n, user_use_case_spread_factor: user },
});
type ShufflerInput = Extract<OnChainExecutionConfigInput, { V4: unknown }>["V4"]["transaction_shuffler_type"];
type LimitInput = Extract<OnChainExecutionConfigInput, { V4: unknown }>["V4"]["block_gas_limit_type"];
const v4 = (shuffler: ShufflerInput, limit: LimitInput): OnChainExecutionConfigInput => ({
  V4: { transaction_shuffler_type: shuffler, block_gas_limit_type: limit, transaction_deduper_type: { NoDedup: true } },
});

function golden(test: string): GasEstimate {
  const file = path.join(FIXTURES, "goldens", `aptos_api__tests__transactions_test__test_gas_estimation_${test}.json`);
  return JSON.parse(readFileSync(file, "utf8")) as GasEstimate;
}

// ---------------------------------------------------------------------------------------------
// Reference goldens (min gas unit price 0, default buckets)
// ---------------------------------------------------------------------------------------------

describe("reference goldens", () => {
  it("test_gas_estimation_empty: a fresh chain gives the default", async () => {
    for (const genesisEpoch of [0n, 1n]) {
      const chain = new FakeChain(1n, genesisEpoch);
      const got = await estimator().estimate(chain.ledger(1n), chain);
      expect(got).toEqual(golden("empty"));
      expect(got).toEqual(est(0, 0, 150));
    }
  });

  it("test_gas_estimation_ten_blocks: mint then 11 blocks of 500 transfers at 100, newest ignored", async () => {
    const chain = new FakeChain();
    chain.addMany(11, { users: 500, price: 100n });
    const gas = estimator();
    const first = await gas.estimate(chain.ledger(), chain);
    expect(first).toEqual(golden("ten_blocks"));
    expect(first).toEqual(est(150, 150, 300));
    // Repeat calls (the cache) answer the same.
    for (let i = 0; i < 2; i++) expect(await gas.estimate(chain.ledger(), chain)).toEqual(first);
    expect(gas.blockPriceCacheSize).toBe(10);
  });

  it("test_gas_estimation_ten_empty_blocks", async () => {
    const chain = new FakeChain();
    chain.addMany(11);
    const gas = estimator();
    const first = await gas.estimate(chain.ledger(), chain);
    expect(first).toEqual(golden("ten_empty_blocks"));
    for (let i = 0; i < 2; i++) expect(await gas.estimate(chain.ledger(), chain)).toEqual(first);
  });

  it("test_gas_estimation_disabled: the default whatever the load", async () => {
    const chain = new FakeChain();
    chain.addMany(11, { users: 500, price: 100n });
    const gas = estimator({ enabled: false });
    for (let i = 0; i < 3; i++) expect(await gas.estimate(chain.ledger(), chain)).toEqual(golden("disabled"));
    expect(chain.blockReads + chain.txnReads).toBe(0);
  });

  it("test_gas_estimation_static_override: 100 / 200 / 300", async () => {
    const chain = new FakeChain();
    chain.addMany(11, { users: 500, price: 100n });
    const gas = estimator({ staticOverride: { low: 100n, market: 200n, aggressive: 300n } });
    for (let i = 0; i < 3; i++) {
      expect(await gas.estimate(chain.ledger(), chain)).toEqual(golden("static_override"));
    }
    expect(chain.blockReads + chain.txnReads).toBe(0);
  });

  it("test_gas_estimation_cache: per-block cache holds 4, then at most the block history", async () => {
    const c = clock();
    const gas = estimator({ lowBlockHistory: 10, marketBlockHistory: 10, aggressiveBlockHistory: 10 }, c.now);
    const chain = new FakeChain();
    chain.addMany(5);
    await gas.estimate(chain.ledger(), chain);
    expect(gas.blockPriceCacheSize).toBe(4); // newest skipped, genesis never walked
    for (const step of [8, 0, 8, 0]) {
      c.advance(1_000);
      chain.addMany(step);
      await gas.estimate(chain.ledger(), chain);
      expect(gas.blockPriceCacheSize).toBe(10);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The walk and the per-block rule
// ---------------------------------------------------------------------------------------------

describe("block walk", () => {
  it("an idle chain (genesis only) gives (min, min, next_bucket(min))", async () => {
    const chain = new FakeChain();
    expect(await estimator().estimate(chain.ledger(), chain.withMin(100n))).toEqual(est(100, 100, 150));
  });

  it("one full block: its price is next_bucket(min gas price of its user txns)", async () => {
    const chain = new FakeChain();
    chain.add({ users: 250, price: [...Array<bigint>(249).fill(700n), 120n] });
    chain.add(); // newest, skipped
    expect(await estimator().estimate(chain.ledger(), chain.withMin(100n))).toEqual(est(150, 150, 300));
  });

  it("a not-full block falls back to the minimum gas unit price", async () => {
    const chain = new FakeChain();
    chain.add({ users: 249, price: 5000n });
    chain.add();
    expect(await estimator().estimate(chain.ledger(), chain.withMin(100n))).toEqual(est(100, 100, 150));
  });

  it("full by count: 250 user txns is full, 249 is not", async () => {
    for (const [users, expected] of [
      [250, est(1000, 1000, 3000)],
      [249, est(7, 7, 150)],
    ] as const) {
      const chain = new FakeChain();
      chain.add({ users, price: 600n });
      chain.add();
      expect(await estimator().estimate(chain.ledger(), chain.withMin(7n))).toEqual(expected);
    }
  });

  it("the block's last version is excluded from the count, as the reference does", async () => {
    const chain = new FakeChain();
    chain.add({ users: 250, price: 600n, trailer: false }); // last version is a user txn
    chain.add();
    expect(await estimator().estimate(chain.ledger(), chain.withMin(7n))).toEqual(est(7, 7, 150));
    chain.add({ users: 251, price: 600n, trailer: false }); // 250 counted: full at next_bucket(600)
    chain.add();
    // Newest first [1000, 7, 7]: low 7, market sorted[1] = 7, p90 sorted[2] = 1000 → 3000.
    expect(await estimator().estimate(chain.ledger(), chain.withMin(7n))).toEqual(est(7, 7, 3000));
  });

  it("the epilogue's limit flags never count: the epilogue is the block's last version, which is not read", async () => {
    const flags: BlockEndInfo[] = [
      { blockGasLimitReached: true, blockOutputLimitReached: false },
      { blockGasLimitReached: false, blockOutputLimitReached: true },
      { blockGasLimitReached: false, blockOutputLimitReached: false },
    ];
    for (const endInfo of flags) {
      // No gas limit: not full whatever the flags say.
      const chain = new FakeChain();
      chain.add({ users: 3, price: [400n, 150n, 900n], gasUsed: 1_000n, endInfo });
      chain.add();
      expect(await estimator().estimate(chain.ledger(), chain)).toEqual(est(0, 0, 150));
      // A gas limit the block passes: full whatever the flags say (next_bucket(150) = 300).
      const limited = new FakeChain();
      limited.execution = configJson(v4(NO_SHUFFLING, { Limit: 10n }));
      limited.add({ users: 3, price: [400n, 150n, 900n], gasUsed: 1_000n, endInfo });
      limited.add();
      expect(await estimator().estimate(limited.ledger(), limited)).toEqual(est(300, 300, 500));
    }
  });

  it("full by the on-chain block gas limit over the sum of gas used", async () => {
    for (const [limit, expected] of [
      [{ Limit: 3_000n }, est(150, 150, 300)], // 3 × 1000 >= 3000
      [{ Limit: 3_001n }, est(0, 0, 150)],
      [{ NoLimit: true }, est(0, 0, 150)],
    ] as const) {
      const chain = new FakeChain();
      chain.execution = configJson(v4(NO_SHUFFLING, limit));
      chain.add({ users: 3, price: 100n, gasUsed: 1_000n });
      chain.add();
      expect(await estimator().estimate(chain.ledger(), chain)).toEqual(expected);
    }
  });

  it("a 'full' block without user transactions falls back (the reference would panic)", async () => {
    const chain = new FakeChain();
    chain.add({ endInfo: { blockGasLimitReached: true, blockOutputLimitReached: false } });
    chain.add();
    expect(await estimator().estimate(chain.ledger(), chain.withMin(42n))).toEqual(est(42, 42, 150));
  });

  it("the newest block of the current epoch is skipped", async () => {
    const chain = new FakeChain();
    chain.add({ users: 300, price: 4000n }); // newest, would give 5000
    expect(await estimator().estimate(chain.ledger(), chain)).toEqual(est(0, 0, 150));
  });

  it("a newest block of another epoch is not skipped, and stops the walk", async () => {
    const chain = new FakeChain();
    chain.add({ users: 300, price: 4000n });
    chain.add({ users: 300, price: 4000n });
    // The ledger is already in epoch 2 (e.g. the newest block closed epoch 1).
    expect(await estimator().estimate(chain.ledger(2n), chain)).toEqual(est(0, 0, 150));
    expect(chain.blockReads).toBe(1); // the skip check's read; the walk reuses it, then stops
    expect(chain.txnReads).toBe(0);
  });

  it("an epoch change stops the walk", async () => {
    const chain = new FakeChain();
    chain.addMany(5, { users: 300, price: 4000n, epoch: 1n }); // would give 5000
    chain.addMany(3, { epoch: 2n }); // two walked, one skipped
    const gas = estimator();
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(0, 0, 150));
    expect(gas.blockPriceCacheSize).toBe(2);
  });

  it("a missing (pruned) block stops the walk", async () => {
    const chain = new FakeChain();
    chain.addMany(3, { users: 300, price: 4000n });
    const keptFrom = chain.nextVersion;
    chain.addMany(3);
    chain.prunedBelow = keptFrom;
    const gas = estimator();
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(0, 0, 150));
    expect(gas.blockPriceCacheSize).toBe(2);
  });

  it("stops at version 0: a block starting at version 1 is the last walked", async () => {
    const chain = new FakeChain(1n, 1n); // genesis in the same epoch
    chain.addMany(3);
    const gas = estimator();
    await gas.estimate(chain.ledger(), chain);
    expect(gas.blockPriceCacheSize).toBe(2);
    expect(chain.blockReads).toBe(3); // skip check + 2 walked; genesis never read
  });

  it("walks at most aggressiveBlockHistory blocks", async () => {
    const chain = new FakeChain();
    chain.addMany(10, { users: 300, price: 4000n }); // oldest: 5000 each
    chain.addMany(6); // 5 walked + the newest
    const gas = estimator({ lowBlockHistory: 5, marketBlockHistory: 5, aggressiveBlockHistory: 5 });
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(0, 0, 150));
    expect(chain.blockReads).toBe(6);
    expect(chain.txnReads).toBe(5);
  });
});

// ---------------------------------------------------------------------------------------------
// low / market / aggressive
// ---------------------------------------------------------------------------------------------

describe("outputs", () => {
  it("low = min of the first lowBlockHistory; market = upper median of the first marketBlockHistory; aggressive = bucketed p90", async () => {
    // Newest first.
    const prices = [300n, 150n, 1000n, 10n, 500n, 3000n, 150n, 5000n, 10n, 10n];
    const chain = chainWithPrices(prices, 10n);
    const gas = estimator({ lowBlockHistory: 2, marketBlockHistory: 4, aggressiveBlockHistory: 10 });
    // low: min(300, 150); market: sorted [10,150,300,1000][2]; p90: sorted all [9] = 5000 → 10000.
    expect(await gas.estimate(chain.ledger(), chain.withMin(10n))).toEqual(est(150, 300, 10000));
  });

  it("fewer blocks than each history", async () => {
    const three = chainWithPrices([150n, 10n, 3000n], 10n);
    // low: 10; market: sorted [10,150,3000][1] = 150; p90: [floor(27/10)=2] = 3000 → 5000.
    expect(await estimator().estimate(three.ledger(), three.withMin(10n))).toEqual(est(10, 150, 5000));
    const two = chainWithPrices([10n, 150n], 10n);
    // market: the upper median, index 1 of [10, 150]; p90: index 1 → 150 → 300.
    expect(await estimator().estimate(two.ledger(), two.withMin(10n))).toEqual(est(10, 150, 300));
  });

  it("market is at least low, aggressive at least market", async () => {
    // low history 1 (newest = 3000) exceeds the median of the other prices.
    const chain = chainWithPrices([3000n, 10n, 10n, 10n, 10n], 10n);
    const gas = estimator({ lowBlockHistory: 1 });
    expect(await gas.estimate(chain.ledger(), chain.withMin(10n))).toEqual(est(3000, 3000, 5000));
  });

  it("next_bucket: at, between and above the top bucket", () => {
    const b = defaultGasConfig.buckets;
    expect(nextBucket(b, 0n)).toBe(150n);
    expect(nextBucket(b, 150n)).toBe(300n); // at a bucket: the next one
    expect(nextBucket(b, 151n)).toBe(300n); // between
    expect(nextBucket(b, 999_999n)).toBe(1_000_000n);
    expect(nextBucket(b, 1_000_000n)).toBe(1_000_000n); // at the top: itself
    expect(nextBucket(b, 5_000_000n)).toBe(5_000_000n); // above the top: itself
    expect(nextBucket([], 7n)).toBe(7n);
  });

  it("buckets apply to the estimate", async () => {
    const chain = new FakeChain();
    for (const [min, p] of [
      [150n, 300],
      [200n, 300],
      [1_000_000n, 1_000_000],
      [2_000_000n, 2_000_000],
    ] as const) {
      expect(await estimator().estimate(chain.ledger(), chain.withMin(min))).toEqual(est(Number(min), Number(min), p));
    }
    const custom = estimator({ buckets: [10n, 20n] });
    expect(await custom.estimate(chain.ledger(), chain.withMin(5n))).toEqual(est(5, 5, 10));
  });

  it("values beyond 2^53 - 1 throw instead of losing precision", async () => {
    const chain = new FakeChain();
    await expect(estimator().estimate(chain.ledger(), chain.withMin(1n << 60n))).rejects.toThrow(
      /gas_estimate 1152921504606846976 is too large for a JSON number, it must be <= 9007199254740991/,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Settings that short-circuit
// ---------------------------------------------------------------------------------------------

describe("disabled and static override", () => {
  it("disabled: (min, min, next_bucket(min)) without reads", async () => {
    const chain = new FakeChain();
    chain.addMany(5, { users: 300, price: 4000n });
    const gas = estimator({ enabled: false });
    expect(await gas.estimate(chain.ledger(), chain.withMin(100n))).toEqual(est(100, 100, 150));
    expect(chain.blockReads + chain.txnReads).toBe(0);
  });

  it("static override is returned as given, without reads; enabled=false is checked first", async () => {
    const chain = new FakeChain();
    const gas = estimator({ staticOverride: { low: 1n, market: 2n, aggressive: 3n } });
    expect(await gas.estimate(chain.ledger(), chain.withMin(100n))).toEqual(est(1, 2, 3));
    expect(chain.blockReads).toBe(0);
    // `enabled` is checked first.
    const off = estimator({ enabled: false, staticOverride: { low: 1n, market: 2n, aggressive: 3n } });
    expect(await off.estimate(chain.ledger(), chain.withMin(100n))).toEqual(est(100, 100, 150));
  });
});

// ---------------------------------------------------------------------------------------------
// Caches and load
// ---------------------------------------------------------------------------------------------

describe("caches", () => {
  it("the gas schedule and the execution config are read once per epoch; an undecodable config is Missing, reported once", async () => {
    const chain = new FakeChain();
    chain.execution = JSON.stringify({ config: "0x08" }); // no variant 8
    chain.addMany(2, { users: 300, price: 100n, contract: "0x" + "ab".repeat(32) });
    const warnings: string[] = [];
    const gas = new GasEstimator({ ...defaultGasConfig, cacheExpirationMs: 0 }, clock().now, (m) => warnings.push(m));
    // Missing: NoShuffling, so the contract majority does not matter and 300 txns are full.
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(150, 150, 300));
    expect(chain.resourceReads).toBe(2); // GasScheduleV2, ExecutionConfig
    expect(warnings).toEqual([
      "epoch 1: 0x1::execution_config::ExecutionConfig is not used (execution config BCS does not decode: Unknown value 8 for enum OnChainExecutionConfig); estimating as if it were missing",
    ]);
    // Same epoch: nothing re-read even though the ledger's config changed.
    chain.execution = configJson(v4(useCaseAware(4n), { NoLimit: true }));
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(150, 150, 300));
    expect(chain.resourceReads).toBe(2);
    // Next epoch: read again; the use-case-aware shuffler now makes the blocks not full.
    chain.addMany(2, { users: 300, price: 100n, contract: "0x" + "ab".repeat(32), epoch: 2n });
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(0, 0, 150));
    expect(chain.resourceReads).toBe(4);
    expect(warnings).toHaveLength(1);
  });

  it("result cache: no reads within cacheExpirationMs, recomputed after", async () => {
    const c = clock();
    const gas = estimator({}, c.now);
    const chain = new FakeChain();
    chain.addMany(3);
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(0, 0, 150));
    chain.resetCounts();
    chain.addMany(5, { users: 300, price: 4000n });
    c.advance(499);
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(0, 0, 150)); // cached
    expect(chain.blockReads + chain.txnReads).toBe(0);
    c.advance(1);
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(0, 5000, 10000));
    expect(chain.blockReads).toBeGreaterThan(0);
  });

  it("result cache: an epoch change recomputes at once and clears the per-block cache", async () => {
    const c = clock();
    const gas = estimator({}, c.now);
    const chain = new FakeChain();
    chain.addMany(5, { users: 300, price: 4000n });
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(5000, 5000, 10000));
    expect(gas.blockPriceCacheSize).toBe(4);
    chain.add({ epoch: 2n });
    chain.add({ epoch: 2n });
    c.advance(1); // well within the 500 ms
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(0, 0, 150));
    expect(gas.blockPriceCacheSize).toBe(1); // the epoch-1 prices were dropped
  });

  it("peek gives exactly what estimate would give from its result cache, and null whenever estimate would compute", async () => {
    const c = clock();
    const gas = estimator({}, c.now);
    const chain = new FakeChain();
    chain.addMany(5, { users: 300, price: 4000n });
    expect(gas.peek(chain.ledger())).toBeNull(); // nothing computed yet
    const first = await gas.estimate(chain.ledger(), chain);
    expect(gas.peek(chain.ledger())).toEqual(first);
    chain.resetCounts();
    c.advance(499);
    expect(gas.peek(chain.ledger())).toEqual(await gas.estimate(chain.ledger(), chain));
    expect(gas.peek(chain.ledger(2n))).toBeNull(); // another epoch
    c.advance(1);
    expect(gas.peek(chain.ledger())).toBeNull(); // expired: estimate would read again
    expect(chain.blockReads + chain.txnReads).toBe(0);
    expect(estimator({ enabled: false }).peek(chain.ledger())).toBeNull();
    expect(estimator({ staticOverride: { low: 1n, market: 2n, aggressive: 3n } }).peek(chain.ledger())).toBeNull();
  });

  it("cacheExpirationMs 0 recomputes every time", async () => {
    const gas = estimator({ cacheExpirationMs: 0 });
    const chain = new FakeChain();
    chain.addMany(3);
    await gas.estimate(chain.ledger(), chain);
    chain.resetCounts();
    chain.add();
    await gas.estimate(chain.ledger(), chain);
    expect(chain.blockReads).toBe(1);
  });

  it("per-block cache: each new block costs one block read and one txn read; no new block costs nothing", async () => {
    const c = clock();
    const gas = estimator({}, c.now);
    const chain = new FakeChain();
    chain.addMany(150, { users: 300, price: 100n });
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(150, 150, 300));
    expect(chain.blockReads).toBe(121); // the skip check + 120 walked
    expect(chain.txnReads).toBe(120);
    expect(gas.blockPriceCacheSize).toBe(120);

    chain.resetCounts();
    c.advance(600);
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(150, 150, 300));
    expect([chain.blockReads, chain.txnReads]).toEqual([0, 0]);

    chain.add({ users: 300, price: 4000n });
    c.advance(600);
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(150, 150, 300));
    expect([chain.blockReads, chain.txnReads]).toEqual([1, 1]);

    chain.resetCounts();
    chain.add();
    c.advance(600);
    // The 5000 block is walked now, newest first.
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(150, 150, 300));
    expect([chain.blockReads, chain.txnReads]).toEqual([1, 1]);
    expect(gas.blockPriceCacheSize).toBe(120);

    chain.resetCounts();
    chain.addMany(2);
    c.advance(600);
    await gas.estimate(chain.ledger(), chain);
    expect([chain.blockReads, chain.txnReads]).toEqual([2, 2]);
  });

  it("the per-block cache gives the same answers as a cold estimator", async () => {
    const c = clock();
    const warm = estimator({ lowBlockHistory: 3, marketBlockHistory: 7, aggressiveBlockHistory: 12 }, c.now);
    const chain = new FakeChain();
    const prices = [100n, 200n, 400n, 1000n, 4000n];
    for (let i = 0; i < 40; i++) {
      chain.add(i % 3 === 0 ? { users: 2 } : { users: 260, price: prices[(i * 7) % prices.length]! });
      c.advance(600);
      const cold = estimator({ lowBlockHistory: 3, marketBlockHistory: 7, aggressiveBlockHistory: 12 });
      expect(await warm.estimate(chain.ledger(), chain.withMin(50n))).toEqual(await cold.estimate(chain.ledger(), chain.withMin(50n)));
      expect(warm.blockPriceCacheSize).toBeLessThanOrEqual(12);
    }
  });

  it("concurrent callers share one computation", async () => {
    const gas = estimator();
    const chain = new FakeChain();
    chain.addMany(11, { users: 500, price: 100n });
    let open!: () => void;
    chain.gate = new Promise<void>((r) => (open = r));
    const calls = Array.from({ length: 50 }, () => gas.estimate(chain.ledger(), chain));
    open();
    const results = await Promise.all(calls);
    for (const r of results) expect(r).toEqual(est(150, 150, 300));
    expect(chain.blockReads).toBe(11);
    expect(chain.txnReads).toBe(10);
  });

  it("store errors propagate and nothing is cached", async () => {
    const gas = estimator();
    const chain = new FakeChain();
    chain.addMany(3);
    chain.failNext = true;
    await expect(gas.estimate(chain.ledger(), chain)).rejects.toThrow("store down");
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(0, 0, 150));
  });

  it("answers are copies: mutating one does not change the cache", async () => {
    const gas = estimator();
    const chain = new FakeChain();
    const a = await gas.estimate(chain.ledger(), chain);
    a.gas_estimate = 999;
    expect(await gas.estimate(chain.ledger(), chain)).toEqual(est(0, 0, 150));
  });
});

// ---------------------------------------------------------------------------------------------
// Use-case majority (AIP-68)
// ---------------------------------------------------------------------------------------------

describe("majority use case", () => {
  const CONTRACT = "0x" + "ab".repeat(32);
  const OTHER = "0xcafe";

  /** A block of `users` txns at 100 under a UseCaseAware shuffler with this user spread factor (null: SenderAwareV2). */
  async function run(
    spread: bigint | null,
    contract: BlockSpec["contract"],
    cfg: Partial<GasEstimationConfig> = {},
    users = 300,
  ): Promise<GasEstimate> {
    const chain = new FakeChain();
    chain.execution = configJson(v4(spread === null ? { SenderAwareV2: 32 } : useCaseAware(spread), { NoLimit: true }));
    chain.add({ users, price: 100n, contract });
    chain.add();
    return estimator(cfg).estimate(chain.ledger(), chain);
  }
  const FULL = est(150, 150, 300);
  const NOT_FULL = est(0, 0, 150);

  it("a contract with more than half the txns makes the block not full when the shuffler is use-case aware", async () => {
    expect(await run(4n, CONTRACT)).toEqual(NOT_FULL);
    expect(await run(4n, (i) => (i < 151 ? CONTRACT : OTHER))).toEqual(NOT_FULL);
    // The same address written short or long is one use case.
    expect(await run(0n, (i) => (i % 2 ? "0xCAFE" : "0x" + "0".repeat(60) + "cafe"))).toEqual(
      NOT_FULL,
    );
  });

  it("off without a spread factor (NoShuffling) or without incorporateReorderingEffects", async () => {
    expect(await run(null, CONTRACT)).toEqual(FULL);
    expect(await run(4n, CONTRACT, { incorporateReorderingEffects: false })).toEqual(FULL);
    // No execution config at all: Missing, so NoShuffling.
    const chain = new FakeChain();
    chain.add({ users: 300, price: 100n, contract: CONTRACT });
    chain.add();
    expect(await estimator().estimate(chain.ledger(), chain)).toEqual(FULL);
  });

  it("exactly half is not a majority; platform (0x1..0xf) and non-entry-function majorities do not count", async () => {
    expect(await run(4n, (i) => (i < 150 ? CONTRACT : OTHER))).toEqual(FULL);
    expect(await run(4n, "0x1")).toEqual(FULL);
    expect(await run(4n, "0x" + "0".repeat(63) + "f")).toEqual(FULL);
    expect(await run(4n, null)).toEqual(FULL);
    // 0x10 is not special.
    expect(await run(4n, "0x10")).toEqual(NOT_FULL);
  });

  it("the majority rule comes before the count and gas-limit rules", async () => {
    const chain = new FakeChain();
    chain.execution = configJson(v4(useCaseAware(4n), { Limit: 1n }));
    chain.add({ users: 300, price: 100n, gasUsed: 10n, contract: CONTRACT });
    chain.add();
    expect(await estimator().estimate(chain.ledger(), chain)).toEqual(NOT_FULL);
  });
});

// ---------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------


// ---------------------------------------------------------------------------------------------
// Minimum gas unit price from the gas schedule
// ---------------------------------------------------------------------------------------------

describe("minGasPriceFromSchedule", () => {
  interface Change {
    data?: { type?: string; data?: unknown };
  }

  it("reads txn.min_price_per_gas_unit from the genesis fixture's legacy GasSchedule", () => {
    const [genesis] = JSON.parse(readFileSync(path.join(FIXTURES, "genesis_transaction.json"), "utf8")) as [
      { changes: Change[] },
    ];
    const change = genesis.changes.find((ch) => ch.data?.type === GAS_SCHEDULE_LEGACY_TYPE);
    expect(change).toBeDefined();
    expect(minGasPriceFromSchedule(JSON.stringify(change!.data!.data), 100n)).toBe(0n);
    // The REST wrapper {type, data} is accepted too.
    expect(minGasPriceFromSchedule(JSON.stringify(change!.data), 100n)).toBe(0n);
  });

  it("reads GasScheduleV2 and falls back only when there is no schedule", () => {
    const v2 = JSON.stringify({
      feature_version: "12",
      entries: [
        { key: "instr.nop", val: "36" },
        { key: "txn.min_price_per_gas_unit", val: "100" },
      ],
    });
    expect(minGasPriceFromSchedule(v2, 7n)).toBe(100n);
    expect(minGasPriceFromSchedule(null, 7n)).toBe(7n);
  });

  it("a malformed schedule is an error, not the fallback", () => {
    expect(() => minGasPriceFromSchedule("{", 7n)).toThrow(GasScheduleError);
    expect(() => minGasPriceFromSchedule('{"entries": []}', 7n)).toThrow("no txn.min_price_per_gas_unit entry");
    expect(() => minGasPriceFromSchedule('{"feature_version": "1"}', 7n)).toThrow('no "entries" list');
    expect(() =>
      minGasPriceFromSchedule('{"entries": [{"key": "txn.min_price_per_gas_unit", "val": "-1"}]}', 7n),
    ).toThrow('("-1") is not a u64');
  });
});
