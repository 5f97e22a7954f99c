/**
 * The storage of a ledger that a follower started at a chain's head (a replica, issue 16): the
 * backend's reads, with a typed miss (`StateBeforeBaseError`) where a read needs state from before
 * the first synced block that was never fetched. It never fetches: the API hands the miss to the
 * base-state service `server.ts` injects (or answers 503 without one) and runs the read once more.
 *
 * - The base is the state just before the first synced block (version `base`). A key some synced
 *   block wrote at or below the version asked, or whose base was fetched (its record exists), is
 *   answered from the store alone.
 * - An account's module pages and single modules need its whole module list at the base
 *   (`modules:` record), its resources pages its whole resource list (`resources:`); a table item or
 *   a resource only its own (`table_item:`, `resource:` records). A record is named by a digest of
 *   what it names (`baseRecordName`), never by the bytes a client sent.
 * - What is known of the records is kept in bounded memory (`BaseRecords`), the store being the
 *   truth: names recorded there, and names whose state the upstream answered absent, which are kept
 *   only in memory (README, "The replica's base state, decided").
 * - Whether the ledger has a base is decided on the reads, not once: a follower records its first
 *   version before its first block, so until the ledger holds a block the record is read again.
 * - It offers no `immediate` reads: a read that may miss must be able to wait for the fetch.
 * - The gas estimator's walk below the first synced block fails as unavailable (503): those blocks
 *   are the upstream's, and an estimate without them would differ from the upstream's.
 */
import { LRUCache } from "lru-cache";
import { createHash } from "node:crypto";
import { toHex } from "../ledger/address.js";
import type { LedgerInfo, ModuleEntry } from "../ledger/types.js";
import { type BaseStateKey, StateBeforeBaseError, StorageUnavailableError } from "./errors.js";
import { FIRST_SYNCED_RECORD } from "./followBase.js";
import type { FollowLagReport, ModulesPage, ResourcesPage, Snapshot, StandbyReads } from "./reader.js";
import type { WantsCode, WireReads } from "./pageReads.js";
import type { Storage } from "./storage.js";

/**
 * The base record that names what a miss needs fetched (`BaseStateWrite.what`): its kind, then the
 * SHA-256 (hex) of its canonical text, `kind:` and the hex of the address or table handle, then
 * `:` and the table key's hex or the resource type (what the record was named before digests, so a
 * migration renames old records: SQLite's and PostgreSQL's schema). At most 75 characters, whatever
 * the size of the key a client sent.
 */
export function baseRecordName(key: BaseStateKey): string {
  const text = createHash("sha256");
  switch (key.kind) {
    case "modules":
    case "resources":
      text.update(`${key.kind}:${toHex(key.address)}`);
      break;
    case "table_item":
      text.update(`table_item:${toHex(key.handle)}:`).update(toHex(key.key));
      break;
    case "resource":
      text.update(`resource:${toHex(key.address)}:`).update(key.type);
      break;
  }
  return `${key.kind}:${text.digest("hex")}`;
}

/** Base record names each of `BaseRecords`' two sets keeps (about 150 bytes each). */
export const BASE_RECORDS_KEPT = 50_000;

/**
 * What this process knows of base records, in bounded memory (least recently used names go first):
 * names the store has recorded (forgotten, the store is read again), and names whose state the
 * upstream answered absent, which are kept only here (a forgotten one is fetched again). A
 * replica's `HeadStartedStorage` and its base-state service share one.
 */
export class BaseRecords {
  private readonly recorded: LRUCache<string, true>;
  private readonly absent: LRUCache<string, true>;

  constructor(kept = BASE_RECORDS_KEPT) {
    this.recorded = new LRUCache({ max: kept });
    this.absent = new LRUCache({ max: kept });
  }

  /** Whether `what` is known stored or known absent: a read needs nothing fetched for it. */
  has(what: string): boolean {
    return this.recorded.has(what) || this.absent.has(what);
  }

  noteRecorded(what: string): void {
    this.recorded.set(what, true);
  }

  /** The upstream's own "not found" of what `what` names, at the base (exact for good: the base never changes). */
  noteAbsent(what: string): void {
    this.absent.set(what, true);
  }

  /** How many names are held (for the tests of the bound). */
  get size(): number {
    return this.recorded.size + this.absent.size;
  }
}

/** A table key as a message names it: its first 32 bytes' hex, and its size when longer. */
export function keyText(key: Uint8Array): string {
  return key.length <= 32 ? toHex(key) : `${toHex(key.subarray(0, 32))}… (${key.length} bytes)`;
}

/**
 * Whether `store` may be a head-started ledger: it has a first-synced record above 0, or it holds
 * no block yet (a follower may be about to start it). A ledger with blocks and no record never gets one.
 */
export async function mayBeHeadStarted(store: Storage): Promise<boolean> {
  const hasBlock = (await store.getLedgerInfo(true).catch(() => null)) !== null;
  let first: bigint | null;
  try {
    first = await store.getBaseRecord(FIRST_SYNCED_RECORD);
  } catch {
    // A database whose schema predates the follower (opened read-only, unmigrated) has no record.
    return false;
  }
  return first !== null ? first > 0n : !hasBlock;
}

export class HeadStartedStorage implements Storage {
  readonly kind: Storage["kind"];
  /** Every read here may miss and be run again after a fetch: none is answered in the calling turn. */
  readonly immediate = null;
  readonly wire: WireReads | null;
  readonly standby: StandbyReads | null;
  /** The base version; null: no base (synced from genesis); undefined: not decided yet. */
  private base: bigint | null | undefined = undefined;

  constructor(
    /** The backend's storage, without the miss checks (what the base-state service reads and writes). */
    readonly inner: Storage,
    /** How far behind its upstream the ledger is, when a follower runs beside it. */
    private readonly lag: () => FollowLagReport | null = () => inner.followLag(),
    /** What is known of the base records (shared with the base-state service that fetches them). */
    readonly records: BaseRecords = new BaseRecords(),
  ) {
    this.kind = inner.kind;
    this.standby = inner.standby;
    const wire = inner.wire;
    // Summaries are local; a module page may need the account's base modules, as `readModules`.
    this.wire = wire && {
      readSummaries: (q) => wire.readSummaries(q),
      readModules: async (address, version, start, limit, code) => {
        const snap = await wire.readModules(address, version, start, limit, code);
        await this.checkModules(address, version, snap);
        return snap;
      },
    };
  }

  followLag(): FollowLagReport | null {
    return this.lag();
  }

  /**
   * The base version, or null for a ledger without one. A follower records its first version
   * before its first block commits, so once the ledger holds a block (read first) the record read
   * after it is final; before that it is read again on every call.
   */
  async baseVersion(): Promise<bigint | null> {
    if (this.base !== undefined) return this.base;
    const hasBlock = (await this.inner.getLedgerInfo(true)) !== null;
    const first = await this.inner.getBaseRecord(FIRST_SYNCED_RECORD);
    if (first !== null) this.base = first > 0n ? first - 1n : null;
    else if (hasBlock) this.base = null;
    return this.base ?? null;
  }

  // --- reads that may miss the base ---------------------------------------------------------------

  async readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Promise<Snapshot<Uint8Array | null> | null> {
    const snap = await this.inner.readTableItem(handle, key, version);
    const base = await this.baseVersion();
    const v = version ?? snap?.info.ledgerVersion;
    if (base === null || !snap || v === undefined || !inWindow(snap.info, v)) return snap;
    const newest = await this.inner.newestStateVersion({ kind: "table_item", handle, key }, v);
    if (newest !== null && newest >= base) return snap; // a synced write (or the base row) answers
    await this.requireRecord({ kind: "table_item", handle, key }, v, base, `table item ${keyText(key)} of table ${toHex(handle)}`);
    return snap;
  }

  async readModulesVersion(address: Uint8Array, version: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    const snap = await this.inner.readModulesVersion(address, version);
    await this.checkModules(address, version, snap);
    return snap;
  }

  async readModules(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number, code?: WantsCode): Promise<Snapshot<ModulesPage> | null> {
    const snap = await this.inner.readModules(address, version, start, limit, code);
    await this.checkModules(address, version, snap);
    return snap;
  }

  async readModule(address: Uint8Array, name: string, version: bigint | undefined, code?: WantsCode): Promise<Snapshot<ModuleEntry | null> | null> {
    const snap = await this.inner.readModule(address, name, version, code);
    await this.checkModules(address, version, snap);
    return snap;
  }

  async readResource(address: Uint8Array, type: string, version: bigint | undefined): Promise<Snapshot<string | null> | null> {
    const snap = await this.inner.readResource(address, type, version);
    const base = await this.baseVersion();
    const v = version ?? snap?.info.ledgerVersion;
    if (base === null || !snap || v === undefined || !inWindow(snap.info, v)) return snap;
    const newest = await this.inner.newestStateVersion({ kind: "resource", address, type }, v);
    if (newest !== null && newest >= base) return snap; // a synced write (or the base row) answers
    await this.requireRecord({ kind: "resource", address, type }, v, base, `resource ${type} of ${toHex(address)}`);
    return snap;
  }

  async readResources(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number): Promise<Snapshot<ResourcesPage> | null> {
    const snap = await this.inner.readResources(address, version, start, limit);
    const base = await this.baseVersion();
    const v = version ?? snap?.info.ledgerVersion;
    if (base === null || !snap || v === undefined || !inWindow(snap.info, v)) return snap;
    await this.requireRecord({ kind: "resources", address }, v, base, `resources of ${toHex(address)}`);
    return snap;
  }

  async getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null> {
    const base = await this.baseVersion();
    if (base !== null) {
      const newest = await this.inner.newestStateVersion({ kind: "resource", address, type }, version);
      if (newest === null || newest < base) await this.requireRecord({ kind: "resource", address, type }, version, base, `resource ${type} of ${toHex(address)}`);
    }
    return this.inner.getResource(address, type, version);
  }

  async getBlockByVersion(v: bigint) {
    const base = await this.baseVersion();
    if (base !== null && v <= base) {
      throw new StorageUnavailableError(`the block holding version ${v} is before this ledger's first synced block (version ${base + 1n}): not stored yet`);
    }
    return this.inner.getBlockByVersion(v);
  }

  /** A module read's snapshot stands once the account's base modules are stored (when it needs them). */
  private async checkModules(address: Uint8Array, version: bigint | undefined, snap: Snapshot<unknown> | null): Promise<void> {
    const base = await this.baseVersion();
    const v = version ?? snap?.info.ledgerVersion;
    if (base === null || !snap || v === undefined || !inWindow(snap.info, v)) return;
    await this.requireRecord({ kind: "modules", address }, v, base, `modules of ${toHex(address)}`);
  }

  /** Throws the typed miss unless the base record of `key` exists. */
  private async requireRecord(key: BaseStateKey, version: bigint, base: bigint, label: string): Promise<void> {
    const what = baseRecordName(key);
    if (this.records.has(what)) return;
    if ((await this.inner.getBaseRecord(what)) !== null) {
      this.records.noteRecorded(what);
      return;
    }
    throw new StateBeforeBaseError(
      key,
      version,
      base,
      `the ${label} at version ${version} is state from before this ledger's first synced block (version ${base + 1n}): this ledger starts at version ${base + 1n} of its chain and the state before it is fetched from the upstream only by serve --follow`,
    );
  }

  // --- everything else is the backend's ------------------------------------------------------------

  getChainId = () => this.inner.getChainId();
  initChain: Storage["initChain"] = (chainId) => this.inner.initChain(chainId);
  getLedgerInfo = (fresh?: boolean) => this.inner.getLedgerInfo(fresh);
  getModuleCode: Storage["getModuleCode"] = (codeHash) => this.inner.getModuleCode(codeHash);
  readSummaries: Storage["readSummaries"] = (q) => this.inner.readSummaries(q);
  readSummariesVersion: Storage["readSummariesVersion"] = (s, e) => this.inner.readSummariesVersion(s, e);
  getBlockByHeight: Storage["getBlockByHeight"] = (h) => this.inner.getBlockByHeight(h);
  getFirstBlockAtOrAfter: Storage["getFirstBlockAtOrAfter"] = (t) => this.inner.getFirstBlockAtOrAfter(t);
  getUserTxnGas: Storage["getUserTxnGas"] = (f, l) => this.inner.getUserTxnGas(f, l);
  errorKind: Storage["errorKind"] = (e) => this.inner.errorKind(e);
  fileProblem: Storage["fileProblem"] = () => this.inner.fileProblem();
  getFingerprints: Storage["getFingerprints"] = (f, t) => this.inner.getFingerprints(f, t);
  commitBlocks: Storage["commitBlocks"] = (w) => this.inner.commitBlocks(w);
  prepareBlocks: Storage["prepareBlocks"] = (w) => this.inner.prepareBlocks(w);
  commitPrepared: Storage["commitPrepared"] = (b) => this.inner.commitPrepared(b);
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
