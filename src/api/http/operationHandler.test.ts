import { describe, expect, it } from "vitest";
import { ApiError } from "./apiError.js";
import { inputParser, versionsReader } from "./operationHandler.js";

describe("inputParser", () => {
  const parse = inputParser([
    ["address", "address"],
    ["ledger_version", "u64"],
    ["limit", "u16"],
    ["key", "hex"],
  ]);

  it("parses each property by its kind and leaves the absent ones undefined", () => {
    const out = parse({ address: "0x1", ledger_version: "42", key: "0x0a0b" });
    expect(Buffer.from(out.address as Uint8Array).toString("hex")).toBe("0".repeat(63) + "1");
    expect(out.ledger_version).toBe(42n);
    expect(out.limit).toBeUndefined();
    expect(Buffer.from(out.key as Uint8Array).toString("hex")).toBe("0a0b");
    expect(parse(undefined)).toEqual({ address: undefined, ledger_version: undefined, limit: undefined, key: undefined });
  });

  it("answers a bad value with the 400 of its kind, naming the property and the value", () => {
    expect(() => parse({ key: "0xabc" })).toThrow(ApiError);
    expect(() => parse({ key: "0xabc" })).toThrow(/key: decode hex-encoded string\("0xabc"\) failed/);
  });
});

describe("versionsReader", () => {
  it("reads the version to read at, or the bounds, by the operation's parameter names", () => {
    const at = versionsReader({ at: "ledger_version" });
    expect(at({ ledger_version: 7n, limit: undefined } as never)).toEqual({ at: 7n, bounds: [] });
    expect(at({})).toEqual({ at: undefined, bounds: [] });
    const bounds = versionsReader({ bounds: ["start_version", "end_version"] });
    expect(bounds({ end_version: 9n })).toEqual({ at: undefined, bounds: [undefined, 9n] });
    expect(Object.keys(bounds({}))).toEqual(Object.keys(at({})));
    expect(versionsReader(null)({ ledger_version: 3n })).toEqual({ at: undefined, bounds: [] });
  });
});
