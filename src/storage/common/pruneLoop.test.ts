import { describe, expect, it } from "vitest";
import { runPrune, type OldestStep, type PruneSteps } from "./pruneLoop.js";

const TARGET = { oldestVersion: 30n, oldestBlockHeight: 3n };

/** Steps that record what the loop asked, moving the oldest version `moves` times and walking `walks` batches. */
function recorded(walkResumes: boolean, moves: number, walks: number) {
  const calls: string[] = [];
  let moved = 0;
  let walked = 0;
  const steps: PruneSteps = {
    walkResumes,
    moveOldest: async (): Promise<OldestStep> => {
      calls.push("move");
      if (moves === 0) return { moved: false, done: true, transactionsDeleted: 0, blocksDeleted: 0 };
      moved++;
      return { moved: true, done: moved === moves, transactionsDeleted: 10, blocksDeleted: 1 };
    },
    walkState: async () => {
      calls.push("walk");
      walked++;
      return { deleted: 5, done: walked >= walks };
    },
    finish: async () => {
      calls.push("finish");
    },
  };
  return { steps, calls };
}

describe("runPrune", () => {
  it("moves the oldest version step by step, then walks the state, then finishes, summing what each step deleted", async () => {
    const { steps, calls } = recorded(false, 3, 2);
    expect(await runPrune(steps, TARGET)).toEqual({ transactionsDeleted: 30, blocksDeleted: 3, stateRowsDeleted: 10 });
    expect(calls).toEqual(["move", "move", "move", "walk", "walk", "finish"]);
  });

  it("does nothing more when the oldest version does not move and the walk starts over each prune", async () => {
    const { steps, calls } = recorded(false, 0, 1);
    expect(await runPrune(steps, TARGET)).toEqual({ transactionsDeleted: 0, blocksDeleted: 0, stateRowsDeleted: 0 });
    expect(calls).toEqual(["move"]);
  });

  it("still finishes a stored walk when the oldest version does not move", async () => {
    const { steps, calls } = recorded(true, 0, 2);
    expect(await runPrune(steps, TARGET)).toEqual({ transactionsDeleted: 0, blocksDeleted: 0, stateRowsDeleted: 10 });
    expect(calls).toEqual(["move", "walk", "walk", "finish"]);
  });
});
