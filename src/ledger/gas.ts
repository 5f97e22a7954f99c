/**
 * Gas price estimation: the reference node's `Context::estimate_gas_price`
 * (`api/src/context.rs`), step by step (docs/decisions.md §14), made cheap under
 * load. Nothing here knows about HTTP; storage is reached through {@link GasHistorySource}.
 *
 * Cost model:
 * - within `cacheExpirationMs` of the last answer in the same epoch: no store reads;
 * - after that, with no new block: no store reads either (the newest block is remembered and the
 *   per-block prices are cached);
 * - each new block: one block read and one transaction read;
 * - cold start or new epoch: up to `aggressiveBlockHistory` of each, once, and the on-chain
 *   gas schedule and execution config (three resource reads at most).
 * Concurrent callers share one computation.
 */
import { parseAddress } from "./address.js";
import { EXECUTION_CONFIG_TYPE, executionConfigFromResource, type ExecutionConfigInfo } from "./executionConfig.js";
import type { GasEstimationConfig } from "./gasConfig.js";
import type { BlockInfo, LedgerInfo, UserTxnGas } from "./types.js";

export { DEFAULT_GAS_BUCKETS, defaultGasConfig, type GasEstimationConfig, type GasStaticOverride } from "./gasConfig.js";

/** The answer of `GET /estimate_gas_price`, as JSON numbers (docs/decisions.md §14 names the fields). */
export interface GasEstimate {
  deprioritized_gas_estimate: number;
  gas_estimate: number;
  prioritized_gas_estimate: number;
}

/**
 * What the estimator reads from storage (implemented by the storage layer; `LedgerReader` has
 * these methods with these meanings).
 */
export interface GasHistorySource {
  /** The block holding `version`, or null when it is pruned or not committed. */
  getBlockByVersion(version: bigint): Promise<BlockInfo | null>;
  /** User transactions with first <= version <= last (both inclusive), ascending. */
  getUserTxnGas(first: bigint, last: bigint): Promise<UserTxnGas[]>;
  /** A resource's JSON text at `version`, or null (the gas schedule and the execution config). */
  getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null>;
}

/** What the estimator reads from the chain's state once per epoch. */
export interface OnChainGasInputs {
  epoch: bigint;
  /** The gas schedule's `txn.min_price_per_gas_unit` (the setting when there is no schedule). */
  minGasUnitPrice: bigint;
  /** The execution config in force (`Missing` when absent or undecodable, as the reference). */
  execution: ExecutionConfigInfo;
}

/** On-chain configs live at 0x1. */
const FRAMEWORK_ADDRESS: Uint8Array = parseAddress("0x1")!;

/** Move type of the current on-chain gas schedule resource at 0x1. */
export const GAS_SCHEDULE_V2_TYPE = "0x1::gas_schedule::GasScheduleV2";
/** Move type of the legacy gas schedule resource at 0x1 (read when V2 is absent). */
export const GAS_SCHEDULE_LEGACY_TYPE = "0x1::gas_schedule::GasSchedule";
/** Gas schedule entry holding the minimum gas unit price (`vm.txn.min_price_per_gas_unit`). */
export const MIN_GAS_PRICE_KEY = "txn.min_price_per_gas_unit";

/** The gas schedule resource exists but has no usable minimum gas unit price. */
export class GasScheduleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GasScheduleError";
  }
}

/**
 * The minimum gas unit price of a gas schedule resource's JSON: the `txn.min_price_per_gas_unit`
 * entry of `0x1::gas_schedule::GasScheduleV2` (`{"feature_version": "…", "entries": [{"key", "val"}…]}`)
 * or of the legacy `GasSchedule` (`{"entries": […]}`). The REST wrapper `{"type", "data": {…}}` is
 * accepted too.
 *
 * @param json The resource's JSON text, or null when the ledger has no gas schedule.
 * @param fallback Returned when `json` is null (the `defaultMinGasUnitPrice` setting).
 * @throws {GasScheduleError} when the text is not a gas schedule or lacks a valid u64 entry
 *   (the reference answers 500 "Failed to retrieve gas schedule" then).
 */
export function minGasPriceFromSchedule(json: string | null, fallback: bigint): bigint {
  if (json === null) return fallback;
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (e) {
    throw new GasScheduleError(`gas schedule is not valid JSON: ${(e as Error).message}`);
  }
  let entries = entriesOf(doc);
  if (entries === null && isObject(doc)) entries = entriesOf(doc.data);
  if (entries === null) throw new GasScheduleError(`gas schedule has no "entries" list`);
  for (const e of entries) {
    if (isObject(e) && e.key === MIN_GAS_PRICE_KEY) {
      const v = e.val;
      const text = typeof v === "number" && Number.isSafeInteger(v) ? String(v) : v;
      if (typeof text === "string" && /^[0-9]{1,20}$/.test(text) && BigInt(text) < 1n << 64n) {
        return BigInt(text);
      }
      throw new GasScheduleError(`gas schedule entry ${MIN_GAS_PRICE_KEY} (${JSON.stringify(v)}) is not a u64`);
    }
  }
  throw new GasScheduleError(`gas schedule has no ${MIN_GAS_PRICE_KEY} entry`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function entriesOf(v: unknown): unknown[] | null {
  return isObject(v) && Array.isArray(v.entries) ? v.entries : null;
}

/** `next_bucket(p)`: the first bucket strictly greater than `p`, else `p` itself. */
export function nextBucket(buckets: readonly bigint[], price: bigint): bigint {
  for (const b of buckets) if (b > price) return b;
  return price;
}

/** One cached per-block minimum inclusion price, keyed by (epoch, block's last version). */
interface PriceEntry {
  epoch: bigint;
  last: bigint;
  price: bigint;
}

interface Triple {
  low: bigint;
  market: bigint;
  aggressive: bigint;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function toNumber(name: string, v: bigint): number {
  if (v > MAX_SAFE) {
    throw new RangeError(`${name} ${v} is too large for a JSON number, it must be <= ${MAX_SAFE}`);
  }
  return Number(v);
}

function toWire(t: Triple): GasEstimate {
  return {
    deprioritized_gas_estimate: toNumber("deprioritized_gas_estimate", t.low),
    gas_estimate: toNumber("gas_estimate", t.market),
    prioritized_gas_estimate: toNumber("prioritized_gas_estimate", t.aggressive),
  };
}

function cmpBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmpKey(aEpoch: bigint, aLast: bigint, b: PriceEntry): number {
  return cmpBig(aEpoch, b.epoch) || cmpBig(aLast, b.last);
}

function sat1(v: bigint): bigint {
  return v > 0n ? v - 1n : 0n;
}

/**
 * The reference's gas price estimator with its caches. One instance per process (it holds the
 * caches); `estimate` may be called concurrently.
 *
 * @example
 * const gas = new GasEstimator(defaultGasConfig);
 * reply.send(await gas.estimate(ledgerInfo, store)); // reads the gas schedule and execution config per epoch
 */
export class GasEstimator {
  /** The result cache: the last answer, its epoch and when it was computed. */
  private result: { epoch: bigint; at: number; estimate: GasEstimate } | null = null;
  /** Per-block minimum inclusion prices, ascending by (epoch, last version). */
  private prices: PriceEntry[] = [];
  /**
   * The last two newest blocks read by the skip step (blocks never change once committed): the
   * newest is looked up on every walk (to skip it) and is the first block walked, unpriced, once
   * the next block arrives. Every other walked block is priced and cached, so it is not re-read.
   */
  private recent: BlockInfo[] = [];
  /** The computation in progress, which other callers wait for (the reference's write lock). */
  private inflight: Promise<void> | null = null;
  /** The gas schedule's minimum and the execution config, read once per epoch. */
  private onChain: OnChainGasInputs | null = null;
  private onChainRead: { epoch: bigint; promise: Promise<OnChainGasInputs> } | null = null;

  /**
   * @param config Settings (see `GasEstimationConfig`).
   * @param now Monotonic clock in milliseconds (tests inject a fake one).
   * @param warn Told, once per epoch, when the execution config resource exists but does not
   *   decode (the estimate then uses `Missing`, as the reference does, silently there).
   */
  constructor(
    readonly config: GasEstimationConfig,
    private readonly now: () => number = () => performance.now(),
    private readonly warn: (message: string) => void = () => {},
  ) {}

  /** Number of per-block prices cached (the reference test's `gas_estimation_cache` size). */
  get blockPriceCacheSize(): number {
    return this.prices.length;
  }

  /**
   * The gas schedule's minimum price and the execution config at the ledger version, read once
   * per epoch (the reference's `gas_schedule_cache` and `gas_limit_cache`); concurrent callers of
   * one epoch share the read.
   *
   * @throws {GasScheduleError} when the gas schedule exists but has no valid minimum price.
   */
  private async onChainInputs(ledger: LedgerInfo, source: GasHistorySource): Promise<OnChainGasInputs> {
    if (this.onChain !== null && this.onChain.epoch === ledger.epoch) return this.onChain;
    if (this.onChainRead !== null && this.onChainRead.epoch === ledger.epoch) return this.onChainRead.promise;
    const promise = this.readOnChain(ledger, source);
    const read = { epoch: ledger.epoch, promise };
    this.onChainRead = read;
    try {
      const got = await promise;
      if (this.onChain === null || this.onChain.epoch !== ledger.epoch) this.onChain = got;
      return got;
    } finally {
      if (this.onChainRead === read) this.onChainRead = null;
    }
  }

  private async readOnChain(ledger: LedgerInfo, source: GasHistorySource): Promise<OnChainGasInputs> {
    const at = ledger.ledgerVersion;
    // GasScheduleV2, falling back to the legacy GasSchedule, as the reference.
    let schedule = await source.getResource(FRAMEWORK_ADDRESS, GAS_SCHEDULE_V2_TYPE, at);
    schedule ??= await source.getResource(FRAMEWORK_ADDRESS, GAS_SCHEDULE_LEGACY_TYPE, at);
    const minGasUnitPrice = minGasPriceFromSchedule(schedule, this.config.defaultMinGasUnitPrice);
    const execution = executionConfigFromResource(await source.getResource(FRAMEWORK_ADDRESS, EXECUTION_CONFIG_TYPE, at));
    if (execution.problem !== null) {
      this.warn(`epoch ${ledger.epoch}: ${EXECUTION_CONFIG_TYPE} is not used (${execution.problem}); estimating as if it were missing`);
    }
    return { epoch: ledger.epoch, minGasUnitPrice, execution };
  }

  /**
   * Estimates gas unit prices for the ledger position `ledger`.
   *
   * @param ledger The latest ledger info (its `epoch` and `ledgerVersion` drive the walk).
   * @param source The store's reads; errors it throws propagate (nothing is cached then).
   * @returns low / market / aggressive as JSON numbers.
   * @throws {RangeError} when a value exceeds 2^53 − 1.
   * @throws {GasScheduleError} when the ledger's gas schedule is malformed.
   */
  async estimate(ledger: LedgerInfo, source: GasHistorySource): Promise<GasEstimate> {
    const c = this.config;
    // Read before the `enabled` check, as the reference: a broken gas schedule fails either way.
    const onChain = await this.onChainInputs(ledger, source);
    const minGasUnitPrice = onChain.minGasUnitPrice;
    if (!c.enabled) return toWire(this.defaultTriple(minGasUnitPrice));
    if (c.staticOverride !== null) {
      const o = c.staticOverride;
      return toWire({ low: o.low, market: o.market, aggressive: o.aggressive });
    }
    for (;;) {
      const cached = this.cached(ledger.epoch);
      if (cached !== null) return cached;
      if (this.inflight !== null) {
        // Like the reference's write lock: wait, then check the cache again.
        await this.inflight;
        continue;
      }
      const run = this.compute(ledger, onChain, source);
      const done = run.then(
        () => undefined,
        () => undefined,
      );
      this.inflight = done;
      try {
        return { ...(await run) };
      } finally {
        if (this.inflight === done) this.inflight = null;
      }
    }
  }

  /**
   * The answer `estimate` would give from its result cache for `ledger`'s epoch, without a store
   * read or a promise; null when it would compute (or is disabled or overridden). The object is
   * shared between callers: read it only.
   */
  peek(ledger: LedgerInfo): Readonly<GasEstimate> | null {
    if (!this.config.enabled || this.config.staticOverride !== null) return null;
    const r = this.result;
    if (r === null || r.epoch !== ledger.epoch) return null;
    if (Math.floor(this.now() - r.at) >= this.config.cacheExpirationMs) return null;
    return r.estimate;
  }

  private defaultTriple(min: bigint): Triple {
    return { low: min, market: min, aggressive: nextBucket(this.config.buckets, min) };
  }

  private cached(epoch: bigint): GasEstimate | null {
    const r = this.result;
    if (r === null || r.epoch !== epoch) return null;
    // `Instant::elapsed().as_millis()` truncates.
    if (Math.floor(this.now() - r.at) >= this.config.cacheExpirationMs) return null;
    return { ...r.estimate };
  }

  private store(epoch: bigint, estimate: GasEstimate): GasEstimate {
    this.result = { epoch, at: this.now(), estimate };
    return estimate;
  }

  /** The block holding `version`, from the recent blocks when one holds it and is not pruned. */
  private async blockAt(
    version: bigint,
    ledger: LedgerInfo,
    source: GasHistorySource,
    remember: boolean,
  ): Promise<BlockInfo | null> {
    for (const m of this.recent) {
      if (m.firstVersion <= version && version <= m.lastVersion && m.firstVersion >= ledger.oldestVersion) return m;
    }
    const b = await source.getBlockByVersion(version);
    if (b !== null && remember) {
      const r = this.recent.filter((m) => m.lastVersion !== b.lastVersion);
      r.push(b);
      r.sort((x, y) => cmpBig(y.lastVersion, x.lastVersion));
      this.recent = r.slice(0, 2);
    }
    return b;
  }

  private indexOf(epoch: bigint, last: bigint): { found: boolean; at: number } {
    let lo = 0;
    let hi = this.prices.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = cmpKey(epoch, last, this.prices[mid]!);
      if (c === 0) return { found: true, at: mid };
      if (c < 0) hi = mid;
      else lo = mid + 1;
    }
    return { found: false, at: lo };
  }

  private putPrice(epoch: bigint, last: bigint, price: bigint): void {
    const { found, at } = this.indexOf(epoch, last);
    if (found) this.prices[at]!.price = price;
    else this.prices.splice(at, 0, { epoch, last, price });
  }

  private async compute(ledger: LedgerInfo, onChain: OnChainGasInputs, source: GasHistorySource): Promise<GasEstimate> {
    const c = this.config;
    const min = onChain.minGasUnitPrice;
    const epoch = ledger.epoch;
    // Clear the per-block cache when the epoch changed.
    if (this.result !== null && this.result.epoch !== epoch) this.prices = [];

    const max = c.aggressiveBlockHistory;
    // 1. Walk the blocks back, newest first.
    let lookup = ledger.ledgerVersion;
    // Skip the newest block of the current epoch: the reference treats it as possibly partial.
    const newest = await this.blockAt(lookup, ledger, source, true);
    if (newest !== null && newest.epoch === epoch) lookup = sat1(newest.firstVersion);
    const blocks: BlockInfo[] = [];
    let cacheHit = false;
    for (let i = 0; i < max; i++) {
      if (this.indexOf(epoch, lookup).found) {
        cacheHit = true;
        break;
      }
      const b = await this.blockAt(lookup, ledger, source, false);
      if (b === null || b.epoch !== epoch) break; // pruned, missing, or another epoch
      lookup = sat1(b.firstVersion);
      blocks.push(b);
      if (lookup === 0n) break;
    }
    if (blocks.length === 0 && !cacheHit) return this.store(epoch, toWire(this.defaultTriple(min)));

    // 2. The minimum inclusion price of each block, falling back to the minimum gas unit price.
    const remaining = max - blocks.length;
    const walked: { last: bigint; price: bigint }[] = [];
    for (const b of blocks) {
      const price = await this.blockMinInclusionPrice(ledger, b, onChain.execution, source);
      walked.push({ last: b.lastVersion, price: price ?? min });
    }
    const prices: bigint[] = [];
    for (const w of walked) {
      prices.push(w.price);
      this.putPrice(epoch, w.last, w.price);
    }
    if (cacheHit) {
      // Cached prices of this epoch at or below `lookup`, newest first.
      const { at } = this.indexOf(epoch, lookup);
      for (let i = at, n = 0; i >= 0 && n < remaining; i--, n++) {
        const e = this.prices[i]!;
        if (e.epoch !== epoch || e.last > lookup) break;
        prices.push(e.price);
      }
    }

    // 3. low, market, aggressive.
    let low: bigint | null = null;
    for (const p of prices.slice(0, c.lowBlockHistory)) if (low === null || p < low) low = p;
    low ??= min;
    const latest = prices.slice(0, c.marketBlockHistory).sort(cmpBig);
    const median = latest[latest.length >> 1];
    if (median === undefined) return toWire(this.defaultTriple(min)); // not cached, as the reference
    const market = median > low ? median : low;
    const all = prices.slice().sort(cmpBig);
    const p90 = all[Math.floor((all.length * 9) / 10)];
    if (p90 === undefined) return toWire(this.defaultTriple(min));
    const aggressive = nextBucket(c.buckets, p90 > market ? p90 : market);
    const estimate = toWire({ low, market, aggressive });

    // 4. GC the per-block cache (smallest keys first), then cache the answer.
    if (this.prices.length > max) this.prices.splice(0, this.prices.length - max);
    return this.store(epoch, estimate);
  }

  /**
   * `block_min_inclusion_price`: `next_bucket(min price)` of a full block, else null (fallback).
   * Reads the user transactions of [first, last) — the block's last version excluded, as the
   * reference does (`limit = last - first`) — capped at the ledger version.
   */
  private async blockMinInclusionPrice(
    ledger: LedgerInfo,
    b: BlockInfo,
    execution: ExecutionConfigInfo,
    source: GasHistorySource,
  ): Promise<bigint | null> {
    const c = this.config;
    const first = b.firstVersion;
    const lastExcl = b.lastVersion < ledger.ledgerVersion + 1n ? b.lastVersion : ledger.ledgerVersion + 1n;
    const txns = lastExcl > first ? await source.getUserTxnGas(first, lastExcl - 1n) : [];

    // The reference counts use cases only when the shuffler has a user use-case spread factor.
    const countUseCases = c.incorporateReorderingEffects && execution.userUseCaseSpreadFactor !== null;
    let full: boolean;
    if (countUseCases && majorityContractFraction(txns) > 0.5) {
      // Use-case-aware reordering lets other transactions in (AIP-68): not full.
      full = false;
    } else if (txns.length >= c.fullBlockTxns) {
      full = true;
    } else if (execution.blockGasLimit !== null) {
      // The reference's next rule reads the block-end info of an epilogue among the read
      // versions. The epilogue is always its block's last transaction (AIP-88; the importer
      // refuses anything else), and the last version is never read: `b.endInfo` never applies.
      let used = 0n;
      for (const t of txns) used += t.gasUsed;
      full = used >= execution.blockGasLimit;
    } else {
      full = false;
    }
    // A "full" block without user transactions has no price (the reference would panic here).
    if (!full || txns.length === 0) return null;
    let minPrice = txns[0]!.gasUnitPrice;
    for (const t of txns) if (t.gasUnitPrice < minPrice) minPrice = t.gasUnitPrice;
    return nextBucket(c.buckets, minPrice);
  }
}

/**
 * The share of the most frequent use case when it is a contract address, else 0 (the reference's
 * None). Use cases: a special address (0x0..0xf) is Platform, no address is Others. Computed as
 * the reference's f32 division.
 */
function majorityContractFraction(txns: readonly UserTxnGas[]): number {
  if (txns.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const t of txns) {
    const k = useCaseKey(t.contractAddress);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  let bestKey = "";
  let best = 0;
  for (const [k, n] of counts) {
    if (n > best) {
      best = n;
      bestKey = k;
    }
  }
  // On a tie the reference's pick is arbitrary, but then no share exceeds one half anyway.
  if (!bestKey.startsWith("c:")) return 0;
  return Math.fround(Math.fround(best) / Math.fround(txns.length));
}

function useCaseKey(address: string | null): string {
  if (address === null) return "others";
  const bytes = parseAddress(address);
  if (bytes === null) return "others";
  let special = bytes[31]! < 16;
  for (let i = 0; special && i < 31; i++) if (bytes[i] !== 0) special = false;
  return special ? "platform" : "c:" + Buffer.from(bytes).toString("hex");
}
