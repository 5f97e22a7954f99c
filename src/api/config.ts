/** Settings of the API, with the decided defaults (DECISIONS §9, §10, §13). */
import type { GasEstimationConfig } from "../ledger/gas.js";
import { defaultGasConfig } from "../ledger/gas.js";
import { DEFAULT_PRUNE_WINDOW } from "../ledger/pruning.js";

export interface ApiConfig {
  /** Also send the ledger headers as `X-Aptos-*` (for the official SDKs). */
  aptosHeaders: boolean;
  summariesPageSize: number;
  summariesMaxPageSize: number;
  modulesPageSize: number;
  modulesMaxPageSize: number;
  /**
   * A modules page is cut early when its JSON body would pass this many bytes: a guard against an
   * account whose pages would not fit in memory, which no real account meets at 64 MiB.
   */
  modulesPageBytes: number;
  /** Compress responses for clients that accept it (the reference node's `compression_enabled`). */
  compression: boolean;
  /** Smallest body that is compressed, in bytes. */
  compressionThreshold: number;
  /** Bytes of encoded module and summary pages kept for repeated requests (0: none). */
  pageCacheBytes: number;
  /** Largest accepted request body. */
  bodyLimit: number;
  /**
   * A connection with no traffic for this long is closed (Node's socket timeout; 0: never).
   * Node's own request timeouts start with a request, so without this a connection that never
   * sends one stays open for good, holding a descriptor; idle keep-alive connections close sooner,
   * after Fastify's 72 s keep-alive timeout.
   */
  connectionTimeoutMs: number;
  /** The pruning window as configured (shown by /v1/info). */
  pruneWindow: string;
  gas: GasEstimationConfig;
  /** Package version and git hash shown by /v1/info. */
  nodeVersion: string;
  gitHash: string | null;
}

export function defaultApiConfig(overrides: Partial<ApiConfig> = {}): ApiConfig {
  return {
    aptosHeaders: false,
    summariesPageSize: 100,
    summariesMaxPageSize: 100,
    // The reference's default and maximum page size (max_account_modules_page_size).
    modulesPageSize: 9999,
    modulesMaxPageSize: 9999,
    modulesPageBytes: 64 * 1024 * 1024,
    compression: true,
    // The reference node compresses from 32 bytes; below about 1 KiB gzip and brotli save a few
    // hundred bytes at most and cost more CPU than the point read itself.
    compressionThreshold: 1024,
    pageCacheBytes: 64 * 1024 * 1024,
    bodyLimit: 8 * 1024 * 1024,
    connectionTimeoutMs: 120_000,
    pruneWindow: DEFAULT_PRUNE_WINDOW,
    gas: defaultGasConfig,
    nodeVersion: "0.0.0",
    gitHash: null,
    ...overrides,
  };
}
