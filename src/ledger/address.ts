/**
 * Account addresses: 32 bytes, parsed and printed as the reference node does (DECISIONS §3, §4).
 * In: `0x` then 1 to 64 hex digits (either case, left-padded with zeros), or exactly 64 hex digits
 * without `0x`. Out: `to_hex_literal`, `0x` + lowercase hex with leading zeros stripped (`0x0`).
 */

const HEX_RE = /^(?:0x([0-9a-fA-F]{1,64})|([0-9a-fA-F]{64}))$/;

/** Parses an address; returns null when the text is not one (see {@link addressError} for why). */
export function parseAddress(text: string): Uint8Array | null {
  const m = HEX_RE.exec(text);
  if (!m) return null;
  return Buffer.from((m[1] ?? m[2]!).padStart(64, "0"), "hex");
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

/** Parses HexEncodedBytes: optional `0x`, an even number of hex digits. Null when malformed. */
export function parseHexBytes(text: string): Uint8Array | null {
  const body = text.startsWith("0x") ? text.slice(2) : text;
  if (body.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(body)) return null;
  return Buffer.from(body, "hex");
}
