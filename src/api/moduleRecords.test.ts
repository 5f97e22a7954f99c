import { describe, expect, it } from "vitest";
import { codeHash } from "../ledger/codeHash.js";
import { appModuleBytecode, frameworkModules } from "../ingest/devnetModules.js";
import { moduleAbi, moduleAbiJson, type MoveModuleAbi } from "../move/abi.js";
import { ModuleRecords, RECORD_OVERHEAD } from "./moduleRecords.js";
import { genesisModules, goldenNullAbiBytecodes, guidV9 } from "../../test/helpers/moveFixtures.js";
import { jsonSerializer } from "./serialize.js";
import { ref } from "./operation.js";
import { moveModule, moveModuleBytecode } from "./schemas.js";

describe("ModuleRecords", () => {
  const guid = guidV9();

  it("serializes the module record once per hash, by its response schema", () => {
    const cache = new ModuleRecords();
    const h = codeHash(guid.bytecode);
    expect(cache.cached(h)).toBeUndefined();
    const text = cache.record(h, guid.bytecode);
    expect(JSON.parse(text.toString("utf8"))).toEqual({ bytecode: "0x" + Buffer.from(guid.bytecode).toString("hex"), abi: guid.abi });
    // A hit never reads the bytes: passing garbage under the same hash still returns the cached record.
    expect(cache.record(h, new Uint8Array([1]))).toBe(text);
    expect(cache.cached(h)).toBe(text);
    expect(cache.size).toBe(1);
  });

  it("writes what the MoveModuleBytecode schema's serializer writes, byte for byte", () => {
    const serialize = jsonSerializer<{ bytecode: string; abi: unknown }>(ref(moveModuleBytecode));
    const cache = new ModuleRecords();
    const modules = [guid.bytecode, ...genesisModules().map((m) => m.bytecode), ...goldenNullAbiBytecodes(), new Uint8Array()];
    for (const bytecode of modules) {
      const expected = serialize({ bytecode: `0x${Buffer.from(bytecode).toString("hex")}`, abi: moduleAbi(bytecode) });
      expect(cache.record(codeHash(bytecode), bytecode).toString("utf8")).toBe(expected);
    }
  });

  // Storage keeps `moduleAbiJson` text (it may not import the API): it must be the serializer's bytes.
  const everyModule = () => [
    guid.bytecode,
    ...genesisModules().map((m) => m.bytecode),
    ...frameworkModules(),
    ...Array.from({ length: 8 }, (_, i) => appModuleBytecode(i * 7)),
    ...goldenNullAbiBytecodes(),
    new Uint8Array(),
  ];

  it("moduleAbiJson writes what the MoveModule schema's serializer writes, for every fixture and devnet module", () => {
    const serializeAbi = jsonSerializer<MoveModuleAbi>(ref(moveModule));
    let decoded = 0;
    for (const bytecode of everyModule()) {
      const abi = moduleAbi(bytecode);
      if (abi !== null) decoded++;
      expect(moduleAbiJson(bytecode)).toBe(abi === null ? "null" : serializeAbi(abi));
    }
    // the guid, 63 genesis modules, the devnet's framework and app modules; the null ones too
    expect(decoded).toBeGreaterThanOrEqual(1 + 63 + frameworkModules().length + 8);
  });

  it("builds from stored ABI text the record it decodes, byte for byte, without decoding", () => {
    for (const bytecode of everyModule()) {
      const h = codeHash(bytecode);
      const stored = new ModuleRecords().record(h, bytecode, moduleAbiJson(bytecode));
      expect(stored.toString("utf8")).toBe(new ModuleRecords().record(h, bytecode).toString("utf8"));
    }
    // The stored text is sent as it is: the bytes are not read for it.
    const junk = new Uint8Array([0xa1, 0x1c, 0xeb, 0x0b, 0x03]);
    expect(new ModuleRecords().record(codeHash(junk), junk, '{"stored":true}').toString()).toBe('{"bytecode":"0xa11ceb0b03","abi":{"stored":true}}');
  });

  it("caches undecodable modules with a null ABI", () => {
    const cache = new ModuleRecords();
    const junk = new Uint8Array([0xa1, 0x1c, 0xeb, 0x0b, 0x03]);
    expect(cache.record(codeHash(junk), junk).toString()).toBe('{"bytecode":"0xa11ceb0b03","abi":null}');
    expect(moduleAbi(junk)).toBeNull();
  });

  it("stays within its bound in bytes, each record counted with its overhead, least recently used out first", () => {
    const bytecode = (fill: number) => new Uint8Array(1_000).fill(fill); // a record of 2,000 hex digits and its frame
    const length = new ModuleRecords().record("x", bytecode(0)).length;
    const cache = new ModuleRecords(2 * (length + RECORD_OVERHEAD) + RECORD_OVERHEAD);
    cache.record("a", bytecode(1));
    cache.record("b", bytecode(2));
    expect(cache.bytes).toBe(2 * (length + RECORD_OVERHEAD));
    cache.cached("a");
    cache.record("c", bytecode(3));
    expect(cache.size).toBe(2);
    expect(cache.bytes).toBe(2 * (length + RECORD_OVERHEAD));
    expect(cache.cached("a")).toBeDefined();
    expect(cache.cached("b")).toBeUndefined();
    expect(cache.cached("c")!.toString()).toBe(`{"bytecode":"0x${"03".repeat(1_000)}","abi":null}`);
    // one record larger than the whole bound is sent, not kept
    const big = cache.record("big", new Uint8Array(4_000));
    expect(big.length).toBeGreaterThan(cache.maxBytes);
    expect(cache.cached("big")).toBeUndefined();
    expect(cache.cached("a")).toBeDefined();
  });

  it("keeps a record in a buffer of its own, not a slice of Node's shared pool", () => {
    const kept = new ModuleRecords().written("h", '{"bytecode":"0x00","abi":null}');
    expect(kept.byteOffset).toBe(0);
    expect(kept.buffer.byteLength).toBe(kept.length);
  });

  it("keeps nothing with a bound of 0, and still builds every record", () => {
    const cache = new ModuleRecords(0);
    const h = codeHash(guid.bytecode);
    const text = cache.record(h, guid.bytecode);
    expect(JSON.parse(text.toString("utf8")).abi).toEqual(guid.abi);
    expect(cache.cached(h)).toBeUndefined();
    expect(cache.has(h)).toBe(false);
    expect(cache.size).toBe(0);
  });

  it("rejects a negative bound", () => {
    expect(() => new ModuleRecords(-1)).toThrow(RangeError);
  });
});
