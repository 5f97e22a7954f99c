/**
 * Parsing of path and query values. Failures are 400 `web_framework_error` naming the parameter
 * and the bad value (docs/decisions.md §2), in the reference node's wording where it has one.
 */
import { addressError, parseAddress } from "../../ledger/address.js";
import { isIdentifier, parseStructTag, structTagString, verifyStructTag } from "../../ledger/structTag.js";
import { ApiError, clip, quote } from "./apiError.js";

const U64_MAX = (1n << 64n) - 1n;

/**
 * What an input property holds, read from its schema: the shared `Address`, `U64` and
 * `StateKeyWrapper` schemas by their `$ref`, a page size (`integer`, u16) and hex bytes by type and
 * format. Parsing (`operationHandler.ts`) and the 400 messages of schema failures both go by it.
 */
export type ParamKind = "address" | "u64" | "hash" | "cursor" | "u16" | "hex" | "struct-tag" | "identifier" | "as-is";

export function paramKind(schema: unknown): ParamKind {
  const p = schema as { $ref?: string; type?: string; format?: string };
  switch (p.$ref) {
    case "Address#":
      return "address";
    case "U64#":
      return "u64";
    case "HashValue#":
      return "hash";
    case "StateKeyWrapper#":
      return "cursor";
    case "MoveStructTag#":
      return "struct-tag";
    case "IdentifierWrapper#":
      return "identifier";
  }
  if (p.type === "integer" && p.format === "uint16") return "u16";
  if (p.type === "string" && p.format === "hex") return "hex";
  return "as-is";
}

/** The kinds of an object schema's properties, by name. */
export function paramKinds(schema: unknown): Record<string, ParamKind> {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  return Object.fromEntries(Object.entries(properties).map(([name, p]) => [name, paramKind(p)]));
}

/**
 * The message for a query value that is not what its parameter holds (`kind`), framed as the
 * reference's (poem-openapi) parse errors: `failed to parse "string(U64)": … (occurred while parsing …)`.
 */
export function queryParamMessage(name: string, kind: ParamKind | undefined, value: unknown): string {
  const text = typeof value === "string" ? value : String(value);
  const frame = (type: string, reason: string) =>
    `failed to parse parameter \`${name}\`: failed to parse "${type}": ${reason} (occurred while parsing "optional<${type}>")`;
  switch (kind) {
    case "u64":
      return frame("string(U64)", `Parsing u64 string ${quote(text)} failed, caused by error: ${integerReason(text, U64_MAX)}`);
    case "u16":
      return frame("integer(uint16)", integerReason(text, 65535n));
    case "cursor":
      return frame("string(StateKeyWrapper)", `${quote(text)} is not a state key cursor (hex of a state key, as sent in X-NODE-CURSOR)`);
    default:
      return `failed to parse parameter \`${name}\`: invalid value ${quote(text)}`;
  }
}

/**
 * The message for a path value that is not what its parameter holds, framed as the reference's
 * path parse errors: `failed to parse path \`txn_version\`: failed to parse "string(U64)": …`.
 */
export function pathParamMessage(name: string, kind: ParamKind | undefined, value: unknown): string {
  const text = typeof value === "string" ? value : String(value);
  if (kind === "u64") {
    return `failed to parse path \`${name}\`: failed to parse "string(U64)": Parsing u64 string ${quote(text)} failed, caused by error: ${integerReason(text, U64_MAX)}`;
  }
  return `failed to parse path \`${name}\`: invalid value ${quote(text)}`;
}

/** Rust's `ParseIntError` text for an unsigned integer that does not parse. */
function integerReason(v: string, max: bigint): string {
  if (v === "") return "cannot parse integer from empty string";
  if (!/^[0-9]+$/.test(v)) return "invalid digit found in string";
  return BigInt(v) > max ? "number too large to fit in target type" : "invalid digit found in string";
}

/**
 * A u16 query value as sent, before the schema coerces it: decimal digits only, as Rust's `u16`
 * parse takes them (ajv's coercion would take `0x10`, `1e1`, `+5` or ` 5` as numbers). Undefined
 * when absent; throws the reference-framed 400 otherwise.
 */
export function checkDecimalQuery(name: string, raw: unknown): void {
  if (raw === undefined) return;
  if (typeof raw !== "string" || !/^[0-9]+$/.test(raw)) throw ApiError.badParam(queryParamMessage(name, "u16", raw));
}

/** A u64 as decimal digits, or null for anything else (more than 2^64-1 included). */
export function u64Of(raw: string): bigint | null {
  return /^[0-9]{1,20}$/.test(raw) && BigInt(raw) <= U64_MAX ? BigInt(raw) : null;
}

/** A u64 in a path (schema already checked the digits). */
export function u64Path(name: string, raw: string): bigint {
  const v = u64Of(raw);
  if (v === null) throw ApiError.badParam(pathParamMessage(name, "u64", raw));
  return v;
}

/**
 * A transaction hash in a path: 64 hex digits, with or without `0x` (the reference's
 * `HashValue::from_str`), parsed to 32 bytes; anything else is the path's 400 in its words.
 */
export function hashPath(name: string, raw: string): Uint8Array {
  const digits = raw.startsWith("0x") ? raw.slice(2) : raw;
  if (!/^[0-9a-fA-F]{64}$/.test(digits)) {
    throw ApiError.badParam(`failed to parse path \`${name}\`: failed to parse "string(HashValue)": unable to parse HashValue`);
  }
  return Buffer.from(digits, "hex");
}

/** An optional u64 query value (schema already checked the digits). */
export function u64Query(name: string, raw: string | undefined): bigint | undefined {
  if (raw === undefined) return undefined;
  const v = u64Of(raw);
  if (v === null) throw ApiError.badParam(queryParamMessage(name, "u64", raw));
  return v;
}

/**
 * An address in a path: `0x` and 1 to 64 hex digits, or 64 without `0x` (docs/decisions.md §1).
 */
export function addressPath(name: string, raw: string): Uint8Array {
  const a = parseAddress(raw);
  if (!a) {
    throw ApiError.badParam(`failed to parse path \`${name}\`: failed to parse "string(Address)": Invalid account address: ${addressError(raw)}`);
  }
  return a;
}

/**
 * A struct tag in a path (a resource type), as the type is stored: printed as the API prints it,
 * whatever spelling the reference parses. Text that does not parse is the path's 400
 * `web_framework_error`; a tag that parses but does not verify (`verifyStructTag`) is 400
 * `invalid_input`, as the reference's `verify` step answers it.
 */
export function structTagPath(name: string, raw: string): string {
  const tag = parseStructTag(raw);
  if (typeof tag === "string") {
    throw ApiError.badParam(`failed to parse path \`${name}\`: failed to parse "string(MoveStructTag)": invalid struct tag ${quote(raw)}: ${clip(tag)}`);
  }
  const invalid = verifyStructTag(tag);
  if (invalid) throw ApiError.invalidInput(`'${name}' invalid: ${clip(invalid)}`, null);
  return structTagString(tag);
}

/** A Move identifier in a path (a module name); anything else is the path's 400, in the reference's words. */
export function identifierPath(name: string, raw: string): string {
  if (!isIdentifier(raw)) {
    throw ApiError.badParam(`failed to parse path \`${name}\`: failed to parse "string(IdentifierWrapper)": Invalid identifier '${clip(raw)}'`);
  }
  return raw;
}
