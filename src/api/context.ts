/**
 * What every handler shares: the store, the settings, and the two steps every data operation takes
 * before it reads — get the ledger position, and resolve the requested version against it
 * (404 above the newest, 410 below the oldest kept; DECISIONS §8).
 */
import type { FastifyBaseLogger } from "fastify";
import type { LedgerInfo } from "../ledger/types.js";
import { StorageUnavailableError, type LedgerStore, type Snapshot } from "../storage/LedgerStore.js";
import { ApiError } from "./errors.js";
import { headerWriter, type HeaderWriter } from "./headers.js";
import type { ApiConfig } from "./config.js";
import { PageCache } from "./pageCache.js";
import { EncodedBody } from "./compression.js";
import type { WriterStatus } from "../ingest/writerStatus.js";
import type { NodeMetrics } from "./metrics.js";

/** A value now or later: what a handler step returns (see `andThen`). */
export type Awaitable<T> = T | Promise<T>;

export class NodeContext {
  readonly headers: HeaderWriter;
  /** Encoded pages of the page operations, keyed by what they depend on. */
  readonly pages: PageCache;
  /** The generated OpenAPI document, set once the app is ready (encoded once per encoding). */
  spec: { json: EncodedBody; yaml: EncodedBody } | null = null;
  /** The node's Prometheus metrics (set by buildApp; writers and the pruner report to it too). */
  metrics: NodeMetrics | null = null;
  /** Told of every store failure answered 5xx (the metrics count them as database errors). */
  onStorageError: ((status: 500 | 503) => void) | null = null;
  /** The writers of this process (devnet, pruner), for `/-/healthy`; null when it writes nothing. */
  writer: WriterStatus | null = null;
  /**
   * The last store read that failed, for `/-/healthy`. A corrupt database stays failed until a
   * restart (the pages that are bad fail again, while others read fine in between).
   */
  storageFailure: { message: string; atMs: number; corrupt: boolean } | null = null;

  constructor(
    readonly store: LedgerStore,
    readonly config: ApiConfig,
    /** Errors and the node's own events (Fastify's request log is separate: `--log-requests`). */
    readonly log: FastifyBaseLogger,
  ) {
    this.headers = headerWriter(config.aptosHeaders);
    this.pages = new PageCache(config.pageCacheBytes);
  }

  /**
   * The ledger position now (`fresh`: with every commit of another process, see
   * `LedgerStore.getLedgerInfo`); 503 when the store cannot be read or holds no block yet.
   * Synchronous when the store answers so.
   */
  ledger(fresh = false): Awaitable<LedgerInfo> {
    return andThen(
      this.read(() => "the ledger store is unavailable", null, () => this.store.getLedgerInfo(fresh), true),
      (info) => {
        if (!info) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
        return info;
      },
    );
  }

  /**
   * After a read at `version`: if the pruner raised the oldest version past it meanwhile, what was
   * read may be incomplete, so the answer is 410 as if the request had come later.
   */
  async ensureKept(version: bigint): Promise<void> {
    await this.recheck([version]);
  }

  /**
   * The one re-check after a versioned read that was not one snapshot with its ledger position (a
   * prune in another process may have committed in between): reads the ledger fresh and answers
   * 410 for a `requested` bound now below the oldest version, as if the request had come later.
   * Returns the fresh position, for a read that also depended on versions it did not name (see
   * the summaries' short pages).
   */
  async recheck(requested: ReadonlyArray<bigint | undefined>): Promise<LedgerInfo> {
    const now = await this.ledger(true);
    for (const bound of requested) {
      if (bound !== undefined && bound < now.oldestVersion) throw ApiError.versionPruned(bound, now);
    }
    return now;
  }

  /**
   * Resolve and read in one step, for reads the store answers together with the ledger position
   * from one snapshot: 503 on an empty ledger, then 404/410 judged against that same snapshot, so
   * a prune racing the read cannot slip between the check and the data.
   */
  snapshot<T>(
    what: string | (() => string),
    requested: bigint | undefined,
    f: () => Awaitable<Snapshot<T> | null>,
  ): Awaitable<{ info: LedgerInfo; version: bigint; value: T }> {
    return andThen(this.read(what, null, f), (snap) => {
      if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
      if (requested === undefined) return { info: snap.info, version: snap.info.ledgerVersion, value: snap.value };
      checkVersion(requested, snap.info);
      return { info: snap.info, version: requested, value: snap.value };
    });
  }

  /**
   * Runs a store read, mapping its failure to 503 (store unavailable; `unavailable`: any failure)
   * or a typed 500 with the ledger headers when the position is known. `what` says what failed
   * (a function when it costs something to say). Synchronous when the read is.
   */
  read<T>(what: string | (() => string), info: LedgerInfo | null, f: () => Awaitable<T>, unavailable = false): Awaitable<T> {
    return onFailure(f, (e): never => {
      if (e instanceof ApiError) throw e;
      const w = typeof what === "string" ? what : what();
      this.noteStorageFailure(e);
      if (unavailable || e instanceof StorageUnavailableError) {
        this.onStorageError?.(503);
        throw ApiError.unavailable(`${w}: ${(e as Error).message}`, e);
      }
      this.onStorageError?.(500);
      throw ApiError.internal(`${w}: ${(e as Error).message}`, info, e);
    });
  }

  private noteStorageFailure(e: unknown): void {
    // Once corrupt, it keeps saying so with the first sign of it.
    if (this.storageFailure?.corrupt) {
      this.storageFailure.atMs = Date.now();
      return;
    }
    const err = e as { message?: string; code?: string };
    const message = String(err.message ?? e);
    this.storageFailure = { message, atMs: Date.now(), corrupt: CORRUPT.test(`${err.code ?? ""} ${message}`) };
  }
}

/** SQLite's and PostgreSQL's words for a damaged database (SQLITE_CORRUPT, SQLITE_NOTADB, XX001/XX002). */
const CORRUPT = /SQLITE_CORRUPT|SQLITE_NOTADB|malformed|not a database|XX00[12]|data_corrupted|index_corrupted/i;

/** `f()`, with `handle` for a failure, thrown or rejected; synchronous when `f` is. */
function onFailure<T>(f: () => Awaitable<T>, handle: (e: unknown) => T): Awaitable<T> {
  let r: Awaitable<T>;
  try {
    r = f();
  } catch (e) {
    return handle(e);
  }
  return r instanceof Promise ? r.catch(handle) : r;
}

/** The store's answer, or null when it fails (for answers that can do without it). */
export function orNull<T>(f: () => Awaitable<T | null>): Awaitable<T | null> {
  return onFailure(f, () => null);
}

/**
 * `next(x)`: at once when `x` is a value, once it settles when it is a promise. Handlers chain
 * their steps with it so that a request the store answers synchronously is served synchronously.
 */
export function andThen<T, R>(x: Awaitable<T>, next: (v: T) => Awaitable<R>): Awaitable<R> {
  return x instanceof Promise ? x.then(next) : next(x);
}

function checkVersion(requested: bigint, info: LedgerInfo): void {
  if (requested > info.ledgerVersion) throw ApiError.versionNotFound(requested, info);
  if (requested < info.oldestVersion) throw ApiError.versionPruned(requested, info);
}
