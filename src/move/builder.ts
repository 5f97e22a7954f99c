/**
 * Builds Move modules (binary versions 6 to 9) from a small declarative description, so tests and
 * the devnet generator never hand-type bytecode. The output is what the Move compiler would lay
 * out for the same declarations, minus real function bodies: every non-native function body is
 * `LD_U64 0; ABORT`, which is valid for any signature. Views and events go into an
 * `aptos::metadata_v1` entry, as the Aptos compiler writes them.
 */

import { parseAddress } from "../ledger/address.js";
import type { MoveAbility } from "./abi.js";
import {
  APTOS_VERSION_MASK,
  FLAG_ENTRY,
  FLAG_NATIVE,
  MOVE_MAGIC,
  STRUCT_DECLARED,
  STRUCT_DECLARED_VARIANTS,
  STRUCT_NATIVE,
  Table,
  Tok,
  VIS_FRIEND,
  VIS_PRIVATE,
  VIS_PUBLIC,
} from "./format.js";
import { APTOS_METADATA_KEY_V1, AttributeKind, RuntimeModuleMetadataV1 } from "./metadata.js";
import { parseType } from "../ledger/typeParser.js";
import type { PrimitiveName, TypeExpr } from "../ledger/typeParser.js";
import { Writer } from "./writer.js";

/** A type parameter of a function: abilities it requires. */
export interface FunctionTypeParamDesc {
  readonly constraints?: readonly MoveAbility[];
}

/** A type parameter of a struct or enum. */
export interface StructTypeParamDesc extends FunctionTypeParamDesc {
  /** `phantom T`. */
  readonly phantom?: boolean;
}

/** A field; `type` in the node's printed syntax, e.g. `vector<0x1::string::String>`. */
export interface FieldDesc {
  readonly name: string;
  readonly type: string;
}

/** One variant of an enum (v7+), in declaration order. */
export interface VariantDesc {
  readonly name: string;
  readonly fields?: readonly FieldDesc[];
}

/**
 * A struct, or an enum when `variants` is given. Type strings may use `T0`, `T1`… for the
 * struct's own type parameters.
 */
export interface StructDesc {
  readonly name: string;
  readonly abilities?: readonly MoveAbility[];
  readonly typeParams?: readonly StructTypeParamDesc[];
  readonly fields?: readonly FieldDesc[];
  readonly variants?: readonly VariantDesc[];
  /** A native struct (no fields). */
  readonly native?: boolean;
  /** `#[event]`. */
  readonly event?: boolean;
}

/** A function; `params` and `returns` are type strings. */
export interface FunctionDesc {
  readonly name: string;
  /** Default `"public"`. */
  readonly visibility?: "private" | "public" | "friend";
  readonly entry?: boolean;
  /** `#[view]`. */
  readonly view?: boolean;
  readonly native?: boolean;
  readonly typeParams?: readonly FunctionTypeParamDesc[];
  readonly params?: readonly string[];
  readonly returns?: readonly string[];
}

/**
 * A module. Structs of other modules are referenced by full path in type strings
 * (`0x1::string::String`); their handles are created from that use, with the arity of the use.
 */
export interface ModuleDesc {
  /** Any address form `parseAddress` accepts, e.g. `0x1` or `0xcafe`. */
  readonly address: string;
  readonly name: string;
  /** Friend modules as `<address>::<name>`. */
  readonly friends?: readonly string[];
  readonly structs?: readonly StructDesc[];
  readonly functions?: readonly FunctionDesc[];
}

/** Builder options. */
export interface BuildOptions {
  /** Binary format version; default 7. Enums need 7+, function types 8+, signed ints and `$` 9. */
  readonly version?: 6 | 7 | 8 | 9;
}

/** A description the builder cannot encode (bad name, type, index or version feature). */
export class ModuleBuildError extends Error {
  override name = "ModuleBuildError";
}

const ABILITY_BITS: Record<MoveAbility, number> = { copy: 0x1, drop: 0x2, store: 0x4, key: 0x8 };
const PRIM_CODES: Record<PrimitiveName, number> = {
  bool: Tok.BOOL, u8: Tok.U8, u16: Tok.U16, u32: Tok.U32, u64: Tok.U64, u128: Tok.U128, u256: Tok.U256,
  address: Tok.ADDRESS, signer: Tok.SIGNER,
  i8: Tok.I8, i16: Tok.I16, i32: Tok.I32, i64: Tok.I64, i128: Tok.I128, i256: Tok.I256,
};
const IDENT_RE = /^(?:[A-Za-z][A-Za-z0-9_$]*|[_$][A-Za-z0-9_$]+)$/;

/**
 * Builds a module's bytecode from its description.
 *
 * @example
 * ```ts
 * const bytes = buildModule({
 *   address: "0xcafe",
 *   name: "counter",
 *   structs: [{ name: "Counter", abilities: ["key"], fields: [{ name: "value", type: "u64" }] }],
 *   functions: [{ name: "get", view: true, params: ["address"], returns: ["u64"] }],
 * });
 * moduleAbi(bytes); // the ABI of that description
 * ```
 * @param desc - the module.
 * @param opts - binary version (default 7).
 * @returns module bytes that `moduleAbi` reads back to the described ABI.
 * @throws ModuleBuildError when the description cannot be encoded at that version.
 */
export function buildModule(desc: ModuleDesc, opts: BuildOptions = {}): Uint8Array {
  return new ModuleBuilder(desc, opts.version ?? 7).build();
}

function abilityBits(list: readonly MoveAbility[] | undefined): number {
  let bits = 0;
  for (const a of list ?? []) {
    const b = ABILITY_BITS[a];
    if (b === undefined) throw new ModuleBuildError(`unknown ability ${JSON.stringify(a)}`);
    bits |= b;
  }
  return bits;
}

class ModuleBuilder {
  private readonly identifiers = new Map<string, number>();
  private readonly addresses = new Map<string, number>();
  private readonly moduleHandles = new Map<string, number>();
  private readonly moduleHandleBytes: Writer[] = [];
  private readonly structHandles = new Map<string, { index: number; arity: number }>();
  private readonly structHandleBytes: Writer[] = [];
  private readonly signatures = new Map<string, number>();
  private readonly signatureBytes: Uint8Array[] = [];
  private readonly selfAddress: string;

  constructor(
    private readonly desc: ModuleDesc,
    private readonly version: number,
  ) {
    if (![6, 7, 8, 9].includes(version)) throw new ModuleBuildError(`unsupported version ${version}`);
    this.selfAddress = this.addressHex(desc.address);
  }

  build(): Uint8Array {
    const d = this.desc;
    const self = this.moduleHandle(this.selfAddress, d.name);
    if (self !== 0) throw new ModuleBuildError("internal: self handle must be 0");

    // Own struct handles first, in declaration order, so types can refer to any of them.
    const structs = d.structs ?? [];
    for (const s of structs) {
      const key = this.structKey(this.selfAddress, d.name, s.name);
      if (this.structHandles.has(key)) throw new ModuleBuildError(`duplicate struct ${s.name}`);
      const tps = s.typeParams ?? [];
      const w = new Writer().uleb(0).uleb(this.ident(s.name)).uleb(abilityBits(s.abilities)).uleb(tps.length);
      for (const tp of tps) w.uleb(abilityBits(tp.constraints)).uleb(tp.phantom ? 1 : 0);
      this.structHandles.set(key, { index: this.structHandleBytes.length, arity: tps.length });
      this.structHandleBytes.push(w);
    }

    const structDefs = new Writer();
    for (const [i, s] of structs.entries()) this.structDef(structDefs, i, s);

    const functions = d.functions ?? [];
    const names = new Set<string>();
    const emptySig = this.signature([], 0, "locals");
    const functionHandles = new Writer();
    const functionDefs = new Writer();
    for (const [i, f] of functions.entries()) {
      if (names.has(f.name)) throw new ModuleBuildError(`duplicate function ${f.name}`);
      names.add(f.name);
      const tps = f.typeParams ?? [];
      const params = this.signature(f.params ?? [], tps.length, `${f.name} params`);
      const returns = this.signature(f.returns ?? [], tps.length, `${f.name} returns`);
      functionHandles.uleb(0).uleb(this.ident(f.name)).uleb(params).uleb(returns).uleb(tps.length);
      for (const tp of tps) functionHandles.uleb(abilityBits(tp.constraints));
      if (this.version >= 7) functionHandles.u8(0x1); // no access specifiers
      if (this.version >= 8) functionHandles.uleb(0); // no attributes
      const vis = f.visibility ?? "public";
      functionDefs.uleb(i).u8(vis === "public" ? VIS_PUBLIC : vis === "friend" ? VIS_FRIEND : VIS_PRIVATE);
      functionDefs.u8((f.entry ? FLAG_ENTRY : 0) | (f.native ? FLAG_NATIVE : 0)).uleb(0); // no acquires
      if (!f.native) {
        // locals: none; code: LD_U64 0; ABORT
        functionDefs.uleb(emptySig).uleb(2).u8(0x06).bytes(new Uint8Array(8)).u8(0x27);
      }
    }

    const friends = new Writer();
    for (const f of d.friends ?? []) {
      const m = /^([^:]+)::([^:]+)$/.exec(f);
      if (!m) throw new ModuleBuildError(`friend ${JSON.stringify(f)} is not <address>::<name>`);
      friends.uleb(this.addressIndex(this.addressHex(m[1]!))).uleb(this.ident(m[2]!));
    }

    const metadata = this.metadata(structs, functions);

    const identifiers = new Writer();
    for (const name of this.identifiers.keys()) identifiers.uleb(name.length).bytes(new TextEncoder().encode(name));
    const addresses = new Writer();
    for (const hex of this.addresses.keys()) addresses.bytes(Buffer.from(hex, "hex"));

    const tables: [Table, Uint8Array][] = [
      [Table.MODULE_HANDLES, concat(this.moduleHandleBytes)],
      [Table.STRUCT_HANDLES, concat(this.structHandleBytes)],
      [Table.FUNCTION_HANDLES, functionHandles.toBytes()],
      [Table.SIGNATURES, concat(this.signatureBytes)],
      [Table.IDENTIFIERS, identifiers.toBytes()],
      [Table.ADDRESS_IDENTIFIERS, addresses.toBytes()],
      [Table.STRUCT_DEFS, structDefs.toBytes()],
      [Table.FUNCTION_DEFS, functionDefs.toBytes()],
      [Table.FRIEND_DECLS, friends.toBytes()],
      [Table.METADATA, metadata],
    ];
    return serialize(this.version, tables.filter(([, bytes]) => bytes.length > 0));
  }

  private structDef(w: Writer, handle: number, s: StructDesc): void {
    const tpCount = s.typeParams?.length ?? 0;
    w.uleb(handle);
    if (s.native) {
      if (s.fields?.length || s.variants) throw new ModuleBuildError(`native struct ${s.name} cannot have fields or variants`);
      w.u8(STRUCT_NATIVE);
    } else if (s.variants) {
      if (this.version < 7) throw new ModuleBuildError(`enum ${s.name} needs version 7+`);
      if (s.fields?.length) throw new ModuleBuildError(`enum ${s.name} has fields; put them in variants`);
      if (s.variants.length === 0 || s.variants.length > 127) throw new ModuleBuildError(`enum ${s.name} needs 1..127 variants`);
      w.u8(STRUCT_DECLARED_VARIANTS).uleb(s.variants.length);
      for (const v of s.variants) {
        w.uleb(this.ident(v.name));
        this.fields(w, v.fields ?? [], tpCount, `${s.name}::${v.name}`);
      }
    } else {
      w.u8(STRUCT_DECLARED);
      this.fields(w, s.fields ?? [], tpCount, s.name);
    }
  }

  private fields(w: Writer, fields: readonly FieldDesc[], tpCount: number, where: string): void {
    if (fields.length > 255) throw new ModuleBuildError(`${where}: more than 255 fields`);
    w.uleb(fields.length);
    for (const f of fields) {
      w.uleb(this.ident(f.name));
      this.token(w, this.parse(f.type, where), tpCount, `${where}.${f.name}`);
    }
  }

  private metadata(structs: readonly StructDesc[], functions: readonly FunctionDesc[]): Uint8Array {
    const events = structs.filter((s) => s.event);
    const views = functions.filter((f) => f.view);
    if (events.length === 0 && views.length === 0) return new Uint8Array();
    const attr = (kind: AttributeKind) => [{ kind, args: [] as string[] }];
    const value = RuntimeModuleMetadataV1.serialize({
      error_map: new Map(),
      struct_attributes: new Map(events.map((s) => [s.name, attr(AttributeKind.Event)])),
      fun_attributes: new Map(views.map((f) => [f.name, attr(AttributeKind.ViewFunction)])),
    }).toBytes();
    const key = new TextEncoder().encode(APTOS_METADATA_KEY_V1);
    return new Writer().uleb(key.length).bytes(key).uleb(value.length).bytes(value).toBytes();
  }

  private parse(text: string, where: string): TypeExpr {
    try {
      return parseType(text);
    } catch (e) {
      throw new ModuleBuildError(`${where}: ${(e as Error).message}`);
    }
  }

  /** Index of the signature of these type strings (deduplicated by bytes). */
  private signature(types: readonly string[], tpCount: number, where: string): number {
    if (types.length > 255) throw new ModuleBuildError(`${where}: more than 255 types`);
    const w = new Writer().uleb(types.length);
    for (const t of types) this.token(w, this.parse(t, where), tpCount, where);
    const bytes = w.toBytes();
    const key = Buffer.from(bytes).toString("hex");
    let i = this.signatures.get(key);
    if (i === undefined) {
      i = this.signatureBytes.length;
      this.signatures.set(key, i);
      this.signatureBytes.push(bytes);
    }
    return i;
  }

  private token(w: Writer, t: TypeExpr, tpCount: number, where: string): void {
    const v = this.version;
    switch (t.k) {
      case "prim": {
        if (t.name.startsWith("i") && v < 9) throw new ModuleBuildError(`${where}: ${t.name} needs version 9`);
        w.u8(PRIM_CODES[t.name]);
        return;
      }
      case "vector":
        w.u8(Tok.VECTOR);
        this.token(w, t.inner, tpCount, where);
        return;
      case "ref":
        w.u8(Tok.REFERENCE);
        this.token(w, t.inner, tpCount, where);
        return;
      case "mutref":
        w.u8(Tok.MUTABLE_REFERENCE);
        this.token(w, t.inner, tpCount, where);
        return;
      case "tparam":
        if (t.index >= tpCount) throw new ModuleBuildError(`${where}: T${t.index} but only ${tpCount} type parameters`);
        w.u8(Tok.TYPE_PARAMETER).uleb(t.index);
        return;
      case "function":
        if (v < 8) throw new ModuleBuildError(`${where}: function types need version 8`);
        w.u8(Tok.FUNCTION).uleb(0).uleb(t.args.length).uleb(t.results.length);
        for (const a of [...t.args, ...t.results]) this.token(w, a, tpCount, where);
        return;
      case "struct": {
        const h = this.structHandle(t.address, t.module, t.name, t.args.length, where);
        if (t.args.length === 0) {
          w.u8(Tok.STRUCT).uleb(h);
        } else {
          w.u8(Tok.STRUCT_INST).uleb(h).uleb(t.args.length);
          for (const a of t.args) this.token(w, a, tpCount, where);
        }
        return;
      }
    }
  }

  private structKey(addressHex: string, module: string, name: string): string {
    return `${addressHex}::${module}::${name}`;
  }

  /** The handle of a struct used in a type; other modules' structs get a handle on first use. */
  private structHandle(address: string, module: string, name: string, arity: number, where: string): number {
    const key = this.structKey(this.addressHex(address), module, name);
    const known = this.structHandles.get(key);
    if (known) {
      if (known.arity !== arity) throw new ModuleBuildError(`${where}: ${module}::${name} takes ${known.arity} type arguments, not ${arity}`);
      return known.index;
    }
    if (this.addressHex(address) === this.selfAddress && module === this.desc.name) {
      throw new ModuleBuildError(`${where}: no struct ${name} in this module`);
    }
    const mh = this.moduleHandle(this.addressHex(address), module);
    const w = new Writer().uleb(mh).uleb(this.ident(name)).uleb(0).uleb(arity);
    for (let i = 0; i < arity; i++) w.uleb(0).uleb(0);
    const index = this.structHandleBytes.length;
    this.structHandles.set(key, { index, arity });
    this.structHandleBytes.push(w);
    return index;
  }

  private moduleHandle(addressHex: string, name: string): number {
    const a = this.addressIndex(addressHex);
    const n = this.ident(name);
    const key = `${a}:${n}`;
    let i = this.moduleHandles.get(key);
    if (i === undefined) {
      i = this.moduleHandleBytes.length;
      this.moduleHandles.set(key, i);
      this.moduleHandleBytes.push(new Writer().uleb(a).uleb(n));
    }
    return i;
  }

  private addressHex(text: string): string {
    const bytes = parseAddress(text);
    if (!bytes) throw new ModuleBuildError(`bad address ${JSON.stringify(text)}`);
    return Buffer.from(bytes).toString("hex");
  }

  private addressIndex(hex: string): number {
    let i = this.addresses.get(hex);
    if (i === undefined) {
      i = this.addresses.size;
      this.addresses.set(hex, i);
    }
    return i;
  }

  private ident(name: string): number {
    if (!IDENT_RE.test(name) || name.length > 255) throw new ModuleBuildError(`bad identifier ${JSON.stringify(name)}`);
    if (name.includes("$") && this.version < 9) throw new ModuleBuildError(`identifier ${name}: '$' needs version 9`);
    let i = this.identifiers.get(name);
    if (i === undefined) {
      i = this.identifiers.size;
      this.identifiers.set(name, i);
    }
    return i;
  }
}

function concat(parts: readonly (Writer | Uint8Array)[]): Uint8Array {
  const w = new Writer();
  for (const p of parts) w.bytes(p instanceof Writer ? p.toBytes() : p);
  return w.toBytes();
}

/** Header, table directory (ULEB offsets and sizes), contents, self module handle index 0. */
function serialize(version: number, tables: readonly [Table, Uint8Array][]): Uint8Array {
  const w = new Writer().bytes(MOVE_MAGIC);
  w.u32(version >= 7 ? (APTOS_VERSION_MASK | version) >>> 0 : version);
  w.uleb(tables.length);
  let offset = 0;
  for (const [kind, bytes] of tables) {
    w.u8(kind).uleb(offset).uleb(bytes.length);
    offset += bytes.length;
  }
  for (const [, bytes] of tables) w.bytes(bytes);
  return w.uleb(0).toBytes();
}
