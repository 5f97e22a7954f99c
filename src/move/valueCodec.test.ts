import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FIXTURES } from "../../test/helpers/fixtures.js";
import type { MoveLayout, StructId } from "./layout.js";
import { decodeBcsValue, encodeJsonValue, ValueError } from "./valueCodec.js";

const ONE = Buffer.from("01".padStart(64, "0"), "hex");
const PRIM = (k: "bool" | "u8" | "u16" | "u32" | "u64" | "u128" | "u256" | "address" | "i8" | "i16" | "i32" | "i64" | "i128" | "i256"): MoveLayout => ({ k });
const VEC = (inner: MoveLayout): MoveLayout => ({ k: "vector", inner });
const STRING: MoveLayout = { k: "struct", tag: { address: ONE, module: "string", name: "String" }, fields: [{ name: "bytes", layout: VEC(PRIM("u8")) }] };
const tag = (name: string): StructId => ({ address: Buffer.from("ca".padStart(64, "0"), "hex"), module: "m", name });
const hex = (b: Uint8Array) => "0x" + Buffer.from(b).toString("hex");
const enc = (l: MoveLayout, v: unknown) => hex(encodeJsonValue(l, v, 1 << 20));
const dec = (l: MoveLayout, h: string) => JSON.parse(decodeBcsValue(l, Buffer.from(h.slice(2), "hex")));
const refused = (l: MoveLayout, v: unknown) => {
  try {
    encodeJsonValue(l, v, 1 << 20);
  } catch (e) {
    expect(e).toBeInstanceOf(ValueError);
    return (e as Error).message;
  }
  throw new Error(`encoded ${JSON.stringify(v)}`);
};

describe("recorded write_table_item changes", () => {
  const recorded = JSON.parse(readFileSync(`${FIXTURES}table_items/recorded_write_table_items.json`, "utf8")) as Array<{
    change: { key: string; value: string; data: { key: unknown; key_type: string; value: unknown; value_type: string } };
  }>;
  const layouts: Record<string, MoveLayout> = { address: PRIM("address"), u128: PRIM("u128") };
  it.each(recorded.map((r, i) => [i, r.change] as const))("change %i: the recorded JSON key encodes to the key bytes, the value bytes decode to the JSON value", (_i, c) => {
    expect(enc(layouts[c.data.key_type]!, c.data.key)).toBe(c.key);
    expect(dec(layouts[c.data.value_type]!, c.value)).toEqual(c.data.value);
    // and back: the decoded text is the node's JSON of the key
    expect(dec(layouts[c.data.key_type]!, c.key)).toBe(c.data.key);
  });
});

describe("JSON to BCS", () => {
  it("encodes each primitive as BCS", () => {
    expect(enc(PRIM("bool"), true)).toBe("0x01");
    expect(enc(PRIM("u8"), 255)).toBe("0xff");
    expect(enc(PRIM("u16"), 0x1234)).toBe("0x3412");
    expect(enc(PRIM("u32"), 1)).toBe("0x01000000");
    expect(enc(PRIM("u64"), "18446744073709551615")).toBe("0xffffffffffffffff");
    expect(enc(PRIM("u64"), "+5")).toBe("0x0500000000000000");
    expect(enc(PRIM("u256"), "1")).toBe("0x01" + "00".repeat(31));
    expect(enc(PRIM("i8"), -1)).toBe("0xff");
    expect(enc(PRIM("i64"), "-2")).toBe("0xfeffffffffffffff");
    expect(enc(PRIM("address"), "0x1")).toBe(hex(ONE));
    expect(enc(VEC(PRIM("u8")), "0x0102")).toBe("0x020102");
    expect(enc(VEC(PRIM("u8")), "ABcd")).toBe("0x02abcd");
    expect(enc(VEC(PRIM("u64")), ["1", "2"])).toBe("0x0201000000000000000200000000000000");
    expect(enc(STRING, "abc")).toBe("0x03616263");
  });

  it("encodes a struct's fields in declaration order, whatever the JSON's order, ignoring extra members", () => {
    const pair: MoveLayout = { k: "struct", tag: tag("Pair"), fields: [{ name: "b", layout: PRIM("u8") }, { name: "a", layout: STRING }] };
    expect(enc(pair, { a: "x", b: 7, extra: true })).toBe("0x070178");
  });

  it("refuses a JSON value that is not of the type, in the reference's words", () => {
    expect(refused(PRIM("u8"), 256)).toBe("invalid value: integer `256`, expected u8");
    expect(refused(PRIM("u8"), -1)).toBe("invalid value: integer `-1`, expected u8");
    expect(refused(PRIM("u8"), "1")).toBe('invalid type: string "1", expected u8');
    expect(refused(PRIM("u8"), 1.5)).toBe("invalid type: floating point `1.5`, expected u8");
    expect(refused(PRIM("bool"), 1)).toBe("invalid type: integer `1`, expected a boolean");
    expect(refused(PRIM("u64"), 1)).toBe("invalid type: integer `1`, expected a string");
    expect(refused(PRIM("u64"), "abc")).toBe('Parsing u64 string "abc" failed, caused by error: invalid digit found in string');
    expect(refused(PRIM("u64"), "18446744073709551616")).toBe('Parsing u64 string "18446744073709551616" failed, caused by error: number too large to fit in target type');
    expect(refused(PRIM("u128"), "")).toBe('Parsing u128 string "" failed, caused by error: cannot parse integer from empty string');
    expect(refused(PRIM("u64"), "-1")).toBe('Parsing u64 string "-1" failed, caused by error: invalid digit found in string');
    expect(refused(PRIM("address"), "0xzz")).toBe("Invalid account address: Hex characters are invalid: Invalid character 'z' at position 62");
    expect(refused(PRIM("address"), null)).toBe("invalid type: null, expected a string");
    expect(refused(VEC(PRIM("u8")), "0x123")).toBe('decode hex-encoded string("0x123") failed, caused by error: Odd number of digits');
    expect(refused(VEC(PRIM("u8")), "zz")).toBe('decode hex-encoded string("zz") failed, caused by error: Invalid character \'z\' at position 0');
    expect(refused(VEC(PRIM("u8")), [1, 2])).toBe("invalid type: sequence, expected a string");
    expect(refused(VEC(PRIM("u64")), "1")).toBe('expected vector<U64>, but got: String("1")');
    expect(refused(STRING, 5)).toBe("failed to parse string::String.");
    const s: MoveLayout = { k: "struct", tag: tag("S"), fields: [{ name: "a", layout: PRIM("u8") }] };
    expect(refused(s, [])).toBe("Expecting a JSON Map for struct.");
    expect(refused(s, {})).toBe("field a not found.");
  });

  it("refuses bytes longer than the bound without writing them", () => {
    expect(() => encodeJsonValue(VEC(PRIM("u8")), "0x" + "00".repeat(100), 50)).toThrow("the key's BCS bytes are longer than 50");
  });
});

describe("BCS to JSON", () => {
  it("writes integers as the node does: u8 to u32 as numbers, wider ones as decimal strings", () => {
    expect(decodeBcsValue(PRIM("u8"), Buffer.from([7]))).toBe("7");
    expect(decodeBcsValue(PRIM("u32"), Buffer.from([1, 0, 0, 0]))).toBe("1");
    expect(decodeBcsValue(PRIM("u64"), Buffer.alloc(8, 0xff))).toBe('"18446744073709551615"');
    expect(decodeBcsValue(PRIM("i8"), Buffer.from([0xff]))).toBe("-1");
    expect(decodeBcsValue(PRIM("i64"), Buffer.from("feffffffffffffff", "hex"))).toBe('"-2"');
    expect(decodeBcsValue(PRIM("address"), ONE)).toBe('"0x1"');
  });

  it("writes a struct's members sorted by name, an enum's with __variant__, strings and bytes as the node does", () => {
    const s: MoveLayout = {
      k: "struct",
      tag: tag("S"),
      fields: [
        { name: "zeta", layout: PRIM("bool") },
        { name: "Alpha", layout: STRING },
        { name: "bytes", layout: VEC(PRIM("u8")) },
        { name: "opt", layout: { k: "struct", tag: { address: ONE, module: "option", name: "Option" }, fields: [{ name: "vec", layout: VEC(PRIM("u64")) }] } },
      ],
    };
    const bytes = Buffer.from("01" + "026869" + "020a0b" + "01" + "0500000000000000", "hex");
    expect(decodeBcsValue(s, bytes)).toBe('{"Alpha":"hi","bytes":"0x0a0b","opt":{"vec":["5"]},"zeta":true}');
    const e: MoveLayout = { k: "enum", tag: tag("E"), variants: [{ name: "None", fields: [] }, { name: "Some", fields: [{ name: "v", layout: PRIM("u8") }] }] };
    expect(decodeBcsValue(e, Buffer.from([1, 9]))).toBe('{"__variant__":"Some","v":9}');
    expect(decodeBcsValue(e, Buffer.from([0]))).toBe('{"__variant__":"None"}');
    expect(decodeBcsValue(STRING, Buffer.from([2, 0xff, 0xfe]))).toBe('"Unparsable utf-8 0xfffe"');
  });

  it("refuses bytes that are not a value of the layout: short, long, a bad bool, an unknown variant, a length past the end", () => {
    const bad = (l: MoveLayout, h: string) => expect(() => decodeBcsValue(l, Buffer.from(h, "hex")), h).toThrow(ValueError);
    bad(PRIM("u64"), "01");
    bad(PRIM("u8"), "0102");
    bad(PRIM("bool"), "02");
    bad({ k: "enum", tag: tag("E"), variants: [{ name: "A", fields: [] }] }, "01");
    bad(VEC(PRIM("u8")), "ffffffff0f");
    bad(VEC(PRIM("u8")), "8000");
    bad(VEC(PRIM("u8")), "808080808001");
  });
});
