/**
 * The prune loop both dialects run (`LedgerWriter.prune`), over the steps each offers. Every step
 * is a transaction of its own that leaves a correct ledger, so a prune cut off anywhere is exact
 * and the next one goes on:
 * 1. the oldest version moves up toward the target a block boundary at a time (what `planPrune`
 *    says goes: the transactions and blocks below it, in the same commit);
 * 2. then the state tables are walked, deleting the rows no read at or above the oldest version
 *    sees (superseded rows, and deletions that are the oldest row of their key);
 * 3. then what the dialect frees besides (SQLite: unused code, free pages).
 */
import type { PruneResult, PruneTarget } from "../contracts/writer.js";
import { NOTHING_PRUNED } from "./prunePlan.js";

/** One step of moving the oldest version up: whether it moved, whether it reached the target. */
export interface OldestStep {
  moved: boolean;
  done: boolean;
  transactionsDeleted: number;
  blocksDeleted: number;
}

/** What a dialect offers the loop for one prune: each method one bounded step. */
export interface PruneSteps {
  /**
   * Whether the state walk stores how far it got, so that a prune which moves nothing still
   * finishes a walk an earlier prune was cut off in (PostgreSQL); else the walk runs only after
   * the oldest version moved, from its start (SQLite).
   */
  readonly walkResumes: boolean;
  /** Moves the oldest version one step toward `target` (planned by `planPrune`). */
  moveOldest(target: PruneTarget): Promise<OldestStep>;
  /** One step of the state walk; `done` once it reached the oldest version. */
  walkState(): Promise<{ deleted: number; done: boolean }>;
  /** Frees what the dialect frees after the walk. */
  finish(): Promise<void>;
}

export async function runPrune(steps: PruneSteps, target: PruneTarget): Promise<PruneResult> {
  const total = { ...NOTHING_PRUNED };
  for (let first = true; ; first = false) {
    const step = await steps.moveOldest(target);
    if (first && !step.moved && !steps.walkResumes) return total;
    total.transactionsDeleted += step.transactionsDeleted;
    total.blocksDeleted += step.blocksDeleted;
    if (step.done) break;
  }
  for (;;) {
    const step = await steps.walkState();
    total.stateRowsDeleted += step.deleted;
    if (step.done) break;
  }
  await steps.finish();
  return total;
}
