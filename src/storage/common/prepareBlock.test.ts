import { describe, expect, it } from "vitest";
import { codeHash } from "../../ledger/codeHash.js";
import { keepLastWrites, prepareBlock } from "./prepareBlock.js";
import { packResourceValue, unpackResourceValue } from "./resourceValue.js";
import { storedAbiText } from "./storedCodes.js";
import type { BlockWrite } from "../contracts/writer.js";

const addr = (b: number) => new Uint8Array(32).fill(b);
const BLOCK: BlockWrite = {
  block: { height: 1n, epoch: 1n, timestampUsec: 1n, firstVersion: 1n, lastVersion: 2n, endInfo: null },
  transactions: [],
  modules: [
    { version: 1n, address: addr(1), name: "m", stateKey: new Uint8Array([1]), bytecode: new Uint8Array([9, 9]) },
    { version: 1n, address: addr(1), name: "m", stateKey: new Uint8Array([1]), bytecode: new Uint8Array([7]) },
    { version: 2n, address: addr(1), name: "m", stateKey: new Uint8Array([1]), bytecode: null },
  ],
  tableItems: [
    { version: 1n, handle: addr(2), key: new Uint8Array([1]), value: new Uint8Array([1]) },
    { version: 1n, handle: addr(2), key: new Uint8Array([1]), value: new Uint8Array([2]) },
  ],
  resources: [
    { version: 1n, address: addr(3), type: "0x1::a::B", json: '{"x":"1"}' },
    { version: 2n, address: addr(3), type: "0x1::a::B", json: null },
  ],
};

describe("prepareBlock", () => {
  it("keeps the last write of a key at a version, in order, and the block itself when no key repeats", () => {
    const kept = keepLastWrites(BLOCK);
    expect(kept.modules.map((m) => [m.version, m.bytecode])).toEqual([
      [1n, new Uint8Array([7])],
      [2n, null],
    ]);
    expect(kept.tableItems.map((t) => t.value)).toEqual([new Uint8Array([2])]);
    expect(kept.resources).toBe(BLOCK.resources);
    expect(keepLastWrites(kept)).toBe(kept);
  });

  it("gives each module its code hash and stored ABI text, and each resource its packed value", () => {
    const p = prepareBlock(BLOCK);
    expect(p.modules.map((m) => m.codeHash)).toEqual([codeHash(new Uint8Array([7])), null]);
    expect(p.modules.map((m) => m.abi)).toEqual([storedAbiText(p.modules[0]!.write), null]);
    expect(p.resources.map((r) => (r.value === null ? null : unpackResourceValue(r.write.address, r.value)))).toEqual(['{"x":"1"}', null]);
  });

  it("packs the values with the packer it is given, in the order of the non-null values", () => {
    const packed = [Buffer.from("first")];
    const p = prepareBlock(BLOCK, () => packed.shift()!);
    expect(p.resources.map((r) => r.value)).toEqual([Buffer.from("first"), null]);
  });

  it("stores a value packed where it was parsed as it is, and packs only the values given as text", () => {
    const stored = packResourceValue(addr(3), '{"y":"2"}');
    const block: BlockWrite = {
      ...BLOCK,
      resources: [{ version: 1n, address: addr(3), type: "0x1::a::C", json: new Uint8Array(stored) }, ...BLOCK.resources],
    };
    const asked: unknown[] = [];
    const p = prepareBlock(block, (r) => {
      asked.push(r.json);
      return Buffer.from("text");
    });
    expect(asked).toEqual(['{"x":"1"}']);
    expect(p.resources.map((r) => r.value)).toEqual([stored, Buffer.from("text"), null]);
    expect(unpackResourceValue(addr(3), p.resources[0]!.value!)).toBe('{"y":"2"}');
  });
});
