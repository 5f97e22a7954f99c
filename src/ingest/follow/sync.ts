/**
 * Follows an Aptos node (issue 16): reads its transactions over REST v1 and feeds them, in version
 * order, through the same `Importer` as `ledger-node import`, so whole blocks commit atomically and
 * a stop at any point resumes from the last committed block.
 *
 * - Several pages of `GET /v1/transactions` are in flight at once (`concurrency`); they are pushed
 *   in version order whatever order they arrive in.
 * - Once caught up it polls `GET /v1` for the head, and logs its lag (versions and seconds).
 * - A different chain id (at the start, on every head poll and on every page), an upstream whose
 *   head goes back behind the ledger, a history that differs from the ledger's at its newest version
 *   (checked on resume and on every poll), or an answer that is not a page of transactions stops it
 *   with an error naming the version; the Importer has then committed only the whole blocks before it.
 * - The first synced version is recorded before the first block commits, so a reader never sees a
 *   block of a head-started ledger without knowing that the state before it is the upstream's.
 * - Any other fault (the store unavailable or full, the upstream down, an answer that is not JSON,
 *   a page missing below the announced head) is transient: reported to the `WriterStatus`, retried
 *   with backoff, and the recovery reported; only a permanent stop ends `run`.
 */
import { defaultGasConfig } from "../../ledger/gasConfig.js";
import { FIRST_SYNCED_RECORD, type FollowBase } from "../../storage/contracts/followBase.js";
import type { LedgerReader } from "../../storage/contracts/reader.js";
import { describeUnknown, IngestError, type ParsedTxn, type UnknownKind } from "../aptosJson.js";
import { type ImportStore, Importer } from "../importer.js";
import { WriterStatus } from "../writerStatus.js";
import { ledgerHeader, notJsonError, parseJson, UpstreamClient, UpstreamGarbageError, type UpstreamResponse, UpstreamUnavailableError } from "./client.js";
import { PageParser, type PendingPage, pageTxns } from "./pages.js";

export { FIRST_SYNCED_RECORD } from "../../storage/contracts/followBase.js";

/** The reference node's largest page of `GET /v1/transactions`. */
export const PAGE_SIZE = 100;

/**
 * Blocks synced before the head block when following from `latest`: the gas estimator walks this
 * many blocks below the newest, so the replica's first estimate is the upstream's.
 */
export const GAS_HISTORY_BLOCKS = BigInt(defaultGasConfig.aggressiveBlockHistory);

export type FollowFrom = { kind: "genesis" } | { kind: "latest" } | { kind: "version"; version: bigint };

export interface FollowLag {
  /** Upstream head minus the ledger version. */
  versions: bigint;
  /** Upstream head's timestamp minus the ledger's newest block timestamp, in seconds. */
  seconds: number;
  upstreamVersion: bigint;
}

export interface FollowerLog {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface FollowerOptions {
  from: FollowFrom;
  concurrency: number;
  /** Poll interval for the head once caught up. */
  pollMs: number;
  /** Stop once the ledger holds the upstream's head. */
  exitAtHead: boolean;
  log: FollowerLog;
  /** Told after every commit and poll. */
  onLag?: (lag: FollowLag) => void;
  /** Told of each transaction, change or module of a kind this version does not know (stored generically or skipped). */
  onUnknown?: (u: UnknownKind, version: bigint) => void;
  /** Told after every commit (the importer's `onCommitted`). */
  onCommitted?: () => void;
  /** Told of every failed attempt, of the recovery, and of a permanent stop (as the `FOLLOWER` writer). */
  status?: WriterStatus;
}

/** The follower's name in a `WriterStatus` (the log, `/-/healthy`). */
export const FOLLOWER = "follower";

/** The longest wait between two attempts after transient faults. */
const MAX_RETRY_MS = 5_000;

/**
 * A stop that retrying cannot fix (another chain, an upstream that went back, a bad answer), unless
 * marked `transient`: an answer a retry may not repeat (a lagging backend's 404 below the head).
 */
export class FollowError extends Error {
  readonly transient: boolean;
  constructor(message: string, options?: { transient?: boolean; cause?: unknown }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = "FollowError";
    this.transient = options?.transient ?? false;
  }
}

/** The upstream serves another chain id than the ledger holds: nothing of it is written. */
export class ChainIdChangedError extends FollowError {
  constructor(
    readonly ledgerChainId: number,
    readonly upstreamChainId: number,
    message: string,
  ) {
    super(message);
    this.name = "ChainIdChangedError";
  }
}

/** The upstream's transaction at a version the ledger holds is another one (a reset chain). */
export class HistoryDivergedError extends FollowError {
  constructor(
    readonly version: bigint,
    readonly ledgerHash: string,
    readonly upstreamHash: string,
    message: string,
  ) {
    super(message);
    this.name = "HistoryDivergedError";
  }
}

/**
 * Whether `e` stops the follower for good: a FollowError not marked transient, or input the
 * importer refuses (a data error, a history that does not match the ledger). Everything else (the
 * store, the network, an unreadable answer) is retried.
 */
export function isPermanentStop(e: unknown): boolean {
  return (e instanceof FollowError && !e.transient) || e instanceof IngestError;
}

/** The upstream's ledger info (`GET /v1`). */
export interface UpstreamHead {
  chainId: number;
  ledgerVersion: bigint;
  oldestVersion: bigint;
  timestampUsec: bigint;
  blockHeight: bigint;
  oldestBlockHeight: bigint;
}

type Json = Record<string, unknown>;

function u64(o: Json, field: string, what: string): bigint {
  const v = o[field];
  if (typeof v !== "string" || !/^[0-9]{1,20}$/.test(v)) throw new UpstreamGarbageError(`${what}: ${field} is not a u64 string: ${JSON.stringify(v)}`);
  return BigInt(v);
}

export async function readHead(client: UpstreamClient, deadline?: number): Promise<UpstreamHead> {
  const { status, json } = await client.getJson("", deadline !== undefined ? { deadline } : {});
  const what = UpstreamClient.describe("GET", "");
  if (status !== 200 || typeof json !== "object" || json === null) {
    throw new UpstreamGarbageError(`${what} answered ${status}: ${JSON.stringify(json).slice(0, 200)}`);
  }
  const o = json as Json;
  if (typeof o.chain_id !== "number") throw new UpstreamGarbageError(`${what}: chain_id is not a number`);
  return {
    chainId: o.chain_id,
    ledgerVersion: u64(o, "ledger_version", what),
    oldestVersion: u64(o, "oldest_ledger_version", what),
    timestampUsec: u64(o, "ledger_timestamp", what),
    blockHeight: u64(o, "block_height", what),
    oldestBlockHeight: u64(o, "oldest_block_height", what),
  };
}

/** The first version of the block holding `version`, from `GET /v1/blocks/by_version/{v}`. */
export async function blockStartOf(client: UpstreamClient, version: bigint): Promise<bigint> {
  const { status, json } = await client.getJson(`/blocks/by_version/${version}?with_transactions=false`);
  if (status !== 200 || typeof json !== "object" || json === null) {
    const msg = (json as Json | null)?.message;
    throw new FollowError(`the upstream has no block holding version ${version} (${status}${typeof msg === "string" ? `: ${msg}` : ""})`);
  }
  return u64(json as Json, "first_version", `block by version ${version}`);
}

/** The first version of the block at `height`, from `GET /v1/blocks/by_height/{h}`. */
async function blockStartAtHeight(client: UpstreamClient, height: bigint): Promise<bigint> {
  const { status, json } = await client.getJson(`/blocks/by_height/${height}?with_transactions=false`);
  if (status !== 200 || typeof json !== "object" || json === null) {
    const msg = (json as Json | null)?.message;
    throw new FollowError(`the upstream has no block at height ${height} (${status}${typeof msg === "string" ? `: ${msg}` : ""})`);
  }
  return u64(json as Json, "first_version", `block at height ${height}`);
}

/** What the follower writes through: the importer's store, the base bookkeeping, and the stored chain id it checks. */
export type FollowStore = ImportStore & FollowBase & Pick<LedgerReader, "getChainId">;

export class Follower {
  private stopping = false;
  /** The ledger's chain id, once known: every head and page must carry it. */
  private chainId: number | null = null;
  private wake: (() => void) | null = null;
  private lastHead: bigint | null = null;
  /** Versions asked for a page: `PAGE_SIZE`, or the upstream's smaller cap once a page showed it. */
  private pageSize = PAGE_SIZE;
  /** Failed attempts since the last progress (the backoff's exponent). */
  private failures = 0;
  private readonly status: WriterStatus;
  lag: FollowLag | null = null;
  /** Told after every commit and poll (set after construction by `serve --follow`). */
  onLag: ((lag: FollowLag) => void) | null;
  /** Told of each thing of a kind the reader does not know that was taken (a metric). */
  onUnknown: ((u: UnknownKind, version: bigint) => void) | null = null;
  /** The unknown kinds already logged: one line each, the first time. */
  private readonly unknownLogged = new Set<string>();
  /** Parses the pages of transactions off this thread; closed when `run` ends. */
  private readonly pages = new PageParser();

  constructor(
    private readonly store: FollowStore,
    private readonly client: UpstreamClient,
    private readonly o: FollowerOptions,
  ) {
    this.onLag = o.onLag ?? null;
    this.onUnknown = o.onUnknown ?? null;
    this.status = o.status ?? new WriterStatus();
  }

  /** Asks `run` to stop after the commit in progress (it resolves then). */
  stop(): void {
    this.stopping = true;
    this.wake?.();
  }

  /**
   * Syncs until stopped, or until the head with `exitAtHead`. A transient fault is reported and
   * retried with backoff (from `pollMs`, doubling up to MAX_RETRY_MS); a permanent one
   * (`isPermanentStop`) is reported as the follower's stop and rejects. The page parser ends with
   * it: a page still in flight then is refused.
   */
  async run(): Promise<void> {
    try {
      await this.runRetried();
    } finally {
      await this.pages.close();
    }
  }

  private async runRetried(): Promise<void> {
    for (;;) {
      try {
        await this.runOnce();
        return;
      } catch (e) {
        if (isPermanentStop(e)) {
          this.status.stopped(FOLLOWER, e);
          throw e;
        }
        if (this.stopping) return;
        this.failures++;
        const ms = Math.min(Math.max(MAX_RETRY_MS, this.o.pollMs), this.o.pollMs * 2 ** Math.min(this.failures - 1, 16));
        this.status.failed(FOLLOWER, e, `trying again in ${ms} ms`);
        await this.pause(ms);
        if (this.stopping) return;
      }
    }
  }

  /** The follower moved on (a commit, a poll): ends a run of failures, logged as the recovery. */
  private progressed(ledgerVersion: bigint | null): void {
    this.failures = 0;
    this.status.ok(FOLLOWER, `ledger version ${ledgerVersion ?? "none"}`);
  }

  /** One attempt: from the ledger's position until stopped (or at the head); throws on any fault. */
  private async runOnce(): Promise<void> {
    const head = await this.headRetried();
    const stored = await this.store.getChainId();
    if (stored !== null && stored !== head.chainId) {
      throw new ChainIdChangedError(stored, head.chainId, `the upstream serves chain ${head.chainId}, but this ledger holds chain ${stored}: nothing written`);
    }
    this.chainId = head.chainId;
    const importer = await Importer.open(this.store, head.chainId);
    importer.onUnknown = (u, version) => {
      const key = `${u.what}:${u.type}`;
      if (!this.unknownLogged.has(key)) {
        this.unknownLogged.add(key);
        this.o.log.warn(`version ${version}: ${describeUnknown(u)}; going on (counted as ${key}, logged once)`);
      }
      this.onUnknown?.(u, version);
    };
    importer.onCommitted = this.o.onCommitted ?? null;
    let next: bigint;
    if (importer.ledgerVersion !== null) {
      next = importer.ledgerVersion + 1n;
      this.o.log.info(`resuming after version ${importer.ledgerVersion}`);
      await this.recordFirstSynced();
    } else {
      // Recorded before the first block commits (a reader that sees a block knows where the ledger
      // starts); a run stopped before that commit starts where the record says.
      const recorded = await this.store.getBaseRecord(FIRST_SYNCED_RECORD);
      if (recorded !== null) {
        next = recorded;
        this.o.log.info(`starting at version ${next}, recorded by an earlier run (upstream head ${head.ledgerVersion})`);
      } else {
        next = await this.startVersion(head);
        await this.store.writeBaseState({ what: FIRST_SYNCED_RECORD, fetchedAt: next, modules: [], tableItems: [], resources: [] });
        this.o.log.info(`starting at version ${next} (upstream head ${head.ledgerVersion})`);
      }
      this.firstSyncedRecorded = true;
    }
    let current = head;
    while (!this.stopping) {
      this.checkChainId(current, importer.ledgerVersion);
      this.checkHead(current, importer.ledgerVersion);
      if (importer.ledgerVersion !== null) await this.checkHistory(importer.ledgerVersion, current);
      if (this.stopping) break;
      while (next <= current.ledgerVersion && !this.stopping) {
        try {
          next = await this.syncRange(importer, next, current.ledgerVersion);
        } catch (e) {
          // As import does: the whole blocks pushed before the failure are committed (a block
          // the failure cut short is not), so the next run resumes right where this one stopped.
          await importer.finish().catch(() => undefined);
          throw e;
        }
        await this.reportLag(current, importer.ledgerVersion);
        this.progressed(importer.ledgerVersion);
      }
      if (this.o.exitAtHead && importer.ledgerVersion !== null && importer.ledgerVersion >= current.ledgerVersion) break;
      if (this.stopping) break;
      await this.pause(this.o.pollMs);
      current = await this.headRetried();
      await this.reportLag(current, importer.ledgerVersion);
      this.progressed(importer.ledgerVersion);
    }
  }

  private firstSyncedRecorded = false;

  /**
   * On resume, records where the ledger starts when no run recorded it: its oldest version (a
   * ledger whose first block an older version of the follower committed before its record).
   */
  private async recordFirstSynced(): Promise<void> {
    if (this.firstSyncedRecorded) return;
    const info = await this.store.getLedgerInfo(true);
    if (!info) return;
    if ((await this.store.getBaseRecord(FIRST_SYNCED_RECORD)) === null) {
      await this.store.writeBaseState({ what: FIRST_SYNCED_RECORD, fetchedAt: info.oldestVersion, modules: [], tableItems: [], resources: [] });
    }
    this.firstSyncedRecorded = true;
  }

  private async startVersion(head: UpstreamHead): Promise<bigint> {
    const from = this.o.from;
    if (from.kind === "genesis") {
      if (head.oldestVersion > 0n) {
        throw new FollowError(`the upstream has pruned versions below ${head.oldestVersion}: it cannot be followed from genesis; use --from latest or a version`);
      }
      return 0n;
    }
    if (from.kind === "latest") {
      // The head block and the estimator's history before it, as far as the upstream keeps blocks.
      const back = head.blockHeight - GAS_HISTORY_BLOCKS;
      return blockStartAtHeight(this.client, back > head.oldestBlockHeight ? back : head.oldestBlockHeight);
    }
    const v = from.version;
    if (v > head.ledgerVersion) throw new FollowError(`version ${v} is above the upstream's head ${head.ledgerVersion}`);
    if (v < head.oldestVersion) throw new FollowError(`the upstream has pruned version ${v} (its oldest is ${head.oldestVersion})`);
    return blockStartOf(this.client, v);
  }

  /** The head, retried through an outage (the follower waits for the upstream to come back). */
  private async headRetried(): Promise<UpstreamHead> {
    for (;;) {
      try {
        return await readHead(this.client);
      } catch (e) {
        if (!(e instanceof UpstreamUnavailableError) || this.stopping) throw e;
        this.status.failed(FOLLOWER, e, `asking again in ${this.o.pollMs * 10} ms`);
        await this.pause(this.o.pollMs * 10);
      }
    }
  }

  /** Stops before any version of another chain is taken: the upstream's chain id may change under a running follower. */
  private checkChainId(head: UpstreamHead, ledgerVersion: bigint | null): void {
    if (this.chainId !== null && head.chainId !== this.chainId) {
      throw new ChainIdChangedError(
        this.chainId,
        head.chainId,
        `the upstream now serves chain ${head.chainId}, but this ledger holds chain ${this.chainId}: stopped taking versions after version ${ledgerVersion ?? "none"}`,
      );
    }
  }

  /**
   * Compares the ledger's newest transaction with the upstream's at the same version: a chain
   * reset under the same chain id that grew past the ledger differs there. An outage, an unreadable
   * answer or a lagging backend's 404 is transient (`run` retries it); a version the upstream
   * pruned cannot be compared and passes.
   */
  private async checkHistory(version: bigint, head: UpstreamHead): Promise<void> {
    const [stored] = await this.store.getFingerprints(version, version);
    if (!stored) return;
    const ours = `0x${Buffer.from(stored.hash).toString("hex")}`;
    let res: Awaited<ReturnType<UpstreamClient["getJson"]>>;
    try {
      res = await this.client.getJson(`/transactions?start=${version}&limit=1`);
    } catch (e) {
      if (e instanceof UpstreamGarbageError) throw new FollowError(`the upstream's transaction at version ${version}: ${e.message}`, { transient: true });
      throw e;
    }
    if (res.status === 410) return;
    const txn = Array.isArray(res.json) ? (res.json[0] as Json | undefined) : undefined;
    if (res.status !== 200 || !txn || txn.version !== String(version) || typeof txn.hash !== "string") {
      const msg = (res.json as Json | null)?.message;
      throw new FollowError(
        `the upstream answered ${res.status} without the transaction at version ${version}, below its head ${head.ledgerVersion}${typeof msg === "string" ? `: ${msg}` : ""}`,
        { transient: true },
      );
    }
    const theirs = txn.hash.toLowerCase();
    if (theirs !== ours) {
      throw new HistoryDivergedError(
        version,
        ours,
        theirs,
        `the upstream's history differs from this ledger's: at version ${version} the ledger holds transaction ${ours}, the upstream (head version ${head.ledgerVersion}) ${theirs}; stopped taking versions after version ${version}`,
      );
    }
  }

  /**
   * A head behind one seen before, or behind the ledger, is retried: a load-balanced pool answers
   * from a lagging backend at times, and a reset chain is told apart by `checkHistory`'s hashes.
   */
  private checkHead(head: UpstreamHead, ledgerVersion: bigint | null): void {
    if (this.lastHead !== null && head.ledgerVersion < this.lastHead) {
      throw new FollowError(`the upstream went backwards: its head was version ${this.lastHead}, now ${head.ledgerVersion}`, { transient: true });
    }
    if (ledgerVersion !== null && head.ledgerVersion < ledgerVersion) {
      throw new FollowError(`the upstream's head, version ${head.ledgerVersion}, is behind this ledger's version ${ledgerVersion}: a lagging backend, or another chain`, {
        transient: true,
      });
    }
    this.lastHead = head.ledgerVersion;
  }

  /**
   * Fetches pages from `from` up to `to`, `concurrency` in flight, and pushes them in order,
   * committing whole blocks as they complete. Returns the next version to fetch.
   *
   * A page shorter than asked, below `to`, is the upstream's own cap on a page: the rest of its
   * range is asked for next (before the pages already in flight after it), and the following
   * pages are asked at that size (doubled again after a full page, up to `PAGE_SIZE`). No version
   * is asked twice, so the requests are about the versions over the upstream's cap, whatever the
   * concurrency.
   */
  private async syncRange(importer: Importer, from: bigint, to: bigint): Promise<bigint> {
    // In version order, contiguous from `next`; a slot's page starts when it gets a place in flight.
    const queue: Array<{ start: bigint; limit: number; page: Promise<PendingPage> | null }> = [];
    let cursor = from;
    const begin = (slot: (typeof queue)[number]) => {
      const page = this.fetchPage(slot.start, slot.limit);
      page.catch(() => undefined); // awaited in order below; a later page's failure waits its turn
      slot.page = page;
    };
    const fill = () => {
      let inFlight = queue.filter((q) => q.page !== null).length;
      for (const slot of queue) {
        if (inFlight >= this.o.concurrency) break;
        if (slot.page === null) {
          begin(slot);
          inFlight++;
        }
      }
      while (inFlight < this.o.concurrency && cursor <= to) {
        const start = cursor;
        const limit = BigInt(this.pageSize) < to - start + 1n ? BigInt(this.pageSize) : to - start + 1n;
        const slot = { start, limit: Number(limit), page: null };
        begin(slot);
        queue.push(slot);
        inFlight++;
        cursor = start + limit;
      }
    };
    fill();
    let next = from;
    let uncommittedPages = 0;
    let lastCommit = performance.now();
    while (queue.length > 0 && !this.stopping) {
      const slot = queue.shift()!;
      if (slot.page === null) begin(slot);
      const { start, limit } = slot;
      // An upstream that sends more than asked: what follows is asked for already (not parsed).
      const { txns, refused } = this.pageTransactions(start, limit, await slot.page!);
      if (start !== next) throw new FollowError(`internal: page ${start} pushed after ${next}`);
      for (const t of txns) await importer.pushParsed(t);
      // A transaction the importer refuses: the ones before it are taken, as `push` would.
      if (refused !== null) throw new IngestError(refused);
      next = start + BigInt(txns.length);
      if (txns.length < limit) {
        // The upstream caps its pages at this: the rest of this page's range comes next, at that size.
        this.pageSize = txns.length;
        const gaps: typeof queue = [];
        for (let at = next, end = start + BigInt(limit); at < end; ) {
          const n = BigInt(this.pageSize) < end - at ? BigInt(this.pageSize) : end - at;
          gaps.push({ start: at, limit: Number(n), page: null });
          at += n;
        }
        queue.unshift(...gaps);
      } else if (limit === this.pageSize && this.pageSize < PAGE_SIZE) {
        // A full page under a cap seen before: ask more again (a short page may have been a
        // lagging backend's); a real cap only cuts the next page, and nothing is asked twice.
        this.pageSize = Math.min(PAGE_SIZE, this.pageSize * 2);
      }
      fill();
      // Commits the blocks pushed so far every 250 ms or 50 pages (the Importer also commits on
      // its own every 5,000 transactions): a stop loses little, and the commits, the larger cost
      // of a sync, are not paid per page. The commit is started, not waited for: the pages go on
      // meanwhile, as an import's batches do.
      uncommittedPages++;
      if (uncommittedPages >= 50 || performance.now() - lastCommit > 250) {
        await importer.commitPushed();
        uncommittedPages = 0;
        lastCommit = performance.now();
      }
    }
    await importer.finish();
    return next;
  }

  /**
   * One page answered 200 by the upstream of this chain, parsed off this thread (`PageParser`);
   * retried while the upstream fails. Its checks come when its turn does (`pageTransactions`).
   */
  private async fetchPage(start: bigint, limit: number): Promise<PendingPage> {
    const path = `/transactions?start=${start}&limit=${limit}`;
    let res: UpstreamResponse;
    for (;;) {
      try {
        res = await this.client.request(path);
        break;
      } catch (e) {
        if (!(e instanceof UpstreamUnavailableError) || this.stopping) throw e;
        this.o.log.warn(`${e.message}; trying version ${start} again`);
        await this.pause(this.o.pollMs * 10);
      }
    }
    const { status } = res;
    const pageChain = ledgerHeader(res.headers, "chain-id");
    if (this.chainId !== null && pageChain !== null && pageChain !== String(this.chainId)) {
      throw new ChainIdChangedError(
        this.chainId,
        Number(pageChain),
        `the upstream's page of transactions from version ${start} is of chain ${pageChain}, but this ledger holds chain ${this.chainId}: nothing of it written`,
      );
    }
    if (status !== 200) {
      const msg = (this.pageJson(start, limit, res.body) as Json | null)?.message;
      // A 404 below the head it announced: a load-balanced backend that lags the one that answered `GET /v1`.
      throw new FollowError(`the upstream answered ${status} for transactions from version ${start}${typeof msg === "string" ? `: ${msg}` : ""}`, {
        transient: status === 404,
      });
    }
    return this.pages.parse(res.body, limit);
  }

  /**
   * A page as `fetchPage` parsed it, checked to be a non-empty array starting at `start`: its
   * first `limit` transactions up to one the importer refuses, and why that one is refused.
   */
  private pageTransactions(start: bigint, limit: number, page: PendingPage): { txns: ParsedTxn[]; refused: string | null } {
    if (page.t === "notJson") throw this.notJsonPage(start, notJsonError(this.pagePath(start, limit), page.message, page.head));
    if (page.t === "notArray") throw new FollowError(`the upstream's page of transactions from version ${start} is not a JSON array`);
    if (page.length === 0) throw new FollowError(`the upstream answered no transactions from version ${start}, below its head`, { transient: true });
    if (page.firstVersion !== JSON.stringify(String(start))) {
      throw new FollowError(`the upstream's page from version ${start} starts at version ${page.firstVersion}`);
    }
    return { txns: pageTxns(page.txns), refused: page.refused };
  }

  private pagePath(start: bigint, limit: number): string {
    return UpstreamClient.describe("GET", `/transactions?start=${start}&limit=${limit}`);
  }

  /** Not JSON: a gateway's or proxy's page in the upstream's place, which a retry may not meet. */
  private notJsonPage(start: bigint, e: UpstreamGarbageError): FollowError {
    return new FollowError(`the upstream's page of transactions from version ${start}: ${e.message}`, { transient: true, cause: e });
  }

  /** An error answer's body (its `message`, for the stop's text). */
  private pageJson(start: bigint, limit: number, body: Buffer): unknown {
    try {
      return parseJson(body, this.pagePath(start, limit));
    } catch (e) {
      if (e instanceof UpstreamGarbageError) throw this.notJsonPage(start, e);
      throw e;
    }
  }

  private async reportLag(head: UpstreamHead, ledgerVersion: bigint | null): Promise<void> {
    const info = await this.store.getLedgerInfo();
    const versions = ledgerVersion === null ? head.ledgerVersion + 1n : head.ledgerVersion - ledgerVersion;
    const usec = info ? head.timestampUsec - info.timestampUsec : 0n;
    this.lag = { versions: versions < 0n ? 0n : versions, seconds: Number(usec > 0n ? usec : 0n) / 1e6, upstreamVersion: head.ledgerVersion };
    this.onLag?.(this.lag);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((r) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        r();
      }
      this.wake = done;
    });
  }
}
