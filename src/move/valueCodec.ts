/**
 * Move values between the reference node's JSON and their BCS bytes, by layout (docs/decisions.md §23):
 * - `encodeJsonValue`: a JSON value (a table key a client sends) to the bytes of the value, refused
 *   in the reference's words (its JSON deserializer's) when the JSON does not hold a value of the type;
 * - `decodeBcsValue`: stored bytes to the JSON text the reference writes for the value: u8, u16 and
 *   u32 as numbers, u64, u128 and u256 as decimal strings, addresses in short form, `vector<u8>` as
 *   `0x` hex, `0x1::string::String` as a string, a struct as an object of its fields sorted by name
 *   (an enum's with `__variant__`).
 * The primitives are @mysten/bcs's (ULEB128 and the little-endian integers).
 */
import { BcsReader, BcsWriter } from "@mysten/bcs";
import { addressError, formatAddress, parseAddress } from "../ledger/address.js";
import { isUtf8String, type FieldLayout, type MoveLayout } from "./layout.js";

/** A value that does not encode or decode as its layout; the message says why. */
export class ValueError extends Error {}

/** The bits of each integer type. */
const BITS = { u8: 8, u16: 16, u32: 32, u64: 64, u128: 128, u256: 256, i8: 8, i16: 16, i32: 32, i64: 64, i128: 128, i256: 256 } as const;
/** The reference's names of the string-held integer types in its parse messages. */
const BIG_NAME = {
  u64: "u64", u128: "u128", u256: "move_core_types::u256::U256",
  i64: "i64", i128: "i128", i256: "move_core_types::int256::I256",
} as const;
type SmallInt = "u8" | "u16" | "u32" | "i8" | "i16" | "i32";
type BigInt_ = keyof typeof BIG_NAME;

/** The range of an integer type. */
function range(k: keyof typeof BITS): [bigint, bigint] {
  const bits = BigInt(BITS[k]);
  return k.startsWith("i") ? [-(1n << (bits - 1n)), (1n << (bits - 1n)) - 1n] : [0n, (1n << bits) - 1n];
}
/** BCS's longest sequence. */
const MAX_SEQUENCE_LENGTH = 2 ** 31 - 1;

// ---------------------------------------------------------------------------------------------
// JSON to BCS
// ---------------------------------------------------------------------------------------------

/**
 * The BCS bytes of the JSON value `json` as a value of `layout`, at most `maxBytes` long.
 *
 * @throws ValueError in the reference's words when the JSON is not a value of the layout, or ours
 *   when the bytes would be longer than `maxBytes`.
 */
export function encodeJsonValue(layout: MoveLayout, json: unknown, maxBytes: number): Uint8Array {
  const w = new BcsWriter({ initialSize: 64, maxSize: maxBytes });
  try {
    writeValue(w, layout, json);
  } catch (e) {
    if (e instanceof ValueError) throw e;
    // the writer's own refusal: the buffer would pass maxSize
    throw new ValueError(`the key's BCS bytes are longer than ${maxBytes}`);
  }
  return w.toBytes();
}

function writeValue(w: BcsWriter, layout: MoveLayout, v: unknown): void {
  switch (layout.k) {
    case "bool":
      if (typeof v !== "boolean") throw new ValueError(`invalid type: ${unexpected(v)}, expected a boolean`);
      w.write8(v ? 1 : 0);
      return;
    case "u8":
    case "u16":
    case "u32":
    case "i8":
    case "i16":
    case "i32":
      writeSmall(w, layout.k, v);
      return;
    case "u64":
    case "u128":
    case "u256":
    case "i64":
    case "i128":
    case "i256": {
      if (typeof v !== "string") throw new ValueError(`invalid type: ${unexpected(v)}, expected a string`);
      const n = parseInteger(v, layout.k);
      if (typeof n === "string") throw new ValueError(`Parsing ${BIG_NAME[layout.k]} string ${rustDebug(v)} failed, caused by error: ${n}`);
      // two's complement for a negative value
      const u = n < 0n ? n + (1n << BigInt(BITS[layout.k])) : n;
      if (BITS[layout.k] === 64) w.write64(u);
      else if (BITS[layout.k] === 128) w.write128(u);
      else w.write256(u);
      return;
    }
    case "address": {
      if (typeof v !== "string") throw new ValueError(`invalid type: ${unexpected(v)}, expected a string`);
      const a = parseAddress(v);
      if (!a) throw new ValueError(`Invalid account address: ${addressError(v)}`);
      w.writeBytes(a);
      return;
    }
    case "vector": {
      if (layout.inner.k === "u8") {
        const bytes = hexBytes(v);
        w.writeULEB(bytes.length);
        w.writeBytes(bytes);
        return;
      }
      if (!Array.isArray(v)) throw new ValueError(`expected vector<${layoutDebug(layout.inner)}>, but got: ${valueDebug(v)}`);
      w.writeULEB(v.length);
      for (const item of v) writeValue(w, layout.inner, item);
      return;
    }
    case "struct": {
      if (isUtf8String(layout.tag)) {
        if (typeof v !== "string") throw new ValueError("failed to parse string::String.");
        const bytes = new TextEncoder().encode(v);
        w.writeULEB(bytes.length);
        w.writeBytes(bytes);
        return;
      }
      if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ValueError("Expecting a JSON Map for struct.");
      const fields = v as Record<string, unknown>;
      for (const f of layout.fields) {
        if (!Object.hasOwn(fields, f.name)) throw new ValueError(`field ${f.name} not found.`);
        writeValue(w, f.layout, fields[f.name]);
      }
      return;
    }
    case "enum":
      // the resolver refuses enums for a JSON value (`EnumSupport`)
      throw new ValueError("enum variants not yet supported by layouts");
  }
}

/** A JSON number as a u8, u16, u32, i8, i16 or i32, in the reference's JSON deserializer's words when it is not one. */
function writeSmall(w: BcsWriter, k: SmallInt, v: unknown): void {
  if (typeof v !== "number" || !Number.isInteger(v)) throw new ValueError(`invalid type: ${unexpected(v)}, expected ${k}`);
  const [min, max] = range(k);
  if (v < Number(min) || v > Number(max)) throw new ValueError(`invalid value: integer \`${v}\`, expected ${k}`);
  if (BITS[k] === 8) w.write8(v & 0xff);
  else if (BITS[k] === 16) w.write16(v & 0xffff);
  else w.write32(v >>> 0);
}

/** Rust's integer parse of decimal text (a leading `+`, and `-` for a signed type, taken), or its error's words. */
function parseInteger(text: string, k: BigInt_): bigint | string {
  if (text === "") return "cannot parse integer from empty string";
  const signed = k.startsWith("i");
  const digits = text.startsWith("+") || (signed && text.startsWith("-")) ? text.slice(1) : text;
  if (!/^[0-9]+$/.test(digits)) return "invalid digit found in string";
  const n = BigInt(text.startsWith("-") ? `-${digits}` : digits);
  const [min, max] = range(k);
  if (n > max) return "number too large to fit in target type";
  return n < min ? "number too small to fit in target type" : n;
}

/** `HexEncodedBytes` from a JSON value: a string, optional `0x`, an even number of hex digits. */
function hexBytes(v: unknown): Uint8Array {
  if (typeof v !== "string") throw new ValueError(`invalid type: ${unexpected(v)}, expected a string`);
  const digits = v.startsWith("0x") ? v.slice(2) : v;
  const fail = (why: string) => new ValueError(`decode hex-encoded string(${rustDebug(v)}) failed, caused by error: ${why}`);
  if (digits.length % 2 !== 0) throw fail("Odd number of digits");
  const bad = /[^0-9a-fA-F]/u.exec(digits);
  if (bad) throw fail(`Invalid character ${rustDebugChar(bad[0])} at position ${bad.index}`);
  return Buffer.from(digits, "hex");
}

/** How the reference's JSON deserializer names a JSON value it did not expect. */
function unexpected(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "boolean") return `boolean \`${v}\``;
  if (typeof v === "number") return Number.isInteger(v) ? `integer \`${v}\`` : `floating point \`${v}\``;
  if (typeof v === "string") return `string ${rustDebug(v)}`;
  return Array.isArray(v) ? "sequence" : "map";
}

/** A JSON value as the reference's `Debug` of it prints (clipped). */
function valueDebug(v: unknown): string {
  if (v === null || v === undefined) return "Null";
  if (typeof v === "boolean") return `Bool(${v})`;
  if (typeof v === "number") return `Number(${v})`;
  if (typeof v === "string") return `String(${rustDebug(v)})`;
  const text = JSON.stringify(v);
  return Array.isArray(v) ? `Array ${clip(text)}` : `Object ${clip(text)}`;
}

/** A layout as the reference's `Debug` of it prints (structs by their name only). */
function layoutDebug(l: MoveLayout): string {
  switch (l.k) {
    case "vector":
      return `Vector(${layoutDebug(l.inner)})`;
    case "struct":
    case "enum":
      return `Struct(${formatAddress(l.tag.address)}::${l.tag.module}::${l.tag.name})`;
    default:
      return PRIMITIVE_DEBUG[l.k];
  }
}

const PRIMITIVE_DEBUG = {
  bool: "Bool", u8: "U8", u16: "U16", u32: "U32", u64: "U64", u128: "U128", u256: "U256", address: "Address",
  i8: "I8", i16: "I16", i32: "I32", i64: "I64", i128: "I128", i256: "I256",
} as const;

/** A string as Rust's `Debug` prints it (JSON's escapes are close enough), clipped. */
function rustDebug(s: string): string {
  return JSON.stringify(clip(s));
}

function rustDebugChar(c: string): string {
  return c === "'" ? "'\\''" : `'${c}'`;
}

function clip(s: string): string {
  return s.length > 100 ? `${s.slice(0, 100)}…` : s;
}

// ---------------------------------------------------------------------------------------------
// BCS to JSON
// ---------------------------------------------------------------------------------------------

/**
 * The JSON text of the BCS bytes `bytes` as a value of `layout`, as the reference writes it. Every
 * byte must be used.
 *
 * @throws ValueError when the bytes are not a value of the layout.
 */
export function decodeBcsValue(layout: MoveLayout, bytes: Uint8Array): string {
  const r = new Decoder(bytes);
  const out = r.value(layout);
  if (r.pos !== bytes.length) throw new ValueError(`${bytes.length - r.pos} bytes are left over after the value`);
  return out;
}

class Decoder {
  pos = 0;
  private readonly reader: BcsReader;

  constructor(private readonly bytes: Uint8Array) {
    this.reader = new BcsReader(bytes);
  }

  /** Claims `n` more bytes, or refuses when the input has fewer. */
  private take(n: number): void {
    if (this.bytes.length - this.pos < n) throw new ValueError(`the value ends early: ${n} more bytes expected at byte ${this.pos}`);
    this.pos += n;
  }

  /**
   * A ULEB128 length, at most BCS's longest sequence, that the bytes left can hold (each element
   * takes a byte at least). @mysten/bcs decodes it and refuses a non-canonical one; its bytes are
   * counted here to keep the position.
   */
  private length(): number {
    const at = this.pos;
    let end = at;
    while (end < this.bytes.length && end - at < 5 && this.bytes[end]! >= 0x80) end++;
    if (end >= this.bytes.length || end - at >= 5) throw new ValueError(`a malformed ULEB128 length at byte ${at}`);
    let value: number;
    try {
      value = this.reader.readULEB();
    } catch {
      throw new ValueError(`a malformed ULEB128 length at byte ${at}`);
    }
    this.pos = end + 1;
    if (value > MAX_SEQUENCE_LENGTH) throw new ValueError(`a malformed ULEB128 length at byte ${at}`);
    if (value > this.bytes.length - this.pos) throw new ValueError(`a length of ${value} at byte ${at} is more than the bytes left`);
    return value;
  }

  private raw(n: number): Uint8Array {
    this.take(n);
    return this.reader.readBytes(n);
  }

  value(layout: MoveLayout): string {
    switch (layout.k) {
      case "bool": {
        this.take(1);
        const b = this.reader.read8();
        if (b > 1) throw new ValueError(`a bool byte ${b} at byte ${this.pos - 1}`);
        return b === 1 ? "true" : "false";
      }
      case "u8":
        this.take(1);
        return String(this.reader.read8());
      case "u16":
        this.take(2);
        return String(this.reader.read16());
      case "u32":
        this.take(4);
        return String(this.reader.read32());
      case "u64":
        this.take(8);
        return `"${this.reader.read64()}"`;
      case "u128":
        this.take(16);
        return `"${this.reader.read128()}"`;
      case "u256":
        this.take(32);
        return `"${this.reader.read256()}"`;
      case "i8":
        this.take(1);
        return String((this.reader.read8() << 24) >> 24);
      case "i16":
        this.take(2);
        return String((this.reader.read16() << 16) >> 16);
      case "i32":
        this.take(4);
        return String(this.reader.read32() | 0);
      case "i64":
        this.take(8);
        return `"${BigInt.asIntN(64, BigInt(this.reader.read64()))}"`;
      case "i128":
        this.take(16);
        return `"${BigInt.asIntN(128, BigInt(this.reader.read128()))}"`;
      case "i256":
        this.take(32);
        return `"${BigInt.asIntN(256, BigInt(this.reader.read256()))}"`;
      case "address":
        return `"${formatAddress(this.raw(32))}"`;
      case "vector": {
        const n = this.length();
        if (layout.inner.k === "u8") return `"0x${Buffer.from(this.raw(n)).toString("hex")}"`;
        const items: string[] = [];
        for (let i = 0; i < n; i++) items.push(this.value(layout.inner));
        return `[${items.join(",")}]`;
      }
      case "struct": {
        if (isUtf8String(layout.tag) && layout.fields.length === 1 && isBytes(layout.fields[0]!.layout)) {
          const bytes = this.raw(this.length());
          return JSON.stringify(utf8OrMark(bytes));
        }
        return object(this.fields(layout.fields));
      }
      case "enum": {
        const at = this.pos;
        const tag = this.length();
        const variant = layout.variants[tag];
        if (!variant) throw new ValueError(`variant ${tag} at byte ${at} of an enum with ${layout.variants.length}`);
        return object([["__variant__", JSON.stringify(variant.name)], ...this.fields(variant.fields)]);
      }
    }
  }

  private fields(fields: readonly FieldLayout[]): [string, string][] {
    return fields.map((f) => [f.name, this.value(f.layout)]);
  }
}

function isBytes(l: MoveLayout): boolean {
  return l.k === "vector" && l.inner.k === "u8";
}

/** A struct's JSON object: its members sorted by name, as the reference's ordered map writes them. */
function object(members: [string, string][]): string {
  members.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The string's text, or the reference's mark for bytes that are not UTF-8. */
function utf8OrMark(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    return `Unparsable utf-8 0x${Buffer.from(bytes).toString("hex")}`;
  }
}
