/**
 * Settings of the gas price estimator: the reference node's `GasEstimationConfig`
 * (`config/src/config/gas_estimation_config.rs`) with its defaults, plus the
 * few inputs the reference reads from elsewhere (mempool buckets, the minimum gas unit price
 * fallback). The block gas limit and the shuffler come from the ledger's on-chain execution
 * config (`executionConfig.ts`), not from settings. See docs/decisions.md §14.
 */

/** Fixed answer that replaces the estimation (`static_override` in the reference); each <= 2^53 - 1 (a JSON number). */
export interface GasStaticOverride {
  low: bigint;
  market: bigint;
  aggressive: bigint;
}

/**
 * Every setting of the estimator. The node runs with {@link defaultGasConfig}; another config is
 * built the same way, `{ ...defaultGasConfig, ...changes }`, keeping the reference sanitizer's
 * rules (each history > 0; low and market history <= aggressive history).
 */
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
