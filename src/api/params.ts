/**
 * Parsing of path and query values. Failures are 400 `web_framework_error` naming the parameter
 * and the bad value (DECISIONS §5), in the reference node's wording where it has one.
 */
import { LRUCache } from "lru-cache";
import { addressError, parseAddress } from "../ledger/address.js";
import { ApiError, quote } from "./errors.js";

const U64_MAX = (1n << 64n) - 1n;

/** Query parameters and what they hold, for messages about schema failures. */
export const QUERY_KINDS: Record<string, "u64" | "u16" | "cursor"> = {
  ledger_version: "u64",
  start_version: "u64",
  end_version: "u64",
  limit: "u16",
  start: "cursor",
};

/**
 * The message for a query value that is not what its parameter holds, framed as the reference's
 * (poem-openapi) parse errors: `failed to parse "string(U64)": … (occurred while parsing …)`.
 */
export function queryParamMessage(name: string, value: unknown): string {
  const text = typeof value === "string" ? value : String(value);
  const frame = (type: string, reason: string) =>
    `failed to parse parameter \`${name}\`: failed to parse "${type}": ${reason} (occurred while parsing "optional<${type}>")`;
  switch (QUERY_KINDS[name]) {
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
  if (typeof raw !== "string" || !/^[0-9]+$/.test(raw)) throw ApiError.badParam(queryParamMessage(name, raw));
}

/** An optional u64 query value (schema already checked the digits). */
export function u64Query(name: string, raw: string | undefined): bigint | undefined {
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,20}$/.test(raw) || BigInt(raw) > U64_MAX) throw ApiError.badParam(queryParamMessage(name, raw));
  return BigInt(raw);
}

/**
 * Path addresses already parsed, by their text: clients ask for the same accounts and tables again
 * and again, and a parse (pattern, padding, hex decode, a new buffer) costs more than the lookup.
 */
const addresses = new LRUCache<string, Uint8Array>({ max: 4096 });

/**
 * An address in a path: `0x` and 1 to 64 hex digits, or 64 without `0x` (DECISIONS §4). The bytes are shared
 * with every request that spelled the address the same way: read them, never write them.
 */
export function addressPath(name: string, raw: string): Uint8Array {
  const known = addresses.get(raw);
  if (known) return known;
  const a = parseAddress(raw);
  if (!a) {
    throw ApiError.badParam(`failed to parse path \`${name}\`: failed to parse "string(Address)": Invalid account address: ${addressError(raw)}`);
  }
  addresses.set(raw, a);
  return a;
}

/**
 * Parameter schemas, as the reference spec writes them: path and query values reference the shared
 * `Address`, `U64` and `StateKeyWrapper` component schemas (see `schemas.ts`).
 */
export const u64QuerySchema = (description: string) => ({ $ref: "U64#", description });
export const limitQuerySchema = (description: string) => ({
  type: "integer",
  format: "uint16",
  minimum: 0,
  maximum: 65535,
  description,
});
export const addressPathSchema = (description: string) => ({ $ref: "Address#", description });
export const cursorQuerySchema = (description: string) => ({ $ref: "StateKeyWrapper#", description });
