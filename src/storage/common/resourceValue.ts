/**
 * The stored form of a resource's JSON value, the same in both backends.
 *
 * Most resource writes on a chain are small JSON objects that repeat the same field names and the
 * owner's own address (an account's authentication key, its event handles' GUIDs): `0x1::account::Account`
 * alone is one write per user transaction, about 140 bytes of JSON. Stored as raw DEFLATE
 * (node:zlib) with a preset dictionary of those field names followed by the owner's address, such a
 * value takes about 17 bytes, and nothing is lost: unpacking gives back the exact JSON text.
 *
 * The first byte says how the rest is stored, so a stored value stays readable whatever is
 * added later: append codes, never change one.
 * - `RAW` (0): the JSON's UTF-8 bytes, when DEFLATE would not make it smaller.
 * - `DEFLATE_V1` (1): raw DEFLATE with the dictionary `DICTIONARY_V1` + "0x" + owner address hex.
 * A stored value may also be the JSON text itself (a string): rows written before this format.
 *
 * Packing writes the DEFLATE stream itself (`PresetDeflater`), reading inflates with node:zlib:
 * any valid stream for the dictionary reads back, so values packed by either stay readable.
 */
import { inflateRawSync } from "node:zlib";
import { PresetDeflater } from "./presetDeflate.js";

const RAW = 0;
const DEFLATE_V1 = 1;

/**
 * Field names and fragments common in Aptos framework resources' JSON, most frequent last (DEFLATE
 * finds nearer matches cheaper). Fixed for code `DEFLATE_V1`: changing it would make stored values
 * unreadable; a new dictionary needs a new code.
 */
const DICTIONARY_V1 = Buffer.from(
  [
    '{"vec":[]}',
    '"0x1::string::String"',
    '{"inner":"0x',
    '"frozen":false',
    '"withdraw_events":{"counter":"',
    '"deposit_events":{"counter":"',
    '{"coin":{"value":"',
    '"rotation_capability_offer":{"for":{"vec":[]}}',
    '"signer_capability_offer":{"for":{"vec":[]}}',
    '"key_rotation_events":{"counter":"0","guid":{"id":{"addr":"0x',
    '"coin_register_events":{"counter":"0","guid":{"id":{"addr":"0x',
    '","creation_num":"',
    '"}}},',
    '{"authentication_key":"0x',
    '","sequence_number":"',
    '","guid_creation_num":"',
    '"}',
  ].join(""),
  "latin1",
);

/** A small window: values are small. Packed streams never look further back (`PresetDeflater`). */
const WINDOW_BITS = 10;

/** The dictionary's tail for an owner: its address as the JSON text `"0x…"` (lowercase hex digits). */
let ownerTail = new Uint8Array(0);
const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1");

function ownerTailFor(owner: Uint8Array): Uint8Array {
  const length = 4 + 2 * owner.length;
  if (ownerTail.length !== length) {
    ownerTail = new Uint8Array(length);
    ownerTail.set([0x22, 0x30, 0x78]); // "0x
    ownerTail[length - 1] = 0x22; // "
  }
  for (let i = 0; i < owner.length; i++) {
    const b = owner[i]!;
    ownerTail[3 + 2 * i] = HEX_DIGITS[b >> 4]!;
    ownerTail[4 + 2 * i] = HEX_DIGITS[b & 15]!;
  }
  return ownerTail;
}

function dictionaryFor(owner: Uint8Array): Buffer {
  return Buffer.concat([DICTIONARY_V1, ownerTailFor(owner)]);
}

/** One per thread (a module instance is): it keeps the dictionary's fixed part hashed. */
let deflater: PresetDeflater | null = null;

/** The stored bytes of resource JSON `json` owned by the 32-byte address `owner`. */
export function packResourceValue(owner: Uint8Array, json: string): Buffer {
  const raw = Buffer.from(json, "utf8");
  deflater ??= new PresetDeflater(DICTIONARY_V1, 1 << WINDOW_BITS);
  const packed = deflater.deflate(ownerTailFor(owner), raw);
  const stored = Buffer.allocUnsafe(1 + (packed ?? raw).length);
  stored[0] = packed ? DEFLATE_V1 : RAW;
  stored.set(packed ?? raw, 1);
  return stored;
}

/**
 * The resource JSON stored as `stored` for owner `owner`: the inverse of `packResourceValue`; a
 * string (a row from before this format) is the JSON itself. Throws on an unknown code or corrupt
 * bytes: a stored value is never guessed at.
 */
export function unpackResourceValue(owner: Uint8Array, stored: Uint8Array | string): string {
  if (typeof stored === "string") return stored;
  const bytes = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  switch (bytes[0]) {
    case RAW:
      return bytes.toString("utf8", 1);
    case DEFLATE_V1:
      return inflateRawSync(bytes.subarray(1), { windowBits: WINDOW_BITS, dictionary: dictionaryFor(owner) }).toString("utf8");
    default:
      throw new Error(`stored resource value has unknown format code ${bytes[0]}`);
  }
}
