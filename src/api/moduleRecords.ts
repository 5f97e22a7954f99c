/**
 * The JSON record the modules operation sends for one module (`MoveModuleBytecode`: the bytecode
 * as hex and its ABI), encoded once per bytecode hash, so a page of modules is a concatenation of
 * cached records. Bounded by entry count, least recently used out first.
 *
 * The ABI is the text storage keeps with the bytecode (`ModuleEntry.abi`, computed when the code
 * was written): a record is then a hex encoding and a concatenation, a small part of what decoding
 * the bytecode costs (bench/RESULTS.md, "Measurements behind the code's choices"). Code stored
 * without it (a database whose migration did not fill it) is decoded here and serialized by the
 * `MoveModule` schema's own serializer, the same bytes (`moduleRecords.test.ts`). The record's two
 * properties are written around it: byte for byte what the `MoveModuleBytecode` serializer writes
 * (its properties in schema order, the hex needing no escapes), without the ajv validation of the
 * whole ABI that its `anyOf: [MoveModule, null]` runs to pick a branch.
 *
 * The cache still pays with stored ABI text: a hit skips the code row's read as well, for about
 * 1.3 KB a record.
 */
import { LRUCache } from "lru-cache";
import { moduleAbi, type MoveModuleAbi } from "../move/abi.js";
import { DEFAULT_MODULE_CACHE_BYTES } from "./config.js";
import { jsonSerializer } from "./serialize.js";
import { moveModule } from "./schemas.js";

/**
 * Bytes a record counts besides its own: its key (64 hex digits), its Buffer object and its
 * allocation, and the cache's slot, as measured (bench/RESULTS.md, issue 35 part M).
 */
export const RECORD_OVERHEAD = 512;

export class ModuleRecords {
  /** null: a bound of 0, nothing kept. */
  private readonly records: LRUCache<string, Buffer> | null;
  private readonly serializeAbi = jsonSerializer<MoveModuleAbi>({ $ref: `${moveModule.$id}#` });

  /**
   * @param maxBytes - bytes of records kept (each counted with `RECORD_OVERHEAD`) before the least
   *   recently used is evicted; 0 keeps none.
   */
  constructor(readonly maxBytes = DEFAULT_MODULE_CACHE_BYTES) {
    if (!(maxBytes >= 0)) throw new RangeError(`maxBytes ${maxBytes} must be >= 0`);
    this.records = maxBytes === 0 ? null : new LRUCache({ maxSize: maxBytes, sizeCalculation: (record) => record.length + RECORD_OVERHEAD });
  }

  /**
   * The encoded record of the module with this code hash (`"abi":null` when it does not decode).
   *
   * @param hash - the bytecode's code hash, as storage keeps it.
   * @param bytecode - module bytes; read only on a miss.
   * @param storedAbi - the ABI text storage keeps with the bytecode (`ModuleEntry.abi`), sent as
   *   it is; when absent (a row stored before it was kept) the ABI is decoded from the bytecode.
   */
  record(hash: string, bytecode: Uint8Array, storedAbi?: string): Buffer {
    const hit = this.records?.get(hash);
    if (hit !== undefined) return hit;
    const hex = Buffer.from(bytecode.buffer, bytecode.byteOffset, bytecode.byteLength).toString("hex");
    return this.written(hash, `{"bytecode":"0x${hex}","abi":${storedAbi ?? this.decodedAbi(bytecode)}}`);
  }

  /**
   * Keeps the record of `hash` as the store wrote it (`ModuleEntry.record`: the same bytes as
   * `record` builds from the bytecode and its stored ABI text).
   */
  written(hash: string, record: string): Buffer {
    if (!this.records) return Buffer.from(record, "utf8");
    // A Buffer of its own, not a slice of Node's shared 8 KiB pool: a kept record must not hold
    // on to the pool's other bytes, or the cache would hold more than it counts.
    const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(record, "utf8"));
    bytes.write(record, "utf8");
    this.records.set(hash, bytes);
    return bytes;
  }

  /** The `abi` of a record decoded from its bytecode (a row without stored ABI text). */
  private decodedAbi(bytecode: Uint8Array): string {
    const abi = moduleAbi(bytecode);
    return abi === null ? "null" : this.serializeAbi(abi);
  }

  /** The cached record of `hash`, without decoding anything on a miss. */
  cached(hash: string): Buffer | undefined {
    return this.records?.get(hash);
  }

  /** Whether the record of `hash` is cached (its recency unchanged). */
  has(hash: string): boolean {
    return this.records?.has(hash) ?? false;
  }

  /** Number of cached records. */
  get size(): number {
    return this.records?.size ?? 0;
  }

  /** Bytes the cached records count (`RECORD_OVERHEAD` each included). */
  get bytes(): number {
    return this.records?.calculatedSize ?? 0;
  }
}
