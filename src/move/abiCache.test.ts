import { describe, expect, it } from "vitest";
import { abiJson } from "./abi.js";
import { AbiCache } from "./abiCache.js";
import { codeHash } from "../ledger/codeHash.js";
import { guidV9 } from "../../test/helpers/moveFixtures.js";

describe("AbiCache", () => {
  const guid = guidV9();

  it("prints the module record once per hash, exactly as the node sends it", () => {
    const cache = new AbiCache(4);
    const h = codeHash(guid.bytecode);
    expect(cache.cachedRecord(h)).toBeUndefined();
    const text = cache.record(h, guid.bytecode);
    expect(JSON.parse(text.toString("utf8"))).toEqual({ bytecode: "0x" + Buffer.from(guid.bytecode).toString("hex"), abi: guid.abi });
    // A hit never reads the bytes: passing garbage under the same hash still returns the cached record.
    expect(cache.record(h, new Uint8Array([1]))).toBe(text);
    expect(cache.cachedRecord(h)).toBe(text);
    expect(cache.size).toBe(1);
  });

  it("caches undecodable modules with a null ABI", () => {
    const cache = new AbiCache();
    const junk = new Uint8Array([0xa1, 0x1c, 0xeb, 0x0b, 0x03]);
    expect(cache.record(codeHash(junk), junk).toString()).toBe('{"bytecode":"0xa11ceb0b03","abi":null}');
    expect(abiJson(junk)).toBe("null");
  });

  it("stays bounded, evicting the least recently used entry", () => {
    const cache = new AbiCache(2);
    cache.record("a", new Uint8Array());
    cache.record("b", new Uint8Array());
    cache.cachedRecord("a");
    cache.record("c", new Uint8Array());
    expect(cache.size).toBe(2);
    expect(cache.cachedRecord("a")).toBeDefined();
    expect(cache.cachedRecord("b")).toBeUndefined();
  });

  it("rejects a non-positive bound", () => {
    expect(() => new AbiCache(0)).toThrow(RangeError);
  });
});
