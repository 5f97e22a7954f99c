/**
 * The page strategy, in one place: what the page operations (modules, transaction summaries) and
 * the handler ask of it, over the store's page reads (`PageReads`).
 * - Encoded pages are cached under a key naming everything they depend on (`PageCache`), and the
 *   module records a modules page is joined from are held by code hash (`ModuleRecords`).
 * - The position reads are answered in the calling turn where the store can (SQLite), else
 *   through a promise (`positions`).
 * - On a store whose reads are round trips, a request the cache has not seen reads its page with
 *   the position in one read (`firstAsk`): one round trip where there were two. A request seen
 *   before asks for the position alone: its page is likely cached.
 * - A page that ends at a committed version never changes: the position alone names it
 *   (`summariesVersion`).
 * - A page read brings the code of the modules whose record is not held, and comes as JSON text
 *   where the store writes it (`WireReads`).
 */
import type { LedgerInfo, ModuleEntry } from "../../ledger/types.js";
import type { PageReads, SummariesJsonPage } from "../../storage/contracts/pageReads.js";
import type { LedgerReader, ModulesPage, Snapshot, SummariesPage, SummaryQuery } from "../../storage/contracts/reader.js";
import type { ApiConfig } from "../config.js";
import { EncodedBody } from "../http/compression.js";
import type { WireFormat } from "../http/negotiate.js";
import { ModuleRecords } from "./moduleRecords.js";
import { after, type NowOrLater, type PositionReads } from "./nowOrLater.js";
import { PageCache, type Page } from "./pageCache.js";

/** What a cached page's answer sends or checks besides its body. */
export interface PageMeta {
  cursor: string | null | undefined;
  firstVersion: bigint | null | undefined;
}

const ALL = () => true;

export class Pages {
  /** Encoded pages of the page operations, keyed by what they depend on. */
  readonly cache: PageCache;
  /** Module records (a module's bytecode as hex and its ABI) by code hash, for the modules pages. */
  readonly records: ModuleRecords;
  /** The store's position reads, in the calling turn where the store can. */
  readonly positions: PositionReads;
  /** Whether every read is a round trip (no reads in the calling turn). */
  readonly roundTrips: boolean;

  constructor(
    private readonly store: LedgerReader & PageReads,
    config: Pick<ApiConfig, "pageCacheBytes" | "moduleCacheBytes">,
  ) {
    this.cache = new PageCache(config.pageCacheBytes);
    this.records = new ModuleRecords(config.moduleCacheBytes);
    this.positions = store.immediate ?? store;
    this.roundTrips = store.immediate === null;
  }

  /**
   * Whether to read the page of `request` (its key without the store's version) with the position:
   * on a store whose reads are round trips, the first time the cache hears of the request.
   */
  firstAsk(request: string): boolean {
    return this.roundTrips && this.cache.firstAsk(request);
  }

  /** The page cached under `key`, while pruning has not passed its first version. */
  cached(key: string, at: LedgerInfo): Page<PageMeta> | undefined {
    const page = this.cache.get<PageMeta>(key);
    const first = page?.meta.firstVersion;
    return first === undefined || first === null || first >= at.oldestVersion ? page : undefined;
  }

  /** An encoded answer read for `key`, offered to the cache (kept once the key is asked again). */
  offer(key: string, answer: { body?: unknown; cursor?: string | null; firstVersion?: bigint | null }): void {
    if (answer.body instanceof EncodedBody) this.cache.offer<PageMeta>(key, { body: answer.body, meta: { cursor: answer.cursor, firstVersion: answer.firstVersion } });
  }

  /** The version naming an account's module pages at `version`, with the position. */
  modulesVersion(address: Uint8Array, version: bigint | undefined) {
    return this.positions.readModulesVersion(address, version);
  }

  /**
   * The version naming a sender's summaries pages that end at `end`, with the position. A page
   * that ends at a committed version never changes: the position alone names it (`value` null).
   */
  summariesVersion(sender: Uint8Array, end: bigint | undefined): NowOrLater<Snapshot<bigint | null> | null> {
    if (end === undefined) return this.positions.readSummariesVersion(sender, end);
    return after(this.positions.getLedgerInfo(), (info) => {
      if (info === null) return null;
      return end <= info.ledgerVersion ? { info, value: null } : this.positions.readSummariesVersion(sender, end);
    });
  }

  /**
   * A modules page with its code, in one snapshot with the position: in JSON the code of the modules
   * whose record is not held (as records where the store writes them), in BCS all.
   */
  readModules(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number, format: WireFormat): Promise<Snapshot<ModulesPage> | null> {
    if (format !== "json") return this.store.readModules(address, version, start, limit, ALL);
    const wanted = this.wantsCode;
    return this.store.wire ? this.store.wire.readModules(address, version, start, limit, wanted) : this.store.readModules(address, version, start, limit, wanted);
  }

  /** One module with its code where its record is not held (JSON), else with its code. */
  readModule(address: Uint8Array, name: string, version: bigint | undefined, format: WireFormat): Promise<Snapshot<ModuleEntry | null> | null> {
    return this.store.readModule(address, name, version, format === "json" ? this.wantsCode : undefined);
  }

  /** A summaries page with the position: its JSON text where the store writes it, else its rows. */
  readSummaries(q: SummaryQuery, format: WireFormat): Promise<Snapshot<SummariesPage | SummariesJsonPage> | null> {
    return format === "json" && this.store.wire ? this.store.wire.readSummaries(q) : this.store.readSummaries(q);
  }

  /** The modules whose code a JSON page read brings: those whose record is not held. */
  private readonly wantsCode = (codeHash: string): boolean => !this.records.has(codeHash);
}
