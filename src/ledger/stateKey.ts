/**
 * State keys of modules, encoded as the reference node stores them, so that our module order and
 * cursors are exactly its own (DECISIONS §10):
 *
 *   StateKey::AccessPath tag 0x00
 *   AccessPath { address: 32 bytes, path: ULEB128 length + bytes }
 *   path = Path::Code tag 0x00 + ModuleId { address: 32 bytes, name: ULEB128 length + UTF-8 }
 *
 * Within one account this orders modules by name length, then bytewise.
 */

function uleb128(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

/** The state key of module `address::name`. */
export function moduleStateKey(address: Uint8Array, name: string): Uint8Array {
  const nameBytes = Buffer.from(name, "utf8");
  const path = Buffer.concat([
    Buffer.from([0x00]),
    address,
    Buffer.from(uleb128(nameBytes.length)),
    nameBytes,
  ]);
  return Buffer.concat([Buffer.from([0x00]), address, Buffer.from(uleb128(path.length)), path]);
}

/**
 * Decodes a module state key; returns null unless it is exactly one well-formed module key
 * (used to validate the `start` cursor).
 */
export function parseModuleStateKey(key: Uint8Array): { address: Uint8Array; name: string } | null {
  const buf = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  let pos = 0;
  const readUleb = (): number | null => {
    let value = 0;
    let shift = 0;
    for (;;) {
      if (pos >= buf.length || shift > 28) return null;
      const b = buf[pos++]!;
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) {
        if (shift > 0 && b === 0) return null; // non-canonical
        return value >>> 0;
      }
      shift += 7;
    }
  };
  if (buf.length < 1 + 32 || buf[pos++] !== 0x00) return null;
  const address = buf.subarray(pos, pos + 32);
  pos += 32;
  const pathLen = readUleb();
  if (pathLen === null || pos + pathLen !== buf.length) return null;
  if (buf[pos++] !== 0x00) return null;
  if (pos + 32 > buf.length || !buf.subarray(pos, pos + 32).equals(address)) return null;
  pos += 32;
  const nameLen = readUleb();
  if (nameLen === null || nameLen === 0 || pos + nameLen !== buf.length) return null;
  const nameBytes = buf.subarray(pos, pos + nameLen);
  const name = nameBytes.toString("utf8");
  if (!Buffer.from(name, "utf8").equals(nameBytes)) return null;
  return { address: Uint8Array.from(address), name };
}
