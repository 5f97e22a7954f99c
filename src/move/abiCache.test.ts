import { describe, expect, it } from "vitest";
import { abiJson } from "./abi.js";
import { AbiCache, codeHash } from "./abiCache.js";
import { guidV9 } from "../../test/helpers/moveFixtures.js";

describe("AbiCache", () => {
  const guid = guidV9();

  it("returns the ABI JSON and decodes a module once", () => {
    const cache = new AbiCache(4);
    const h = codeHash(guid.bytecode);
    expect(cache.json(h, guid.bytecode)).toBe(JSON.stringify(guid.abi));
    // A hit never reads the bytes: passing garbage under the same hash still returns the cached text.
    expect(cache.json(h, new Uint8Array([1, 2, 3]))).toBe(JSON.stringify(guid.abi));
    expect(cache.size).toBe(1);
  });

  it("prints the module record once per hash, exactly as the node sends it", () => {
    const cache = new AbiCache(4);
    const h = codeHash(guid.bytecode);
    const text = cache.record(h, guid.bytecode);
    expect(JSON.parse(text.toString("utf8"))).toEqual({ bytecode: "0x" + Buffer.from(guid.bytecode).toString("hex"), abi: guid.abi });
    expect(cache.record(h, new Uint8Array([1]))).toBe(text);
    const junk = new Uint8Array([0xa1, 0x1c, 0xeb, 0x0b, 0x03]);
    expect(cache.record(codeHash(junk), junk).toString()).toBe('{"bytecode":"0xa11ceb0b03","abi":null}');
  });

  it("caches undecodable modules as null", () => {
    const cache = new AbiCache();
    const junk = new Uint8Array([0xa1, 0x1c, 0xeb, 0x0b]);
    expect(cache.json(codeHash(junk), junk)).toBe("null");
    expect(abiJson(junk)).toBe("null");
  });

  it("stays bounded, evicting the oldest entry", () => {
    const cache = new AbiCache(2);
    cache.json("a", new Uint8Array());
    cache.json("b", new Uint8Array());
    cache.json("c", new Uint8Array());
    expect(cache.size).toBe(2);
  });

  it("rejects a non-positive bound", () => {
    expect(() => new AbiCache(0)).toThrow(RangeError);
  });
});
