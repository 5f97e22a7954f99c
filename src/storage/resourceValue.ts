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
 */
import { deflateRawSync, inflateRawSync, type ZlibOptions } from "node:zlib";

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

/** A small window and state: values are small, and most of the cost of a call is setting up its state. */
const ZLIB: ZlibOptions = { windowBits: 10, memLevel: 1, level: 6 };
/**
 * Packing's output buffer: a packed value is tens of bytes, and the default 16 KiB buffer was
 * allocated anew for every value. Its size does not change the DEFLATE stream, only how it is read.
 */
const PACK_ZLIB: ZlibOptions = { ...ZLIB, chunkSize: 128 };

function dictionaryFor(owner: Uint8Array): Buffer {
  return Buffer.concat([DICTIONARY_V1, Buffer.from(`"0x${Buffer.from(owner.buffer, owner.byteOffset, owner.byteLength).toString("hex")}"`, "latin1")]);
}

/** The stored bytes of resource JSON `json` owned by the 32-byte address `owner`. */
export function packResourceValue(owner: Uint8Array, json: string): Buffer {
  const raw = Buffer.from(json, "utf8");
  const packed = deflateRawSync(raw, { ...PACK_ZLIB, dictionary: dictionaryFor(owner) });
  if (packed.length < raw.length) return Buffer.concat([Buffer.of(DEFLATE_V1), packed]);
  return Buffer.concat([Buffer.of(RAW), raw]);
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
      return inflateRawSync(bytes.subarray(1), { windowBits: ZLIB.windowBits, dictionary: dictionaryFor(owner) }).toString("utf8");
    default:
      throw new Error(`stored resource value has unknown format code ${bytes[0]}`);
  }
}
