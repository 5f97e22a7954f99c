/**
 * The pruning window (docs/decisions.md §9): a number of versions (`90000000`, the reference node's
 * default) or a duration of chain time (`7d`, `12h`, `30m`, `45s`) measured back from the newest
 * block's timestamp. The oldest kept version is the first version of the first block kept whole.
 */
import type { Storage } from "../storage/storage.js";
import type { PruneResult, PruneTarget } from "../storage/writer.js";

export type PruneWindow = { kind: "versions"; versions: bigint } | { kind: "time"; micros: bigint; text: string };

export const DEFAULT_PRUNE_WINDOW = "90000000";
/** A devnet keeps a small window, so a long-running `npm start` stays small on disk. */
export const DEVNET_PRUNE_WINDOW = "2000";

const UNITS: Record<string, bigint> = { s: 1_000_000n, m: 60_000_000n, h: 3_600_000_000n, d: 86_400_000_000n };

/** Parses a window setting; throws a message naming the bad value. */
export function parsePruneWindow(text: string): PruneWindow {
  const t = text.trim();
  if (/^[0-9]{1,19}$/.test(t) && BigInt(t) > 0n) return { kind: "versions", versions: BigInt(t) };
  const m = /^([0-9]{1,12})([smhd])$/.exec(t);
  if (m && BigInt(m[1]!) > 0n) return { kind: "time", micros: BigInt(m[1]!) * UNITS[m[2]!]!, text: t };
  throw new Error(
    `invalid prune window ${JSON.stringify(text)}: give a positive number of versions (90000000) or a duration (7d, 12h, 30m, 45s)`,
  );
}

export function formatPruneWindow(w: PruneWindow): string {
  return w.kind === "versions" ? w.versions.toString() : w.text;
}

/** What finding the prune target reads: the ledger position and blocks. */
export type PruneTargetSource = Pick<Storage, "getLedgerInfo" | "getBlockByVersion" | "getBlockByHeight" | "getFirstBlockAtOrAfter">;

/** What pruning to the window needs: the target's reads, and the prune itself. */
export type PruneStore = PruneTargetSource & Pick<Storage, "prune">;

/** Where the window puts the oldest kept block now, or null when nothing is to be pruned. */
export async function pruneTarget(store: PruneTargetSource, window: PruneWindow): Promise<PruneTarget | null> {
  const info = await store.getLedgerInfo(true);
  if (!info) return null;
  let block;
  if (window.kind === "versions") {
    const keepFrom = info.ledgerVersion + 1n - window.versions;
    if (keepFrom <= info.oldestVersion) return null;
    const holding = await store.getBlockByVersion(keepFrom);
    if (!holding) return null;
    block = holding.firstVersion === keepFrom ? holding : await store.getBlockByHeight(holding.height + 1n);
  } else {
    const since = info.timestampUsec > window.micros ? info.timestampUsec - window.micros : 0n;
    block = await store.getFirstBlockAtOrAfter(since);
  }
  if (!block || block.height <= info.oldestBlockHeight) return null;
  return { oldestVersion: block.firstVersion, oldestBlockHeight: block.height };
}

/** Prunes to the window now. */
export async function pruneNow(store: PruneStore, window: PruneWindow): Promise<(PruneResult & PruneTarget) | null> {
  const target = await pruneTarget(store, window);
  if (!target) return null;
  return { ...target, ...(await store.prune(target)) };
}
