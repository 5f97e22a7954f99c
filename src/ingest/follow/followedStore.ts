/**
 * The store a replica that started at a chain's head serves from (issue 16): the real store, plus
 * the state no synced block wrote, fetched from the upstream the first time a read needs it.
 *
 * - The base is the upstream's state just before the first synced block (version `origin`). A
 *   fetched value is stored as rows at `origin` with a record of what was fetched
 *   (`Storage.writeBaseState`), so it is fetched once ("absent" included: the record alone) and
 *   every later read, after a restart too, is an ordinary store read.
 * - A key some synced block wrote at or below the version asked is answered from the store alone:
 *   the upstream is not asked, so everything stored is still served while it is down.
 * - When the upstream has pruned `origin`, the value is read at the upstream's oldest version U
 *   instead, but only when the ledger proves no synced block changed it in (origin, U]; otherwise
 *   the read answers 410, as pruned, rather than guess.
 * - It offers no `immediate` reads: every read that may need the upstream goes through the
 *   asynchronous path, where it can wait for a fetch.
 * - A wait on the upstream is bounded by `timeoutMs` (then 503, via StorageUnavailableError);
 *   concurrent reads of the same missing state share one fetch.
 * - "Absent" is stored only on the reference node's own "not found" for that exact thing: its
 *   error code in its JSON, with a ledger version at or above the one asked. Any other 404 (a
 *   gateway's page, `version_not_found`, a lagging backend) is retried, then answered 503.
 * - Whether the ledger has a base is decided on the reads, not once: a follower records its first
 *   version before its first block, so until the ledger holds a block the record is read again.
 * - The gas estimator's walk below the first synced block answers 503: those blocks are the
 *   upstream's, and an estimate without them would differ from the upstream's.
 */
import { formatAddress, toHex } from "../../ledger/address.js";
import { moduleStateKey } from "../../ledger/stateKey.js";
import type { LedgerInfo, } from "../../ledger/types.js";
import { moduleAbi } from "../../move/abi.js";
import type { BaseStateWrite } from "../../storage/followBase.js";
import type { Storage } from "../../storage/storage.js";
import type { ModulesPage, Snapshot, WantsCode, WireReads } from "../../storage/reader.js";
import type { ModuleWrite } from "../../storage/writer.js";
import { StatePrunedError, StorageUnavailableError } from "../../storage/errors.js";
import { type UpstreamClient, type UpstreamResponse, parseJson } from "./client.js";
import { FIRST_SYNCED_RECORD, type FollowLag, readHead, type UpstreamHead } from "./sync.js";

/** The reference node's largest modules page. */
const MODULES_PAGE = 9999;

type Rows = Pick<BaseStateWrite, "modules" | "tableItems" | "resources">;
/** What a fetch found: rows to store, or the upstream cannot give the base any more. */
type Fetched = Rows | "pruned";
const NO_ROWS = (): Rows => ({ modules: [], tableItems: [], resources: [] });

export interface FollowedStoreOptions {
  /** How long a read waits on the upstream before it answers 503. */
  timeoutMs: number;
  /**
   * Where a fetched base state is written (default: `inner.writeBaseState`). On SQLite the serving
   * connection only reads: the writer thread writes it (`WriterThread.writeBaseState`).
   */
  writeBase?: (w: BaseStateWrite) => Promise<void>;
}

export class FollowedStore implements Storage {
  readonly kind: Storage["kind"];
  /** Set by the follower running in the same process; shown by /v1/info. */
  lag: FollowLag | null = null;
  /** The base version; null: no base (synced from genesis); undefined: not decided yet. */
  private origin: bigint | null | undefined = undefined;
  /** Records known to exist (they are never removed). */
  private readonly known = new Set<string>();
  private readonly fetching = new Map<string, Promise<"ok" | "pruned">>();
  private head: { at: number; head: Promise<UpstreamHead> } | null = null;

  constructor(
    readonly inner: Storage,
    /** null: a server without an upstream, over a ledger a follower started at a head. */
    private readonly client: UpstreamClient | null,
    private readonly o: FollowedStoreOptions,
  ) {
    this.kind = inner.kind;
    const wire = inner.wire;
    // Summaries are local; a module page may need the account's base modules first, as `readModules`.
    this.wire = wire && {
      readSummaries: (q) => wire.readSummaries(q),
      readModules: (address, version, start, limit, code) => this.withModulesBase(address, version, () => wire.readModules(address, version, start, limit, code)),
    };
  }

  /** Every read here may wait on the upstream: none is answered in the calling turn. */
  readonly immediate = null;
  readonly wire: WireReads | null;
  commitBlocks: Storage["commitBlocks"] = (w) => this.inner.commitBlocks(w);
  fileProblem = () => this.inner.fileProblem();
  errorKind = (e: unknown) => this.inner.errorKind(e);

  followLag(): { versions: bigint; seconds: number } | null {
    return this.lag;
  }

  /**
   * The base version, or null for a ledger without one (synced from genesis, imported): nothing to
   * fetch. A follower records its first version before its first block commits, so once the
   * ledger holds a block (read first) the record read after it is final; before that it is read
   * again on every call.
   */
  private async baseVersion(): Promise<bigint | null> {
    if (this.origin !== undefined) return this.origin;
    const hasBlock = (await this.inner.getLedgerInfo(true)) !== null;
    const first = await this.inner.getBaseRecord(FIRST_SYNCED_RECORD);
    if (first !== null) this.origin = first > 0n ? first - 1n : null;
    else if (hasBlock) this.origin = null;
    return this.origin ?? null;
  }

  // --- reads that may need the base -------------------------------------------------------------

  async readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Promise<Snapshot<Uint8Array | null> | null> {
    const snap = await this.inner.readTableItem(handle, key, version);
    const origin = await this.baseVersion();
    const v = version ?? snap?.info.ledgerVersion;
    if (origin === null || !snap || v === undefined || !inWindow(snap.info, v)) return snap;
    const newest = await this.inner.newestStateVersion({ kind: "table_item", handle, key }, v);
    if (newest !== null && newest >= origin) return snap; // a synced write (or the base row) answers
    const what = `table_item:${toHex(handle)}:${toHex(key)}`;
    const r = await this.ensure(what, origin, `table item ${toHex(key)} of table ${formatAddress(handle)}`, async (at) => {
      if (at > origin && (await this.inner.newestStateVersion({ kind: "table_item", handle, key }, at)) !== null) return "pruned";
      const res = await this.client!.request(`/tables/${formatAddress(handle)}/raw_item?ledger_version=${at}`, {
        method: "POST",
        json: { key: toHex(key) },
        accept: "application/x-bcs",
        deadline: this.deadline(),
      });
      if (res.status === 410) return "pruned";
      if (res.status === 404) {
        requireNotFound(res, ["table_item_not_found"], at, `raw_item of table ${formatAddress(handle)} at version ${at}`);
        return NO_ROWS();
      }
      expectStatus(res.status, 200, `raw_item of table ${formatAddress(handle)} at version ${at}`);
      return { ...NO_ROWS(), tableItems: [{ version: origin, handle, key, value: new Uint8Array(res.body) }] };
    });
    if (r === "pruned") throw statePruned(v);
    return this.inner.readTableItem(handle, key, version);
  }

  async readModulesVersion(address: Uint8Array, version: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    const snap = await this.inner.readModulesVersion(address, version);
    const origin = await this.baseVersion();
    const v = version ?? snap?.info.ledgerVersion;
    if (origin === null || !snap || v === undefined || !inWindow(snap.info, v)) return snap;
    if ((await this.ensureModules(address, origin)) === "pruned") throw statePruned(v);
    return this.inner.readModulesVersion(address, version);
  }

  readModules(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number, code?: WantsCode): Promise<Snapshot<ModulesPage> | null> {
    return this.withModulesBase(address, version, () => this.inner.readModules(address, version, start, limit, code));
  }

  /** A module page read, read again once the account's base modules are stored when it needs them. */
  private async withModulesBase(address: Uint8Array, version: bigint | undefined, read: () => Promise<Snapshot<ModulesPage> | null>): Promise<Snapshot<ModulesPage> | null> {
    const snap = await read();
    const origin = await this.baseVersion();
    const v = version ?? snap?.info.ledgerVersion;
    if (origin === null || !snap || v === undefined || !inWindow(snap.info, v)) return snap;
    if ((await this.ensureModules(address, origin)) === "pruned") throw statePruned(v);
    return read();
  }

  async getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null> {
    const origin = await this.baseVersion();
    if (origin === null) return this.inner.getResource(address, type, version);
    const newest = await this.inner.newestStateVersion({ kind: "resource", address, type }, version);
    if (newest === null || newest < origin) {
      // "pruned" leaves the ledger's own answer: only the gas estimator reads resources, and it
      // falls back to its defaults as for a chain without them.
      await this.ensure(`resource:${toHex(address)}:${type}`, origin, `resource ${type} of ${formatAddress(address)}`, async (at) => {
        if (at > origin && (await this.inner.newestStateVersion({ kind: "resource", address, type }, at)) !== null) return "pruned";
        const res = await this.client!.request(`/accounts/${formatAddress(address)}/resource/${type}?ledger_version=${at}`, { deadline: this.deadline() });
        if (res.status === 410) return "pruned";
        if (res.status === 404) {
          requireNotFound(res, ["resource_not_found", "account_not_found"], at, `resource ${type} of ${formatAddress(address)} at version ${at}`);
          return NO_ROWS();
        }
        expectStatus(res.status, 200, `resource ${type} of ${formatAddress(address)} at version ${at}`);
        const body = parseJson(res.body, `resource ${type}`) as { data?: unknown };
        return { ...NO_ROWS(), resources: [{ version: origin, address, type, json: JSON.stringify(body.data ?? null) }] };
      });
    }
    return this.inner.getResource(address, type, version);
  }

  /** An account's whole module list at the base, fetched once (every page). */
  private ensureModules(address: Uint8Array, origin: bigint): Promise<"ok" | "pruned"> {
    return this.ensure(`modules:${toHex(address)}`, origin, `modules of ${formatAddress(address)}`, async (at) => {
      if (at > origin) {
        const changed = (await this.inner.readModulesVersion(address, at))?.value;
        if (changed !== null && changed !== undefined && changed > origin) return "pruned";
      }
      const modules: ModuleWrite[] = [];
      let cursor: string | null = null;
      do {
        const path: string = `/accounts/${formatAddress(address)}/modules?ledger_version=${at}&limit=${MODULES_PAGE}${cursor ? `&start=${cursor}` : ""}`;
        const res = await this.client!.request(path, { deadline: this.deadline() });
        if (res.status === 410) return "pruned";
        if (res.status === 404) {
          // Older reference nodes answer an account that does not exist so: it has no modules.
          requireNotFound(res, ["account_not_found"], at, `modules of ${formatAddress(address)} at version ${at}`);
          break;
        }
        expectStatus(res.status, 200, `modules of ${formatAddress(address)} at version ${at}`);
        const page = parseJson(res.body, `modules of ${formatAddress(address)}`);
        if (!Array.isArray(page)) throw new StorageUnavailableError(`the upstream's modules of ${formatAddress(address)} are not a JSON array`);
        for (const m of page as Array<{ bytecode?: unknown; abi?: { name?: unknown; address?: unknown } | null }>) {
          const bytecode = typeof m.bytecode === "string" ? Buffer.from(m.bytecode.replace(/^0x/, ""), "hex") : null;
          const decoded = bytecode ? moduleAbi(bytecode)?.name : undefined;
          const name = decoded ?? (typeof m.abi?.name === "string" ? m.abi.name : null);
          if (!bytecode || !name) throw new StorageUnavailableError(`the upstream sent a module of ${formatAddress(address)} without bytecode or name`);
          const write: ModuleWrite = { version: origin, address, name, stateKey: moduleStateKey(address, name), bytecode: new Uint8Array(bytecode) };
          // Bytecode the decoder does not know (a newer version): the upstream's ABI is served.
          if (decoded === undefined && typeof m.abi?.address === "string") write.upstreamAbi = JSON.stringify(m.abi);
          modules.push(write);
        }
        cursor = res.headers.get("x-aptos-cursor");
      } while (cursor);
      return { ...NO_ROWS(), modules };
    });
  }

  /**
   * Makes sure `what` is stored: fetched at the base version (or at the upstream's oldest when it
   * pruned the base), written with its record. One fetch per `what` at a time; bounded by the timeout.
   */
  private ensure(what: string, origin: bigint, label: string, fetch: (at: bigint) => Promise<Fetched>): Promise<"ok" | "pruned"> {
    if (this.known.has(what)) return Promise.resolve("ok");
    let p = this.fetching.get(what);
    if (!p) {
      p = (async () => {
        if ((await this.inner.getBaseRecord(what)) !== null) return "ok" as const;
        if (!this.client) {
          throw new StorageUnavailableError(
            `this ledger starts at version ${origin + 1n} of its chain and the state before it is fetched from the upstream only by serve --follow`,
          );
        }
        const head = await this.upstreamHead();
        const at = head.oldestVersion > origin ? head.oldestVersion : origin;
        const info = await this.inner.getLedgerInfo(true);
        // The ledger can vouch for an unchanged value only up to its own newest version.
        if (!info || at > info.ledgerVersion) return "pruned" as const;
        const rows = await this.fetchRetried(() => fetch(at));
        if (rows === "pruned") return "pruned" as const;
        await (this.o.writeBase ?? this.inner.writeBaseState.bind(this.inner))({ what, fetchedAt: at, ...rows });
        return "ok" as const;
      })();
      const shared = p.then(
        (r) => {
          if (r === "ok") this.known.add(what);
          return r;
        },
        (e: unknown) => {
          // Whatever the upstream did (down, 5xx, an answer we cannot read), the read answers 503.
          throw e instanceof StorageUnavailableError ? e : new StorageUnavailableError(`the upstream could not give the ${label}: ${(e as Error).message}`);
        },
      );
      const done = () => this.fetching.delete(what);
      shared.then(done, done);
      this.fetching.set(what, shared);
      p = shared;
    }
    // Without an upstream nothing waits on one: the store's own reads say what is missing.
    if (!this.client) return p;
    return withTimeout(p, this.o.timeoutMs, () => new StorageUnavailableError(`the upstream did not give the ${label} within ${this.o.timeoutMs} ms`));
  }

  /**
   * `fetch`, again while the upstream answers something that is neither the value nor its own
   * "not found" (a gateway's 404, a lagging backend), with backoff until the read's timeout.
   */
  private async fetchRetried(fetch: () => Promise<Fetched>): Promise<Fetched> {
    const until = this.deadline();
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      try {
        return await fetch();
      } catch (e) {
        if (!(e instanceof UpstreamNotFoundUnsureError) || Date.now() + delay >= until) throw e;
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  private deadline(): number {
    return Date.now() + this.o.timeoutMs;
  }

  /** The upstream's ledger info, asked at most once a second. */
  private upstreamHead(): Promise<UpstreamHead> {
    const now = Date.now();
    if (!this.head || now - this.head.at > 1000) {
      const head = readHead(this.client!, this.deadline());
      head.catch(() => (this.head = null));
      this.head = { at: now, head };
    }
    return this.head.head;
  }

  // --- everything else is the store's -----------------------------------------------------------

  getChainId = () => this.inner.getChainId();
  initChain = (chainId: number) => this.inner.initChain(chainId);
  getLedgerInfo = (fresh?: boolean) => this.inner.getLedgerInfo(fresh);
  getModuleCode = (codeHash: string) => this.inner.getModuleCode(codeHash);
  readSummaries: Storage["readSummaries"] = (q) => this.inner.readSummaries(q);
  readSummariesVersion: Storage["readSummariesVersion"] = (s, e) => this.inner.readSummariesVersion(s, e);
  /** Below the first synced block the blocks are the upstream's: a gas estimate needing them answers 503. */
  getBlockByVersion: Storage["getBlockByVersion"] = async (v) => {
    const origin = await this.baseVersion();
    if (origin !== null && v <= origin) {
      throw new StorageUnavailableError(`the block holding version ${v} is before this ledger's first synced block (version ${origin + 1n}): not stored yet`);
    }
    return this.inner.getBlockByVersion(v);
  };
  getBlockByHeight: Storage["getBlockByHeight"] = (h) => this.inner.getBlockByHeight(h);
  getFirstBlockAtOrAfter: Storage["getFirstBlockAtOrAfter"] = (t) => this.inner.getFirstBlockAtOrAfter(t);
  getUserTxnGas: Storage["getUserTxnGas"] = (f, l) => this.inner.getUserTxnGas(f, l);
  getFingerprints: Storage["getFingerprints"] = (f, t) => this.inner.getFingerprints(f, t);
  commitBlock: Storage["commitBlock"] = (w) => this.inner.commitBlock(w);
  prune: Storage["prune"] = (t) => this.inner.prune(t);
  getBaseRecord: Storage["getBaseRecord"] = (w) => this.inner.getBaseRecord(w);
  writeBaseState: Storage["writeBaseState"] = (w) => this.inner.writeBaseState(w);
  newestStateVersion: Storage["newestStateVersion"] = (k, u) => this.inner.newestStateVersion(k, u);
  close = () => this.inner.close();
}

function inWindow(info: LedgerInfo, v: bigint): boolean {
  return v >= info.oldestVersion && v <= info.ledgerVersion;
}

/** A read the upstream can no longer answer exactly: the API answers it 410, as pruned. */
function statePruned(v: bigint): StatePrunedError {
  return new StatePrunedError(v, `the state at version ${v} is older than the upstream keeps, and the ledger cannot prove it unchanged since`);
}

/** A 404 of the upstream that is not its own "not found" of the thing asked: retried, never stored. */
class UpstreamNotFoundUnsureError extends StorageUnavailableError {}

/**
 * Checks that a 404 is the reference node's "not found" of the thing asked: JSON with one of
 * `codes` as its `error_code`, at a ledger version (`X-Aptos-Ledger-Version`) at or above `at`.
 */
function requireNotFound(res: UpstreamResponse, codes: string[], at: bigint, what: string): void {
  let code: unknown;
  try {
    code = (JSON.parse(res.body.toString("utf8")) as { error_code?: unknown } | null)?.error_code;
  } catch {
    code = undefined;
  }
  const header = res.headers.get("x-aptos-ledger-version");
  const ledgerVersion = header !== null && /^[0-9]{1,20}$/.test(header) ? BigInt(header) : null;
  if (typeof code === "string" && codes.includes(code) && ledgerVersion !== null && ledgerVersion >= at) return;
  const said = typeof code === "string" ? code : JSON.stringify(res.body.toString("utf8", 0, Math.min(res.body.length, 80)));
  throw new UpstreamNotFoundUnsureError(`the upstream answered 404 (${said}, ledger version ${header ?? "not given"}) for ${what}: not its own "not found"`);
}

function expectStatus(status: number, want: number, what: string): void {
  if (status !== want) throw new StorageUnavailableError(`the upstream answered ${status} for ${what}`);
}

function withTimeout<T>(p: Promise<T>, ms: number, error: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(error()), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
