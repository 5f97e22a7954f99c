/**
 * What the API's page strategy (`src/api/pages/`) reads of a store besides its domain reads
 * (`LedgerReader`): the versions that name a cached page, a page with only the code its caller
 * does not hold, a page as the JSON text the API sends, and the position reads in the calling turn
 * where the store can. Both dialects implement it; `test/store.suite.ts` and
 * `test/wireReads.test.ts` check it. The rules of `reader.ts` hold for every read here.
 */
import type { LedgerInfo, ModuleEntry } from "../../ledger/types.js";
import type { ModulesPage, Snapshot, SummaryQuery } from "./reader.js";

/** Which listed modules' code a page read brings with it (by code hash); absent: none. */
export type WantsCode = (codeHash: string) => boolean;

/**
 * Capability of a store whose reads run in process (SQLite): the position reads answered in the
 * calling turn, with the same answers and guarantees as the methods of the same name.
 */
export interface ImmediateReads {
  getLedgerInfo(fresh?: boolean): LedgerInfo | null;
  readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Snapshot<Uint8Array | null> | null;
  readModulesVersion(address: Uint8Array, version: bigint | undefined): Snapshot<bigint | null> | null;
  readSummariesVersion(sender: Uint8Array, end: bigint | undefined): Snapshot<bigint | null> | null;
}

/** A summaries page as the JSON text the API sends for its rows (`WireReads.readSummaries`). */
export interface SummariesJsonPage {
  newest: bigint | null;
  /** Version of the page's first summary; null for an empty page. */
  first: bigint | null;
  /** The rows as a JSON array of `TransactionSummary` objects, ascending by version. */
  json: string;
}

/**
 * Capability of a store whose database writes the API's JSON text for less than the rows and the
 * API's own encoding cost. Its bytes must equal what the API's serializer writes for the rows the
 * plain reads give: `test/wireReads.test.ts` checks it.
 */
export interface WireReads {
  /** `readSummaries`, the page as its JSON text. */
  readSummaries(q: SummaryQuery): Promise<Snapshot<SummariesJsonPage> | null>;
  /**
   * `PageReads.readModules`, each wanted module as its JSON `record` (`{"bytecode":…,"abi":…}`)
   * where its ABI text is stored, else with its `bytecode`.
   */
  readModules(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number, code: WantsCode): Promise<Snapshot<ModulesPage> | null>;
}

export interface PageReads {
  /** The position reads in the calling turn, or null where every read is a round trip. */
  readonly immediate: ImmediateReads | null;
  /** Pages as wire-ready JSON text, or null where the database does not write it. */
  readonly wire: WireReads | null;

  /**
   * The version of the newest module write or deletion of `address` at or below `version`, with the
   * position: every module page of the account is the same at every version with the same answer.
   */
  readModulesVersion(address: Uint8Array, version: bigint | undefined): Promise<Snapshot<bigint | null> | null>;
  /** The version of the sender's newest transaction at or below `end`, with the position. */
  readSummariesVersion(sender: Uint8Array, end: bigint | undefined): Promise<Snapshot<bigint | null> | null>;
  /** `LedgerReader.readModules`, with the code of the rows `code` wants. */
  readModules(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number, code?: WantsCode): Promise<Snapshot<ModulesPage> | null>;
  /** `LedgerReader.readModule`, with its bytecode and ABI text only when `code` wants them (a store may bring them anyway). */
  readModule(address: Uint8Array, name: string, version: bigint | undefined, code?: WantsCode): Promise<Snapshot<ModuleEntry | null> | null>;
}
