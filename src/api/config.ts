/** Settings of the API, with the decided defaults (docs/decisions.md §10, §11, §14). */
import { readFileSync } from "node:fs";
import type { GasEstimationConfig } from "../ledger/gas.js";
import { defaultGasConfig } from "../ledger/gas.js";
import { DEFAULT_PRUNE_WINDOW } from "../ledger/pruning.js";

/** Default of `ApiConfig.moduleCacheBytes` (`ModuleRecords`' own default too). */
export const DEFAULT_MODULE_CACHE_BYTES = 32 * 1024 * 1024;

export interface ApiConfig {
  /** Also send the ledger headers as `X-Aptos-*` (for the official SDKs). */
  aptosHeaders: boolean;
  summariesPageSize: number;
  summariesMaxPageSize: number;
  modulesPageSize: number;
  modulesMaxPageSize: number;
  resourcesPageSize: number;
  resourcesMaxPageSize: number;
  transactionsPageSize: number;
  transactionsMaxPageSize: number;
  /**
   * A page of transactions (or a block's) is cut early, after its first, when its texts would pass
   * this many bytes: whatever `limit` asks, one answer holds no more than this in memory.
   */
  transactionsPageBytes: number;
  /**
   * A modules page is cut early when its JSON body would pass this many bytes: a guard against an
   * account whose pages would not fit in memory, which no real account meets at 64 MiB.
   */
  modulesPageBytes: number;
  /** Compress responses for clients that accept it (the reference node's `compression_enabled`). */
  compression: boolean;
  /** Smallest body that is compressed, in bytes. */
  compressionThreshold: number;
  /**
   * Send a body made for its request (not from the page cache) uncompressed when the client
   * accepts identity: CPU saved for bytes sent (see `Compression.send`).
   */
  plainMisses: boolean;
  /** Bytes of encoded module and summary pages kept for repeated requests (0: none). */
  pageCacheBytes: number;
  /**
   * Bytes of module records (bytecode hex and ABI JSON, one per code hash) kept for the module
   * pages that list them (0: none; `ModuleRecords`).
   */
  moduleCacheBytes: number;
  /** Largest accepted request body. */
  bodyLimit: number;
  /**
   * A connection with no traffic for this long is closed (Node's socket timeout; 0: never).
   * Node's own request timeouts start with a request, so without this a connection that never
   * sends one stays open for good, holding a descriptor; idle keep-alive connections close sooner,
   * after Fastify's 72 s keep-alive timeout.
   */
  connectionTimeoutMs: number;
  /**
   * Deadline for receiving a whole request, headers and body (Node's `requestTimeout`): a body
   * trickled in a byte at a time is answered 408 and closed when it passes. 0: none.
   */
  requestTimeoutMs: number;
  /** Deadline for receiving a request's headers (Node's `headersTimeout`; at most requestTimeoutMs). */
  headersTimeoutMs: number;
  /**
   * Open connections beyond this are answered 503 and closed at once, so that a flood cannot use
   * up the process's file descriptors (0: no cap). Default: the descriptor limit less a reserve.
   */
  maxConnections: number;
  /**
   * Origins allowed to send credentials (cookies, HTTP auth): these are echoed with
   * `Access-Control-Allow-Credentials: true`. Empty: `Access-Control-Allow-Origin: *`, no credentials.
   */
  corsOrigins: string[];
  /**
   * The proxies in front of this node (addresses or CIDRs, Fastify's `trustProxy` list): a request
   * from one of them is the client's whose address is the right-most `X-Forwarded-For` entry not in
   * this list. Empty: every request is its connection's peer's, `X-Forwarded-For` ignored.
   */
  trustProxy: string[];
  /** Serve `GET /metrics` (Prometheus text) on the API port; false when it has a port of its own. */
  metricsOnApiPort: boolean;
  /** The pruning window as configured (shown by /v1/info). */
  pruneWindow: string;
  gas: GasEstimationConfig;
  /**
   * Where this node's clients find the history and state it pruned (`--archival-endpoint`): every
   * 410 names it as `archival_endpoint`, which the official SDK retries once (docs/decisions.md §19).
   * Null: the 410s are as without it.
   */
  archivalEndpoint: string | null;
  /**
   * Open transaction streams beyond this are answered 503 with Retry-After (docs/decisions.md §24).
   * Default: half the connection cap, at most 10,000.
   */
  maxStreams: number;
  /**
   * Open transaction streams of one client (`req.ip`: the peer, or behind `--trust-proxy` the
   * forwarded address) beyond this are answered 429 with Retry-After, so that no one client takes
   * every stream (docs/decisions.md §24). Default: a tenth of `maxStreams`.
   */
  maxStreamsPerClient: number;
  /** A stream whose client has not taken this many bytes is ended as slow (docs/decisions.md §24). */
  streamBufferBytes: number;
  /** A stream that has sent nothing for this long sends a heartbeat (an SSE comment, an empty NDJSON line). */
  streamHeartbeatMs: number;
  /** Package version and git hash shown by /v1/info. */
  nodeVersion: string;
  gitHash: string | null;
}

export function defaultApiConfig(overrides: Partial<ApiConfig> = {}): ApiConfig {
  const config: Omit<ApiConfig, "maxStreams" | "maxStreamsPerClient"> = {
    aptosHeaders: false,
    summariesPageSize: 100,
    summariesMaxPageSize: 100,
    // The reference's default and maximum page size (max_account_modules_page_size).
    modulesPageSize: 9999,
    modulesMaxPageSize: 9999,
    // The reference's default and maximum page size (max_account_resources_page_size).
    resourcesPageSize: 9999,
    resourcesMaxPageSize: 9999,
    // The reference's default page size (DEFAULT_PAGE_SIZE) and maximum (max_transactions_page_size).
    transactionsPageSize: 25,
    transactionsMaxPageSize: 100,
    transactionsPageBytes: 64 * 1024 * 1024,
    modulesPageBytes: 64 * 1024 * 1024,
    compression: true,
    // The reference node compresses from 32 bytes; below about 1 KiB gzip and brotli save a few
    // hundred bytes at most and cost more CPU than the point read itself.
    compressionThreshold: 1024,
    plainMisses: false,
    pageCacheBytes: 64 * 1024 * 1024,
    moduleCacheBytes: DEFAULT_MODULE_CACHE_BYTES,
    bodyLimit: 8 * 1024 * 1024,
    connectionTimeoutMs: 120_000,
    requestTimeoutMs: 30_000,
    headersTimeoutMs: 15_000,
    maxConnections: defaultMaxConnections(),
    corsOrigins: [],
    trustProxy: [],
    metricsOnApiPort: true,
    pruneWindow: DEFAULT_PRUNE_WINDOW,
    gas: defaultGasConfig,
    archivalEndpoint: null,
    nodeVersion: "0.0.0",
    gitHash: null,
    streamBufferBytes: 256 * 1024,
    streamHeartbeatMs: 15_000,
    ...overrides,
  };
  const maxStreams = overrides.maxStreams ?? defaultMaxStreams(config.maxConnections);
  return { ...config, maxStreams, maxStreamsPerClient: overrides.maxStreamsPerClient ?? Math.max(1, Math.floor(maxStreams / 10)) };
}

/** Half the connection cap (the rest for requests), at most 10,000; 10,000 without a cap. */
function defaultMaxStreams(maxConnections: number): number {
  return maxConnections > 0 ? Math.max(1, Math.min(10_000, Math.floor(maxConnections / 2))) : 10_000;
}

/** Descriptors kept back from the connection cap: database files, WAL, logs, the listener. */
const FD_RESERVE = 128;

/**
 * The soft limit on open files less a reserve (Linux: /proc/self/limits), so the cap sheds load
 * before accept() fails with EMFILE; 10,000 where the limit cannot be read.
 */
export function defaultMaxConnections(): number {
  try {
    const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max open files"));
    const soft = line ? Number(line.slice("Max open files".length).trim().split(/\s+/)[0]) : NaN;
    if (Number.isFinite(soft) && soft > 0) return Math.max(16, soft - FD_RESERVE);
  } catch {
    // not Linux: fall through
  }
  return 10_000;
}
