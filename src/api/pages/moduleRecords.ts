/**
 * The JSON record the modules operation sends for one module (`MoveModuleBytecode`: the bytecode
 * as hex and its ABI), kept by bytecode hash, so a page of modules copies the records it lists
 * again instead of reading their code rows.
 *
 * The records lie in one buffer of the cache's size, written one after another and overwritten in
 * the order they were written (a ring), with an index from hash to place: keeping a record
 * allocates nothing the garbage collector tracks beyond its index entry, and one overwritten frees
 * nothing (a buffer a record made the collector trace and free every evicted record:
 * bench/results/archive.md, issue 35 part R). A record listed again when it is among the oldest quarter is
 * written again at the newest end, so a module pages keep listing stays.
 *
 * The ABI is the text storage keeps with the bytecode (`ModuleEntry.abi`, computed when the code
 * was written), or the whole record as the store writes it (`ModuleEntry.record`). Code stored
 * without it (a database whose migration did not fill it) is decoded here and serialized by the
 * `MoveModule` schema's own serializer, the same bytes (`moduleRecords.test.ts`). The record's two
 * properties are written around it: byte for byte what the `MoveModuleBytecode` serializer writes
 * (its properties in schema order, the hex needing no escapes), without the ajv validation of the
 * whole ABI that its `anyOf: [MoveModule, null]` runs to pick a branch.
 */
import type { ModuleEntry } from "../../ledger/types.js";
import { moduleAbi, type MoveModuleAbi } from "../../move/abi.js";
import { DEFAULT_MODULE_CACHE_BYTES } from "../config.js";
import { jsonSerializer } from "../http/serialize.js";
import { moveModule } from "../schemas.js";

const OPEN = 0x5b; // [
const COMMA = 0x2c; // ,
const CLOSE = 0x5d; // ]

/**
 * The records of a page's modules joined as the page lists them: `[`, each record followed by a
 * comma, so the JSON of the first n modules is `body` up to `ends[n - 1]` with a `]` written there
 * (`close`). With no module, `body` is `[` and a byte for the `]`.
 */
export interface JoinedRecords {
  body: Buffer;
  /** Where the comma after each record lies in `body`. */
  ends: number[];
}

/** The JSON of the first `count` records of `joined` (at least one when there is one): `body` closed after the last. */
export function closeJoined(joined: JoinedRecords, count: number): Buffer {
  const end = count === 0 ? 1 : joined.ends[count - 1]!;
  joined.body[end] = CLOSE;
  return joined.body.subarray(0, end + 1);
}

export class ModuleRecords {
  /** The records' bytes, allocated at the first record kept; null until then. */
  private ring: Buffer | null = null;
  /** Where the next record is written in `ring`. */
  private head = 0;
  /** Hash to the number of its place in the ring (its serial; places are numbered as written). */
  private readonly index = new Map<string, number>();
  // The places in the order written, from the oldest still in the ring (serial `oldest`) on;
  // entry `serial - base` of each array. A place whose hash has been written again since stays
  // until it is overwritten, its index entry gone.
  private hashes: Array<string | undefined> = [];
  private offsets: number[] = [];
  private lengths: number[] = [];
  private base = 0;
  private oldest = 0;
  private next = 0;
  private heldBytes = 0;
  private readonly serializeAbi = jsonSerializer<MoveModuleAbi>({ $ref: `${moveModule.$id}#` });

  /**
   * @param maxBytes - bytes of records kept (one buffer of this size, allocated at the first
   *   record kept); 0 keeps none.
   */
  constructor(readonly maxBytes = DEFAULT_MODULE_CACHE_BYTES) {
    if (!(maxBytes >= 0)) throw new RangeError(`maxBytes ${maxBytes} must be >= 0`);
  }

  /**
   * The encoded record of the module with this code hash (`"abi":null` when it does not decode),
   * in a buffer of its own, kept for the next page or request that lists it.
   *
   * @param hash - the bytecode's code hash, as storage keeps it.
   * @param bytecode - module bytes; read only on a miss.
   * @param storedAbi - the ABI text storage keeps with the bytecode (`ModuleEntry.abi`), sent as
   *   it is; when absent (a row stored before it was kept) the ABI is decoded from the bytecode.
   */
  record(hash: string, bytecode: Uint8Array, storedAbi?: string): Buffer {
    const held = this.held(hash);
    if (held) return held;
    const bytes = Buffer.from(this.built(bytecode, storedAbi), "utf8");
    this.keep(hash, bytes, 0, bytes.length);
    return bytes;
  }

  /**
   * The records of the first `count` modules of `rows` joined (`JoinedRecords`): a record held is
   * copied from the ring, any other written from what its row carries (the store's record text,
   * else its bytecode and ABI text) and kept. Null when a row carries neither and its record is not
   * held (overwritten since the row was read): read that row's code, and join again.
   */
  join(rows: readonly ModuleEntry[], count: number): JoinedRecords | null {
    // Each module's held place (a number) or its record text; nothing is written to the ring
    // before every held record is copied out.
    const parts = new Array<number | string>(count);
    let size = count === 0 ? 2 : 1 + count;
    for (let i = 0; i < count; i++) {
      const module = rows[i]!;
      const serial = this.index.get(module.codeHash);
      if (serial !== undefined) {
        parts[i] = serial;
        size += this.lengths[serial - this.base]!;
        continue;
      }
      const text = module.record ?? (module.bytecode === undefined ? undefined : this.built(module.bytecode, module.abi));
      if (text === undefined) return null;
      parts[i] = text;
      size += Buffer.byteLength(text, "utf8");
    }
    const body = Buffer.allocUnsafe(size);
    body[0] = OPEN;
    const ends = new Array<number>(count);
    let at = 1;
    for (let i = 0; i < count; i++) {
      const part = parts[i]!;
      if (typeof part === "number") {
        const from = this.offsets[part - this.base]!;
        at += this.ring!.copy(body, at, from, from + this.lengths[part - this.base]!);
      } else {
        at += body.write(part, at, "utf8");
      }
      body[at] = COMMA;
      ends[i] = at++;
    }
    // Then the records to keep: the ones written from their rows, and held ones about to be
    // overwritten, written again at the newest end.
    for (let i = 0; i < count; i++) {
      const part = parts[i]!;
      if (typeof part === "number" && !this.aging(part)) continue;
      const start = i === 0 ? 1 : ends[i - 1]! + 1;
      this.keep(rows[i]!.codeHash, body, start, ends[i]! - start);
    }
    return { body, ends };
  }

  /** The held record of `hash` in a buffer of its own, or undefined when it is not held. */
  held(hash: string): Buffer | undefined {
    const serial = this.index.get(hash);
    if (serial === undefined) return undefined;
    const at = this.offsets[serial - this.base]!;
    return Buffer.from(this.ring!.subarray(at, at + this.lengths[serial - this.base]!));
  }

  /** Whether the record of `hash` is held. */
  has(hash: string): boolean {
    return this.index.has(hash);
  }

  /** Number of records held. */
  get size(): number {
    return this.index.size;
  }

  /** Bytes of the ring the held records take (places written again since included, until overwritten). */
  get bytes(): number {
    return this.heldBytes;
  }

  /** A record's text from its bytecode and stored ABI text (decoded from the bytecode without it). */
  private built(bytecode: Uint8Array, storedAbi: string | undefined): string {
    const hex = Buffer.from(bytecode.buffer, bytecode.byteOffset, bytecode.byteLength).toString("hex");
    return `{"bytecode":"0x${hex}","abi":${storedAbi ?? this.decodedAbi(bytecode)}}`;
  }

  /** The `abi` of a record decoded from its bytecode (a row without stored ABI text). */
  private decodedAbi(bytecode: Uint8Array): string {
    const abi = moduleAbi(bytecode);
    return abi === null ? "null" : this.serializeAbi(abi);
  }

  /** Whether the place `serial` is among the oldest quarter of the ring's places, the next overwritten. */
  private aging(serial: number): boolean {
    return (serial - this.oldest) * 4 < this.next - this.oldest;
  }

  /** Keeps `length` bytes of `source` from `start` as the record of `hash`, overwriting the oldest records they need. */
  private keep(hash: string, source: Buffer, start: number, length: number): void {
    if (length > this.maxBytes) return;
    this.ring ??= Buffer.allocUnsafeSlow(this.maxBytes);
    let at = this.head;
    if (at + length > this.maxBytes) {
      // past the end: the records of the previous lap beyond the head go, and writing starts over at 0
      while (this.oldest < this.next && this.offsets[this.oldest - this.base]! >= at) this.dropOldest();
      at = 0;
    }
    // the previous lap's records this one overlaps (theirs are the places at or after `at`, oldest first)
    while (this.oldest < this.next && this.offsets[this.oldest - this.base]! >= at && this.offsets[this.oldest - this.base]! < at + length) this.dropOldest();
    source.copy(this.ring, at, start, start + length);
    this.head = at + length;
    const serial = this.next++;
    this.hashes.push(hash);
    this.offsets.push(at);
    this.lengths.push(length);
    this.index.set(hash, serial);
    this.heldBytes += length;
  }

  /** Forgets the oldest place (its index entry, unless its hash was written again since). */
  private dropOldest(): void {
    const i = this.oldest - this.base;
    const hash = this.hashes[i]!;
    if (this.index.get(hash) === this.oldest) this.index.delete(hash);
    this.hashes[i] = undefined;
    this.heldBytes -= this.lengths[i]!;
    this.oldest++;
    // the arrays drop their forgotten front once it is most of them
    if (i >= 1024 && i * 2 >= this.hashes.length) {
      this.hashes = this.hashes.slice(i + 1);
      this.offsets = this.offsets.slice(i + 1);
      this.lengths = this.lengths.slice(i + 1);
      this.base = this.oldest;
    }
  }
}
