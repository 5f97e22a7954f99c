/**
 * The writers of a serving process: the devnet, the built-in pruner and the follower of
 * `serve --follow`. They run either on the serving thread (PostgreSQL, whose driver never blocks
 * it) or, for SQLite, on a worker thread with a connection of its own (`WriterThread`):
 * better-sqlite3 waits for a lock synchronously, so a write queued behind another process's lock
 * would stop every request on the event loop. The replica's base-state writes (`BaseStateService`)
 * go to that thread too, by message.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { PruneWindow } from "../ledger/pruning.js";
import { pruneNow, type PruneStore } from "./pruneToWindow.js";
import type { BaseStateWrite } from "../storage/contracts/followBase.js";
import type { PruneResult, PruneTarget } from "../storage/contracts/writer.js";
import type { OpenOptions } from "../storage/open.js";
import { Devnet, type DevnetOptions, type DevnetStore } from "./devnet/devnet.js";
import type { UnknownKind } from "./aptosJson.js";
import { UpstreamClient } from "./follow/client.js";
import { Follower, type FollowFrom, type FollowLag, type FollowStore } from "./follow/sync.js";
import type { WriterStatus } from "./writerStatus.js";

export type PruneOutcome = (PruneResult & PruneTarget) | null;

/** What the writers write through: the devnet's, the follower's and the pruner's store. */
export type WritersStore = DevnetStore & FollowStore & PruneStore;

/** What the writers tell the serving process besides their status. */
export interface WriterEvents {
  pruned(seconds: number, result: PruneOutcome): void;
  pruneFailed(seconds: number): void;
  /** The follower's lag, after each of its commits and polls. */
  followLag(lag: FollowLag): void;
  /** A line of the follower's (and its upstream client's) log. */
  followLog(level: "info" | "warn", message: string): void;
  /** The follower met a transaction, change or module of a kind this version does not know. */
  followUnknown(u: UnknownKind): void;
  /** The devnet or the follower committed (the serving thread's streams look at once). */
  committed(): void;
}

/** The follower of `serve --follow`: its upstream and how it syncs (see `FollowerOptions`). */
export interface FollowWriterOptions {
  upstream: string;
  apiKey: string | null;
  from: FollowFrom;
  concurrency: number;
  maxRequestsPerSecond: number;
  pollMs: number;
}

export interface WritersOptions {
  /** Devnet settings, or null for none. */
  devnet: Partial<DevnetOptions> | null;
  /** The pruning window, or null for no pruner. */
  pruneWindow: PruneWindow | null;
  pruneIntervalMs: number;
  /** The follower, or null for none (absent: none). */
  follow?: FollowWriterOptions | null;
}

/** What the server holds of its writers, wherever they run. */
export interface Writers {
  /** Writes one devnet block now (tests advance the chain with it); rejects when it fails. */
  produceBlock(): Promise<void>;
  /** Starts the devnet's interval and the pruner. */
  start(): void;
  stop(): Promise<void>;
}

/** The writers on this thread, over `store`. */
export class LocalWriters implements Writers {
  private pruner: NodeJS.Timeout | null = null;
  private pruning: Promise<void> | null = null;
  /** The follower's run, once started; it settles when the follower stops. */
  private following: Promise<void> | null = null;

  private constructor(
    private readonly store: WritersStore,
    readonly devnet: Devnet | null,
    readonly follower: Follower | null,
    private readonly opts: WritersOptions,
    private readonly status: WriterStatus,
    private readonly events: WriterEvents,
  ) {}

  /** Opens the devnet (writing genesis into an empty ledger) before anything is served. */
  static async open(store: WritersStore, opts: WritersOptions, status: WriterStatus, events: WriterEvents): Promise<LocalWriters> {
    const devnet = opts.devnet ? await Devnet.open(store, opts.devnet, status, () => events.committed()) : null;
    return new LocalWriters(store, devnet, opts.follow ? openFollower(store, opts.follow, status, events) : null, opts, status, events);
  }

  produceBlock(): Promise<void> {
    if (!this.devnet) return Promise.reject(new Error("this node runs no devnet"));
    return this.devnet.produceBlock();
  }

  start(): void {
    // Failures are reported through the status (logged there, and shown by /-/healthy).
    this.devnet?.start();
    // A permanent stop is reported by the follower to the status; the writers and the API go on.
    this.following ??= this.follower?.run().catch(() => undefined) ?? null;
    const window = this.opts.pruneWindow;
    if (!window || this.pruner) return;
    this.pruner = setInterval(() => {
      if (!this.pruning) this.pruning = this.pruneOnce(window).finally(() => (this.pruning = null));
    }, this.opts.pruneIntervalMs);
    this.pruner.unref();
  }

  private async pruneOnce(window: PruneWindow): Promise<void> {
    const t0 = performance.now();
    try {
      const r = await pruneNow(this.store, window);
      this.events.pruned((performance.now() - t0) / 1000, r);
      this.status.ok("pruner");
    } catch (e) {
      this.events.pruneFailed((performance.now() - t0) / 1000);
      this.status.failed("pruner", e, "tried again next interval");
    }
  }

  async stop(): Promise<void> {
    if (this.pruner) clearInterval(this.pruner);
    this.pruner = null;
    this.follower?.stop();
    await this.devnet?.stop();
    await this.following;
    await this.pruning;
  }
}

/** The follower of `serve --follow` over `store`, reporting to `status` and `events`. */
function openFollower(store: FollowStore, o: FollowWriterOptions, status: WriterStatus, events: WriterEvents): Follower {
  const client = new UpstreamClient(o.upstream, {
    apiKey: o.apiKey,
    maxRequestsPerSecond: o.maxRequestsPerSecond,
    onRetry: (what, attempt, ms) => events.followLog("warn", `retrying in ${Math.round(ms)} ms (attempt ${attempt}): ${what}`),
  });
  return new Follower(store, client, {
    from: o.from,
    concurrency: o.concurrency,
    pollMs: o.pollMs,
    exitAtHead: false,
    status,
    log: { info: (m) => events.followLog("info", m), warn: (m) => events.followLog("warn", m) },
    onLag: (lag) => events.followLag(lag),
    onUnknown: (u) => events.followUnknown(u),
    onCommitted: () => events.committed(),
  });
}

/**
 * The thread's entry module: the built one. Node 20 does not apply a loader such as tsx inside a
 * worker, so when this runs from the sources (the tests) the thread runs the build of them, which
 * `npm test` makes first.
 */
function threadEntry(): URL {
  if (!import.meta.url.endsWith(".ts")) return new URL("./writerThread.js", import.meta.url);
  const built = new URL("../../dist/ingest/writerThread.js", import.meta.url);
  if (!existsSync(built)) throw new Error(`the writer thread runs ${fileURLToPath(built)}, which is missing: run npm run build`);
  return built;
}

/** What the thread is started with. */
export interface WriterThreadData {
  db: string;
  open: OpenOptions;
  writers: WritersOptions;
}

/** Messages from the writer thread. */
export type FromWriterThread =
  | { t: "ready" }
  | { t: "startFailed"; message: string }
  | { t: "ok"; writer: string; what: string }
  | { t: "failed"; writer: string; message: string; retry: string }
  | { t: "writerStopped"; writer: string; message: string }
  | { t: "produced"; id: number; error: string | null }
  | { t: "wroteBase"; id: number; error: string | null }
  | { t: "pruned"; seconds: number; result: PruneOutcome }
  | { t: "pruneFailed"; seconds: number }
  | { t: "followLag"; lag: FollowLag }
  | { t: "followLog"; level: "info" | "warn"; message: string }
  | { t: "followUnknown"; unknown: UnknownKind }
  | { t: "committed" }
  | { t: "stopped" };

/** Messages to the writer thread. */
export type ToWriterThread =
  | { t: "produce"; id: number }
  | { t: "writeBase"; id: number; write: BaseStateWrite }
  | { t: "start" }
  | { t: "stop" };

/**
 * The writers on a worker thread (`writerThread.ts`) over their own SQLite connection. Their status
 * and prune results come back as messages and land in this process's `status` and `events`.
 */
export class WriterThread implements Writers {
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private stopped: Promise<void> | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly exited: Promise<void>,
  ) {}

  /** Starts the thread and resolves once its store is open and the devnet's genesis is written. */
  static start(data: WriterThreadData, status: WriterStatus, events: WriterEvents): Promise<WriterThread> {
    const worker = new Worker(threadEntry(), { workerData: data });
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    const thread = new WriterThread(worker, exited);
    return new Promise((resolve, reject) => {
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the writer thread exited (code ${code}) before it was ready`)));
      worker.on("message", (m: FromWriterThread) => {
        switch (m.t) {
          case "ready":
            return resolve(thread);
          case "startFailed":
            return reject(new Error(m.message));
          case "ok":
            return status.ok(m.writer, m.what);
          case "failed":
            return void status.failed(m.writer, new Error(m.message), m.retry);
          case "writerStopped":
            return void status.stopped(m.writer, new Error(m.message));
          case "produced":
          case "wroteBase":
            return thread.settle(m.id, m.error);
          case "pruned":
            return events.pruned(m.seconds, m.result);
          case "pruneFailed":
            return events.pruneFailed(m.seconds);
          case "followLag":
            return events.followLag(m.lag);
          case "followLog":
            return events.followLog(m.level, m.message);
          case "followUnknown":
            return events.followUnknown(m.unknown);
          case "committed":
            return events.committed();
        }
      });
    });
  }

  private settle(id: number, error: string | null): void {
    const w = this.waiting.get(id);
    this.waiting.delete(id);
    if (error === null) w?.resolve();
    else w?.reject(new Error(error));
  }

  produceBlock(): Promise<void> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.send({ t: "produce", id });
    });
  }

  /**
   * Writes a follower's base state (`FollowBase.writeBaseState`) on the thread's connection.
   * Resolves on a later turn than the reply's, so that a read of this thread (whose read
   * transaction lasts a turn) sees the write.
   */
  writeBaseState(write: BaseStateWrite): Promise<void> {
    const id = this.nextId++;
    const written = new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.send({ t: "writeBase", id, write });
    });
    return written.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  }

  start(): void {
    this.send({ t: "start" });
  }

  private send(m: ToWriterThread): void {
    this.worker.postMessage(m);
  }

  /** Stops the writers (a write in progress finishes) and ends the thread. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.send({ t: "stop" });
      await this.exited;
      for (const id of [...this.waiting.keys()]) this.settle(id, "the writer thread stopped");
    })();
    return this.stopped;
  }
}
