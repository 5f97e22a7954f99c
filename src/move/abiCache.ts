/**
 * Decode-once cache of the module records the node API sends, keyed by the content hash of the
 * bytecode (`src/ledger/codeHash.ts`). Bounded by entry count, least recently used evicted first.
 */

import { LRUCache } from "lru-cache";
import { abiJson } from "./abi.js";

/**
 * A bounded map from code hash to the encoded module record.
 *
 * @example
 * ```ts
 * const cache = new AbiCache();
 * const bytes = cache.record(hash, bytecode); // decodes once; later calls are a cache hit
 * ```
 */
export class AbiCache {
  private readonly records: LRUCache<string, Buffer>;

  /** @param maxEntries - entries kept before the least recently used is evicted (at least 1). */
  constructor(readonly maxEntries = 10_000) {
    if (!(maxEntries >= 1)) throw new RangeError(`maxEntries ${maxEntries} must be >= 1`);
    this.records = new LRUCache({ max: maxEntries });
  }

  /**
   * The module record the node API sends, `{"bytecode":"0x…","abi":…}`, as encoded JSON bytes
   * (`"abi":null` when the bytecode does not decode). Printed and encoded once per hash, so a page
   * of modules is a `Buffer.concat` of cached records rather than strings joined and encoded anew.
   *
   * @param hash - the bytecode's code hash, as storage keeps it.
   * @param bytecode - module bytes; read only on a miss.
   */
  record(hash: string, bytecode: Uint8Array): Buffer {
    const hit = this.records.get(hash);
    if (hit !== undefined) return hit;
    const hex = Buffer.from(bytecode.buffer, bytecode.byteOffset, bytecode.byteLength).toString("hex");
    const bytes = Buffer.from(`{"bytecode":"0x${hex}","abi":${abiJson(bytecode)}}`, "utf8");
    this.records.set(hash, bytes);
    return bytes;
  }

  /** The cached record of `hash`, without decoding anything on a miss. */
  cachedRecord(hash: string): Buffer | undefined {
    return this.records.get(hash);
  }

  /** Number of cached entries. */
  get size(): number {
    return this.records.size;
  }
}
