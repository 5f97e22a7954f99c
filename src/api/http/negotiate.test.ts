import { describe, expect, it } from "vitest";
import { acceptType, namedType } from "./negotiate.js";

describe("content negotiation by q-value (docs/decisions.md §3)", () => {
  it("ranks by q, then header order; ignores other parameters and case", () => {
    expect(namedType("application/x-bcs")).toBe("bcs");
    expect(namedType("application/json;q=0.1, application/x-bcs")).toBe("bcs");
    expect(namedType("application/json; q=0.9, application/x-bcs;q=0.95")).toBe("bcs");
    expect(namedType("application/x-bcs;q=0.5, application/json;q=0.5")).toBe("bcs");
    expect(namedType("application/json, application/x-bcs")).toBe("json");
    expect(namedType("text/html, Application/X-BCS;q=0.1, application/json;q=0.05")).toBe("bcs");
    expect(namedType(" application/json ; charset=utf-8")).toBe("json");
    expect(namedType("application/json;charset=utf-8;q=1.000, application/x-bcs;q=0.999")).toBe("json");
  });

  it("excludes q=0 and entries whose weight does not parse", () => {
    expect(namedType("application/json;q=0, application/x-bcs;q=0.001")).toBe("bcs");
    expect(namedType("application/x-bcs;q=0")).toBeNull();
    expect(namedType("application/x-bcs;q=0.000, application/json;q=0.2")).toBe("json");
    for (const bad of ["1.5", "-1", "abc", "", "0.1234", "2"]) {
      expect(namedType(`application/x-bcs;q=${bad}, application/json;q=0.1`), bad).toBe("json");
    }
  });

  it("answers the same for a header seen before, and after more distinct headers than it keeps", () => {
    const h = "application/json;q=0.2, application/x-bcs;q=0.3";
    expect(namedType(h)).toBe("bcs");
    for (let i = 0; i < 1000; i++) expect(namedType(`application/json;q=0.${i % 10}, text/x-${i}`)).toBe(i % 10 === 0 ? null : "json");
    expect(namedType(h)).toBe("bcs");
  });

  it("names nothing for a missing header, */*, wildcards or look-alikes, and then answers JSON", () => {
    for (const a of [undefined, "", "*/*", "application/*", "application/jsonx", "text/application/json", ",,,"]) {
      expect(namedType(a), String(a)).toBeNull();
      expect(acceptType(a), String(a)).toBe("json");
    }
  });
});
