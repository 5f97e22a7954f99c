import { describe, expect, it } from "vitest";
import { summaryRange, summaryWindow } from "./summaryWindow.js";

describe("summaryWindow", () => {
  it("gives the query's fields and the version, and the range they bound", () => {
    const sender = new Uint8Array([1, 2]);
    const window = summaryWindow({ sender, start: undefined, end: 40n, limit: 25 }, 100n);
    expect(window).toEqual({ sender, start: undefined, end: 40n, limit: 25, ledgerVersion: 100n });
    expect(summaryRange(window)).toEqual({ direction: "backward", to: 40n, limit: 25 });
    expect(summaryRange(summaryWindow({ sender, start: 7n, limit: 3 }, 100n))).toEqual({ direction: "forward", from: 7n, to: 100n, limit: 3 });
  });
});
