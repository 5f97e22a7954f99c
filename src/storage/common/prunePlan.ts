/**
 * What a prune deletes, both backends': the versioned state tables and the plan for raising the
 * oldest version (`pruneLoop.ts` runs it over a dialect's steps).
 */
import type { PruneResult, PruneTarget } from "../contracts/writer.js";

/**
 * The versioned state tables, `(key columns…, version, value column)`: a read at V takes the newest
 * row of a key with version <= V, and a NULL value column is a deletion. (A module's value column
 * is its code hash: it is NULL exactly when the module was deleted, in both schemas.)
 */
export const STATE_TABLES = [
  { table: "modules", keys: ["address", "state_key"], value: "code_hash" },
  { table: "table_items", keys: ["handle_id", "key"], value: "value" },
  { table: "resources", keys: ["address_id", "type_id"], value: "value" },
] as const;

export type StateTable = (typeof STATE_TABLES)[number];

export const NOTHING_PRUNED: Readonly<PruneResult> = Object.freeze({ transactionsDeleted: 0, stateRowsDeleted: 0, blocksDeleted: 0 });

/**
 * What a prune deletes, inside the transaction that raises the oldest version to
 * `oldestVersion` (readers see the raise and the deletions together):
 * - transactions (and their per-sender summary rows) below `oldestVersion`;
 * - blocks below `oldestBlockHeight`;
 * - in each of `stateTables`: rows at or below `oldestVersion` that a newer row of the same key at
 *   or below it supersedes, and deletions at or below it (the oldest row of their key now, so
 *   they hide nothing). Only keys written in [`previousOldestVersion`, `oldestVersion`] can hold
 *   such rows: after every prune each key keeps at most one row at or below the oldest version.
 *
 * The newest value of every key at or below `oldestVersion` is kept, so every read at a version
 * >= `oldestVersion` stays exact.
 */
export interface PrunePlan extends PruneTarget {
  previousOldestVersion: bigint;
  stateTables: readonly StateTable[];
}

/**
 * The plan for raising the oldest version to `target`, given the oldest version stored now (null:
 * an empty ledger). Null when there is nothing to do: an empty ledger, or a target that does not
 * raise the oldest version (a prune never moves it back).
 */
export function planPrune(oldestVersionNow: bigint | null, target: PruneTarget): PrunePlan | null {
  if (oldestVersionNow === null || target.oldestVersion <= oldestVersionNow) return null;
  return { ...target, previousOldestVersion: oldestVersionNow, stateTables: STATE_TABLES };
}
