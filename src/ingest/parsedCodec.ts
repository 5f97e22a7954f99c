/**
 * Parsed transactions (`ParsedTxn`) as a few flat arrays, for the parsing thread of an import to
 * hand them to the importing thread: a structured clone of the objects themselves costs the
 * receiving thread more than parsing the JSON did (a generic graph of small objects, bigints and
 * typed arrays), while these arrays are transferred whole and read back into objects by plain
 * code. `decodeParsed(encodeParsed(txns))` gives the same transactions; byte fields come back as
 * views of one buffer per batch.
 */
import type { EventWrite, HistoryChunk, ModuleWrite, ResourceWrite, TableItemWrite, TxnKind, TxnWrite } from "../storage/contracts/writer.js";
import { historyChunks } from "../storage/common/history.js";
import { TXN_KINDS } from "../storage/common/storedCodes.js";
import type { ParsedTxn, UnknownKind } from "./aptosJson.js";

/** A batch of parsed transactions in flat form; `buffers` lists what a postMessage may transfer. */
export interface EncodedParsed {
  count: number;
  /** Small integers: kinds, flags, lengths (-1: null). */
  ints: Int32Array<ArrayBuffer>;
  u64s: BigUint64Array<ArrayBuffer>;
  bytes: Uint8Array<ArrayBuffer>;
  strings: string[];
}

const UNKNOWN_WHAT: UnknownKind["what"][] = ["transaction", "change", "module"];
/** How a resource write's value is held: none (deleted), its JSON text, or its stored form. */
const RESOURCE_DELETED = 0;
const RESOURCE_TEXT = 1;
const RESOURCE_PACKED = 2;
/** What a transaction carries of the history: nothing, its text, or the packed chunk ending at it. */
const HISTORY_NONE = 0;
const HISTORY_TEXT = 1;
const HISTORY_CHUNK = 2;

/*
 * The flat arrays as they fill, doubling when full: one class per element type, so that each
 * append site sees one kind of typed array (a class shared by the three made them polymorphic, and
 * V8 deoptimized the appends as the kinds met).
 */
class IntList {
  length = 0;
  constructor(public array: Int32Array<ArrayBuffer>) {}
  push(v: number): void {
    if (this.length === this.array.length) {
      const next = new Int32Array(this.array.length * 2 + 16);
      next.set(this.array);
      this.array = next;
    }
    this.array[this.length++] = v;
  }
  done(): Int32Array<ArrayBuffer> {
    return this.array.subarray(0, this.length);
  }
}

class U64List {
  length = 0;
  constructor(public array: BigUint64Array<ArrayBuffer>) {}
  push(v: bigint): void {
    if (this.length === this.array.length) {
      const next = new BigUint64Array(this.array.length * 2 + 16);
      next.set(this.array);
      this.array = next;
    }
    this.array[this.length++] = v;
  }
  done(): BigUint64Array<ArrayBuffer> {
    return this.array.subarray(0, this.length);
  }
}

class ByteList {
  length = 0;
  constructor(public array: Uint8Array<ArrayBuffer>) {}
  append(b: Uint8Array): void {
    if (this.length + b.length > this.array.length) {
      const next = new Uint8Array(Math.max(this.array.length * 2, this.length + b.length));
      next.set(this.array);
      this.array = next;
    }
    this.array.set(b, this.length);
    this.length += b.length;
  }
  done(): Uint8Array<ArrayBuffer> {
    return this.array.subarray(0, this.length);
  }
}

/** Packs a resource value into its stored form (`packResourceValue`). */
export type PackResource = (owner: Uint8Array, json: string) => Uint8Array;

/**
 * The flat form of `txns` (the transactions are left as they are). With `pack`, each resource
 * value's text is packed into its stored form here and its bytes travel instead of the text. With
 * `packHistory`, the transactions' texts are packed into their history chunks here
 * (`historyChunks`), and each chunk travels with the transaction it ends at (`ParsedTxn.history`)
 * instead of the texts.
 */
export function encodeParsed(txns: readonly ParsedTxn[], pack: PackResource | null = null, packHistory = false): EncodedParsed {
  const chunkEnding = new Map<bigint, HistoryChunk>();
  if (packHistory) for (const c of historyChunks(txns.map((p) => p.txn))) chunkEnding.set(c.lastVersion, c);
  const ints = new IntList(new Int32Array(txns.length * 16));
  const u64s = new U64List(new BigUint64Array(txns.length * 6));
  const bytes = new ByteList(new Uint8Array(txns.length * 160));
  const strings: string[] = [];
  const int = (v: number) => ints.push(v);
  const u64 = (v: bigint) => u64s.push(v);
  const sized = (b: Uint8Array | null) => {
    int(b === null ? -1 : b.length);
    if (b !== null) bytes.append(b);
  };
  const optionalString = (s: string | null | undefined) => {
    int(s === null || s === undefined ? 0 : 1);
    if (s !== null && s !== undefined) strings.push(s);
  };
  for (const p of txns) {
    const t = p.txn;
    int(TXN_KINDS.indexOf(t.kind));
    u64(t.version);
    sized(t.hash);
    const u = t.user;
    int(u === null ? 0 : 1);
    if (u !== null) {
      sized(u.sender);
      int(u.replayProtector.type === "nonce" ? 1 : 0);
      u64(u.replayProtector.value);
      u64(u.gasUnitPrice);
      u64(u.gasUsed);
      int(u.success ? 1 : 0);
      optionalString(u.contractAddress);
    }
    const events = t.events ?? [];
    int(events.length);
    for (const ev of events) {
      sized(ev.account);
      u64(ev.creationNumber);
      u64(ev.sequenceNumber);
      int(ev.index);
    }
    const s = p.blockStart;
    int(s === null ? 0 : s.height === null ? 1 : 2);
    if (s !== null) {
      u64(s.epoch);
      u64(s.timestampUsec);
      if (s.height !== null) u64(s.height);
    }
    const e = p.endInfo;
    int(e === null ? 0 : 1 | (e.blockGasLimitReached ? 2 : 0) | (e.blockOutputLimitReached ? 4 : 0));
    // Every state write of a transaction is at its version: not repeated here.
    int(p.modules.length);
    for (const m of p.modules) {
      sized(m.address);
      strings.push(m.name);
      sized(m.stateKey);
      sized(m.bytecode);
      optionalString(m.upstreamAbi);
    }
    int(p.tableItems.length);
    for (const ti of p.tableItems) {
      sized(ti.handle);
      sized(ti.key);
      sized(ti.value);
    }
    int(p.resources.length);
    for (const r of p.resources) {
      sized(r.address);
      strings.push(r.type);
      const v = r.json;
      if (v === null) int(RESOURCE_DELETED);
      else if (typeof v !== "string") {
        int(RESOURCE_PACKED);
        sized(v);
      } else if (pack !== null) {
        int(RESOURCE_PACKED);
        sized(pack(r.address, v));
      } else {
        int(RESOURCE_TEXT);
        strings.push(v);
      }
    }
    const chunk = packHistory ? chunkEnding.get(t.version) : p.history;
    if (chunk !== undefined) {
      int(HISTORY_CHUNK);
      u64(chunk.firstVersion);
      sized(chunk.body);
    } else if (!packHistory && t.json !== undefined) {
      int(HISTORY_TEXT);
      strings.push(t.json);
    } else {
      int(HISTORY_NONE);
    }
    int(p.unknown.length);
    for (const k of p.unknown) {
      int(UNKNOWN_WHAT.indexOf(k.what));
      strings.push(k.type);
    }
  }
  return { count: txns.length, ints: ints.done(), u64s: u64s.done(), bytes: bytes.done(), strings };
}

/** The transactions `encodeParsed` was given. */
export function decodeParsed(e: EncodedParsed): ParsedTxn[] {
  const { ints, u64s, bytes, strings } = e;
  let i = 0;
  let u = 0;
  let b = 0;
  let s = 0;
  // Views made by the constructor: `subarray` looks up the species constructor for every view.
  const buffer = bytes.buffer;
  const base = bytes.byteOffset;
  const sized = (): Uint8Array | null => {
    const n = ints[i++]!;
    if (n < 0) return null;
    const v = new Uint8Array(buffer, base + b, n);
    b += n;
    return v;
  };
  const bytesOf = (): Uint8Array => sized()!;
  const optionalString = (): string | null => (ints[i++] === 1 ? strings[s++]! : null);
  const out: ParsedTxn[] = new Array(e.count);
  for (let n = 0; n < e.count; n++) {
    const kind = TXN_KINDS[ints[i++]!] as TxnKind;
    const version = u64s[u++]!;
    const hash = bytesOf();
    let user: TxnWrite["user"] = null;
    if (ints[i++] === 1) {
      const sender = bytesOf();
      const replayProtector = ints[i++] === 1 ? { type: "nonce" as const, value: u64s[u++]! } : { type: "sequence_number" as const, value: u64s[u++]! };
      const gasUnitPrice = u64s[u++]!;
      const gasUsed = u64s[u++]!;
      const success = ints[i++] === 1;
      user = { sender, replayProtector, gasUnitPrice, gasUsed, success, contractAddress: optionalString() };
    }
    const eventCount = ints[i++]!;
    let events: EventWrite[] | undefined;
    if (eventCount > 0) {
      events = new Array(eventCount);
      for (let k = 0; k < eventCount; k++) {
        const account = bytesOf();
        const creationNumber = u64s[u++]!;
        const sequenceNumber = u64s[u++]!;
        events[k] = { account, creationNumber, sequenceNumber, index: ints[i++]! };
      }
    }
    const startCode = ints[i++]!;
    let blockStart: ParsedTxn["blockStart"] = null;
    if (startCode !== 0) {
      const epoch = u64s[u++]!;
      const timestampUsec = u64s[u++]!;
      blockStart = { epoch, timestampUsec, height: startCode === 2 ? u64s[u++]! : null };
    }
    const endCode = ints[i++]!;
    const endInfo = endCode === 0 ? null : { blockGasLimitReached: (endCode & 2) !== 0, blockOutputLimitReached: (endCode & 4) !== 0 };
    const modules: ModuleWrite[] = new Array(ints[i++]!);
    for (let k = 0; k < modules.length; k++) {
      const address = bytesOf();
      const name = strings[s++]!;
      const stateKey = bytesOf();
      const bytecode = sized();
      const m: ModuleWrite = { version, address, name, stateKey, bytecode };
      const abi = optionalString();
      if (abi !== null) m.upstreamAbi = abi;
      modules[k] = m;
    }
    const tableItems: TableItemWrite[] = new Array(ints[i++]!);
    for (let k = 0; k < tableItems.length; k++) {
      const handle = bytesOf();
      const key = bytesOf();
      tableItems[k] = { version, handle, key, value: sized() };
    }
    const resources: ResourceWrite[] = new Array(ints[i++]!);
    for (let k = 0; k < resources.length; k++) {
      const address = bytesOf();
      const type = strings[s++]!;
      const held = ints[i++];
      resources[k] = { version, address, type, json: held === RESOURCE_TEXT ? strings[s++]! : held === RESOURCE_PACKED ? bytesOf() : null };
    }
    const held = ints[i++];
    const txn: TxnWrite = { version, kind, hash, user };
    if (events !== undefined) txn.events = events;
    let history: HistoryChunk | undefined;
    if (held === HISTORY_TEXT) txn.json = strings[s++]!;
    else if (held === HISTORY_CHUNK) {
      const firstVersion = u64s[u++]!;
      const body = bytesOf();
      history = { firstVersion, lastVersion: version, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
    }
    const unknown: UnknownKind[] = new Array(ints[i++]!);
    for (let k = 0; k < unknown.length; k++) unknown[k] = { what: UNKNOWN_WHAT[ints[i++]!]!, type: strings[s++]! };
    const p: ParsedTxn = { txn, blockStart, endInfo, modules, tableItems, resources, unknown };
    if (history !== undefined) p.history = history;
    out[n] = p;
  }
  return out;
}
