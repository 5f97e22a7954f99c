import { describe, expect, it } from "vitest";
import { moduleAbi } from "./abi.js";
import { buildModule } from "./builder.js";
import { decodeModule } from "./decoder.js";
import { Table } from "./format.js";
import { guidV9 } from "../../test/helpers/moveFixtures.js";
import { Writer } from "./writer.js";

type Tables = Partial<Record<Table, Uint8Array | number[]>>;

/** Assembles a module from raw table contents (kind order, contiguous), for targeted corruption. */
function raw(version: number, tables: Tables, selfIdx = 0, rawVersion?: number): Uint8Array {
  const w = new Writer().bytes([0xa1, 0x1c, 0xeb, 0x0b]).u32(rawVersion ?? (version >= 7 ? (0x0a000000 | version) >>> 0 : version));
  const entries = Object.entries(tables).filter(([, b]) => b!.length > 0) as [string, Uint8Array | number[]][];
  w.uleb(entries.length);
  let off = 0;
  for (const [k, b] of entries) {
    w.u8(Number(k)).uleb(off).uleb(b.length);
    off += b.length;
  }
  for (const [, b] of entries) w.bytes(b);
  return w.uleb(selfIdx).toBytes();
}

const bytes = (...parts: (number | number[] | string)[]): number[] =>
  parts.flatMap((p) => (typeof p === "string" ? [p.length, ...Buffer.from(p, "latin1")] : p));
const ADDR0 = new Array<number>(32).fill(0);

/** The smallest valid module: `0x0::m`, nothing in it. */
const minimal: Tables = {
  [Table.MODULE_HANDLES]: [0, 0],
  [Table.IDENTIFIERS]: bytes("m"),
  [Table.ADDRESS_IDENTIFIERS]: ADDR0,
};

/**
 * `0x0::m` with one public function `f(u64)` whose body is `code` (count = instructions). The
 * signatures are 0: `()`, 1: `(u64)`; identifiers 0 "m", 1 "f".
 */
function withCode(version: number, count: number, code: number[], extra: Tables = {}, fhExtra: number[] = []): Uint8Array {
  const handleTail = [...(version >= 7 ? [1] : []), ...(version >= 8 ? [0] : [])];
  return raw(version, {
    [Table.MODULE_HANDLES]: [0, 0],
    [Table.FUNCTION_HANDLES]: [0, 1, 1, 0, 0, ...handleTail, ...fhExtra],
    [Table.SIGNATURES]: [0, 1, 0x03],
    [Table.IDENTIFIERS]: bytes("m", "f"),
    [Table.ADDRESS_IDENTIFIERS]: ADDR0,
    [Table.FUNCTION_DEFS]: [0, 1, 0, 0, 0, count, ...code],
    ...extra,
  });
}
const ABORT0 = [0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0x27]; // LD_U64 0; ABORT

describe("decodeModule accepts well-formed modules", () => {
  it("decodes the minimal module", () => {
    expect(moduleAbi(raw(6, minimal))).toEqual({ address: "0x0", name: "m", friends: [], exposed_functions: [], structs: [] });
  });

  it("decodes a function body for every version 5..10", () => {
    for (let v = 5; v <= 10; v++) expect(moduleAbi(withCode(v, 2, ABORT0))?.exposed_functions).toHaveLength(1);
  });

  it("accepts both version forms: plain and with the Aptos flag bits", () => {
    expect(decodeModule(raw(7, minimal, 0, 7))?.version).toBe(7);
    expect(decodeModule(raw(6, minimal, 0, 0x0a000006))?.version).toBe(6);
    const guid = guidV9().bytecode.slice();
    guid[4] = 10; // version 10: the node's VERSION_MAX
    expect(moduleAbi(guid)).not.toBeNull();
  });

  it("accepts trailing bytes after the self module handle index, as the reference does", () => {
    const m = raw(6, minimal);
    expect(moduleAbi(Uint8Array.from([...m, 1, 2, 3]))).not.toBeNull();
  });

  it("accepts <SELF> and <SELF>_N identifiers and '$' from v9", () => {
    expect(decodeModule(raw(6, { ...minimal, [Table.IDENTIFIERS]: bytes("m", "<SELF>", "<SELF>_12") }))).not.toBeNull();
    expect(decodeModule(raw(9, { ...minimal, [Table.IDENTIFIERS]: bytes("m", "a$b", "$x") }))).not.toBeNull();
  });

  it("accepts each feature at the first version that has it (controls for the rejections below)", () => {
    const ok: [string, Uint8Array][] = [
      ["vector op in v4", withCode(4, 2, [0x41, 1, 0x02])],
      ["LD_U16 in v6", withCode(6, 2, [0x48, 0, 0, 0x02])],
      ["closure call in v8", withCode(8, 2, [0x5a, 1, 0x02])],
      ["LD_I8 in v9", withCode(9, 2, [0x5b, 0, 0x02])],
      ["ABORT_MSG in v10", withCode(10, 2, [0x68, 0x02])],
      ["branch in range", withCode(6, 2, [0x05, 1, 0x02])],
      ["local in range", withCode(6, 2, [0x0a, 0, 0x02])],
      ["call in range", withCode(6, 2, [0x11, 0, 0x02])],
      ["access specifier", withCode(7, 2, ABORT0, { [Table.FUNCTION_HANDLES]: [0, 1, 1, 0, 0, 2, 1, 1, 1, 1, 1] })],
      ["function attribute", withCode(8, 2, ABORT0, { [Table.FUNCTION_HANDLES]: [0, 1, 1, 0, 0, 1, 1, 2] })],
      ["u16 token in v6", raw(6, { ...minimal, [Table.SIGNATURES]: [1, 0x0d] })],
      ["function token in v8", raw(8, { ...minimal, [Table.SIGNATURES]: [1, 0x10, 0, 1, 1, 0x03, 0x01] })],
      ["signed token in v9", raw(9, { ...minimal, [Table.SIGNATURES]: [1, 0x16] })],
      ["enum in v7", raw(7, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0, 0], [Table.STRUCT_DEFS]: [0, 3, 1, 0, 0] })],
      ["metadata in v5", raw(5, { ...minimal, [Table.METADATA]: [1, 0x61, 0] })],
      ["friend in v2", raw(2, { ...minimal, [Table.FRIEND_DECLS]: [0, 0] })],
      ["field handle in range", raw(6, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0, 0], [Table.STRUCT_DEFS]: [0, 2, 1, 0, 0x03], [Table.FIELD_HANDLES]: [0, 0] })],
    ];
    for (const [what, m] of ok) expect(decodeModule(m), what).not.toBeNull();
  });

  it("accepts signature tokens nested 255 deep", () => {
    const sig = [1, ...new Array(255).fill(0x0a), 0x02];
    expect(decodeModule(raw(6, { ...minimal, [Table.SIGNATURES]: sig }))).not.toBeNull();
  });
});

describe("decodeModule rejects what the node's deserializer or bounds checker rejects", () => {
  const cases: [string, Uint8Array][] = [
    ["empty input", new Uint8Array()],
    ["wrong magic", Uint8Array.from([0xa1, 0x1c, 0xeb, 0x0c, 6, 0, 0, 0, 0])],
    ["version 0", raw(0, minimal, 0, 0)],
    ["version 11", raw(11, minimal, 0, 11)],
    ["version 11 with the flag", raw(11, minimal, 0, 0x0a00000b)],
    ["other high version bits", raw(6, minimal, 0, 0x01000006)],
    ["table count above 255", Uint8Array.from([0xa1, 0x1c, 0xeb, 0x0b, 6, 0, 0, 0, 0x80, 0x02])],
    ["a non-canonical ULEB", Uint8Array.from([0xa1, 0x1c, 0xeb, 0x0b, 6, 0, 0, 0, 0x80, 0x00])],
    ["an overflowing ULEB", Uint8Array.from([0xa1, 0x1c, 0xeb, 0x0b, 6, 0, 0, 0, 1, 7, ...new Array(9).fill(0xff), 0x7f])],
    ["no module handles", raw(6, { [Table.IDENTIFIERS]: bytes("m") })],
    ["self handle out of range", raw(6, minimal, 1)],
    ["missing self handle index", raw(6, minimal).subarray(0, raw(6, minimal).length - 1)],
    ["module handle address out of range", raw(6, { ...minimal, [Table.MODULE_HANDLES]: [1, 0] })],
    ["module handle name out of range", raw(6, { ...minimal, [Table.MODULE_HANDLES]: [0, 1] })],
    ["an empty identifier", raw(6, { ...minimal, [Table.IDENTIFIERS]: bytes("m", "") })],
    ["a lone underscore", raw(6, { ...minimal, [Table.IDENTIFIERS]: bytes("m", "_") })],
    ["an identifier starting with a digit", raw(6, { ...minimal, [Table.IDENTIFIERS]: bytes("m", "1a") })],
    ["an identifier with a dash", raw(6, { ...minimal, [Table.IDENTIFIERS]: bytes("m", "a-b") })],
    ["a non-ASCII identifier", raw(6, { ...minimal, [Table.IDENTIFIERS]: bytes("m", "caf\xe9") })],
    ["'$' before v9", raw(8, { ...minimal, [Table.IDENTIFIERS]: bytes("m", "a$b") })],
    ["an identifier longer than 255", raw(6, { ...minimal, [Table.IDENTIFIERS]: [...bytes("m"), 0x80, 0x02, ...new Array(256).fill(0x61)] })],
    ["a truncated address", raw(6, { ...minimal, [Table.ADDRESS_IDENTIFIERS]: ADDR0.slice(1) })],
    ["a signature token nested 256 deep", raw(6, { ...minimal, [Table.SIGNATURES]: [1, ...new Array(256).fill(0x0a), 0x02] })],
    ["an unknown token", raw(6, { ...minimal, [Table.SIGNATURES]: [1, 0x17] })],
    ["u16 before v6", raw(5, { ...minimal, [Table.SIGNATURES]: [1, 0x0d] })],
    ["a function type before v8", raw(7, { ...minimal, [Table.SIGNATURES]: [1, 0x10, 0, 0, 0] })],
    ["a signed integer before v9", raw(8, { ...minimal, [Table.SIGNATURES]: [1, 0x11] })],
    ["a struct token with no struct handles", raw(6, { ...minimal, [Table.SIGNATURES]: [1, 0x08, 0] })],
    ["a struct instantiation of arity 0", raw(6, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0, 1, 0, 0], [Table.SIGNATURES]: [1, 0x0b, 0, 0] })],
    ["a struct instantiation with the wrong arity", raw(6, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0, 1, 0, 0], [Table.SIGNATURES]: [1, 0x0b, 0, 2, 1, 1] })],
    ["a generic struct used without arguments", raw(6, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0, 1, 0, 0], [Table.SIGNATURES]: [1, 0x08, 0] })],
    ["an ability set above 0xF", raw(6, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0x10, 0] })],
    ["a phantom flag above 1", raw(6, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0, 1, 0, 2] })],
    ["a table offset gap", Uint8Array.from([0xa1, 0x1c, 0xeb, 0x0b, 6, 0, 0, 0, 1, 0x07, 1, 2, 1, 0x6d, 0])],
    ["an empty table", Uint8Array.from([0xa1, 0x1c, 0xeb, 0x0b, 6, 0, 0, 0, 1, 0x07, 0, 0, 0])],
    ["a duplicate table", Uint8Array.from([0xa1, 0x1c, 0xeb, 0x0b, 6, 0, 0, 0, 2, 0x07, 0, 2, 0x07, 2, 2, 1, 0x6d, 1, 0x6e, 0])],
    ["an unknown table kind", Uint8Array.from([0xa1, 0x1c, 0xeb, 0x0b, 6, 0, 0, 0, 1, 0x09, 0, 2, 1, 0x6d, 0])],
    ["a table larger than the input", Uint8Array.from([0xa1, 0x1c, 0xeb, 0x0b, 6, 0, 0, 0, 1, 0x07, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 0x6d, 0])],
    ["a metadata table before v5", raw(4, { ...minimal, [Table.METADATA]: [1, 0x61, 0] })],
    ["a friend table in v1", raw(1, { ...minimal, [Table.FRIEND_DECLS]: [0, 0] })],
    ["an enum table before v7", raw(6, { ...minimal, [Table.STRUCT_VARIANT_HANDLES]: [0, 0] })],
    ["a metadata key above 1023 bytes", raw(6, { ...minimal, [Table.METADATA]: [0x80, 0x08, ...new Array(1024).fill(0x61), 0] })],
    ["a friend out of range", raw(6, { ...minimal, [Table.FRIEND_DECLS]: [0, 5] })],
    ["a struct def with a bad flag", raw(6, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0, 0], [Table.STRUCT_DEFS]: [0, 4] })],
    ["a struct def with an unknown handle", raw(6, { ...minimal, [Table.STRUCT_DEFS]: [0, 1] })],
    ["an enum before v7", raw(6, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0, 0], [Table.STRUCT_DEFS]: [0, 3, 1, 0, 0] })],
    ["an enum with zero variants", raw(7, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0, 0], [Table.STRUCT_DEFS]: [0, 3, 0] })],
    ["a field type parameter out of range", raw(6, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0, 0], [Table.STRUCT_DEFS]: [0, 2, 1, 0, 0x09, 0] })],
    ["a field handle past the field count", raw(6, { ...minimal, [Table.STRUCT_HANDLES]: [0, 0, 0, 0], [Table.STRUCT_DEFS]: [0, 2, 1, 0, 0x03], [Table.FIELD_HANDLES]: [0, 1] })],
    ["a function handle with an unknown signature", withCode(6, 2, ABORT0, { [Table.SIGNATURES]: [0] })],
    ["a function signature type parameter out of range", withCode(6, 2, ABORT0, { [Table.SIGNATURES]: [0, 1, 0x09, 0] })],
    ["an invalid visibility byte", withCode(6, 2, ABORT0, { [Table.FUNCTION_DEFS]: [0, 2, 0, 0, 0, 2, ...ABORT0] })],
    ["invalid function flag bits", withCode(6, 2, ABORT0, { [Table.FUNCTION_DEFS]: [0, 1, 8, 0, 0, 2, ...ABORT0] })],
    ["acquires of an unknown struct", withCode(6, 2, ABORT0, { [Table.FUNCTION_DEFS]: [0, 1, 0, 1, 0, 0, 2, ...ABORT0] })],
    ["a truncated code unit", withCode(6, 3, ABORT0)],
    ["an unknown opcode", withCode(6, 1, [0x69])],
    ["a branch past the code", withCode(6, 2, [0x05, 2, 0x02])],
    ["a local out of range", withCode(6, 2, [0x0a, 1, 0x02])],
    ["a call of an unknown function", withCode(6, 2, [0x11, 1, 0x02])],
    ["a constant out of range", withCode(6, 2, [0x07, 0, 0x02])],
    ["a vector op before v4", withCode(3, 2, [0x41, 1, 0x02])],
    ["LD_U16 before v6", withCode(5, 2, [0x48, 0, 0, 0x02])],
    ["an enum op before v7", withCode(6, 2, [0x56, 0, 0x02])],
    ["a closure op before v8", withCode(7, 2, [0x5a, 0, 0x02])],
    ["LD_I8 before v9", withCode(8, 2, [0x5b, 0, 0x02])],
    ["ABORT_MSG before v10", withCode(9, 2, [0x68, 0x02])],
    ["a bad access specifier", withCode(7, 2, ABORT0, {}, []).map((b, i, a) => (i === indexOfHandleTail(a) ? 3 : b))],
    ["an unknown function attribute", withCode(8, 2, ABORT0, { [Table.FUNCTION_HANDLES]: [0, 1, 1, 0, 0, 1, 1, 3] })],
  ];

  it.each(cases)("%s", (_what, input) => {
    expect(decodeModule(input)).toBeNull();
    expect(moduleAbi(input)).toBeNull();
  });

  it("rejects every strict prefix of the minimal module", () => {
    const m = raw(6, minimal);
    for (let n = 0; n < m.length; n++) expect(moduleAbi(m.subarray(0, n))).toBeNull();
  });
});

/** Position of the access-specifier option byte in a `withCode(7, …)` module (first 0x01 after `0 1 1 0 0`). */
function indexOfHandleTail(a: Uint8Array): number {
  const at = Buffer.from(a).indexOf(Buffer.from([0, 1, 1, 0, 0, 1]));
  return at + 5;
}

describe("truncation of real modules", () => {
  const modules: [string, Uint8Array][] = [
    ["0x1::guid v9", guidV9().bytecode],
    [
      "a built v8 module",
      buildModule(
        {
          address: "0xcafe",
          name: "m",
          structs: [{ name: "E", variants: [{ name: "A", fields: [{ name: "f", type: "|u64|bool" }] }] }],
          functions: [{ name: "v", view: true, params: ["0x1::object::Object<u8>"], returns: ["u64"] }],
        },
        { version: 8 },
      ),
    ],
  ];
  it.each(modules)("%s is null at every byte offset", (_name, m) => {
    expect(moduleAbi(m)).not.toBeNull();
    for (let n = 0; n < m.length; n++) expect(moduleAbi(m.subarray(0, n))).toBeNull();
  });
});
