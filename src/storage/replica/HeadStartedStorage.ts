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
 *   only in memory (docs/following.md, "The replica's base state, decided").
 * - Whether the ledger has a base is decided on the reads, not once: a follower records its first
 *   version before its first block, so until the ledger holds a block the record is read again.
 * - It offers no `immediate` reads: a read that may miss must be able to wait for the fetch.
 * - The gas estimator's walk below the first synced block fails as unavailable (503): those blocks
 *   are the upstream's, and an estimate without them would differ from the upstream's.
 * - Which read needs what is declared once a read (`baseStateRules.ts`); every other call is the
 *   backend's, forwarded whole (`forwardMethods`).
 */
import { toHex } from "../../ledger/address.js";
import type { LedgerInfo } from "../../ledger/types.js";
import { type BaseStateKey, StateBeforeBaseError, StorageUnavailableError } from "../contracts/errors.js";
import { FIRST_SYNCED_RECORD } from "../contracts/followBase.js";
import type { CommitSignal, FollowLagReport, Snapshot, StandbyReads } from "../contracts/reader.js";
import type { WireReads } from "../contracts/pageReads.js";
import type { Storage } from "../contracts/storage.js";
import { Forwarding, forwardMethods, type Method, type MethodsOf } from "../common/forwarding.js";
import { BaseRecords, baseRecordName, keyText } from "./baseRecords.js";
import { BASE_STATE_RULES, type BaseNeed } from "./baseStateRules.js";

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

export class HeadStartedStorage extends Forwarding<Omit<MethodsOf<Storage>, "followLag">>() implements Storage {
  readonly kind: Storage["kind"];
  /** Every read here may miss and be run again after a fetch: none is answered in the calling turn. */
  readonly immediate = null;
  readonly wire: WireReads | null;
  readonly standby: StandbyReads | null;
  readonly commitSignal: CommitSignal | null;
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
    super();
    this.kind = inner.kind;
    this.standby = inner.standby;
    this.commitSignal = inner.commitSignal;
    this.wire = inner.wire && this.checked(inner.wire);
    forwardMethods(this, inner, (name, read) => this.withRule(name, read));
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

  /** A capability of the backend with its reads' rules applied. */
  private checked<T extends object>(capability: T): T {
    const reads = {};
    forwardMethods(reads, capability, (name, read) => this.withRule(name, read));
    return reads as T;
  }

  /** `read` (bound to the backend), checked by the rule of its name when it has one. */
  private withRule(name: string, read: Method): Method {
    const rule = (BASE_STATE_RULES as Record<string, ((...args: unknown[]) => BaseNeed) | undefined>)[name];
    if (!rule) return read;
    return async (...args: unknown[]) => {
      const need = rule(...args);
      if (need.kind !== "snapshot") await this.checkBefore(need);
      const answer = (await read(...args)) as unknown;
      if (need.kind === "snapshot") await this.checkSnapshot(need.state, need.version, answer as Snapshot<unknown> | null);
      return answer;
    };
  }

  /** A read's snapshot stands once what it needs at the base is stored (when it needs it). */
  private async checkSnapshot(state: BaseStateKey, version: bigint | undefined, snap: Snapshot<unknown> | null): Promise<void> {
    const base = await this.baseVersion();
    const v = version ?? snap?.info.ledgerVersion;
    if (base === null || !snap || v === undefined || !inWindow(snap.info, v)) return;
    await this.requireState(state, v, base);
  }

  /** Before a read that answers no position: its state, or its block, must be this ledger's. */
  private async checkBefore(need: Exclude<BaseNeed, { kind: "snapshot" }>): Promise<void> {
    const base = await this.baseVersion();
    if (base === null) return;
    if (need.kind === "block") {
      if (need.version <= base) {
        throw new StorageUnavailableError(
          `the block holding version ${need.version} is before this ledger's first synced block (version ${base + 1n}): not stored yet`,
        );
      }
      return;
    }
    await this.requireState(need.state, need.version, base);
  }

  /**
   * Throws the typed miss unless `state` at `version` is this ledger's: a single key some synced
   * block wrote at or below the version (or whose base row is stored), or a key or list whose
   * base record exists.
   */
  private async requireState(state: BaseStateKey, version: bigint, base: bigint): Promise<void> {
    if (state.kind === "table_item" || state.kind === "resource") {
      const newest = await this.inner.newestStateVersion(state, version);
      if (newest !== null && newest >= base) return; // a synced write (or the base row) answers
    }
    const what = baseRecordName(state);
    if (this.records.has(what)) return;
    if ((await this.inner.getBaseRecord(what)) !== null) {
      this.records.noteRecorded(what);
      return;
    }
    throw new StateBeforeBaseError(
      state,
      version,
      base,
      `the ${stateLabel(state)} at version ${version} is state from before this ledger's first synced block (version ${base + 1n}): this ledger starts at version ${base + 1n} of its chain and the state before it is fetched from the upstream only by serve --follow`,
    );
  }
}

/** What a miss's message calls the state it needs. */
function stateLabel(state: BaseStateKey): string {
  switch (state.kind) {
    case "table_item":
      return `table item ${keyText(state.key)} of table ${toHex(state.handle)}`;
    case "resource":
      return `resource ${state.type} of ${toHex(state.address)}`;
    case "modules":
      return `modules of ${toHex(state.address)}`;
    case "resources":
      return `resources of ${toHex(state.address)}`;
  }
}

function inWindow(info: LedgerInfo, v: bigint): boolean {
  return v >= info.oldestVersion && v <= info.ledgerVersion;
}
