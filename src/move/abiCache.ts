/**
 * Decode-once cache of module ABI JSON, keyed by a content hash of the bytecode. A hit is one
 * `Map.get`; the map is bounded (oldest insertion evicted first), so memory stays capped.
 */

import { createHash } from "node:crypto";
import { abiJson } from "./abi.js";

/**
 * The content hash storage computes once per module at ingest: sha256, lowercase hex.
 *
 * @param bytecode - module bytes.
 */
export function codeHash(bytecode: Uint8Array): string {
  return createHash("sha256").update(bytecode).digest("hex");
}

/**
 * A bounded map from code hash to pre-serialized ABI JSON.
 *
 * @example
 * ```ts
 * const cache = new AbiCache();
 * const json = cache.json(codeHash(bytes), bytes); // decodes once; later calls are a Map get
 * ```
 */
export class AbiCache {
  private readonly entries = new Map<string, string>();

  /** @param maxEntries - entries kept before the oldest is evicted (at least 1). */
  constructor(readonly maxEntries = 10_000) {
    if (!(maxEntries >= 1)) throw new RangeError(`maxEntries ${maxEntries} must be >= 1`);
  }

  /**
   * The ABI JSON text of `bytecode` (`"null"` when it does not decode).
   *
   * @param hash - `codeHash(bytecode)`, computed by the caller (storage keeps it).
   * @param bytecode - module bytes; read only on a miss.
   */
  json(hash: string, bytecode: Uint8Array): string {
    const hit = this.entries.get(hash);
    if (hit !== undefined) return hit;
    const text = abiJson(bytecode);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, text);
    return text;
  }

  /**
   * The module record the node API sends, `{"bytecode":"0x…","abi":…}`, as encoded JSON bytes:
   * the bytecode's hex and its ABI are printed and encoded once per hash, so a page of modules is
   * a `Buffer.concat` (11 us for 150 KB, against 237 us to join and encode the strings).
   *
   * @param hash - `codeHash(bytecode)`.
   * @param bytecode - module bytes; read only on a miss.
   */
  record(hash: string, bytecode: Uint8Array): Buffer {
    const hit = this.records.get(hash);
    if (hit !== undefined) return hit;
    const hex = Buffer.from(bytecode.buffer, bytecode.byteOffset, bytecode.byteLength).toString("hex");
    const bytes = Buffer.from(`{"bytecode":"0x${hex}","abi":${abiJson(bytecode)}}`, "utf8");
    if (this.records.size >= this.maxEntries) this.records.delete(this.records.keys().next().value!);
    this.records.set(hash, bytes);
    return bytes;
  }

  /** The cached record of `hash`, without decoding anything on a miss. */
  cachedRecord(hash: string): Buffer | undefined {
    return this.records.get(hash);
  }

  private readonly records = new Map<string, Buffer>();

  /** Number of cached entries. */
  get size(): number {
    return this.entries.size + this.records.size;
  }
}
