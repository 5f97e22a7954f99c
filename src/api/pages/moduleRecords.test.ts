import { describe, expect, it } from "vitest";
import { codeHash } from "../../ledger/codeHash.js";
import { appModuleBytecode, frameworkModules } from "../../ingest/devnet/modules.js";
import { moduleAbi, moduleAbiJson, type MoveModuleAbi } from "../../move/abi.js";
import type { ModuleEntry } from "../../ledger/types.js";
import { closeJoined, ModuleRecords } from "./moduleRecords.js";
import { genesisModules, goldenNullAbiBytecodes, guidV9 } from "../../../test/helpers/moveFixtures.js";
import { jsonSerializer } from "../http/serialize.js";
import { ref } from "../http/operation.js";
import { moveModule, moveModuleBytecode } from "../schemas.js";

describe("ModuleRecords", () => {
  const guid = guidV9();

  it("serializes the module record once per hash, by its response schema", () => {
    const cache = new ModuleRecords();
    const h = codeHash(guid.bytecode);
    expect(cache.has(h)).toBe(false);
    const text = cache.record(h, guid.bytecode);
    expect(JSON.parse(text.toString("utf8"))).toEqual({ bytecode: "0x" + Buffer.from(guid.bytecode).toString("hex"), abi: guid.abi });
    // A hit never reads the bytes: passing garbage under the same hash still returns the kept record.
    expect(cache.record(h, new Uint8Array([1]))).toEqual(text);
    expect(cache.has(h)).toBe(true);
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

  const recordOf = (bytecode: Uint8Array) => `{"bytecode":"0x${Buffer.from(bytecode).toString("hex")}","abi":null}`;
  const moduleOf = (hash: string, carries: Partial<ModuleEntry>): ModuleEntry => ({ stateKey: new Uint8Array(), name: hash, codeHash: hash, ...carries });

  it("joins a page's records as the page lists them: held ones copied, the others written from their rows and kept", () => {
    const cache = new ModuleRecords();
    const held = cache.record("held", new Uint8Array([1, 2]), "null").toString();
    const rows = [
      moduleOf("text", { record: '{"bytecode":"0x03","abi":{"name":"ü"}}' }),
      moduleOf("held", {}),
      moduleOf("code", { bytecode: new Uint8Array([4]), abi: '{"stored":1}' }),
      moduleOf("junk", { bytecode: new Uint8Array([0xa1, 0x1c]) }),
      moduleOf("next", { record: '{"unlisted":1}' }),
    ];
    const records = ['{"bytecode":"0x03","abi":{"name":"ü"}}', held, '{"bytecode":"0x04","abi":{"stored":1}}', '{"bytecode":"0xa11c","abi":null}'];
    const joined = cache.join(rows, 4)!;
    expect(joined.body.toString("utf8")).toBe(`[${records.join(",")},`);
    for (let n = 1; n <= 4; n++) {
      expect(joined.ends[n - 1]).toBe(Buffer.byteLength(`[${records.slice(0, n).join(",")}`));
      expect(JSON.parse(closeJoined(cache.join(rows, 4)!, n).toString("utf8"))).toEqual(records.slice(0, n).map((r) => JSON.parse(r)));
    }
    expect(closeJoined(cache.join(rows, 0)!, 0).toString()).toBe("[]");
    // every listed record is now held, the unlisted one not
    expect(["text", "held", "code", "junk"].map((h) => cache.has(h))).toEqual([true, true, true, true]);
    expect(cache.has("next")).toBe(false);
    const again = cache.join([moduleOf("text", {}), moduleOf("code", {}), moduleOf("junk", {})], 3)!;
    expect(closeJoined(again, 3).toString("utf8")).toBe(`[${records[0]},${records[2]},${records[3]}]`);
  });

  it("answers null for a row that carries no code and whose record is not held, and keeps nothing of that page", () => {
    const cache = new ModuleRecords();
    expect(cache.join([moduleOf("a", { record: '{"a":1}' }), moduleOf("gone", {})], 2)).toBeNull();
    expect(cache.size).toBe(0);
  });

  it("holds records in a ring of its size, the oldest overwritten first, each held record byte for byte across many laps", () => {
    const max = 10_000;
    const cache = new ModuleRecords(max);
    const expected = new Map<string, string>();
    const order: string[] = [];
    let seed = 1;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    for (let i = 0; i < 3_000; i++) {
      const hash = `h${i}`;
      const bytecode = new Uint8Array(Math.floor(random() * 1_500)).fill(i % 251);
      const text = recordOf(bytecode);
      expected.set(hash, text);
      order.push(hash);
      if (random() < 0.5) expect(cache.record(hash, bytecode).toString()).toBe(text);
      else expect(closeJoined(cache.join([moduleOf(hash, { bytecode })], 1)!, 1).toString()).toBe(`[${text}]`);
      // the newest is held, what is held is a suffix of the records written, and its bytes are within the ring
      expect(cache.has(hash)).toBe(true);
      const held = order.filter((h) => cache.has(h));
      expect(held).toEqual(order.slice(order.length - held.length));
      expect(cache.bytes).toBe(held.reduce((n, h) => n + expected.get(h)!.length, 0));
      expect(cache.bytes).toBeLessThanOrEqual(max);
      if (i % 97 === 0) for (const h of held) expect(cache.record(h, new Uint8Array()).toString(), h).toBe(expected.get(h));
    }
    // a full ring holds most of its bytes: at least what remains after the largest record's worth
    expect(cache.bytes).toBeGreaterThan(max - 2 * (3_000 + 30));
  });

  it("writes again at the newest end a record a page lists while it is among the oldest, so it outlives records written after it", () => {
    const bytecode = (fill: number) => new Uint8Array(100).fill(fill);
    const length = recordOf(bytecode(0)).length;
    const cache = new ModuleRecords(10 * length);
    for (let i = 0; i < 10; i++) cache.record(`r${i}`, bytecode(i));
    // r0 is the oldest; listing it keeps it through the next ten records, r1 is not listed
    expect(closeJoined(cache.join([moduleOf("r0", {})], 1)!, 1).toString()).toBe(`[${recordOf(bytecode(0))}]`);
    for (let i = 10; i < 18; i++) cache.record(`r${i}`, bytecode(i));
    expect(cache.has("r0")).toBe(true);
    expect(cache.has("r1")).toBe(false);
    expect(cache.record("r0", new Uint8Array()).toString()).toBe(recordOf(bytecode(0)));
    // a record listed while among the newest is not written again
    const bytes = cache.bytes;
    cache.join([moduleOf("r17", {})], 1);
    expect(cache.bytes).toBe(bytes);
  });

  it("sends a record larger than the whole bound without keeping it", () => {
    const cache = new ModuleRecords(1_000);
    cache.record("a", new Uint8Array(10));
    const big = cache.record("big", new Uint8Array(4_000));
    expect(big.length).toBeGreaterThan(cache.maxBytes);
    expect(cache.has("big")).toBe(false);
    expect(cache.has("a")).toBe(true);
    expect(closeJoined(cache.join([moduleOf("big", { bytecode: new Uint8Array(4_000) })], 1)!, 1).length).toBe(big.length + 2);
    expect(cache.has("big")).toBe(false);
  });

  it("keeps nothing with a bound of 0, and still builds every record", () => {
    const cache = new ModuleRecords(0);
    const h = codeHash(guid.bytecode);
    const text = cache.record(h, guid.bytecode);
    expect(JSON.parse(text.toString("utf8")).abi).toEqual(guid.abi);
    expect(closeJoined(cache.join([moduleOf(h, { bytecode: guid.bytecode })], 1)!, 1).toString()).toBe(`[${text.toString()}]`);
    expect(cache.has(h)).toBe(false);
    expect(cache.size).toBe(0);
  });

  it("rejects a negative bound", () => {
    expect(() => new ModuleRecords(-1)).toThrow(RangeError);
  });
});
