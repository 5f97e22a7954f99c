import { describe, expect, it } from "vitest";
import { abilityList, moduleAbi } from "./abi.js";
import type { MoveModuleAbi } from "./abi.js";
import { ModuleBuildError, buildModule } from "./builder.js";
import type { ModuleDesc } from "./builder.js";
import { decodeModule } from "./decoder.js";
import { parseType } from "../ledger/typeParser.js";

// As the ABI prints them: leading zeros stripped (docs/decisions.md §6).
const CAFE = "0xcafe";
const BEEF = "0xbeef";

/** The ABI a description should produce (type strings in descs are already in printed form). */
function expectedAbi(d: ModuleDesc, address: string): MoveModuleAbi {
  const bits = (l?: readonly string[]) => abilityList((l ?? []).reduce((b, a) => b | ({ copy: 1, drop: 2, store: 4, key: 8 } as Record<string, number>)[a]!, 0));
  return {
    address,
    name: d.name,
    friends: [...(d.friends ?? [])],
    exposed_functions: (d.functions ?? [])
      .filter((f) => f.entry || f.view || (f.visibility ?? "public") !== "private")
      .map((f) => ({
        name: f.name,
        visibility: f.visibility ?? "public",
        is_entry: !!f.entry,
        is_view: !!f.view,
        generic_type_params: (f.typeParams ?? []).map((p) => ({ constraints: bits(p.constraints) })),
        params: [...(f.params ?? [])],
        return: [...(f.returns ?? [])],
      })),
    structs: (d.structs ?? []).map((s) => ({
      name: s.name,
      is_native: !!s.native,
      is_event: !!s.event,
      is_enum: !!s.variants,
      abilities: bits(s.abilities),
      generic_type_params: (s.typeParams ?? []).map((p) => ({ constraints: bits(p.constraints) })),
      fields: s.variants ? [] : [...(s.fields ?? [])],
      variants: (s.variants ?? []).map((v) => ({ name: v.name, fields: [...(v.fields ?? [])] })),
    })),
  };
}

/** Every v6 token, ability, visibility, entry/view/event, generics, phantom, friends, foreign structs. */
const v6Module: ModuleDesc = {
  address: "0xcafe",
  name: "everything",
  friends: ["0x1::coin", `${BEEF}::friendly`],
  structs: [
    {
      name: "Prims",
      abilities: ["copy", "drop", "store"],
      fields: ["bool", "u8", "u16", "u32", "u64", "u128", "u256", "address"].map((t) => ({ name: `f_${t}`, type: t })),
    },
    { name: "Resource", abilities: ["key"], fields: [{ name: "items", type: `vector<${CAFE}::everything::Prims>` }] },
    {
      name: "Box",
      abilities: ["copy", "drop", "store", "key"],
      typeParams: [{ constraints: ["copy", "drop"] }, { constraints: ["store"], phantom: true }, { phantom: true }],
      fields: [
        { name: "value", type: "T0" },
        { name: "nested", type: "vector<vector<T0>>" },
        { name: "coin", type: "0x1::coin::Coin<0x1::aptos_coin::AptosCoin>" },
        { name: "table", type: "0x1::table::Table<T0, vector<u8>>" },
        { name: "s", type: "0x1::string::String" },
      ],
    },
    { name: "Happened", abilities: ["drop", "store"], event: true, fields: [{ name: "by", type: "address" }] },
    { name: "Empty", fields: [] },
    { name: "Native", native: true, abilities: ["copy"] },
  ],
  functions: [
    { name: "private_plain", visibility: "private", params: ["u64"] },
    { name: "private_entry", visibility: "private", entry: true, params: ["&signer", "u64"] },
    { name: "private_view", visibility: "private", view: true, returns: ["u64"] },
    { name: "public_entry", entry: true, params: ["&signer", "vector<address>"] },
    { name: "public_view", view: true, params: ["address"], returns: ["bool", `${CAFE}::everything::Prims`] },
    { name: "friend_fn", visibility: "friend", params: [`&mut ${CAFE}::everything::Resource`], returns: [`&${CAFE}::everything::Prims`] },
    {
      name: "generic",
      typeParams: [{ constraints: ["key"] }, { constraints: ["copy", "drop", "store"] }, {}],
      params: [`&${CAFE}::everything::Box<T1, T0, T2>`, "0x1::object::Object<T0>", "vector<T2>", "signer"],
      returns: ["0x1::option::Option<vector<T1>>", `${BEEF}::other::Thing`],
    },
    { name: "native_fn", native: true, params: ["u8"], returns: ["u8"] },
  ],
};

describe("buildModule round trips through moduleAbi", () => {
  for (const version of [6, 7, 8, 9] as const) {
    it(`v${version}: tokens, abilities, visibility, entry, view, event, generics, phantom, friends`, () => {
      const bytes = buildModule(v6Module, { version });
      expect(decodeModule(bytes)?.version).toBe(version);
      const abi = moduleAbi(bytes);
      expect(abi).toEqual(expectedAbi(v6Module, CAFE));
      expect(JSON.stringify(abi)).toBe(JSON.stringify(expectedAbi(v6Module, CAFE)));
    });
  }

  it("writes the Aptos version flag for v7+ only", () => {
    expect([...buildModule(v6Module, { version: 6 }).subarray(4, 8)]).toEqual([6, 0, 0, 0]);
    expect([...buildModule(v6Module, { version: 7 }).subarray(4, 8)]).toEqual([7, 0, 0, 0x0a]);
  });

  it("keeps phantom flags in the bytecode, though the ABI (poem form) does not print them", () => {
    const m = decodeModule(buildModule(v6Module))!;
    const box = m.structHandles.find((h) => m.identifier(h.name) === "Box")!;
    expect(box.typeParams.map((p) => p.isPhantom)).toEqual([false, true, true]);
  });

  const enums: ModuleDesc = {
    address: "0x1",
    name: "enums",
    structs: [
      { name: "State", abilities: ["key"], fields: [{ name: "value", type: "u64" }] },
      {
        name: "MyEnum",
        abilities: ["drop", "store"],
        variants: [{ name: "This" }, { name: "That", fields: [{ name: "value", type: "u64" }] }],
      },
      {
        name: "Shape",
        abilities: ["copy", "drop"],
        typeParams: [{ constraints: ["copy"] }, { phantom: true }],
        variants: [
          { name: "Circle", fields: [{ name: "r", type: "T0" }] },
          { name: "Many", fields: [{ name: "items", type: "vector<0x1::enums::State>" }, { name: "e", type: "0x1::enums::MyEnum" }] },
          { name: "None" },
        ],
      },
    ],
    functions: [{ name: "make", params: ["u64"], returns: ["0x1::enums::Shape<u64, bool>"] }],
  };

  for (const version of [7, 8, 9] as const) {
    it(`v${version}: enums with and without fields, in declaration order`, () => {
      const abi = moduleAbi(buildModule(enums, { version }));
      expect(JSON.stringify(abi)).toBe(JSON.stringify(expectedAbi(enums, "0x1")));
      expect(abi!.structs[1]).toEqual({
        name: "MyEnum",
        is_native: false,
        is_event: false,
        is_enum: true,
        abilities: ["drop", "store"],
        generic_type_params: [],
        fields: [],
        variants: [{ name: "This", fields: [] }, { name: "That", fields: [{ name: "value", type: "u64" }] }],
      });
    });
  }

  it("v8: function types print as |args|results with no spaces", () => {
    const d: ModuleDesc = {
      address: "0x1",
      name: "closures",
      structs: [{ name: "Holder", fields: [{ name: "f", type: "|u64,&signer|bool" }, { name: "g", type: "||" }] }],
      functions: [
        {
          name: "apply",
          typeParams: [{}],
          params: ["|T0|", "vector<|u64|u8,u16>", "0x1::option::Option<|address|>", "|&mut u64,vector<u8>|0x1::string::String,u8"],
          returns: ["||u64"],
        },
      ],
    };
    expect(JSON.stringify(moduleAbi(buildModule(d, { version: 8 })))).toBe(JSON.stringify(expectedAbi(d, "0x1")));
  });

  it("v9: signed integers and '$' in identifiers", () => {
    const d: ModuleDesc = {
      address: "0x1",
      name: "signed",
      structs: [{ name: "S$", fields: ["i8", "i16", "i32", "i64", "i128", "i256"].map((t) => ({ name: `_${t}`, type: t })) }],
      functions: [{ name: "$neg", params: ["i64", "vector<i8>", "&mut i256"], returns: ["0x1::signed::S$"] }],
    };
    expect(JSON.stringify(moduleAbi(buildModule(d, { version: 9 })))).toBe(JSON.stringify(expectedAbi(d, "0x1")));
  });

  it("lists exposed functions in definition order, not sorted", () => {
    const d: ModuleDesc = { address: "0x1", name: "order", functions: [{ name: "zeta" }, { name: "alpha" }, { name: "mid", entry: true }] };
    expect(moduleAbi(buildModule(d))!.exposed_functions.map((f) => f.name)).toEqual(["zeta", "alpha", "mid"]);
  });

  it("builds the test_abi module the node test describes", () => {
    const d: ModuleDesc = {
      address: "0xabc",
      name: "test",
      structs: [
        { name: "State", abilities: ["key"], fields: [{ name: "value", type: "u64" }] },
        { name: "MyEnum", abilities: ["drop", "store"], variants: [{ name: "This" }, { name: "That", fields: [{ name: "value", type: "u64" }] }] },
        { name: "MyEvent", abilities: ["store"], event: true, fields: [{ name: "value", type: "u64" }] },
        { name: "TestOption", abilities: ["copy", "drop"], fields: [{ name: "o", type: "0x1::option::Option<u64>" }] },
      ],
      functions: [
        { name: "private_entry_function", visibility: "private", entry: true },
        { name: "private_function", visibility: "private" },
        { name: "private_view_function", visibility: "private", view: true, returns: ["u64"] },
        { name: "public_entry_function", entry: true },
        { name: "public_function" },
        { name: "public_view_function", view: true, returns: ["u64"] },
      ],
    };
    const abi = moduleAbi(buildModule(d))!;
    expect(abi.exposed_functions.map((f) => [f.name, f.visibility, f.is_view])).toEqual([
      ["private_entry_function", "private", false],
      ["private_view_function", "private", true],
      ["public_entry_function", "public", false],
      ["public_function", "public", false],
      ["public_view_function", "public", true],
    ]);
    expect(abi.structs.map((s) => [s.name, s.is_event, s.is_enum])).toEqual([
      ["State", false, false],
      ["MyEnum", false, true],
      ["MyEvent", true, false],
      ["TestOption", false, false],
    ]);
  });
});

describe("view and event metadata is read strictly", () => {
  const d: ModuleDesc = { address: "0x1", name: "views", functions: [{ name: "a", view: true }, { name: "b", view: true }] };

  it("marks both views when the metadata map is canonical", () => {
    expect(moduleAbi(buildModule(d))!.exposed_functions.map((f) => f.is_view)).toEqual([true, true]);
  });

  it("drops every view when the map keys are out of order (non-canonical BCS)", () => {
    const bytes = buildModule(d);
    // fun_attributes entries are `01 'a' 01 01 00` and `01 'b' 01 01 00`; swap the names.
    const at = Buffer.from(bytes).indexOf(Buffer.from([0x01, 0x61, 0x01, 0x01, 0x00, 0x01, 0x62]));
    expect(at).toBeGreaterThan(0);
    bytes[at + 1] = 0x62;
    bytes[at + 6] = 0x61;
    const abi = moduleAbi(bytes)!;
    expect(abi.exposed_functions.map((f) => f.is_view)).toEqual([false, false]);
  });

  it("drops every view when an attribute name is not valid UTF-8", () => {
    const bytes = buildModule(d);
    const at = Buffer.from(bytes).indexOf(Buffer.from([0x01, 0x61, 0x01, 0x01, 0x00]));
    bytes[at + 1] = 0xff;
    expect(moduleAbi(bytes)!.exposed_functions.map((f) => f.is_view)).toEqual([false, false]);
  });

  it("ignores attributes in a version-5 module", () => {
    const bytes = buildModule(d, { version: 6 });
    bytes[4] = 5; // nothing in this module needs v6
    expect(decodeModule(bytes)?.version).toBe(5);
    expect(moduleAbi(bytes)!.exposed_functions.map((f) => f.is_view)).toEqual([false, false]);
  });
});

describe("buildModule rejects what it cannot encode", () => {
  const base = { address: "0x1", name: "m" };
  it.each([
    ["an enum below v7", { ...base, structs: [{ name: "E", variants: [{ name: "A" }] }] }, 6],
    ["a function type below v8", { ...base, functions: [{ name: "f", params: ["|u64|"] }] }, 7],
    ["a signed integer below v9", { ...base, functions: [{ name: "f", params: ["i8"] }] }, 8],
    ["'$' below v9", { ...base, functions: [{ name: "f$" }] }, 8],
    ["a bad identifier", { ...base, functions: [{ name: "1f" }] }, 7],
    ["an out-of-range type parameter", { ...base, functions: [{ name: "f", params: ["T0"] }] }, 7],
    ["a wrong type-argument count", { ...base, functions: [{ name: "f", params: ["0x1::a::B<u8>", "0x1::a::B"] }] }, 7],
    ["an unknown own struct", { ...base, functions: [{ name: "f", params: ["0x1::m::Nope"] }] }, 7],
    ["an enum without variants", { ...base, structs: [{ name: "E", variants: [] }] }, 7],
    ["a malformed type", { ...base, functions: [{ name: "f", params: ["vector<u8"] }] }, 7],
    ["a duplicate function", { ...base, functions: [{ name: "f" }, { name: "f" }] }, 7],
  ] as [string, ModuleDesc, 6 | 7 | 8][])("%s", (_what, desc, version) => {
    expect(() => buildModule(desc, { version })).toThrow(ModuleBuildError);
  });
});

describe("parseType", () => {
  it("inverts the printed syntax", () => {
    expect(parseType("&mut vector<0x1::table::Table<T0, |u8,u16|bool>>")).toEqual({
      k: "mutref",
      inner: {
        k: "vector",
        inner: {
          k: "struct",
          address: "0x1",
          module: "table",
          name: "Table",
          args: [
            { k: "tparam", index: 0 },
            { k: "function", args: [{ k: "prim", name: "u8" }, { k: "prim", name: "u16" }], results: [{ k: "prim", name: "bool" }] },
          ],
        },
      },
    });
  });
});
