/**
 * Account addresses: 32 bytes, parsed and printed as the reference node does (docs/decisions.md §1, §6).
 * In: `0x` then 1 to 64 hex digits (either case, left-padded with zeros), or exactly 64 hex digits
 * without `0x`. Out: `to_hex_literal`, `0x` + lowercase hex with leading zeros stripped (`0x0`).
 */

/** Each ASCII character's value as a hex digit, -1 for a character that is not one. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;
  HEX_VALUE["0123456789ABCDEF".charCodeAt(i)] = i;
}
const hexValue = (c: number): number => (c < 128 ? HEX_VALUE[c]! : -1);

/**
 * The bytes of the hex digits of `text` from `from`, right-aligned in `size` bytes (zeros before),
 * or null when one is not a hex digit. Checked and decoded in one pass: ingest parses an address
 * or a hash in every change, where a regular expression and then a hex decode cost twice as much.
 */
function decodeHex(text: string, from: number, size: number): Buffer | null {
  const out = Buffer.allocUnsafe(size);
  // The index in `text` of each byte's first digit; before `from`, a padding zero.
  let at = from - (2 * size - (text.length - from));
  for (let k = 0; k < size; k++, at += 2) {
    const hi = at < from ? 0 : hexValue(text.charCodeAt(at));
    const lo = at + 1 < from ? 0 : hexValue(text.charCodeAt(at + 1));
    if ((hi | lo) < 0) return null;
    out[k] = (hi << 4) | lo;
  }
  return out;
}

/** Parses an address; returns null when the text is not one (see {@link addressError} for why). */
export function parseAddress(text: string): Uint8Array | null {
  const prefixed = text.charCodeAt(0) === 48 /* 0 */ && text.charCodeAt(1) === 120; /* x */
  const digits = prefixed ? text.length - 2 : text.length;
  if (prefixed ? digits < 1 || digits > 64 : digits !== 64) return null;
  return decodeHex(text, prefixed ? 2 : 0, 32);
}

/**
 * Why `text` is not an address. A bad character gets the reference's own words: the hex is
 * left-padded to 64 digits before it is decoded, so the position counts from the padded start.
 * Its other texts don't show the value; ours quote it (at most 100 characters).
 */
export function addressError(text: string): string {
  const digits = text.startsWith("0x") ? text.slice(2) : text;
  const shown = JSON.stringify(text.length > 100 ? text.slice(0, 100) + "…" : text);
  if (digits.length > 64) return `Hex string is too long, must be 1 to 64 chars long, excluding the leading 0x: ${shown}`;
  const bad = /[^0-9a-fA-F]/u.exec(digits);
  if (bad) return `Hex characters are invalid: Invalid character '${bad[0]}' at position ${64 - digits.length + bad.index}`;
  if (digits.length === 0) return `Hex string is too short, must be at least 1 char long, excluding the leading 0x: ${shown}`;
  return `Hex string must start with a leading 0x unless it has all 64 digits: ${shown}`;
}

/** `to_hex_literal`: `0x` + lowercase hex without leading zeros; `0x0` for the zero address. */
export function formatAddress(bytes: Uint8Array): string {
  let i = 0;
  while (i < 31 && bytes[i] === 0) i++;
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset + i, bytes.byteLength - i).toString("hex");
  return hex.charCodeAt(0) === 48 /* "0" */ ? "0x" + hex.slice(1) : "0x" + hex;
}

/** `0x` + lowercase hex of every byte, zeros kept (HexEncodedBytes). */
export function toHex(bytes: Uint8Array): string {
  return "0x" + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** Hex texts up to this many digits are decoded here; longer ones (code) by node's native decoder. */
const SHORT_HEX_DIGITS = 128;

/** Parses HexEncodedBytes: optional `0x`, an even number of hex digits. Null when malformed. */
export function parseHexBytes(text: string): Uint8Array | null {
  const from = text.startsWith("0x") ? 2 : 0;
  const digits = text.length - from;
  if (digits % 2 !== 0) return null;
  if (digits <= SHORT_HEX_DIGITS) return decodeHex(text, from, digits / 2);
  const body = text.slice(from);
  if (!/^[0-9a-fA-F]*$/.test(body)) return null;
  return Buffer.from(body, "hex");
}
