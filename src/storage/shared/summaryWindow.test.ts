import { describe, expect, it } from "vitest";
import { summaryRange, summaryWindow } from "./summaryWindow.js";

describe("summaryWindow", () => {
  it("builds the window whole from the query's four fields and the version, whatever else the query object holds", () => {
    const sender = new Uint8Array([1, 2]);
    const query = Object.assign({ sender, start: undefined, end: 40n, limit: 25 }, { format: "json" });
    const window = summaryWindow(query, 100n);
    expect(Object.keys(window)).toEqual(["sender", "start", "end", "limit", "ledgerVersion"]);
    expect(window).toEqual({ sender, start: undefined, end: 40n, limit: 25, ledgerVersion: 100n });
    expect(summaryRange(window)).toEqual({ direction: "backward", to: 40n, limit: 25 });
    expect(summaryRange(summaryWindow({ sender, start: 7n, limit: 3 }, 100n))).toEqual({ direction: "forward", from: 7n, to: 100n, limit: 3 });
  });
});
