/**
 * The node's Prometheus metrics (prom-client), one registry per app so that several nodes in one
 * process (tests) keep their counts apart. Per request a few numbers are added to (see
 * `OperationMetrics`); everything else (ledger version, cache ratios) is read when scraped.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { LedgerReader } from "../../storage/contracts/reader.js";
import type { PageCache } from "../pages/pageCache.js";

/** Upper bounds (seconds) of the request duration histogram's buckets. */
const DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** One operation's requests with one status: plain numbers, turned into samples when scraped. */
interface StatusTally {
  count: number;
  sum: number;
  /** Requests per bucket (not cumulative); the last slot is +Inf. */
  buckets: Float64Array;
}

/**
 * One operation's request counts and durations by status. prom-client's labelled children hash
 * their labels on every `inc`/`observe`, a cost every request would pay; here a request adds to
 * plain numbers, and the scrape builds the samples.
 */
export class OperationMetrics {
  readonly byStatus = new Map<number, StatusTally>();
  constructor(readonly operation: string) {}

  /** One finished request: its status and seconds from the request to the response being sent. */
  observe(status: number, seconds: number): void {
    let t = this.byStatus.get(status);
    if (t === undefined) {
      t = { count: 0, sum: 0, buckets: new Float64Array(DURATION_BUCKETS.length + 1) };
      this.byStatus.set(status, t);
    }
    t.count++;
    t.sum += seconds;
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    t.buckets[i]!++;
  }
}

/** The request counter and histogram of every operation, in prom-client's metric shape, built when scraped. */
function requestMetrics(ops: Map<string, OperationMetrics>) {
  type Sample = { labels: Record<string, string | number>; value: number; metricName?: string };
  const requests = {
    name: "ledger_node_http_requests_total",
    help: "HTTP requests answered, by operation (operationId) and status",
    type: "counter" as const,
    aggregator: "sum" as const,
    get() {
      const values: Sample[] = [];
      for (const o of ops.values()) for (const [status, t] of o.byStatus) values.push({ labels: { operation: o.operation, status }, value: t.count });
      return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
    },
    reset() {},
  };
  const durations = {
    name: "ledger_node_http_request_duration_seconds",
    help: "Time from a request's arrival to its response being sent, by operation and status",
    type: "histogram" as const,
    aggregator: "sum" as const,
    get() {
      const values: Sample[] = [];
      for (const o of ops.values()) {
        for (const [status, t] of o.byStatus) {
          let cumulative = 0;
          DURATION_BUCKETS.forEach((le, i) => {
            cumulative += t.buckets[i]!;
            values.push({ labels: { le, operation: o.operation, status }, value: cumulative, metricName: `${this.name}_bucket` });
          });
          values.push({ labels: { le: "+Inf", operation: o.operation, status }, value: t.count, metricName: `${this.name}_bucket` });
          values.push({ labels: { operation: o.operation, status }, value: t.sum, metricName: `${this.name}_sum` });
          values.push({ labels: { operation: o.operation, status }, value: t.count, metricName: `${this.name}_count` });
        }
      }
      return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
    },
    reset() {},
  };
  return [requests, durations];
}

/** The error answers of one status and error code. */
interface ErrorTally {
  status: number;
  errorCode: string;
  count: number;
}

/** The counter of error answers, in prom-client's metric shape, built when scraped (as `requestMetrics`). */
function errorMetric(tallies: Map<string, ErrorTally>) {
  return {
    name: "ledger_node_http_errors_total",
    help: "Error answers sent, by status and error_code (each counted, though the log names only the first few a minute)",
    type: "counter" as const,
    aggregator: "sum" as const,
    get() {
      const values = [...tallies.values()].map((t) => ({ labels: { status: t.status, error_code: t.errorCode }, value: t.count }));
      return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
    },
    reset() {},
  };
}

/**
 * What the node measures. Writers, followers, importers and the pruner set the gauges and counters
 * they own (`writerLag*`, `importVersions`, `prune*`); the API sets the rest.
 */
/** What a follower is doing: following, retrying a transient fault, or stopped for good. */
export type FollowerState = "following" | "retrying" | "stopped";
const FOLLOWER_STATES: readonly FollowerState[] = ["following", "retrying", "stopped"];

export class NodeMetrics {
  readonly registry = new Registry();
  /** 5xx answers caused by the store (unavailable 503, read failures 500). */
  readonly storageErrors: Counter<"status">;
  /** Connections answered 503 because the connection cap was reached. */
  readonly connectionsShed: Counter;
  /** Requests answered 408 because headers or body did not arrive in time. */
  readonly requestTimeouts: Counter;
  /** Requests the HTTP parser refused (400, 431) before they reached a route. */
  readonly clientErrors: Counter<"status">;
  /** Hooks for a writer or follower: how far behind its source it is. */
  readonly writerLagVersions: Gauge;
  readonly writerLagSeconds: Gauge;
  /** Consecutive failed writes of the writer (0 when the last one committed). */
  readonly writerFailures: Gauge;
  /** A follower's state: 1 on the one it is in, 0 on the others (`setFollowerState`). */
  readonly followerState: Gauge<"state">;
  /** Hook for an import: versions committed so far. */
  readonly importVersions: Counter;
  readonly unknownKinds: Counter<"what" | "type">;
  readonly pruneRuns: Counter<"result">;
  readonly pruneLastSeconds: Gauge;
  readonly pruneLastOldestVersion: Gauge;
  readonly pruneDeletedTransactions: Counter;
  /** Requests of `--proxy`, by the status class answered and whether the upstream or this node answered it. */
  readonly proxied: Counter<"status_class" | "from">;
  /** Transaction streams (docs/decisions.md §24): open now, events sent, and ended by reason (`slow_client`: dropped for being slow). */
  readonly streamsOpen: Gauge;
  readonly streamEventsSent: Counter;
  readonly streamsEnded: Counter<"reason">;
  /** Streams not opened: `node_full` (503, `--max-streams`), `client_share` (429, `--max-streams-per-client`). */
  readonly streamsRefused: Counter<"reason">;
  /** Commits the streams' feed was told of by a writer of this process or, under `--workers`, of the writer worker. */
  readonly streamCommitsTold: Counter;
  /** Commits the streams' feed was told of by the database's commit signal (`LedgerReader.commitSignal`). */
  readonly streamCommitSignals: Counter;
  /** The feed's looks at the ledger's position. */
  readonly streamFeedLooks: Counter;
  private readonly ops = new Map<string, OperationMetrics>();
  /** Error answers by `status error_code` (`errorAnswered`). */
  private readonly errors = new Map<string, ErrorTally>();

  constructor(opts: { store?: LedgerReader; pages?: PageCache; openConnections?: () => number; defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    for (const m of requestMetrics(this.ops)) this.registry.registerMetric(m as never);
    this.registry.registerMetric(errorMetric(this.errors) as never);
    this.storageErrors = new Counter({ name: "ledger_node_storage_errors_total", help: "5xx answers caused by the store, by status", labelNames: ["status"], registers });
    this.connectionsShed = new Counter({ name: "ledger_node_connections_shed_total", help: "Connections answered 503 over the connection cap", registers });
    this.requestTimeouts = new Counter({ name: "ledger_node_request_timeouts_total", help: "Requests answered 408: headers or body not received in time", registers });
    this.clientErrors = new Counter({ name: "ledger_node_http_client_errors_total", help: "Requests the HTTP parser refused, by status", labelNames: ["status"], registers });
    this.writerLagVersions = new Gauge({ name: "ledger_node_writer_lag_versions", help: "Versions the writer or follower is behind its source", registers });
    this.writerLagSeconds = new Gauge({ name: "ledger_node_writer_lag_seconds", help: "Seconds the writer or follower is behind its source", registers });
    this.writerFailures = new Gauge({ name: "ledger_node_writer_consecutive_failures", help: "Failed writes since the writer's last commit", registers });
    this.followerState = new Gauge({
      name: "ledger_node_follower_state",
      help: "The follower of serve --follow: 1 on its state (following; retrying a transient fault; stopped for good), 0 on the others",
      labelNames: ["state"],
      registers,
    });
    this.importVersions = new Counter({ name: "ledger_node_import_versions_total", help: "Versions committed by imports in this process", registers });
    this.unknownKinds = new Counter({
      name: "ledger_node_ingest_unknown_kinds_total",
      help: "Transactions, changes and modules of a kind this node does not know, taken by a follower: stored generically or skipped, by what and type",
      labelNames: ["what", "type"],
      registers,
    });
    this.pruneRuns = new Counter({ name: "ledger_node_prune_runs_total", help: "Prune runs, by result (pruned, nothing, failed)", labelNames: ["result"], registers });
    this.pruneLastSeconds = new Gauge({ name: "ledger_node_prune_last_duration_seconds", help: "Duration of the last prune run", registers });
    this.pruneLastOldestVersion = new Gauge({ name: "ledger_node_prune_last_oldest_version", help: "Oldest version kept after the last prune that pruned", registers });
    this.pruneDeletedTransactions = new Counter({ name: "ledger_node_prune_deleted_transactions_total", help: "Transactions removed by prune runs", registers });
    this.streamsOpen = new Gauge({ name: "ledger_node_streams_open", help: "Transaction streams open now", registers });
    this.streamEventsSent = new Counter({ name: "ledger_node_stream_events_sent_total", help: "Transactions sent on transaction streams", registers });
    this.streamCommitsTold = new Counter({
      name: "ledger_node_stream_commits_told_total",
      help: "Commits the transaction streams were told of by this process's devnet or follower, or by the writer worker of --workers (the streams look at once instead of at their next poll)",
      registers,
    });
    this.streamCommitSignals = new Counter({
      name: "ledger_node_stream_commit_signals_total",
      help: "Commits the transaction streams were told of by the database (SQLite: a write to the file's WAL seen by the file system; PostgreSQL: the NOTIFY of a commit), in a process whose own writer tells them nothing; one commit may be told more than once",
      registers,
    });
    this.streamFeedLooks = new Counter({
      name: "ledger_node_stream_feed_looks_total",
      help: "Looks of the transaction streams' feed at the ledger's position while a stream is open: on being told of a commit, and polls (every second while commits are told, else every 10 ms)",
      registers,
    });
    this.streamsEnded = new Counter({
      name: "ledger_node_streams_ended_total",
      help: "Transaction streams ended, by reason (client_closed, slow_client: dropped for not reading, pruned, shutdown)",
      labelNames: ["reason"],
      registers,
    });
    this.streamsRefused = new Counter({
      name: "ledger_node_streams_refused_total",
      help: "Transaction streams refused, by reason (node_full: 503, --max-streams open; client_share: 429, the client has --max-streams-per-client open)",
      labelNames: ["reason"],
      registers,
    });
    this.proxied = new Counter({
      name: "ledger_node_proxied_requests_total",
      help: "Requests passed to the upstream (--proxy), by status class answered and from (upstream: its answer relayed; node: refused or failed here)",
      labelNames: ["status_class", "from"],
      registers,
    });

    const store = opts.store;
    if (store) {
      // Read at scrape time: the hot path pays nothing for these.
      const ledger = async () => {
        try {
          return await store.getLedgerInfo(true);
        } catch {
          return null;
        }
      };
      new Gauge({
        name: "ledger_node_ledger_version",
        help: "Newest committed ledger version",
        registers,
        async collect() {
          const i = await ledger();
          if (i) this.set(Number(i.ledgerVersion));
        },
      });
      new Gauge({
        name: "ledger_node_oldest_ledger_version",
        help: "Oldest ledger version kept (below it reads answer 410)",
        registers,
        async collect() {
          const i = await ledger();
          if (i) this.set(Number(i.oldestVersion));
        },
      });
      new Gauge({
        name: "ledger_node_block_height",
        help: "Newest committed block height",
        registers,
        async collect() {
          const i = await ledger();
          if (i) this.set(Number(i.blockHeight));
        },
      });
    }
    const standby = store?.standby;
    if (standby) {
      new Gauge({
        name: "ledger_node_standby_replay_lag_seconds",
        help: "Seconds the hot standby's replay is behind its primary (0: all received WAL replayed); only on a standby",
        registers,
        async collect() {
          const s = await standby.replayLagSeconds().catch(() => null);
          if (s !== null) this.set(s);
        },
      });
    }
    const pages = opts.pages;
    if (pages) {
      new Gauge({
        name: "ledger_node_page_cache_lookups",
        help: "Page cache lookups since start, by result (hit, miss)",
        labelNames: ["result"],
        registers,
        collect() {
          this.set({ result: "hit" }, pages.hits);
          this.set({ result: "miss" }, pages.misses);
        },
      });
      new Gauge({
        name: "ledger_node_page_cache_hit_ratio",
        help: "Page cache hits / lookups since start (0 before the first lookup)",
        registers,
        collect() {
          const n = pages.hits + pages.misses;
          this.set(n === 0 ? 0 : pages.hits / n);
        },
      });
      new Gauge({
        name: "ledger_node_page_cache_bytes",
        help: "Bytes held by the page cache",
        registers,
        collect() {
          this.set(pages.bytes);
        },
      });
    }
    const open = opts.openConnections;
    if (open) {
      new Gauge({
        name: "ledger_node_open_connections",
        help: "Open HTTP connections",
        registers,
        collect() {
          this.set(open());
        },
      });
    }
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: "ledger_node_" });
  }

  /** The metrics of one operation (create once per route, at startup). */
  operation(name: string): OperationMetrics {
    let o = this.ops.get(name);
    if (!o) {
      o = new OperationMetrics(name);
      this.ops.set(name, o);
    }
    return o;
  }

  /** One error answer sent (the statuses and the codes are closed sets, so the tallies stay few). */
  errorAnswered(status: number, errorCode: string): void {
    const key = `${status} ${errorCode}`;
    const t = this.errors.get(key);
    if (t === undefined) this.errors.set(key, { status, errorCode, count: 1 });
    else t.count++;
  }

  /** A prune run finished (`pruned`: what it removed, null when there was nothing to prune). */
  pruned(seconds: number, r: { oldestVersion: bigint; transactionsDeleted: number } | null): void {
    this.pruneRuns.inc({ result: r ? "pruned" : "nothing" });
    this.pruneLastSeconds.set(seconds);
    if (r) {
      this.pruneLastOldestVersion.set(Number(r.oldestVersion));
      this.pruneDeletedTransactions.inc(r.transactionsDeleted);
    }
  }

  pruneFailed(seconds: number): void {
    this.pruneRuns.inc({ result: "failed" });
    this.pruneLastSeconds.set(seconds);
  }

  /** The follower is in `state`: its label is set to 1, the others to 0. */
  setFollowerState(state: FollowerState): void {
    for (const st of FOLLOWER_STATES) this.followerState.set({ state: st }, st === state ? 1 : 0);
  }
}

/** `GET /metrics` on a port of its own (`--metrics-port`), so it can stay off the public API port. */
export async function serveMetrics(m: NodeMetrics, host: string, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ message: "not found", error_code: "web_framework_error" }));
      return;
    }
    m.registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": m.registry.contentType }).end(text),
      (e: Error) => res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ message: `metrics: ${e.message}`, error_code: "internal_error" })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  return {
    url: `http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
