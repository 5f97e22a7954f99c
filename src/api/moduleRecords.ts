/**
 * The JSON record the modules operation sends for one module (`MoveModuleBytecode`: the bytecode
 * as hex and the ABI decoded from it), serialized by that response schema and encoded once per
 * bytecode hash, so a page of modules is a concatenation of cached records. Bounded by entry
 * count, least recently used out first.
 */
import { LRUCache } from "lru-cache";
import { moduleAbi } from "../move/abi.js";
import { jsonSerializer } from "./handler.js";
import { ref } from "./operation.js";
import { moveModuleBytecode } from "./schemas.js";

export class ModuleRecords {
  private readonly records: LRUCache<string, Buffer>;
  private readonly serialize = jsonSerializer<{ bytecode: string; abi: unknown }>(ref(moveModuleBytecode));

  /** @param maxEntries - records kept before the least recently used is evicted (at least 1). */
  constructor(readonly maxEntries = 10_000) {
    if (!(maxEntries >= 1)) throw new RangeError(`maxEntries ${maxEntries} must be >= 1`);
    this.records = new LRUCache({ max: maxEntries });
  }

  /**
   * The encoded record of the module with this code hash (`"abi":null` when it does not decode).
   *
   * @param hash - the bytecode's code hash, as storage keeps it.
   * @param bytecode - module bytes; read only on a miss.
   */
  record(hash: string, bytecode: Uint8Array): Buffer {
    const hit = this.records.get(hash);
    if (hit !== undefined) return hit;
    const hex = Buffer.from(bytecode.buffer, bytecode.byteOffset, bytecode.byteLength).toString("hex");
    const bytes = Buffer.from(this.serialize({ bytecode: `0x${hex}`, abi: moduleAbi(bytecode) }), "utf8");
    this.records.set(hash, bytes);
    return bytes;
  }

  /** The cached record of `hash`, without decoding anything on a miss. */
  cached(hash: string): Buffer | undefined {
    return this.records.get(hash);
  }

  /** Number of cached records. */
  get size(): number {
    return this.records.size;
  }
}
