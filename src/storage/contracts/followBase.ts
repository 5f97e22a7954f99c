/**
 * A replica's base bookkeeping, used only by the follower and the replica's base-state code: what
 * a follower that started at a chain's head fetched from its upstream, and when (issue 16). The
 * fetched rows sit in the state tables at the version just before the first synced block, so the
 * reader's reads need nothing new.
 */
import type { ModuleWrite, ResourceWrite, TableItemWrite } from "./writer.js";

/**
 * The record of the first version this ledger synced, written before its first block commits:
 * absent for a ledger synced from genesis or imported.
 */
export const FIRST_SYNCED_RECORD = "first_synced_version";

/**
 * State fetched from the upstream because no synced block wrote it: rows at the version just
 * before the first synced block. `what` names what was fetched and is recorded with the rows, once.
 */
export interface BaseStateWrite {
  what: string;
  /** The upstream version the rows were read at (recorded; the rows carry their own version). */
  fetchedAt: bigint;
  modules: ModuleWrite[];
  tableItems: TableItemWrite[];
  resources: ResourceWrite[];
}

/** One state key of the versioned tables a follower may fetch. */
export type StateKeyRef =
  | { kind: "table_item"; handle: Uint8Array; key: Uint8Array }
  | { kind: "resource"; address: Uint8Array; type: string };

export interface FollowBase {
  /** The upstream version `what` was fetched at, or null when it never was. */
  getBaseRecord(what: string): Promise<bigint | null>;
  /** Writes the rows and records `what` in one transaction; when `what` is recorded already, nothing. */
  writeBaseState(write: BaseStateWrite): Promise<void>;
  /** The version of the newest row (write or deletion) of `key` at or below `upTo`, or null. */
  newestStateVersion(key: StateKeyRef, upTo: bigint): Promise<bigint | null>;
}
