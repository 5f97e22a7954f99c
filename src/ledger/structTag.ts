/**
 * Move struct tags as the resource reads take them (`GET /accounts/{a}/resource/{type}`) and as
 * the reference node keys and orders resources:
 * - parsed from the API's text (`0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>`), addresses in
 *   any form `parseAddress` takes, type arguments separated by "," with or without a space;
 * - printed as the API prints them (`to_hex_literal` addresses, ", " between type arguments): the
 *   form a resource's type is stored in, so a request in any spelling finds it;
 * - encoded as the resource's state key, `StateKey::AccessPath { address, path:
 *   BCS(Path::Resource(StructTag)) }`, whose bytes order an account's resources page as the
 *   reference's storage does (DECISIONS §10, as for modules).
 */
import { parseType, type TypeExpr } from "../move/typeParser.js";
import { formatAddress, parseAddress } from "./address.js";

/** A parsed type argument of a struct tag (no references, type parameters or function types). */
export type TypeTag =
  | { readonly k: "prim"; readonly name: "bool" | "u8" | "u16" | "u32" | "u64" | "u128" | "u256" | "address" | "signer" }
  | { readonly k: "vector"; readonly inner: TypeTag }
  | { readonly k: "struct"; readonly tag: StructTag };

export interface StructTag {
  readonly address: Uint8Array;
  readonly module: string;
  readonly name: string;
  readonly args: readonly TypeTag[];
}

/** BCS variant index of each primitive `TypeTag` (move-core-types `TypeTag`). */
const PRIM_VARIANT = { bool: 0, u8: 1, u64: 2, u128: 3, address: 4, signer: 5, u16: 8, u32: 9, u256: 10 } as const;
const VECTOR_VARIANT = 6;
const STRUCT_VARIANT = 7;
/** `Path::Resource` in an access path. */
const RESOURCE_PATH = 1;
/** How deep type arguments may nest (the reference's `MAX_RECURSIVE_TYPES_ALLOWED`). */
const MAX_DEPTH = 8;
/** A Move identifier, as `Identifier::is_valid` takes it. */
const IDENTIFIER = /^(?:[a-zA-Z][a-zA-Z0-9_]*|_[a-zA-Z0-9_]+)$/;

/** Whether `text` is a valid Move identifier (a module or struct name). */
export function isIdentifier(text: string): boolean {
  return IDENTIFIER.test(text);
}

/** Parses a struct tag (see `verifyStructTag` for the rest of its checks); a string saying why the text is not one otherwise. */
export function parseStructTag(text: string): StructTag | string {
  let expr: TypeExpr;
  try {
    // the node's parser skips whitespace between tokens
    expr = parseType(text.replace(/\s+/g, "").replace(/,/g, ", "));
  } catch (e) {
    return (e as Error).message;
  }
  if (expr.k !== "struct") return `${JSON.stringify(text)} is not a struct tag (address::module::Name<TypeArgs>)`;
  return structOf(expr, 0);
}

/**
 * Why a parsed struct tag is not a valid one (the reference's `verify`, a separate 400 from a
 * parse failure): a module or struct name that is not an identifier, or type arguments nested
 * deeper than the reference allows. Null when it is valid.
 */
export function verifyStructTag(tag: StructTag, depth = 0): string | null {
  if (depth > MAX_DEPTH) return `type arguments nest deeper than ${MAX_DEPTH}`;
  for (const id of [tag.module, tag.name]) if (!isIdentifier(id)) return `Invalid identifier '${id}'`;
  for (const a of tag.args) {
    let t: TypeTag = a;
    let d = depth + 1;
    while (t.k === "vector") {
      t = t.inner;
      d++;
    }
    if (t.k === "struct") {
      const why = verifyStructTag(t.tag, d);
      if (why) return why;
    } else if (d > MAX_DEPTH) return `type arguments nest deeper than ${MAX_DEPTH}`;
  }
  return null;
}

function structOf(expr: Extract<TypeExpr, { k: "struct" }>, depth: number): StructTag | string {
  const address = parseAddress(expr.address);
  if (!address) return `invalid address ${JSON.stringify(expr.address)}`;
  const args: TypeTag[] = [];
  for (const a of expr.args) {
    const arg = typeTagOf(a, depth + 1);
    if (typeof arg === "string") return arg;
    args.push(arg);
  }
  return { address, module: expr.module, name: expr.name, args };
}

function typeTagOf(expr: TypeExpr, depth: number): TypeTag | string {
  switch (expr.k) {
    case "prim":
      return expr.name in PRIM_VARIANT ? { k: "prim", name: expr.name as keyof typeof PRIM_VARIANT } : `type ${expr.name} is not a type argument of a resource`;
    case "vector": {
      const inner = typeTagOf(expr.inner, depth + 1);
      return typeof inner === "string" ? inner : { k: "vector", inner };
    }
    case "struct": {
      const tag = structOf(expr, depth);
      return typeof tag === "string" ? tag : { k: "struct", tag };
    }
    default:
      return "references, type parameters and function types are not type arguments of a resource";
  }
}

/** The struct tag as the API prints it (and a resource's type is stored). */
export function structTagString(tag: StructTag): string {
  const base = `${formatAddress(tag.address)}::${tag.module}::${tag.name}`;
  return tag.args.length === 0 ? base : `${base}<${tag.args.map(typeTagString).join(", ")}>`;
}

function typeTagString(t: TypeTag): string {
  if (t.k === "prim") return t.name;
  if (t.k === "vector") return `vector<${typeTagString(t.inner)}>`;
  return structTagString(t.tag);
}

function uleb128(n: number, out: number[]): void {
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
}

function pushBytes(bytes: Uint8Array, out: number[]): void {
  for (const b of bytes) out.push(b);
}

function pushString(s: string, out: number[]): void {
  const bytes = Buffer.from(s, "utf8");
  uleb128(bytes.length, out);
  pushBytes(bytes, out);
}

function structBcs(tag: StructTag, out: number[]): void {
  pushBytes(tag.address, out);
  pushString(tag.module, out);
  pushString(tag.name, out);
  uleb128(tag.args.length, out);
  for (const a of tag.args) typeTagBcs(a, out);
}

function typeTagBcs(t: TypeTag, out: number[]): void {
  if (t.k === "prim") out.push(PRIM_VARIANT[t.name]);
  else if (t.k === "vector") {
    out.push(VECTOR_VARIANT);
    typeTagBcs(t.inner, out);
  } else {
    out.push(STRUCT_VARIANT);
    structBcs(t.tag, out);
  }
}

/** The state key of resource `tag` of `address` (see the file's comment). */
export function resourceStateKey(address: Uint8Array, tag: StructTag): Buffer {
  const path: number[] = [RESOURCE_PATH];
  structBcs(tag, path);
  const out: number[] = [0x00];
  pushBytes(address, out);
  uleb128(path.length, out);
  for (const b of path) out.push(b);
  return Buffer.from(out);
}

/**
 * Whether `key` is a resource state key of `address` (the `start` cursor of a resources page):
 * the access-path tag, the account, a path of the length it says that is a `Path::Resource`.
 */
export function isResourceStateKeyOf(key: Uint8Array, address: Uint8Array): boolean {
  if (key.length < 35 || key[0] !== 0x00 || !Buffer.from(key.subarray(1, 33)).equals(Buffer.from(address))) return false;
  let pos = 33;
  let len = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= key.length || shift > 28) return false;
    const b = key[pos++]!;
    len |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
  }
  return pos + len === key.length && key[pos] === RESOURCE_PATH;
}
