/**
 * Account addresses: 32 bytes. Input accepts an optional `0x` then 1..64 hex digits, either case,
 * left-padded with zeros (DECISIONS §4). Output is the AIP-40 form: `0x0`..`0xf` short, every other
 * address `0x` + 64 lowercase hex (DECISIONS §3).
 */

const HEX_RE = /^(?:0x)?([0-9a-fA-F]{1,64})$/;

/** Parses an address; returns null when the text is not one. */
export function parseAddress(text: string): Uint8Array | null {
  const m = HEX_RE.exec(text);
  if (!m) return null;
  return Buffer.from(m[1]!.padStart(64, "0"), "hex");
}

/** AIP-40 display of a 32-byte address. */
export function formatAddress(bytes: Uint8Array): string {
  let special = true;
  for (let i = 0; i < 31; i++) {
    if (bytes[i] !== 0) {
      special = false;
      break;
    }
  }
  if (special && bytes[31]! < 16) return "0x" + bytes[31]!.toString(16);
  return "0x" + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
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
