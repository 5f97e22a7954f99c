/**
 * The replica's base state as a service (issue 16): what a read of a head-started ledger missed
 * (`StateBeforeBaseError`, reported by `HeadStartedStorage`) is fetched from the upstream and
 * stored, so the read can run once more. `server.ts` builds it for `serve --follow` and hands it
 * to the API, which calls it on a miss.
 *
 * - A fetched value is stored as rows at the base version with a record of what was fetched
 *   (`FollowBase.writeBaseState`; on SQLite through the writer thread), so it is fetched once and
 *   every later read, after a restart too, is local. "Absent" is not stored: it is kept in the
 *   bounded memory of `BaseRecords` (exact for good, the base never changes), so a client's
 *   invented keys leave no row; one forgotten, or after a restart, is fetched again.
 * - A new fetch is admitted by the fairness bound (`FetchShares`): past the client's share or the
 *   node's fetches at once it is refused (`FetchRefusedError`) before the upstream is asked.
 * - When the upstream has pruned the base, the value is read at the upstream's oldest version U
 *   instead, but only when the ledger proves no synced block changed it in (base, U]; otherwise
 *   the answer is "pruned" (the API answers 410 rather than guess).
 * - A wait on the upstream is bounded by `timeoutMs`, then `UpstreamUnavailableError` (503);
 *   concurrent misses of the same state share one fetch. Its message names what could not be
 *   had and, for an answer read here, what the upstream answered; never the upstream's URL or a
 *   socket error, which only its cause (the log) holds.
 * - "Absent" is kept only on the reference node's own "not found" for that exact thing: its
 *   error code in its JSON, with a ledger version at or above the one asked. Any other 404 (a
 *   gateway's page, `version_not_found`, a lagging backend) is retried, then answered 503.
 */
import { formatAddress, toHex } from "../../ledger/address.js";
import { moduleStateKey } from "../../ledger/stateKey.js";
import { moduleAbi } from "../../move/abi.js";
import type { GasHistorySource } from "../../ledger/gas.js";
import { BaseRecords, baseRecordName, keyText } from "../../storage/replica/baseRecords.js";
import type { BaseStateWrite, FollowBase } from "../../storage/contracts/followBase.js";
import type { LedgerReader } from "../../storage/contracts/reader.js";
import type { PageReads } from "../../storage/contracts/pageReads.js";
import type { ModuleWrite } from "../../storage/contracts/writer.js";
import { type BaseStateKey, StateBeforeBaseError, StatePrunedError, StorageError, UpstreamUnavailableError } from "../../storage/contracts/errors.js";
import { ledgerHeader, type UpstreamClient, type UpstreamResponse, parseJson } from "./client.js";
import { FetchShares } from "./fetchShares.js";
import { readHead, type UpstreamHead } from "./sync.js";

/** The reference node's largest modules and resources pages. */
const MODULES_PAGE = 9999;
const RESOURCES_PAGE = 9999;

type Rows = Pick<BaseStateWrite, "modules" | "tableItems" | "resources">;
/** What a fetch found: rows to store, or the upstream cannot give the base any more. */
type Fetched = Rows | "pruned";
const NO_ROWS = (): Rows => ({ modules: [], tableItems: [], resources: [] });

export interface BaseStateOptions {
  /** How long a miss waits on the upstream before it fails as upstream unavailable. */
  timeoutMs: number;
  /**
   * Where a fetched base state is written (default: `store.writeBaseState`). On SQLite the serving
   * connection only reads: the writer thread writes it (`WriterThread.writeBaseState`).
   */
  writeBase?: (w: BaseStateWrite) => Promise<void>;
  /** What is known of the base records, shared with the `HeadStartedStorage` the API reads through. */
  records?: BaseRecords;
  /** The fairness bound of new fetches (default: 10 a second per client, 32 at once). */
  shares?: FetchShares;
}

/**
 * What the service reads and writes: the base bookkeeping, the position, and the reads that tell
 * whether the upstream's newer answer is the base's (a resource, an account's resources and modules).
 */
export type BaseStateStore = FollowBase & Pick<LedgerReader, "getLedgerInfo" | "getResource" | "readResources"> & Pick<PageReads, "readModulesVersion">;

export class BaseStateService {
  /** What is known stored or absent (bounded; the store is the truth of what is stored). */
  readonly records: BaseRecords;
  readonly shares: FetchShares;
  /** The fetches running, by record name (as many as `shares` admits at once). */
  private readonly fetching = new Map<string, Promise<"ok" | "pruned">>();
  private head: { at: number; head: Promise<UpstreamHead> } | null = null;

  constructor(
    /** The backend's storage, without the miss checks: what the fetch checks, reads and writes. */
    private readonly store: BaseStateStore,
    private readonly client: UpstreamClient,
    private readonly o: BaseStateOptions,
  ) {
    this.records = o.records ?? new BaseRecords();
    this.shares = o.shares ?? new FetchShares({ perClientPerSecond: 10, concurrent: 32 });
  }

  /**
   * Fetches and stores what `miss` names, for the read that missed it to run once more. Throws
   * `StatePrunedError` (410) where the upstream can no longer give it exactly, and
   * `UpstreamUnavailableError` (503) where it could not give it within the timeout, and
   * `FetchRefusedError` where `client` (its address) is over its share or the node's fetches are
   * all in use.
   */
  async fetch(miss: StateBeforeBaseError, client: string | null): Promise<void> {
    if ((await this.ensure(miss.missing, miss.base, client)) === "pruned") {
      throw new StatePrunedError(miss.version, `the state at version ${miss.version} is older than the upstream keeps, and the ledger cannot prove it unchanged since`);
    }
  }

  /**
   * The gas estimator's reads over `reader` (a `HeadStartedStorage`), a missed resource fetched and
   * read once more. A resource the upstream pruned reads as the ledger has it: the estimator falls
   * back to its defaults as for a chain without it.
   */
  gasReads(reader: GasHistorySource): GasHistorySource {
    return {
      getBlockByVersion: (v) => reader.getBlockByVersion(v),
      getUserTxnGas: (f, l) => reader.getUserTxnGas(f, l),
      getResource: async (address, type, version) => {
        try {
          return await reader.getResource(address, type, version);
        } catch (e) {
          if (!(e instanceof StateBeforeBaseError)) throw e;
          if ((await this.ensure(e.missing, e.base, null)) === "pruned") return this.store.getResource(address, type, version);
          return reader.getResource(address, type, version);
        }
      },
    };
  }

  private ensure(key: BaseStateKey, base: bigint, client: string | null): Promise<"ok" | "pruned"> {
    switch (key.kind) {
      case "modules":
        return this.ensureRecord(key, base, client, `modules of ${formatAddress(key.address)}`, (at) => this.fetchModules(key.address, base, at));
      case "resources":
        return this.ensureRecord(key, base, client, `resources of ${formatAddress(key.address)}`, (at) => this.fetchResources(key.address, base, at));
      case "table_item":
        return this.ensureRecord(key, base, client, `table item ${keyText(key.key)} of table ${formatAddress(key.handle)}`, (at) =>
          this.fetchTableItem(key.handle, key.key, base, at),
        );
      case "resource":
        return this.ensureRecord(key, base, client, `resource ${key.type} of ${formatAddress(key.address)}`, (at) => this.fetchResource(key.address, key.type, base, at));
    }
  }

  private async fetchTableItem(handle: Uint8Array, key: Uint8Array, base: bigint, at: bigint): Promise<Fetched> {
    if (at > base && (await this.store.newestStateVersion({ kind: "table_item", handle, key }, at)) !== null) return "pruned";
    const what = `raw_item of table ${formatAddress(handle)} (key ${keyText(key)}) at version ${at}`;
    const res = await this.client.request(`/tables/${formatAddress(handle)}/raw_item?ledger_version=${at}`, {
      method: "POST",
      json: { key: toHex(key) },
      accept: "application/x-bcs",
      deadline: this.deadline(),
    });
    if (res.status === 410) return "pruned";
    if (res.status === 404) {
      requireNotFound(res, ["table_item_not_found"], at, what);
      return NO_ROWS();
    }
    expectStatus(res.status, 200, what);
    return { ...NO_ROWS(), tableItems: [{ version: base, handle, key, value: new Uint8Array(res.body) }] };
  }

  private async fetchResource(address: Uint8Array, type: string, base: bigint, at: bigint): Promise<Fetched> {
    if (at > base && (await this.store.newestStateVersion({ kind: "resource", address, type }, at)) !== null) return "pruned";
    const what = `resource ${type} of ${formatAddress(address)} at version ${at}`;
    const res = await this.client.request(`/accounts/${formatAddress(address)}/resource/${type}?ledger_version=${at}`, { deadline: this.deadline() });
    if (res.status === 410) return "pruned";
    if (res.status === 404) {
      requireNotFound(res, ["resource_not_found", "account_not_found"], at, what);
      return NO_ROWS();
    }
    expectStatus(res.status, 200, what);
    const body = parseJson(res.body, `resource ${type}`) as { data?: unknown };
    return { ...NO_ROWS(), resources: [{ version: base, address, type, json: JSON.stringify(body.data ?? null) }] };
  }

  /** An account's whole resource list at the base (every page). */
  private async fetchResources(address: Uint8Array, base: bigint, at: bigint): Promise<Fetched> {
    if (at > base) {
      const changed = (await this.store.readResources(address, at, null, 0))?.value.changed;
      if (changed !== null && changed !== undefined && changed > base) return "pruned";
    }
    const what = `resources of ${formatAddress(address)} at version ${at}`;
    const resources: Rows["resources"] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/accounts/${formatAddress(address)}/resources?ledger_version=${at}&limit=${RESOURCES_PAGE}${cursor ? `&start=${cursor}` : ""}`;
      const res = await this.client.request(path, { deadline: this.deadline() });
      if (res.status === 410) return "pruned";
      if (res.status === 404) {
        // Older reference nodes answer an account that does not exist so: it has no resources.
        requireNotFound(res, ["account_not_found"], at, what);
        break;
      }
      expectStatus(res.status, 200, what);
      const page = parseJson(res.body, what);
      if (!Array.isArray(page)) throw new UpstreamAnswerError(`the upstream's resources of ${formatAddress(address)} are not a JSON array`);
      for (const r of page as Array<{ type?: unknown; data?: unknown }>) {
        if (typeof r.type !== "string") throw new UpstreamAnswerError(`the upstream sent a resource of ${formatAddress(address)} without its type`);
        resources.push({ version: base, address, type: r.type, json: JSON.stringify(r.data ?? null) });
      }
      cursor = ledgerHeader(res.headers, "cursor");
    } while (cursor);
    return { ...NO_ROWS(), resources };
  }

  /** An account's whole module list at the base (every page). */
  private async fetchModules(address: Uint8Array, base: bigint, at: bigint): Promise<Fetched> {
    if (at > base) {
      const changed = (await this.store.readModulesVersion(address, at))?.value;
      if (changed !== null && changed !== undefined && changed > base) return "pruned";
    }
    const modules: ModuleWrite[] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/accounts/${formatAddress(address)}/modules?ledger_version=${at}&limit=${MODULES_PAGE}${cursor ? `&start=${cursor}` : ""}`;
      const res = await this.client.request(path, { deadline: this.deadline() });
      if (res.status === 410) return "pruned";
      if (res.status === 404) {
        // Older reference nodes answer an account that does not exist so: it has no modules.
        requireNotFound(res, ["account_not_found"], at, `modules of ${formatAddress(address)} at version ${at}`);
        break;
      }
      expectStatus(res.status, 200, `modules of ${formatAddress(address)} at version ${at}`);
      const page = parseJson(res.body, `modules of ${formatAddress(address)}`);
      if (!Array.isArray(page)) throw new UpstreamAnswerError(`the upstream's modules of ${formatAddress(address)} are not a JSON array`);
      for (const m of page as Array<{ bytecode?: unknown; abi?: { name?: unknown; address?: unknown } | null }>) {
        const bytecode = typeof m.bytecode === "string" ? Buffer.from(m.bytecode.replace(/^0x/, ""), "hex") : null;
        const decoded = bytecode ? moduleAbi(bytecode)?.name : undefined;
        const name = decoded ?? (typeof m.abi?.name === "string" ? m.abi.name : null);
        if (!bytecode || !name) throw new UpstreamAnswerError(`the upstream sent a module of ${formatAddress(address)} without bytecode or name`);
        const write: ModuleWrite = { version: base, address, name, stateKey: moduleStateKey(address, name), bytecode: new Uint8Array(bytecode) };
        // Bytecode the decoder does not know (a newer version): the upstream's ABI is served.
        if (decoded === undefined && typeof m.abi?.address === "string") write.upstreamAbi = JSON.stringify(m.abi);
        modules.push(write);
      }
      cursor = ledgerHeader(res.headers, "cursor");
    } while (cursor);
    return { ...NO_ROWS(), modules };
  }

  /**
   * Makes sure `key` is stored: fetched at the base version (or at the upstream's oldest when it
   * pruned the base), written with its record, or known absent. One fetch per key at a time, a new
   * one admitted by `shares` for `client`; bounded by the timeout.
   */
  private ensureRecord(key: BaseStateKey, base: bigint, client: string | null, label: string, fetch: (at: bigint) => Promise<Fetched>): Promise<"ok" | "pruned"> {
    const what = baseRecordName(key);
    if (this.records.has(what)) return Promise.resolve("ok");
    let p = this.fetching.get(what);
    if (!p) {
      // Refused here, before anything is asked or shared with another client's read.
      const release = this.shares.admit(client);
      const fetched = (async () => {
        if ((await this.store.getBaseRecord(what)) !== null) return "ok" as const;
        const head = await this.upstreamHead();
        const at = head.oldestVersion > base ? head.oldestVersion : base;
        const info = await this.store.getLedgerInfo(true);
        // The ledger can vouch for an unchanged value only up to its own newest version.
        if (!info || at > info.ledgerVersion) return "pruned" as const;
        const rows = await this.fetchRetried(() => fetch(at));
        if (rows === "pruned") return "pruned" as const;
        if (rows.modules.length + rows.tableItems.length + rows.resources.length === 0) return "absent" as const;
        await (this.o.writeBase ?? this.store.writeBaseState.bind(this.store))({ what, fetchedAt: at, ...rows });
        return "ok" as const;
      })();
      const shared = fetched.then(
        (r) => {
          if (r === "absent") this.records.noteAbsent(what);
          else if (r === "ok") this.records.noteRecorded(what);
          return r === "absent" ? "ok" : r;
        },
        (e: unknown) => {
          // A storage failure keeps its kind. Whatever the upstream did (down, 5xx, an answer we
          // cannot read) is the upstream's, said without its URL or a socket error: those stay in
          // the cause, for the log.
          if (e instanceof StorageError && !(e instanceof UpstreamUnavailableError)) throw e;
          const said = e instanceof UpstreamAnswerError ? e.message : "it could not be reached or did not answer (the node's log says why)";
          throw new UpstreamUnavailableError(`the upstream could not give the ${label}: ${said}`, { cause: e });
        },
      );
      const done = () => {
        this.fetching.delete(what);
        release();
      };
      shared.then(done, done);
      this.fetching.set(what, shared);
      p = shared;
    }
    return withTimeout(p, this.o.timeoutMs, () => new UpstreamUnavailableError(`the upstream did not give the ${label} within ${this.o.timeoutMs} ms`));
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
      const head = readHead(this.client, this.deadline());
      head.catch(() => (this.head = null));
      this.head = { at: now, head };
    }
    return this.head.head;
  }
}

/** An answer of the upstream read here and found wanting: its message, composed here, names no URL. */
class UpstreamAnswerError extends UpstreamUnavailableError {}

/** A 404 of the upstream that is not its own "not found" of the thing asked: retried, never stored. */
class UpstreamNotFoundUnsureError extends UpstreamAnswerError {}

/**
 * Checks that a 404 is the reference node's "not found" of the thing asked: JSON with one of
 * `codes` as its `error_code`, at a ledger version (`X-Aptos-Ledger-Version`, or a ledger-node's
 * `X-NODE-LEDGER-VERSION`) at or above `at`.
 */
function requireNotFound(res: UpstreamResponse, codes: string[], at: bigint, what: string): void {
  let code: unknown;
  try {
    code = (JSON.parse(res.body.toString("utf8")) as { error_code?: unknown } | null)?.error_code;
  } catch {
    code = undefined;
  }
  const header = ledgerHeader(res.headers, "ledger-version");
  const ledgerVersion = header !== null && /^[0-9]{1,20}$/.test(header) ? BigInt(header) : null;
  if (typeof code === "string" && codes.includes(code) && ledgerVersion !== null && ledgerVersion >= at) return;
  // What the upstream sent is quoted in the cause only (the log): a gateway's page may name hosts.
  const head = JSON.stringify(res.body.toString("utf8", 0, Math.min(res.body.length, 80)));
  const shown = typeof code === "string" && /^[a-z_]{1,40}$/.test(code) ? code : "no error code of the node's";
  throw new UpstreamNotFoundUnsureError(
    `the upstream answered 404 (${shown}, ledger version ${ledgerVersion ?? "not given"}) for ${what}: not its own "not found"`,
    { cause: new Error(`the upstream's 404 began ${head}, X-Aptos-Ledger-Version ${JSON.stringify(header)}`) },
  );
}

function expectStatus(status: number, want: number, what: string): void {
  if (status !== want) throw new UpstreamAnswerError(`the upstream answered ${status} for ${what}`);
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
