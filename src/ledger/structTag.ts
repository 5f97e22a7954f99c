/**
 * Move struct tags as the resource reads take them (`GET /accounts/{a}/resource/{type}`) and as
 * the reference node keys and orders resources:
 * - parsed from the API's text (`0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>`), addresses in
 *   any form `parseAddress` takes, type arguments separated by "," with or without a space;
 * - printed as the API prints them (`to_hex_literal` addresses, ", " between type arguments): the
 *   form a resource's type is stored in, so a request in any spelling finds it;
 * - encoded as the resource's state key in `stateKey.ts`, whose bytes order an account's resources
 *   page as the reference's storage does (docs/decisions.md §11, as for modules).
 */
import { parseType, type TypeExpr } from "./typeParser.js";
import { formatAddress, parseAddress } from "./address.js";

/** A parsed type argument of a struct tag (no references, type parameters or function types). */
type PrimitiveName = "bool" | "u8" | "u16" | "u32" | "u64" | "u128" | "u256" | "address" | "signer";
const PRIMITIVES: ReadonlySet<string> = new Set<PrimitiveName>(["bool", "u8", "u16", "u32", "u64", "u128", "u256", "address", "signer"]);

export type TypeTag =
  | { readonly k: "prim"; readonly name: PrimitiveName }
  | { readonly k: "vector"; readonly inner: TypeTag }
  | { readonly k: "struct"; readonly tag: StructTag };

export interface StructTag {
  readonly address: Uint8Array;
  readonly module: string;
  readonly name: string;
  readonly args: readonly TypeTag[];
}

/** How deep type arguments may nest (the reference's `MAX_RECURSIVE_TYPES_ALLOWED`). */
const MAX_DEPTH = 8;
/**
 * The longest identifier the reference's Move deserializer takes (`IDENTIFIER_SIZE_MAX`, with the
 * `LIMIT_MAX_IDENTIFIER_LENGTH` feature on): no module or struct has a longer name (docs/following.md, "The
 * replica's base state, decided").
 */
export const IDENTIFIER_SIZE_MAX = 255;
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
 * deeper than the reference allows, or a name longer than any module's or struct's can be
 * (`IDENTIFIER_SIZE_MAX`). Null when it is valid.
 */
export function verifyStructTag(tag: StructTag, depth = 0): string | null {
  if (depth > MAX_DEPTH) return `type arguments nest deeper than ${MAX_DEPTH}`;
  for (const id of [tag.module, tag.name]) {
    if (!isIdentifier(id)) return `Invalid identifier '${id}'`;
    // identifiers are ASCII: characters are bytes
    if (id.length > IDENTIFIER_SIZE_MAX) return `Identifier '${id.slice(0, 32)}…' is ${id.length} bytes long, it must be at most ${IDENTIFIER_SIZE_MAX}`;
  }
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
      return PRIMITIVES.has(expr.name) ? { k: "prim", name: expr.name as PrimitiveName } : `type ${expr.name} is not a type argument of a resource`;
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
