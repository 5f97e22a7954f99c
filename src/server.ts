/**
 * Runs the node: the API over a store, an optional devnet or follower feeding the same store, and
 * a pruner that keeps the ledger inside its window. Used by `ledger-node serve` and by the tests.
 */
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import cluster, { type Worker } from "node:cluster";
import { readFileSync } from "node:fs";
import type { ApiConfig } from "./api/config.js";
import type { NodeContext } from "./api/context.js";
import type { FollowerState, NodeMetrics } from "./api/observability/metrics.js";
import type { DevnetOptions } from "./ingest/devnet/devnet.js";
import { type ImportFilesOptions, type ImportFilesResult, importFiles } from "./ingest/files/fileSource.js";
import {
  type FollowWriterOptions,
  LocalWriters,
  WriterThread,
  type WriterEvents,
  type Writers,
  type WritersOptions,
} from "./ingest/writers.js";
import { type WriterFailure, WriterStatus } from "./ingest/writerStatus.js";
import { BaseStateService } from "./ingest/follow/baseState.js";
import { FetchShares, type FetchSharesOptions } from "./ingest/follow/fetchShares.js";
import { UpstreamClient } from "./ingest/follow/client.js";
import { FOLLOWER, type FollowFrom, Follower, type FollowerLog, type FollowLag } from "./ingest/follow/sync.js";
import { DEFAULT_PRUNE_WINDOW, DEVNET_PRUNE_WINDOW, formatPruneWindow, parsePruneWindow, type PruneWindow } from "./ledger/pruning.js";
import { pruneNow } from "./ingest/pruneToWindow.js";
import { BaseRecords } from "./storage/replica/baseRecords.js";
import { HeadStartedStorage, mayBeHeadStarted } from "./storage/replica/HeadStartedStorage.js";
import type { Storage } from "./storage/contracts/storage.js";
import { isPostgresUrl, openStore, sqliteWritable } from "./storage/open.js";
import { BATCH_WAL_PAGES, type SqliteStoreOptions } from "./storage/sqlite/SqliteStore.js";
import { existsSync } from "node:fs";

export interface ServeOptions {
  db: string;
  /** PostgreSQL hot standby: its primary's URL, heard for commits so the streams' feed need not poll (`serve --primary`). */
  primary?: string;
  host: string;
  port: number;
  aptosHeaders?: boolean;
  /** Pruning window (versions or duration); default 90000000, or 2000 with a devnet. */
  pruneWindow?: string;
  pruneIntervalMs?: number;
  devnet?: boolean | Partial<DevnetOptions>;
  chainId?: number;
  logger?: boolean | object;
  logRequests?: boolean;
  api?: Partial<ApiConfig>;
  /**
   * false: only serve — no devnet, no pruner, SQLite opened read-only. The extra processes of
   * `serve --workers N` run so; the first one writes. Default true.
   */
  writer?: boolean;
  /** Serve `GET /metrics` on this port (on `host`) instead of the API port; 0: an ephemeral one. */
  metricsPort?: number;
  /**
   * SQLite: run the devnet and the pruner on a worker thread with a connection of their own, so a
   * write waiting for a lock never stalls a request (default true). false keeps them on this
   * thread, where tests reach the devnet's internals.
   */
  writerThread?: boolean;
  /** SQLite: how long a write waits for another process's lock before it fails and is retried. */
  busyTimeoutMs?: number;
  /** SQLite: each connection's page cache and memory map (`SqliteStoreOptions`; default: theirs). */
  sqliteMemory?: Pick<SqliteStoreOptions, "cacheSizeMiB" | "mmapSizeMiB">;
  /** Run the built-in pruner (default true). Without it and without a devnet, SQLite opens read-only. */
  prune?: boolean;
  /** SQLite: create a missing database file (default true; the CLI: only with --devnet or --create). */
  create?: boolean;
  /** Serve this store, already open over `db`, instead of opening one. The node closes it. */
  store?: Storage;
  /**
   * Follow this upstream into the ledger while serving (`serve --follow`). The follower runs
   * among the writers (on SQLite, on the writer thread); reads of the state before the replica's
   * first block miss (`HeadStartedStorage`), and the API has the `BaseStateService` fetch it from
   * the upstream, waiting at most `upstreamTimeoutMs`, and reads again. A transient fault is retried and a permanent one stops the follower
   * only: the node keeps serving, and `/-/healthy`, the metrics and the log say why.
   */
  follow?: FollowWriterOptions & {
    upstreamTimeoutMs: number;
    /**
     * `--proxy`: pass the `/v1` routes this node does not serve to the upstream, at most
     * `maxRequestsPerSecond` a second (a budget apart from the follower's), with `upstreamTimeoutMs`
     * as the upstream's deadline (`ProxyOptions.timeoutMs`).
     */
    proxy?: { maxRequestsPerSecond: number } | null;
    /**
     * The fairness bound of the base-state fetches (`FetchShares`): new fetches a client (`req.ip`)
     * may start a second, and fetches running at once (default 10 and 32).
     */
    baseFetches?: FetchSharesOptions;
  };
}

/**
 * How long the node answers from its store's memo before asking whether another process committed
 * (`memoLagMs` of `SqliteStoreOptions` and `PostgresConnectOptions`, database `db`): no client can
 * tell a few milliseconds from network latency.
 * - SQLite: 1 ms. The check it saves (`PRAGMA data_version`) is a fraction of a point read.
 * - PostgreSQL: 10 ms from when the read that saw the position was asked. The check is a round
 *   trip, which under load takes more than a millisecond by itself: with 1 ms the memo would
 *   expire before most answers arrived, and hot reads would still make a round trip each.
 */
export function memoLagMs(db: string): number {
  return isPostgresUrl(db) ? 10 : 1;
}

/**
 * How long `close()` lets requests in flight finish before it closes every connection. Fastify
 * closes idle keep-alive connections at once, but Node does not count as idle a connection that
 * was opened and has not sent a request yet (browsers open such connections ahead of need): one of
 * them held close(), and so a SIGTERM, open for as long as test/shutdown.test.ts waited (30 s).
 */
const CLOSE_GRACE_MS = 2_000;

type StatusLogRef = { error(obj: object, msg: string): void; info(obj: object, msg: string): void } | null;

export interface RunningNode {
  app: FastifyInstance;
  store: Storage;
  url: string;
  /** The writers (devnet, pruner): a `WriterThread` for SQLite, else `LocalWriters`; null when it only reads. */
  devnet: Writers | null;
  /** The node's Prometheus metrics; `metricsUrl` when they have a port of their own. */
  metrics: NodeMetrics;
  metricsUrl: string | null;
  /** The writers' state (devnet, pruner), as `/-/healthy` reports it. */
  writerStatus: WriterStatus;
  /** Emits `commit` after each commit of this node's devnet or follower, wherever they run. */
  commits: NodeContext["commits"];
  close(): Promise<void>;
}

export const PACKAGE_VERSION: string = (() => {
  try {
    return JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version as string;
  } catch {
    return "0.0.0";
  }
})();

export async function startNode(o: ServeOptions): Promise<RunningNode> {
  if (o.follow && (o.devnet || o.store)) throw new Error("a node that follows an upstream runs no devnet and opens its own store");
  const windowText = o.pruneWindow ?? (o.devnet ? DEVNET_PRUNE_WINDOW : DEFAULT_PRUNE_WINDOW);
  const window = parsePruneWindow(windowText);
  const writer = o.writer ?? true;
  // This process writes only for the devnet, the follower and the pruner. A read-only SQLite file
  // is served read-only with the pruner off (said in the log below) rather than refused; a
  // follower's is refused when its writer opens it.
  const follow = writer ? (o.follow ?? null) : null;
  let writes = writer && (Boolean(o.devnet) || follow !== null || (o.prune ?? true));
  let readOnlyFile = false;
  if (writes && !o.devnet && !follow && !isPostgresUrl(o.db) && existsSync(o.db) && !sqliteWritable(o.db)) {
    writes = false;
    readOnlyFile = true;
  }
  let statusLog: StatusLogRef = null;
  let baseStateLog: FastifyBaseLogger | null = null;
  // The log and the metrics are the app's, built below; writers start only after that.
  let onWriterChange: () => void = () => undefined;
  const status = new WriterStatus({
    error: (obj, msg) => {
      statusLog?.error(obj, msg);
      onWriterChange();
    },
    info: (obj, msg) => {
      statusLog?.info(obj, msg);
      onWriterChange();
    },
  });
  // Told to the metrics once the app has them; prunes before that cannot happen (not started).
  let events: WriterEvents = {
    pruned: () => undefined,
    pruneFailed: () => undefined,
    followLag: () => undefined,
    followLog: () => undefined,
    followUnknown: () => undefined,
    committed: () => undefined,
  };
  const writerEvents: WriterEvents = {
    pruned: (s, r) => events.pruned(s, r),
    pruneFailed: (s) => events.pruneFailed(s),
    followLag: (lag) => events.followLag(lag),
    followLog: (level, m) => events.followLog(level, m),
    followUnknown: (u) => events.followUnknown(u),
    committed: () => events.committed(),
  };
  const sqliteOptions: SqliteStoreOptions = { ...o.sqliteMemory, ...(o.busyTimeoutMs !== undefined ? { busyTimeoutMs: o.busyTimeoutMs } : {}) };
  const writersOptions: WritersOptions = {
    devnet: o.devnet && writer ? { chainId: o.chainId ?? 4, ...(typeof o.devnet === "object" ? o.devnet : {}) } : null,
    pruneWindow: writes && (o.prune ?? true) ? window : null,
    pruneIntervalMs: o.pruneIntervalMs ?? 10_000,
    follow: follow
      ? {
          upstream: follow.upstream,
          apiKey: follow.apiKey,
          from: follow.from,
          concurrency: follow.concurrency,
          maxRequestsPerSecond: follow.maxRequestsPerSecond,
          pollMs: follow.pollMs,
        }
      : null,
  };
  // SQLite's writers get a thread and a connection of their own; this one then only reads.
  const threaded = writes && !isPostgresUrl(o.db) && (o.writerThread ?? true);
  let writers: Writers | null = null;
  let thread: WriterThread | null = null;
  if (threaded) {
    thread = await WriterThread.start({ db: o.db, open: { create: o.create ?? true, ...sqliteOptions }, writers: writersOptions }, status, writerEvents);
    writers = thread;
  }
  let store: Storage;
  let baseState: BaseStateService | null = null;
  // The follower's lag, told by the writers; /v1/info shows it.
  let lag: FollowLag | null = null;
  try {
    store =
      o.store ??
      (await openStore(o.db, {
        readonly: !writes || threaded,
        create: o.create ?? true,
        memoLagMs: memoLagMs(o.db),
        readsPerTurn: true,
        ...(o.primary !== undefined ? { primary: o.primary } : {}),
        ...(writes ? { writer: o.devnet ? "serve --devnet" : follow ? "serve --follow" : "the pruner (serve without --no-prune)" } : {}),
        ...sqliteOptions,
      }));
    // The writers write through the backend's store; the API reads a head-started ledger through
    // `HeadStartedStorage`, whose misses the base-state service (with an upstream) fetches.
    const written = store;
    if (follow) {
      // This client fetches base state for reads; the follower has its own, where it runs. Its
      // retries are per client read, so at debug: the read's 503, if it comes to that, is logged.
      const client = new UpstreamClient(follow.upstream, {
        apiKey: follow.apiKey,
        maxRequestsPerSecond: follow.maxRequestsPerSecond,
        onRetry: (what, attempt, ms) => baseStateLog?.debug({ upstream: follow.upstream }, `base state: retrying in ${Math.round(ms)} ms (attempt ${attempt}): ${what}`),
      });
      const writeBase = thread ? (w: Parameters<WriterThread["writeBaseState"]>[0]) => thread.writeBaseState(w) : undefined;
      const records = new BaseRecords();
      const shares = new FetchShares(follow.baseFetches ?? { perClientPerSecond: 10, concurrent: 32 });
      baseState = new BaseStateService(written, client, { timeoutMs: follow.upstreamTimeoutMs, records, shares, ...(writeBase ? { writeBase } : {}) });
      store = new HeadStartedStorage(written, () => lag, records);
    } else if (!o.store && !o.devnet && (await mayBeHeadStarted(store))) {
      // A devnet's ledger is its own chain from genesis: never a follower's. Without an upstream
      // a read of the state before the first synced block answers 503 instead of an empty answer.
      store = new HeadStartedStorage(store);
    }
    if (writes && !threaded) writers = await LocalWriters.open(written, writersOptions, status, writerEvents);
  } catch (e) {
    await writers?.stop();
    throw e;
  }
  // Loaded here, not with this module: `follow`, `import` and `prune` start without the API's modules.
  const [{ buildApp }, { serveMetrics }] = await Promise.all([import("./api/app.js"), import("./api/observability/metrics.js")]);
  const { app, ctx } = await buildApp({
    store,
    logger: o.logger ?? false,
    logRequests: o.logRequests ?? false,
    ...(follow?.proxy
      ? { proxy: { upstream: follow.upstream, apiKey: follow.apiKey ?? null, maxRequestsPerSecond: follow.proxy.maxRequestsPerSecond, timeoutMs: follow.upstreamTimeoutMs } }
      : {}),
    config: {
      aptosHeaders: o.aptosHeaders ?? false,
      pruneWindow: formatPruneWindow(window),
      nodeVersion: PACKAGE_VERSION,
      gitHash: process.env.LEDGER_NODE_GIT_HASH ?? null,
      ...(o.metricsPort !== undefined ? { metricsOnApiPort: false } : {}),
      ...o.api,
    },
  });
  if (writes) ctx.writer = status;
  // A reader worker of `--workers` is told of the writer worker's commits through the primary (serveWorkers).
  const onWorkerMessage = cluster.isWorker && !writer && (o.devnet || o.follow) ? (m: unknown) => isCommitted(m) && ctx.commits.emit("commit") : null;
  if (onWorkerMessage) process.on("message", onWorkerMessage);
  // The devnet and the follower tell of each commit (`events.committed`): the streams' feed need not poll for them.
  ctx.commitsTold = writersOptions.devnet !== null || writersOptions.follow !== null || onWorkerMessage !== null;
  if (baseState) {
    ctx.baseState = baseState;
    ctx.gasReads = baseState.gasReads(store);
  }
  statusLog = ctx.log;
  baseStateLog = ctx.log;
  const address = await app.listen({ host: o.host, port: o.port });
  const log = ctx.log;
  const metrics = ctx.metrics!;
  onWriterChange = () => {
    metrics.writerFailures.set(status.failing?.attempts ?? 0);
    if (follow) metrics.setFollowerState(followerState(status.failure(FOLLOWER)));
  };
  if (follow) metrics.setFollowerState("following");
  let lastLagLog = 0;
  events = {
    pruned: (seconds, r) => {
      metrics.pruned(seconds, r);
      if (r) log.info({ prune: { ...r, oldestVersion: String(r.oldestVersion), oldestBlockHeight: String(r.oldestBlockHeight) } }, "pruned");
    },
    pruneFailed: (seconds) => metrics.pruneFailed(seconds),
    followLag: (next) => {
      lag = next;
      metrics.writerLagVersions.set(Number(lag.versions));
      metrics.writerLagSeconds.set(lag.seconds);
      // A line every 10 s at most, as `follow` logs it (the lag is a gauge, not an event).
      if (performance.now() - lastLagLog < 10_000) return;
      lastLagLog = performance.now();
      log.info({ follow: { versions: String(lag.versions), seconds: lag.seconds, upstreamVersion: String(lag.upstreamVersion) } }, followLagLine(lag));
    },
    followLog: (level, m) => (level === "info" ? log.info(m) : log.warn(m)),
    followUnknown: (u) => metrics.unknownKinds.inc({ what: u.what, type: u.type }),
    committed: () => {
      ctx.commits.emit("commit");
      if (cluster.isWorker) process.send?.(COMMITTED);
    },
  };
  const metricsServer = o.metricsPort !== undefined ? await serveMetrics(metrics, o.host, o.metricsPort) : null;
  // Fastify says so itself when its logger is on (--log-requests).
  if (!o.logRequests) log.info(`Server listening at ${address}`);
  if (readOnlyFile) log.warn(`${o.db} is read-only for this process: serving it read-only, without the pruner`);
  else if (writer && !writes) log.info(`serving ${isPostgresUrl(o.db) ? "the database" : o.db} read-only (no devnet, pruner off)`);
  // A primary's own commits are heard: the flag is for a hot standby, which cannot listen.
  if (o.primary !== undefined && store.standby === null && writer) log.warn("--primary is not used: the ledger database is a primary, whose own commits the streams hear");
  // Failures and the recovery are logged by the WriterStatus.
  writers?.start();
  return {
    app,
    store,
    url: address,
    devnet: writers,
    metrics,
    metricsUrl: metricsServer?.url ?? null,
    writerStatus: status,
    commits: ctx.commits,
    async close() {
      if (onWorkerMessage) process.off("message", onWorkerMessage);
      await metricsServer?.close();
      await writers?.stop();
      const force = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
      try {
        await app.close();
      } finally {
        clearTimeout(force);
      }
      await store.close();
    },
  };
}

/** What the follower's last report says it is doing, for the metrics. */
function followerState(f: WriterFailure | null): FollowerState {
  return f === null ? "following" : f.stopped ? "stopped" : "retrying";
}

/** The follower's lag, for the log. */
export function followLagLine(lag: FollowLag): string {
  return `upstream head ${lag.upstreamVersion}: ${lag.versions} versions and ${lag.seconds.toFixed(1)} s behind`;
}

/** `ledger-node import`: the files pushed into the ledger at `db` (created at the first transaction). */
export function importIntoLedger(db: string, files: readonly string[], o: Omit<ImportFilesOptions, "open">): Promise<ImportFilesResult> {
  return importFiles(files, { ...o, open: () => openStore(db, { create: true, writer: "import", walAutocheckpointPages: BATCH_WAL_PAGES }) });
}

/** `ledger-node prune`: the ledger at `db` pruned to `window` now; never creates a database. */
export async function pruneLedger(db: string, window: PruneWindow) {
  // A mistyped path is an error, not a new empty ledger with nothing to prune.
  const store = await openStore(db, { create: false, missingHint: "prune never creates a database: check the path", writer: "prune" });
  try {
    return await pruneNow(store, window);
  } finally {
    await store.close();
  }
}

export interface FollowCommandOptions {
  upstream: string;
  db: string;
  apiKey: string | null;
  from: FollowFrom;
  concurrency: number;
  maxRequestsPerSecond: number;
  pollMs: number;
  /** Stop once the ledger holds the upstream's head. */
  exitAtHead: boolean;
  log: FollowerLog;
  /** Told when the follower stops for good, before `done` rejects (the command's exit code). */
  onStopped?: () => void;
}

/**
 * `ledger-node follow`: a follower alone, writing the upstream's transactions into `db` through
 * the Importer. `done` resolves when it stops (at the head with `exitAtHead`, or after `stop()`)
 * and rejects with the reason of a permanent stop.
 */
export async function followUpstream(o: FollowCommandOptions): Promise<{ stop: () => void; done: Promise<void> }> {
  const { log } = o;
  const client = new UpstreamClient(o.upstream, {
    apiKey: o.apiKey,
    maxRequestsPerSecond: o.maxRequestsPerSecond,
    onRetry: (what, attempt, ms) => log.warn(`retrying in ${Math.round(ms)} ms (attempt ${attempt}): ${what}`),
  });
  const store = await openStore(o.db, { create: true, writer: "follow" });
  let lastLog = 0;
  const follower = new Follower(store, client, {
    from: o.from,
    concurrency: o.concurrency,
    pollMs: o.pollMs,
    exitAtHead: o.exitAtHead,
    log,
    // Transient faults are logged, retried and their recovery logged (with --quiet too: both
    // ends of an outage); a permanent stop ends the command with its message (exit 1).
    status: new WriterStatus({
      error: (f, m) => {
        // Told at the stop itself, before the cleanup after it awaits anything.
        if ("stopped" in f && f.stopped === true) o.onStopped?.();
        log.warn(m);
      },
      info: (_, m) => log.warn(m),
    }),
    onLag: (lag) => {
      // A line every 10 s at most while it runs (the lag is a gauge, not an event).
      if (performance.now() - lastLog < 10_000) return;
      lastLog = performance.now();
      store.getLedgerInfo().then(
        (i) => log.info(`ledger version ${i ? String(i.ledgerVersion) : "none"}, ${followLagLine(lag)}`),
        () => undefined, // a failing store is the commit's to report
      );
    },
  });
  const done = (async () => {
    try {
      await follower.run();
      const info = await store.getLedgerInfo(true);
      const u = process.cpuUsage();
      log.info(
        `stopped at ledger version ${info?.ledgerVersion ?? "none"} (oldest ${info?.oldestVersion ?? "none"}); ${client.requests} upstream requests; ${((u.user + u.system) / 1e6).toFixed(2)} s CPU`,
      );
    } finally {
      await store.close();
    }
  })();
  return { stop: () => follower.stop(), done };
}

/** Environment variable telling a `serve --workers` process its role. */
const WORKER_ROLE = "LEDGER_NODE_WORKER_ROLE";

/** The writer worker's message after each commit of its devnet, relayed by the primary to the other workers. */
const COMMITTED = { ledgerNode: "committed" } as const;
const isCommitted = (m: unknown): boolean => typeof m === "object" && m !== null && (m as { ledgerNode?: unknown }).ledgerNode === COMMITTED.ledgerNode;

/** In a process forked by `serveWorkers`: whether it is the one that writes. */
export function isWriterProcess(): boolean {
  return !cluster.isWorker || process.env[WORKER_ROLE] === "writer";
}

/**
 * `serve --workers N` (call in the primary process): forks N processes running the same command
 * on the shared port (node:cluster hands connections out round-robin). The first is the writer —
 * it migrates the database and runs the devnet and the pruner — and the others start once it
 * listens, as readers (for SQLite, read-only connections to the same WAL file). A worker that dies
 * after it was serving is replaced; SIGINT/SIGTERM stop them all. Resolves when all have exited.
 */
export async function serveWorkers(n: number, log: (msg: string) => void): Promise<number> {
  const roles = new Map<number, "writer" | "reader">();
  const serving = new Set<number>();
  let stopping = false;
  let exitCode = 0;
  const fork = (role: "writer" | "reader"): Worker => {
    const w = cluster.fork({ [WORKER_ROLE]: role });
    roles.set(w.id, role);
    w.once("listening", () => serving.add(w.id));
    return w;
  };
  const allExited = new Promise<void>((resolve) => {
    cluster.on("exit", (w, code, signal) => {
      const role = roles.get(w.id) ?? "reader";
      const wasServing = serving.delete(w.id);
      roles.delete(w.id);
      if (!stopping) {
        if (wasServing) {
          log(`worker ${w.process.pid} (${role}) exited (${signal ?? code}); starting another`);
          fork(role);
        } else {
          log(`worker ${w.process.pid} (${role}) failed to start (${signal ?? code}); stopping`);
          exitCode = 1;
          stop();
        }
      }
      if (roles.size === 0) resolve();
    });
  });
  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill("SIGTERM");
    setTimeout(() => {
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill("SIGKILL");
    }, 10_000).unref();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // The writer's commits, told to the other workers: their streams look at once (startNode).
  cluster.on("message", (from, m) => {
    if (!isCommitted(m)) return;
    for (const w of Object.values(cluster.workers ?? {})) if (w && w !== from && w.isConnected()) w.send(m, () => undefined);
  });
  const first = fork("writer");
  await new Promise<void>((resolve) => {
    first.once("listening", () => resolve());
    first.once("exit", () => resolve());
  });
  if (!stopping) {
    for (let i = 1; i < n; i++) fork("reader");
    log(`ledger-node ${PACKAGE_VERSION}: ${n} worker processes share the port (pid ${first.process.pid} writes)`);
  }
  await allExited;
  return exitCode;
}
