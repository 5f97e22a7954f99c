import { describe, expect, it } from "vitest";
import { formatPruneWindow, parsePruneWindow } from "./pruning.js";

describe("pruning window", () => {
  it("parses versions and chain-time durations, and names a bad value", () => {
    expect(parsePruneWindow("90000000")).toEqual({ kind: "versions", versions: 90000000n });
    expect(parsePruneWindow("7d")).toMatchObject({ kind: "time", micros: 7n * 86_400_000_000n });
    expect(parsePruneWindow("12h")).toMatchObject({ kind: "time", micros: 12n * 3_600_000_000n });
    expect(formatPruneWindow(parsePruneWindow(" 30m "))).toBe("30m");
    for (const bad of ["0", "-5", "7w", "", "1.5d", "0h"]) expect(() => parsePruneWindow(bad)).toThrow(JSON.stringify(bad));
  });
});
