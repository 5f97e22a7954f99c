/**
 * The key and value types of a table item request, parsed and checked as the reference node does
 * (docs/decisions.md §23): a type text is parsed as a type tag after an optional `&` or `&mut `,
 * and text that does not parse is kept as "unparsable"; then both types are verified (nesting at
 * most 8 deep, identifiers valid, nothing unparsable), each failure a 400 `invalid_input`
 * "'table_item_request' invalid: …"; then each is made a type tag, where a reference fails with
 * "Failed to parse key_type: …" (or value_type). None of these carry ledger headers: the
 * reference checks them before it reads the ledger.
 */
import { formatAddress, parseAddress } from "../../../ledger/address.js";
import { isIdentifier } from "../../../ledger/structTag.js";
import { parseType, type TypeExpr } from "../../../ledger/typeParser.js";
import { ApiError, clip } from "../../http/apiError.js";

/** A request's Move type as the reference parses one. */
export type RequestType =
  | { readonly k: "type"; readonly type: TypeExpr }
  | { readonly k: "reference"; readonly mutable: boolean; readonly to: RequestType }
  | { readonly k: "unparsable"; readonly text: string };

/** How deep the reference lets types nest (`MAX_RECURSIVE_TYPES_ALLOWED`). */
const MAX_RECURSIVE_TYPES = 8;
/** Text nested deeper than this is not parsed at all (no recursion without end); it is unparsable. */
const MAX_PARSED_NESTING = 64;

/** Parses a type text as the reference's `MoveType` does. */
export function parseRequestType(text: string): RequestType {
  let s = text;
  let ref = false;
  let mutable = false;
  if (s.startsWith("&")) {
    s = s.slice(1);
    ref = true;
    if (s.startsWith("mut ")) {
      s = s.slice(4);
      mutable = true;
    }
  }
  const type = parseTypeTag(s);
  const inner: RequestType = type ? { k: "type", type } : { k: "unparsable", text: s };
  return ref ? { k: "reference", mutable, to: inner } : inner;
}

/** A type tag's text parsed (whitespace between tokens skipped), or null when it is not one. */
function parseTypeTag(text: string): TypeExpr | null {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 60 /* < */ && ++depth > MAX_PARSED_NESTING) return null;
    if (c === 62 /* > */) depth--;
  }
  let expr: TypeExpr;
  try {
    expr = parseType(text.replace(/\s+/g, "").replace(/,/g, ", "));
  } catch {
    return null;
  }
  return isTypeTag(expr) ? expr : null;
}

/** Whether a parsed type is a type tag: no references, type parameters or function types; addresses that parse. */
function isTypeTag(e: TypeExpr): boolean {
  switch (e.k) {
    case "prim":
      return true;
    case "vector":
      return isTypeTag(e.inner);
    case "struct":
      return parseAddress(e.address) !== null && e.args.every(isTypeTag);
    default:
      return false;
  }
}

/** A type as the reference prints it: addresses in short form, ", " between type arguments. */
export function typeText(t: RequestType | TypeExpr): string {
  switch (t.k) {
    case "type":
      return typeText(t.type);
    case "reference":
      return `${t.mutable ? "&mut " : "&"}${typeText(t.to)}`;
    case "unparsable":
      return `unparsable<${t.text}>`;
    case "prim":
      return t.name;
    case "vector":
      return `vector<${typeText(t.inner)}>`;
    case "struct": {
      const base = `${formatAddress(parseAddress(t.address)!)}::${t.module}::${t.name}`;
      return t.args.length === 0 ? base : `${base}<${t.args.map(typeText).join(", ")}>`;
    }
    default:
      return "";
  }
}

/** Why a request's type does not verify, in the reference's words, or null. */
export function verifyRequestType(t: RequestType, depth = 0): string | null {
  if (depth > MAX_RECURSIVE_TYPES) return `Move type ${clip(typeText(t))} has gone over the limit of recursive types ${MAX_RECURSIVE_TYPES}`;
  switch (t.k) {
    case "unparsable":
      return `Unable to parse move type ${clip(t.text)}`;
    case "reference":
      return verifyRequestType(t.to, depth + 1);
    case "type":
      return verifyExpr(t.type, depth);
  }
}

function verifyExpr(e: TypeExpr, depth: number): string | null {
  if (depth > MAX_RECURSIVE_TYPES) return `Move type ${clip(typeText(e))} has gone over the limit of recursive types ${MAX_RECURSIVE_TYPES}`;
  if (e.k === "vector") return verifyExpr(e.inner, depth + 1);
  if (e.k !== "struct") return null;
  const d = depth + 1;
  const shown = () => clip(typeText(e));
  if (d > MAX_RECURSIVE_TYPES) return `Move struct tag ${shown()} has gone over the limit of recursive types ${MAX_RECURSIVE_TYPES}`;
  if (!isIdentifier(e.module) || !isIdentifier(e.name)) return `invalid struct tag: ${shown()}`;
  for (const a of e.args) {
    const why = verifyExpr(a, d + 1);
    if (why) return `Invalid struct tag for generic type params: ${shown()} ${why}`;
  }
  return null;
}

/** The reference's debug print of a type a reference points to (the message of a reference type). */
function debugText(t: RequestType | TypeExpr): string {
  switch (t.k) {
    case "type":
      return debugText(t.type);
    case "reference":
      return `Reference { mutable: ${t.mutable}, to: ${debugText(t.to)} }`;
    case "unparsable":
      return `Unparsable(${JSON.stringify(t.text)})`;
    case "prim":
      return t.name.charAt(0).toUpperCase() + t.name.slice(1);
    case "vector":
      return `Vector { items: ${debugText(t.inner)} }`;
    default:
      return `Struct(${typeText(t as TypeExpr)})`;
  }
}

/** The key and value types of a valid request, as type tags. */
export interface TableItemTypes {
  key: TypeExpr;
  value: TypeExpr;
}

/**
 * Checks the request's two type texts in the reference's order (both verified, then each made a
 * type tag) and gives them parsed.
 *
 * @throws ApiError 400 `invalid_input` in the reference's words, without ledger headers.
 */
export function tableItemTypes(keyType: string, valueType: string): TableItemTypes {
  const key = parseRequestType(keyType);
  const value = parseRequestType(valueType);
  const invalid = verifyRequestType(key) ?? verifyRequestType(value);
  if (invalid) throw ApiError.invalidInput(`'table_item_request' invalid: ${invalid}`, null);
  return { key: typeTagOf(key, "key_type"), value: typeTagOf(value, "value_type") };
}

function typeTagOf(t: RequestType, name: string): TypeExpr {
  if (t.k === "type") return t.type;
  throw ApiError.invalidInput(`Failed to parse ${name}: Invalid move type for converting into \`TypeTag\`: ${clip(debugText(t))}`, null);
}
