/**
 * The stream's filters (docs/decisions.md §24): parsed before the stream opens, each bad value a
 * 400 naming it, and matched against what a transaction's JSON says of it (its facts), which are
 * read once per transaction however many streams look at it.
 */
import { addressError, parseAddress, toHex } from "../../../ledger/address.js";
import { isIdentifier, parseStructTag, structTagString, verifyStructTag } from "../../../ledger/structTag.js";
import { ApiError, clip, quote } from "../../http/apiError.js";

/** The filters of one stream; absent ones match every transaction. */
export interface StreamFilter {
  /** Addresses as `0x` and 64 hex digits. */
  sender?: string;
  address?: string;
  /** `0x…64::module::name`. */
  function?: string;
  /** The struct tag as printed canonically; `generic`: written without type arguments, so it matches every instantiation. */
  eventType?: { tag: string; generic: boolean };
  success?: boolean;
}

/** The filter parameters as the query schema passed them. */
export interface FilterQuery {
  sender?: string | undefined;
  address?: string | undefined;
  function?: string | undefined;
  event_type?: string | undefined;
  success?: boolean | undefined;
}

/** The 400 of a filter value, in the frame of the reference's query parse errors. */
function refused(name: string, type: string, reason: string): ApiError {
  return ApiError.badParam(`failed to parse parameter \`${name}\`: failed to parse "string(${type})": ${reason} (occurred while parsing "optional<string(${type})>")`);
}

function addressFilter(name: string, raw: string): string {
  const bytes = parseAddress(raw);
  if (!bytes) throw refused(name, "Address", `Invalid account address: ${addressError(raw)}`);
  return toHex(bytes);
}

export function parseFilter(q: FilterQuery): StreamFilter {
  const f: StreamFilter = {};
  if (q.sender !== undefined) f.sender = addressFilter("sender", q.sender);
  if (q.address !== undefined) f.address = addressFilter("address", q.address);
  if (q.function !== undefined) f.function = functionFilter(q.function);
  if (q.event_type !== undefined) {
    const tag = parseStructTag(q.event_type);
    if (typeof tag === "string") throw refused("event_type", "MoveStructTag", `invalid struct tag ${quote(q.event_type)}: ${clip(tag)}`);
    const invalid = verifyStructTag(tag);
    if (invalid) throw refused("event_type", "MoveStructTag", `invalid struct tag ${quote(q.event_type)}: ${clip(invalid)}`);
    f.eventType = { tag: canonicalTag(structTagString(tag)), generic: tag.args.length === 0 };
  }
  if (q.success !== undefined) f.success = q.success;
  return f;
}

/** An entry function id, `address::module::name`, as its address's 64 digits. */
function functionFilter(raw: string): string {
  const parts = raw.split("::");
  const bad = (why: string) => refused("function", "EntryFunctionId", `invalid entry function id ${quote(raw)}: ${why}`);
  if (parts.length !== 3) throw bad("expected address::module::function");
  const [address = "", module = "", name = ""] = parts;
  const bytes = parseAddress(address);
  if (!bytes) throw bad(`Invalid account address: ${addressError(address)}`);
  if (!isIdentifier(module)) throw bad(`invalid module name ${quote(module)}`);
  if (!isIdentifier(name)) throw bad(`invalid function name ${quote(name)}`);
  return `${toHex(bytes)}::${module}::${name}`;
}

/** Whether matching needs the transaction's facts (an unfiltered stream reads none). */
export function needsFacts(f: StreamFilter): boolean {
  return f.sender !== undefined || f.address !== undefined || f.function !== undefined || f.eventType !== undefined || f.success !== undefined;
}

/** What the filters look at in one transaction, read from its JSON. */
export interface TransactionFacts {
  sender: string | null;
  success: boolean | null;
  function: string | null;
  /** Every address it touches: the sender, its other signers and fee payer, each change's and each event handle's account. */
  addresses: Set<string>;
  /** Its events' types, canonical; `bases`: the same without type arguments. */
  eventTypes: Set<string>;
  eventBases: Set<string>;
}

type Json = Record<string, unknown>;

/** The facts of a transaction's JSON text. */
export function factsOf(text: Uint8Array): TransactionFacts {
  const t = JSON.parse(Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString("utf8")) as Json;
  const addresses = new Set<string>();
  const add = (a: unknown): string | null => {
    if (typeof a !== "string") return null;
    const bytes = parseAddress(a);
    if (!bytes) return null;
    const hex = toHex(bytes);
    addresses.add(hex);
    return hex;
  };
  const sender = add(t.sender);
  const signature = (t.signature ?? {}) as Json;
  for (const a of arrayOf(signature.secondary_signer_addresses)) add(a);
  add(signature.fee_payer_address);
  for (const c of arrayOf(t.changes)) add((c as Json | null)?.address);
  const eventTypes = new Set<string>();
  const eventBases = new Set<string>();
  for (const e of arrayOf(t.events)) {
    const event = (e ?? {}) as Json;
    const account = ((event.guid ?? {}) as Json).account_address;
    // Module events name no handle: their GUID's account is 0x0.
    if (typeof account === "string" && !/^0x0*$/.test(account)) add(account);
    if (typeof event.type === "string") {
      const type = canonicalTag(event.type);
      eventTypes.add(type);
      eventBases.add(baseOf(type));
    }
  }
  return { sender, success: typeof t.success === "boolean" ? t.success : null, function: functionOf(t.payload), addresses, eventTypes, eventBases };
}

function arrayOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** The entry function an entry function payload calls (also inside a multisig payload), with its address's 64 digits. */
function functionOf(payload: unknown): string | null {
  const p = (payload ?? {}) as Json;
  const inner = p.type === "multisig_payload" ? ((p.transaction_payload ?? {}) as Json) : p;
  if (typeof inner.function !== "string") return null;
  const [address = "", ...rest] = inner.function.split("::");
  const bytes = parseAddress(address);
  return bytes && rest.length === 2 ? `${toHex(bytes)}::${rest.join("::")}` : null;
}

/** A type's text with every address as its 64 digits, so that `0x1::…` and `0x000…1::…` compare equal. */
function canonicalTag(type: string): string {
  return type.replace(/0x[0-9a-fA-F]{1,64}(?=::)/g, (a) => toHex(parseAddress(a)!)).replace(/\s+/g, "");
}

function baseOf(type: string): string {
  const lt = type.indexOf("<");
  return lt < 0 ? type : type.slice(0, lt);
}

/**
 * The one key a stream is found by (its most selective filter: sender, function, event type,
 * address), or null for a stream that looks at every transaction (no filter, or `success` only).
 */
export function keyOf(f: StreamFilter): string | null {
  if (f.sender !== undefined) return `sender ${f.sender}`;
  if (f.function !== undefined) return `function ${f.function}`;
  if (f.eventType !== undefined) return f.eventType.generic ? `event_base ${f.eventType.tag}` : `event ${f.eventType.tag}`;
  if (f.address !== undefined) return `address ${f.address}`;
  return null;
}

/** Every key under which a stream may want a transaction with these facts (`keyOf` of the filters it could pass). */
export function keysOf(t: TransactionFacts): string[] {
  const keys: string[] = [];
  if (t.sender !== null) keys.push(`sender ${t.sender}`);
  if (t.function !== null) keys.push(`function ${t.function}`);
  for (const e of t.eventTypes) keys.push(`event ${e}`);
  for (const b of t.eventBases) keys.push(`event_base ${b}`);
  for (const a of t.addresses) keys.push(`address ${a}`);
  return keys;
}

/** Whether a transaction with these facts passes every filter (`facts`: read only when `needsFacts`). */
export function matches(f: StreamFilter, facts: () => TransactionFacts): boolean {
  if (!needsFacts(f)) return true;
  const t = facts();
  if (f.sender !== undefined && t.sender !== f.sender) return false;
  if (f.success !== undefined && t.success !== f.success) return false;
  if (f.function !== undefined && t.function !== f.function) return false;
  if (f.address !== undefined && !t.addresses.has(f.address)) return false;
  if (f.eventType !== undefined && !(f.eventType.generic ? t.eventBases : t.eventTypes).has(f.eventType.tag)) return false;
  return true;
}
