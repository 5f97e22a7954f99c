/** The fairness bound of base-state fetches: a client's share per second and at once, the node's budget. */
import { describe, expect, it } from "vitest";
import { FetchRefusedError } from "../../storage/contracts/errors.js";
import { FetchShares } from "./fetchShares.js";

const refusal = (f: () => unknown): FetchRefusedError => {
  try {
    f();
  } catch (e) {
    if (e instanceof FetchRefusedError) return e;
    throw e;
  }
  throw new Error("admitted");
};

describe("FetchShares", () => {
  it("admits a client's share, then refuses it (429, Retry-After) while another client is still admitted", () => {
    const shares = new FetchShares({ perClientPerSecond: 3, concurrent: 100 });
    const released = [1, 2, 3].map(() => shares.admit("203.0.113.7"));
    for (const r of released) r();
    const e = refusal(() => shares.admit("203.0.113.7"));
    expect([e.scope, e.retryAfterSec]).toEqual(["client", 1]);
    expect(e.message).toBe("Per IP rate limit exceeded. Limit: 3 fetches of state from the upstream per second (state this node has not stored yet); retry after 1 s");
    expect(typeof shares.admit("198.51.100.9")).toBe("function");
  });

  it("bounds a client's fetches running at once by its share, whatever its tokens", async () => {
    const shares = new FetchShares({ perClientPerSecond: 2, concurrent: 100 });
    const first = shares.admit("a");
    shares.admit("a");
    // a second later the bucket is full again, but two are still running
    await new Promise((r) => setTimeout(r, 1100));
    expect(refusal(() => shares.admit("a")).scope).toBe("client");
    first();
    expect(typeof shares.admit("a")).toBe("function");
  });

  it("refuses past the node's budget (503 scope) and never refuses the node's own fetches", () => {
    const shares = new FetchShares({ perClientPerSecond: 10, concurrent: 2 });
    const a = shares.admit("a");
    shares.admit("b");
    const e = refusal(() => shares.admit("c"));
    expect([e.scope, e.retryAfterSec]).toEqual(["node", 1]);
    expect(typeof shares.admit(null)).toBe("function");
    expect(shares.inFlight).toBe(3);
    a();
    a();
    expect(shares.inFlight).toBe(2);
  });
});
