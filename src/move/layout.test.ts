import { describe, expect, it } from "vitest";
import { parseType } from "../ledger/typeParser.js";
import type { MoveStructAbi } from "./abi.js";
import { LayoutError, resolveLayout, type ModuleStructs } from "./layout.js";

const struct = (name: string, fields: Array<[string, string]>, o: Partial<MoveStructAbi> = {}): MoveStructAbi => ({
  name,
  is_native: false,
  is_event: false,
  is_enum: false,
  abilities: ["copy", "drop", "store"],
  generic_type_params: [],
  fields: fields.map(([n, type]) => ({ name: n, type })),
  variants: [],
  ...o,
});

const MODULES: Record<string, MoveStructAbi[]> = {
  "0x1::string": [struct("String", [["bytes", "vector<u8>"]])],
  "0x1::option": [struct("Option", [["vec", "vector<T0>"]], { generic_type_params: [{ constraints: [] }] })],
  "0xca::m": [
    struct("Pair", [["a", "0x1::option::Option<T0>"], ["b", "0x1::string::String"]], { generic_type_params: [{ constraints: [] }] }),
    struct("Native", [], { is_native: true }),
    struct("E", [], { is_enum: true, variants: [{ name: "A", fields: [{ name: "x", type: "u8" }] }] }),
    struct("Signer", [["s", "signer"]]),
    struct("Ref", [["r", "&u8"]]),
    struct("Loop", [["next", "vector<0xca::m::Loop>"]]),
    struct("Wide", [["a", "0xca::m::Wide2"], ["b", "0xca::m::Wide2"]]),
    struct("Wide2", [["a", "0xca::m::Wide3"], ["b", "0xca::m::Wide3"]]),
    struct("Wide3", [["a", "u8"], ["b", "u8"]]),
  ],
};

const reads: string[] = [];
const structs: ModuleStructs = async (address, name) => {
  const key = `0x${Buffer.from(address).toString("hex").replace(/^0+/, "")}::${name}`;
  reads.push(key);
  return MODULES[key] ?? null;
};
const layout = (t: string, enums: "variants" | "refused" = "variants", limits?: { depth: number; nodes: number; modules: number }) =>
  resolveLayout(parseType(t), structs, enums, limits);
const why = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(LayoutError);
    return (e as Error).message;
  }
  throw new Error("resolved");
};

describe("type layouts from module ABIs", () => {
  it("substitutes type arguments into field types, across modules, reading each module once", async () => {
    reads.length = 0;
    const l = await layout("0xca::m::Pair<vector<u64>>");
    expect(l).toMatchObject({
      k: "struct",
      fields: [
        { name: "a", layout: { k: "struct", tag: { module: "option", name: "Option" }, fields: [{ name: "vec", layout: { k: "vector", inner: { k: "vector", inner: { k: "u64" } } } }] } },
        { name: "b", layout: { k: "struct", tag: { module: "string", name: "String" } } },
      ],
    });
    expect(reads).toEqual(["0xca::m", "0x1::option", "0x1::string"]);
  });

  it("lays enums out by variant for values, and refuses them for keys as the reference's layout builder does", async () => {
    expect(await layout("0xca::m::E")).toMatchObject({ k: "enum", variants: [{ name: "A", fields: [{ name: "x", layout: { k: "u8" } }] }] });
    expect(await why(layout("0xca::m::E", "refused"))).toBe("enum variants not yet supported by layouts");
  });

  it("refuses what has no layout, in the reference's words", async () => {
    expect(await why(layout("0xdead::m::S"))).toBe("Could not find module");
    expect(await why(layout("0xca::m::Nope"))).toBe(`Could not find struct named Nope in module 0x${"ca".padStart(64, "0")}::m`);
    expect(await why(layout("0xca::m::Pair"))).toBe("Wrong number of type arguments for struct");
    expect(await why(layout("0xca::m::Native"))).toBe("Can't extract fields for native struct");
    expect(await why(layout("signer"))).toBe("Type layouts cannot contain signer");
    expect(await why(layout("0xca::m::Signer"))).toBe("Type layouts cannot contain signer");
    expect(await why(layout("0xca::m::Ref"))).toBe("Type layouts cannot contain references");
  });

  it("stops at its bounds: nesting depth, layout nodes, modules", async () => {
    expect(await why(layout("0xca::m::Loop"))).toMatch(/nests deeper than 128/);
    expect(await why(layout("0xca::m::Wide", "variants", { depth: 128, nodes: 10, modules: 64 }))).toMatch(/more than 10 nodes/);
    expect(await layout("0xca::m::Wide", "variants", { depth: 128, nodes: 15, modules: 64 })).toMatchObject({ k: "struct" });
    expect(await why(layout("0xca::m::Pair<u8>", "variants", { depth: 128, nodes: 100, modules: 2 }))).toMatch(/more than 2 modules/);
  });
});
