/**
 * The layout of a Move type: what its BCS bytes hold, field by field, resolved from the ABIs of the
 * modules that declare its structs (docs/decisions.md §23). A struct's fields come from its
 * module's ABI (`structs[].fields[].type`, type strings with `T0..` for the struct's type
 * parameters); an enum's variants likewise. The resolver is bounded: nesting depth, layout nodes
 * and module lookups per resolution, so no type a client names can make it read or build without
 * end.
 */
import { formatAddress, parseAddress } from "../ledger/address.js";
import { parseType, type TypeExpr } from "../ledger/typeParser.js";
import type { MoveStructAbi, MoveStructFieldAbi } from "./abi.js";

/** A field of a struct or of an enum variant, with its layout. */
export interface FieldLayout {
  readonly name: string;
  readonly layout: MoveLayout;
}

/** A primitive's layout, by its type name. */
export type PrimitiveLayout =
  | "bool" | "u8" | "u16" | "u32" | "u64" | "u128" | "u256" | "address"
  | "i8" | "i16" | "i32" | "i64" | "i128" | "i256";

/** What a value of a Move type is made of. */
export type MoveLayout =
  | { readonly k: PrimitiveLayout }
  | { readonly k: "vector"; readonly inner: MoveLayout }
  | { readonly k: "struct"; readonly tag: StructId; readonly fields: readonly FieldLayout[] }
  | { readonly k: "enum"; readonly tag: StructId; readonly variants: readonly { readonly name: string; readonly fields: readonly FieldLayout[] }[] };

/** Which struct a layout is of (without its type arguments: no codec needs them). */
export interface StructId {
  readonly address: Uint8Array;
  readonly module: string;
  readonly name: string;
}

/** The structs of module `name` at `address` as its ABI lists them, or null when no such module is held. */
export type ModuleStructs = (address: Uint8Array, name: string) => Promise<readonly MoveStructAbi[] | null>;

/** Bounds of one resolution. */
export interface LayoutLimits {
  /** How deep vectors and structs may nest. */
  readonly depth: number;
  /** How many layout nodes a resolution may build (a struct used twice counts twice). */
  readonly nodes: number;
  /** How many modules a resolution may look up (each distinct module once). */
  readonly modules: number;
}

/**
 * The node's bounds: the Move VM's value depth (128) for nesting, and as many nodes and modules as
 * any framework type needs many times over.
 */
export const LAYOUT_LIMITS: LayoutLimits = { depth: 128, nodes: 4096, modules: 64 };

/** A type with no layout (an unknown struct, a signer, a native struct): the reason in the reference's words. */
export class LayoutError extends Error {}

/**
 * How enums are laid out: `"variants"` as the value viewer the reference decodes stored values
 * with; `"refused"` as its layout builder for a JSON value to encode, which has no enum support.
 */
export type EnumSupport = "variants" | "refused";

/**
 * Resolves the layout of `type` (a type with no type parameters), reading the ABIs of the modules its structs are declared in.
 *
 * @throws LayoutError with the reference's words for a type with no layout, or ours for a bound passed.
 */
export async function resolveLayout(type: TypeExpr, structs: ModuleStructs, enums: EnumSupport, limits: LayoutLimits = LAYOUT_LIMITS): Promise<MoveLayout> {
  const modules = new Map<string, readonly MoveStructAbi[] | null>();
  let nodes = 0;

  const count = (depth: number) => {
    if (++nodes > limits.nodes) throw new LayoutError(`the type's layout has more than ${limits.nodes} nodes`);
    if (depth > limits.depth) throw new LayoutError(`the type's layout nests deeper than ${limits.depth}`);
  };

  const moduleStructs = async (address: Uint8Array, name: string) => {
    const key = `${formatAddress(address)}::${name}`;
    if (modules.has(key)) return modules.get(key)!;
    if (modules.size >= limits.modules) throw new LayoutError(`the type's layout needs more than ${limits.modules} modules`);
    const found = await structs(address, name);
    modules.set(key, found);
    return found;
  };

  const ofStruct = async (id: StructId, args: readonly MoveLayout[], depth: number): Promise<MoveLayout> => {
    const found = await moduleStructs(id.address, id.module);
    if (found === null) throw new LayoutError("Could not find module");
    const def = found.find((s) => s.name === id.name);
    if (!def) throw new LayoutError(`Could not find struct named ${id.name} in module ${moduleIdText(id.address, id.module)}`);
    if (def.generic_type_params.length !== args.length) throw new LayoutError("Wrong number of type arguments for struct");
    if (def.is_native) throw new LayoutError("Can't extract fields for native struct");
    const tag: StructId = { address: id.address, module: id.module, name: id.name };
    const fieldsOf = async (fields: readonly MoveStructFieldAbi[]) => {
      const out: FieldLayout[] = [];
      for (const f of fields) out.push({ name: f.name, layout: await ofField(f.type, args, depth + 1) });
      return out;
    };
    if (def.is_enum) {
      if (enums === "refused") throw new LayoutError("enum variants not yet supported by layouts");
      const variants = [];
      for (const v of def.variants) variants.push({ name: v.name, fields: await fieldsOf(v.fields) });
      return { k: "enum", tag, variants };
    }
    return { k: "struct", tag, fields: await fieldsOf(def.fields) };
  };

  const ofField = async (text: string, args: readonly MoveLayout[], depth: number): Promise<MoveLayout> => {
    let expr: TypeExpr;
    try {
      expr = parseType(text);
    } catch {
      throw new LayoutError(`a module's ABI holds a field type that does not parse: ${text.slice(0, 100)}`);
    }
    return ofExpr(expr, args, depth);
  };

  const ofExpr = async (e: TypeExpr, args: readonly MoveLayout[], depth: number): Promise<MoveLayout> => {
    count(depth);
    switch (e.k) {
      case "prim":
        if (e.name === "signer") throw new LayoutError("Type layouts cannot contain signer");
        return { k: e.name };
      case "vector":
        return { k: "vector", inner: await ofExpr(e.inner, args, depth + 1) };
      case "ref":
      case "mutref":
        throw new LayoutError("Type layouts cannot contain references");
      case "function":
        throw new LayoutError("function types NYI for MoveTypeLayout");
      case "tparam": {
        const a = args[e.index];
        if (!a) throw new LayoutError(`a module's ABI names type parameter T${e.index} of a struct with ${args.length}`);
        return a;
      }
      case "struct": {
        const address = parseAddress(e.address);
        if (!address) throw new LayoutError(`a module's ABI names a struct at address ${e.address.slice(0, 100)}`);
        const inner: MoveLayout[] = [];
        for (const a of e.args) inner.push(await ofExpr(a, args, depth + 1));
        return ofStruct({ address, module: e.module, name: e.name }, inner, depth);
      }
    }
  };

  return ofExpr(type, [], 0);
}



/** A module id as the reference's messages print it: the full address, `0x` and 64 digits, then the name. */
export function moduleIdText(address: Uint8Array, name: string): string {
  return `0x${Buffer.from(address).toString("hex")}::${name}`;
}

/** Whether a struct is `0x1::string::String`, which the JSON holds as a string. */
export function isUtf8String(tag: StructId): boolean {
  return tag.name === "String" && tag.module === "string" && isCoreAddress(tag.address);
}

/** Whether a struct is `0x1::object::Object`, which a JSON key holds as its address. */
export function isObject(tag: StructId): boolean {
  return tag.name === "Object" && tag.module === "object" && isCoreAddress(tag.address);
}

function isCoreAddress(a: Uint8Array): boolean {
  if (a.length !== 32 || a[31] !== 1) return false;
  for (let i = 0; i < 31; i++) if (a[i] !== 0) return false;
  return true;
}
