/**
 * Settings of the gas price estimator: the reference node's `GasEstimationConfig`
 * (`config/src/config/gas_estimation_config.rs`) with its defaults and sanitizer rules, plus the
 * few inputs the reference reads from elsewhere (mempool buckets, the minimum gas unit price
 * fallback). The block gas limit and the shuffler come from the ledger's on-chain execution
 * config (`executionConfig.ts`), not from settings. See `aptos-api-facts.md` §7 and DECISIONS §13.
 */

/** Fixed answer that replaces the estimation (`static_override` in the reference). */
export interface GasStaticOverride {
  low: bigint;
  market: bigint;
  aggressive: bigint;
}

/** Every setting of the estimator. Build one with {@link makeGasConfig}. */
export interface GasEstimationConfig {
  /** When false the answer is always `(min, min, next_bucket(min))`. Default true. */
  readonly enabled: boolean;
  /** When set, returned as is (after the `enabled` check). Default null. */
  readonly staticOverride: Readonly<GasStaticOverride> | null;
  /** A block with at least this many user transactions is full. Default 250. */
  readonly fullBlockTxns: number;
  /** Blocks (newest first) whose minimum gives the low estimate. Default 10. */
  readonly lowBlockHistory: number;
  /** Blocks (newest first) whose upper median gives the market estimate. Default 30. */
  readonly marketBlockHistory: number;
  /** Blocks walked back at most; their p90 gives the aggressive estimate. Default 120. */
  readonly aggressiveBlockHistory: number;
  /** How long a computed estimate is reused within one epoch, in ms. Default 500. */
  readonly cacheExpirationMs: number;
  /** Whether the use-case majority rule (AIP-68 reordering) may apply. Default true. */
  readonly incorporateReorderingEffects: boolean;
  /** Mempool `broadcast_buckets`, strictly ascending. Default [0,150,300,…,1000000]. */
  readonly buckets: readonly bigint[];
  /** Minimum gas unit price used when the ledger has no gas schedule. Default 100. */
  readonly defaultMinGasUnitPrice: bigint;
}

/** A u64 as it may come from code (bigint) or from a config file (number or decimal string). */
export type U64Input = bigint | number | string;

/** What {@link makeGasConfig} accepts: any subset of the settings; u64 values in any {@link U64Input} form. */
export interface GasEstimationConfigInput {
  enabled?: boolean;
  staticOverride?: { low: U64Input; market: U64Input; aggressive: U64Input } | null;
  fullBlockTxns?: number;
  lowBlockHistory?: number;
  marketBlockHistory?: number;
  aggressiveBlockHistory?: number;
  cacheExpirationMs?: number;
  incorporateReorderingEffects?: boolean;
  buckets?: readonly U64Input[];
  defaultMinGasUnitPrice?: U64Input;
}

/** A setting is invalid; the message names the setting, the value and the bound. */
export class GasConfigError extends Error {
  constructor(message: string) {
    super(`gas estimation config: ${message}`);
    this.name = "GasConfigError";
  }
}

const U64_MAX = (1n << 64n) - 1n;

/** The mempool's default `broadcast_buckets`. */
export const DEFAULT_GAS_BUCKETS: readonly bigint[] = Object.freeze([
  0n, 150n, 300n, 500n, 1000n, 3000n, 5000n, 10000n, 100000n, 1000000n,
]);

/** The reference node's defaults (and ours for the extra inputs). */
export const defaultGasConfig: GasEstimationConfig = Object.freeze({
  enabled: true,
  staticOverride: null,
  fullBlockTxns: 250,
  lowBlockHistory: 10,
  marketBlockHistory: 30,
  aggressiveBlockHistory: 120,
  cacheExpirationMs: 500,
  incorporateReorderingEffects: true,
  buckets: DEFAULT_GAS_BUCKETS,
  defaultMinGasUnitPrice: 100n,
});

const KEYS = new Set<string>(Object.keys(defaultGasConfig));

function u64(name: string, v: unknown, maxSafe = false): bigint {
  let b: bigint;
  if (typeof v === "bigint") b = v;
  else if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) {
      throw new GasConfigError(`${name} (${v}) must be an integer between 0 and ${Number.MAX_SAFE_INTEGER}`);
    }
    b = BigInt(v);
  } else if (typeof v === "string" && /^[0-9]{1,20}$/.test(v)) b = BigInt(v);
  else throw new GasConfigError(`${name} (${String(v)}) must be an unsigned 64-bit integer`);
  const max = maxSafe ? BigInt(Number.MAX_SAFE_INTEGER) : U64_MAX;
  if (b < 0n || b > max) throw new GasConfigError(`${name} (${b}) must be between 0 and ${max}`);
  return b;
}

function int(name: string, v: unknown, min: number): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    throw new GasConfigError(`${name} (${String(v)}) must be an integer`);
  }
  if (v < min) throw new GasConfigError(`${name} (${v}) must be ${min === 1 ? "> 0" : `>= ${min}`}`);
  return v;
}

function bool(name: string, v: unknown): boolean {
  if (typeof v !== "boolean") throw new GasConfigError(`${name} (${String(v)}) must be true or false`);
  return v;
}

/**
 * Builds a complete, validated, frozen config: `partial` over {@link defaultGasConfig}.
 *
 * Applies the reference sanitizer (each history > 0; low and market history ≤ aggressive history)
 * and checks types and ranges (full block txns > 0, buckets strictly ascending u64s, static
 * override values ≤ 2^53 − 1 since the answer is a JSON number).
 *
 * @throws {GasConfigError} naming the setting, its value and the bound; also for unknown keys.
 * @example makeGasConfig({ lowBlockHistory: 5, staticOverride: { low: 100, market: 200, aggressive: 300 } })
 */
export function makeGasConfig(partial: GasEstimationConfigInput = {}): GasEstimationConfig {
  for (const k of Object.keys(partial)) {
    if (!KEYS.has(k)) throw new GasConfigError(`unknown setting "${k}" (known: ${[...KEYS].join(", ")})`);
  }
  const p = { ...defaultGasConfig, ...stripUndefined(partial) } as Record<string, unknown>;

  const so = p.staticOverride as GasEstimationConfigInput["staticOverride"];
  let staticOverride: GasStaticOverride | null = null;
  if (so !== null && so !== undefined) {
    if (typeof so !== "object") throw new GasConfigError(`staticOverride must be {low, market, aggressive} or null`);
    staticOverride = Object.freeze({
      low: u64("staticOverride.low", so.low, true),
      market: u64("staticOverride.market", so.market, true),
      aggressive: u64("staticOverride.aggressive", so.aggressive, true),
    });
  }

  if (!Array.isArray(p.buckets)) throw new GasConfigError(`buckets must be a list of u64`);
  const buckets = (p.buckets as unknown[]).map((b, i) => u64(`buckets[${i}]`, b));
  for (let i = 1; i < buckets.length; i++) {
    if (buckets[i]! <= buckets[i - 1]!) {
      throw new GasConfigError(
        `buckets[${i}] (${buckets[i]}) must be > buckets[${i - 1}] (${buckets[i - 1]}): the list must be strictly ascending`,
      );
    }
  }

  const cfg: GasEstimationConfig = {
    enabled: bool("enabled", p.enabled),
    staticOverride,
    fullBlockTxns: int("fullBlockTxns", p.fullBlockTxns, 1),
    lowBlockHistory: int("lowBlockHistory", p.lowBlockHistory, 1),
    marketBlockHistory: int("marketBlockHistory", p.marketBlockHistory, 1),
    aggressiveBlockHistory: int("aggressiveBlockHistory", p.aggressiveBlockHistory, 1),
    cacheExpirationMs: int("cacheExpirationMs", p.cacheExpirationMs, 0),
    incorporateReorderingEffects: bool("incorporateReorderingEffects", p.incorporateReorderingEffects),
    buckets: Object.freeze(buckets),
    defaultMinGasUnitPrice: u64("defaultMinGasUnitPrice", p.defaultMinGasUnitPrice),
  };

  // The reference sanitizer (GasEstimationConfig::sanitize).
  if (cfg.lowBlockHistory > cfg.aggressiveBlockHistory) {
    throw new GasConfigError(
      `lowBlockHistory (${cfg.lowBlockHistory}) must be <= aggressiveBlockHistory (${cfg.aggressiveBlockHistory})`,
    );
  }
  if (cfg.marketBlockHistory > cfg.aggressiveBlockHistory) {
    throw new GasConfigError(
      `marketBlockHistory (${cfg.marketBlockHistory}) must be <= aggressiveBlockHistory (${cfg.aggressiveBlockHistory})`,
    );
  }
  return Object.freeze(cfg);
}

function stripUndefined(o: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}
