/**
 * What every operation's handler shares within one app: the store's reads, the settings, the page
 * strategy, the response compression, the ledger position read and the mapping of store failures
 * to errors.
 */
import { EventEmitter } from "node:events";
import type { FastifyBaseLogger, FastifyContextConfig, FastifyReply, FastifyRequest } from "fastify";
import type { LedgerInfo } from "../ledger/types.js";
import type { GasHistorySource } from "../ledger/gas.js";
import { FetchRefusedError, StateBeforeBaseError, StatePrunedError, typedKind } from "../storage/contracts/errors.js";
import type { PageReads } from "../storage/contracts/pageReads.js";
import type { LedgerReader } from "../storage/contracts/reader.js";
import { baseRecordName } from "../storage/replica/baseRecords.js";
import { ApiError } from "./http/apiError.js";
import { ErrorLog } from "./observability/errorLog.js";
import { headerWriter, type HeaderWriter } from "./http/ledgerHeaders.js";
import type { ApiConfig } from "./config.js";
import { Pages } from "./pages/pages.js";
import { Compression, type EncodedBody } from "./http/compression.js";
import type { WriterStatus } from "../ingest/writerStatus.js";
import type { NodeMetrics } from "./observability/metrics.js";
import { after, guard, type NowOrLater } from "./pages/nowOrLater.js";
import { JSON_ANSWER_TYPE } from "./http/negotiate.js";
import { ResponseHead } from "./http/responseHead.js";

/**
 * Fetches the state a replica's read missed (`StateBeforeBaseError`) and stores it, so the read
 * can run once more (`BaseStateService` of `serve --follow`, injected by `server.ts`).
 */

/** How many missing keys of the base one read may have fetched for it. */
const BASE_MISSES = 2;
export interface BaseStateFetcher {
  /** `client`: the address of the client whose read missed (its fetches count against its share). */
  fetch(miss: StateBeforeBaseError, client: string): Promise<void>;
}

/** What sending an answer reads of its route's config. */
export type RouteConfig = Pick<FastifyContextConfig, "ledgerHeaders" | "metrics">;

/** What the API reads: the ledger's domain reads and the page strategy's reads. */
export type ApiStore = LedgerReader & PageReads;

export class NodeContext {
  readonly headers: HeaderWriter;
  /** The page strategy: the page cache, the module records and the store's page reads. */
  readonly pages: Pages;
  /** The ledger's domain reads. */
  readonly store: LedgerReader;
  /** The request's own headers on every response (id, Vary, CORS). */
  readonly head: ResponseHead;
  /** The response compression (every answer is sent through it). */
  readonly compression: Compression;
  /** The generated OpenAPI document, set once the app is ready (encoded once per encoding). */
  spec: { json: EncodedBody; yaml: EncodedBody } | null = null;
  /** The node's Prometheus metrics (set by buildApp; writers and the pruner report to it too). */
  metrics: NodeMetrics | null = null;
  /** Told of every store failure answered 5xx (the metrics count them as database errors). */
  onStorageError: ((status: 500 | 503) => void) | null = null;
  /**
   * Sends a request to the followed upstream as it came and relays its answer (`serve --follow URL
   * --proxy`, set by the proxy): for an operation's answer this node does not hold (`Answer.upstream`).
   * Null: no pass-through.
   */
  upstream: ((req: FastifyRequest, reply: FastifyReply) => Promise<unknown>) | null = null;
  /** The writers of this process (devnet, pruner), for `/-/healthy`; null when it writes nothing. */
  writer: WriterStatus | null = null;
  /**
   * The last store read that failed, for `/-/healthy`. A corrupt database stays failed until a
   * restart (the pages that are bad fail again, while others read fine in between).
   */
  storageFailure: { message: string; atMs: number; corrupt: boolean } | null = null;
  /** Fetches what a replica's read missed; null: a miss answers 503 (no upstream to fetch from). */
  baseState: BaseStateFetcher | null = null;
  /** What the gas estimator reads: the store, or its reads with the replica's misses fetched. */
  gasReads: GasHistorySource;
  /** `commit` after each commit of this process's writers: the stream's feed looks at once, not at its next poll. */
  readonly commits = new EventEmitter<{ commit: [] }>();
  /** Whether the writer of the ledger's transactions (devnet, follower) tells `commits` of each: this process's, or the writer worker's of `--workers`. */
  commitsTold = false;
  /** Run when the app begins to close, before it waits for open connections (the streams end here). */
  readonly closing: Array<() => void> = [];
  /** The log of the error answers, a few lines a minute per status and code (`noteError`). */
  readonly errorLog: ErrorLog;

  constructor(
    store: ApiStore,
    readonly config: ApiConfig,
    /** Errors and the node's own events (Fastify's request log is separate: `--log-requests`). */
    readonly log: FastifyBaseLogger,
  ) {
    this.headers = headerWriter(config.aptosHeaders);
    this.store = store;
    this.pages = new Pages(store, config);
    this.head = new ResponseHead(config.corsOrigins, this.headers.exposed);
    this.compression = new Compression(config, this.head);
    this.gasReads = store;
    this.errorLog = new ErrorLog(log);
  }

  /**
   * The ledger position now (`fresh`: with every commit of another process, see
   * `LedgerReader.getLedgerInfo`); 503 when the store cannot be read or holds no block yet.
   */
  async ledger(fresh = false): Promise<LedgerInfo> {
    const info = await this.readLedger("the ledger store is unavailable", true, fresh);
    if (!info) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
    return info;
  }

  /**
   * The ledger position, null for an empty ledger; a failure is the error `storageError` maps it to
   * (`unavailable`: 503 whatever failed). At once when the store answers at once.
   */
  readLedger(what: string | (() => string), unavailable: boolean, fresh = false): NowOrLater<LedgerInfo | null> {
    return guard(
      () => this.pages.positions.getLedgerInfo(fresh),
      (e) => {
        throw this.storageError(e, what, null, unavailable);
      },
    );
  }

  /** The ledger position, or null when the ledger is empty or cannot be read. At once when the store answers at once. */
  readLedgerOrNull(): NowOrLater<LedgerInfo | null> {
    try {
      const info = this.pages.positions.getLedgerInfo();
      return info instanceof Promise ? info.catch(() => null) : info;
    } catch {
      return null;
    }
  }

  /**
   * A position read (`read`: a snapshot with the ledger position it was read at); 503 when the
   * ledger is empty, a failure mapped by `storageError`. At once when the store answers at once.
   * `client`: the address of the client asking (see `readWithBase`).
   */
  readSnapshot<T extends { info: LedgerInfo }>(read: () => NowOrLater<T | null>, what: string | (() => string), client: string): NowOrLater<T> {
    const snapshot = this.readWithBase(
      read,
      (e) => {
        throw this.storageError(e, what, null);
      },
      client,
    );
    return after(snapshot, nonEmpty);
  }

  /**
   * `read`, its failure mapped by `failed`. With a base-state service, a replica's base miss is
   * fetched and the read runs once more; a read of several keys (an account, then the feature
   * flags it falls back on) may miss each once, up to `BASE_MISSES`, but a second miss of state it
   * fetched fails. Without a service it is `guard` itself. `client` is the address of the client
   * asking: a fetch counts against its share (`FetchShares`), past which it fails as refused.
   */
  readWithBase<T>(read: () => NowOrLater<T>, failed: (e: unknown) => never, client: string): NowOrLater<T> {
    const service = this.baseState;
    if (service === null) return guard(read, failed);
    // (the keys fetched for this read; made only on a miss)
    let fetched: string[] | null = null;
    const retry = (e: unknown): Promise<T> => {
      if (!(e instanceof StateBeforeBaseError)) failed(e);
      const what = baseRecordName(e.missing);
      fetched ??= [];
      if (fetched.includes(what) || fetched.length >= BASE_MISSES) failed(e);
      fetched.push(what);
      return service.fetch(e, client).then(read).catch(retry);
    };
    let value: NowOrLater<T>;
    try {
      value = read();
    } catch (e) {
      return retry(e);
    }
    return value instanceof Promise ? value.catch(retry) : value;
  }

  /**
   * Sends `e` as the JSON error object: with the ledger headers on a data operation's error (the
   * position the error names, else the ledger's now; none on a 503), counted and logged
   * (`noteError`, a fault with `cause`).
   * Every error goes out here: an operation's own (`operationHandler`, without Fastify's error
   * path) and whatever else failed (the app's error handler). `route`: the route's config, passed
   * by a caller that holds it (Fastify builds `req.routeOptions` anew on each read); `headers`: the
   * error's own headers (a flat list of names and values, e.g. `Allow` on a 405; by default the
   * `ApiError`'s own).
   */
  sendError(
    req: FastifyRequest,
    reply: FastifyReply,
    e: ApiError,
    cause: unknown = e,
    route: RouteConfig | undefined = req.routeOptions.config,
    headers?: readonly string[],
  ): NowOrLater<undefined> {
    this.noteError(req, e, cause);
    const send = (ledger: LedgerInfo | null): undefined => {
      this.compression.send(req, reply, e.status, JSON.stringify(e.body(this.config.archivalEndpoint, ledger)), JSON_ANSWER_TYPE, ledger ? this.headers.ledger(ledger) : undefined, headers ?? e.headers, route?.metrics);
      return undefined;
    };
    if (e.ledger || e.status === 503 || route?.ledgerHeaders !== true) return send(e.ledger);
    return this.ledger().then(send, () => send(null));
  }

  /**
   * Counts the error answer `e` by status and code, and logs it (`ErrorLog`: a fault with `cause`
   * and its stack, anything else in a short line; a few a minute of each). A failing health check
   * is an answer whose cause is logged where it happens: only counted.
   */
  noteError(req: FastifyRequest, e: ApiError, cause: unknown = e): void {
    this.metrics?.errorAnswered(e.status, e.errorCode);
    if (e.errorCode !== "health_check_failed") this.errorLog.note(req, e, cause);
  }

  /**
   * What a failed store read answers, by the failure's kind (`StorageErrorKind`, the store's
   * `errorKind`): 410 for state pruned away; 503 for a replica's state that was not fetched (a
   * base miss, an upstream that could not give it) or a standby's read that kept conflicting with
   * recovery, which are no database fault; 503 when the store
   * is unavailable (or `unavailable`: whatever failed), else 500 with the ledger headers when the
   * position is known. `what` says what failed
   * (a function where saying it costs something: it runs only on a failure).
   * An ApiError passes through unchanged.
   */
  storageError(e: unknown, what: string | (() => string), info: LedgerInfo | null, unavailable = false): ApiError {
    if (e instanceof ApiError) return e;
    if (e instanceof StatePrunedError) return ApiError.versionPruned(e.version, info, e);
    if (e instanceof FetchRefusedError) return ApiError.fetchRefused(e.scope, e.message, e.retryAfterSec);
    const kind = typedKind(e) ?? this.store.errorKind(e);
    const message = `${typeof what === "string" ? what : what()}: ${(e as Error).message}`;
    // A replica's missing base or a standby's recovery conflicts: 503, but no fault of the database.
    if (kind === "before-base" || kind === "upstream-unavailable" || kind === "recovery-conflict") return ApiError.unavailable(message, e);
    this.noteStorageFailure(e, kind === "corrupt");
    if (unavailable || kind === "unavailable") {
      this.onStorageError?.(503);
      return ApiError.storageUnavailable(message, e);
    }
    this.onStorageError?.(500);
    return ApiError.internal(message, info, e);
  }

  private noteStorageFailure(e: unknown, corrupt: boolean): void {
    // Once corrupt, it keeps saying so with the first sign of it.
    if (this.storageFailure?.corrupt) {
      this.storageFailure.atMs = Date.now();
      return;
    }
    const message = String((e as { message?: string }).message ?? e);
    this.storageFailure = { message, atMs: Date.now(), corrupt };
  }
}

function nonEmpty<T>(snapshot: T | null): T {
  if (!snapshot) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  return snapshot;
}
