/**
 * Pruning a store to a window (`src/ledger/pruning.ts`): where the window puts the oldest kept
 * block, read from the store, and the prune to it. The writers' prune loop, an import and the
 * server's prune command run it.
 */
import type { PruneWindow } from "../ledger/pruning.js";
import type { LedgerReader } from "../storage/contracts/reader.js";
import type { LedgerWriter, PruneResult, PruneTarget } from "../storage/contracts/writer.js";

/** What finding the prune target reads: the ledger position and blocks. */
export type PruneTargetSource = Pick<LedgerReader, "getLedgerInfo" | "getBlockByVersion" | "getBlockByHeight" | "getFirstBlockAtOrAfter">;

/** What pruning to the window needs: the target's reads, and the prune itself. */
export type PruneStore = PruneTargetSource & Pick<LedgerWriter, "prune">;

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
