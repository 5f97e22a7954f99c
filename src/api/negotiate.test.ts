import { describe, expect, it } from "vitest";
import { acceptType, namedType } from "./negotiate.js";

describe("content negotiation (DECISIONS §12)", () => {
  it("takes the first entry that is exactly JSON or BCS, ignoring parameters, q-values and case", () => {
    expect(namedType("application/x-bcs")).toBe("bcs");
    expect(namedType("text/html, Application/X-BCS;q=0.1, application/json")).toBe("bcs");
    expect(namedType("application/json;q=0.1, application/x-bcs")).toBe("json");
    expect(namedType(" application/json ; charset=utf-8")).toBe("json");
  });

  it("names nothing for a missing header, */*, wildcards or look-alikes, and then answers JSON", () => {
    for (const a of [undefined, "", "*/*", "application/*", "application/jsonx", "text/application/json", ",,,"]) {
      expect(namedType(a), String(a)).toBeNull();
      expect(acceptType(a), String(a)).toBe("json");
    }
  });
});
