/**
 * Which reads of a replica may need state from before its first synced block, and which: one
 * declaration a read, from the read's arguments. `HeadStartedStorage` applies them to the read
 * of the same name wherever the store has it (the reader, a capability such as `wire`); a read
 * without one is the store's alone (summaries, code by hash, blocks above the base, gas rows).
 */
import type { BaseStateKey } from "../contracts/errors.js";
import type { LedgerReader } from "../contracts/reader.js";
import type { PageReads, WireReads } from "../contracts/pageReads.js";

/** What one call of a read needs of the base. */
export type BaseNeed =
  /**
   * The state of `state` at `version` (the snapshot's ledger version when undefined), judged
   * after the read against the position of the snapshot it answers.
   */
  | { kind: "snapshot"; state: BaseStateKey; version: bigint | undefined }
  /** The state of `state` at `version`, judged before the read (a read that answers no position). */
  | { kind: "at"; state: BaseStateKey; version: bigint }
  /** The block holding `version`: blocks at or below the base are the upstream's, never stored. */
  | { kind: "block"; version: bigint };

/** The reads the rules may name: the reader's and its capabilities'. */
type Reads = LedgerReader & PageReads & WireReads;

/** A read's rule: its arguments to what the call needs. */
type Rule<F> = F extends (...args: infer A) => unknown ? (...args: A) => BaseNeed : never;

export type BaseStateRules = { [K in keyof Reads]?: Rule<Reads[K]> };

const modules = (address: Uint8Array, version: bigint | undefined): BaseNeed => ({ kind: "snapshot", state: { kind: "modules", address }, version });

/**
 * An account's module pages, its modules' version and a single module need its whole module
 * list at the base, its resources pages its whole resource list; a table item or a resource
 * only its own.
 */
export const BASE_STATE_RULES: BaseStateRules = {
  readTableItem: (handle, key, version) => ({ kind: "snapshot", state: { kind: "table_item", handle, key }, version }),
  readModulesVersion: modules,
  readModules: modules,
  readModule: (address, _name, version) => modules(address, version),
  readResource: (address, type, version) => ({ kind: "snapshot", state: { kind: "resource", address, type }, version }),
  readResources: (address, version) => ({ kind: "snapshot", state: { kind: "resources", address }, version }),
  getResource: (address, type, version) => ({ kind: "at", state: { kind: "resource", address, type }, version }),
  getBlockByVersion: (version) => ({ kind: "block", version }),
};
