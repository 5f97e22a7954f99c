/**
 * What both dialects do to a block before they write its rows, done once here: the last write of
 * a key within a block wins, each module's code hash and ABI text, each resource value packed
 * (`resourceValue.ts`). A dialect takes the prepared block and only maps it to its rows.
 */
import { codeHash } from "../../ledger/codeHash.js";
import type { BlockWrite, ModuleWrite, PreparedBlock, PreparedModuleWrite, PreparedState, ResourceWrite } from "../contracts/writer.js";
import { historyChunks } from "./history.js";
import { packResourceValue } from "./resourceValue.js";
import { storedAbiText } from "./storedCodes.js";

/** A module write with its code's content hash, and the ABI text stored with the code. */
export class PreparedModule implements PreparedModuleWrite {
  /** `codeHash` of the bytecode; null for a deletion. */
  readonly codeHash: string | null;
  private abiText: string | null | undefined = undefined;

  constructor(readonly write: ModuleWrite) {
    this.codeHash = write.bytecode ? codeHash(write.bytecode) : null;
  }

  /**
   * The ABI text stored with the code (`storedAbiText`; null for a deletion), decoded at the first
   * ask: a dialect that stores code once per hash asks for new code only.
   */
  get abi(): string | null {
    if (this.abiText === undefined) this.abiText = storedAbiText(this.write);
    return this.abiText;
  }
}

export type { PreparedBlock, PreparedResource, PreparedState } from "../contracts/writer.js";

/** Packs one resource value (a non-null one); the default packs it here. */
export type PackValue = (r: ResourceWrite & { json: string }) => Buffer;

const packHere: PackValue = (r) => packResourceValue(r.address, r.json);

/**
 * The block with the last write of each key at a version kept, the others dropped (order kept):
 * what SQLite's INSERT OR REPLACE does, and what PostgreSQL's ON CONFLICT cannot do within one
 * statement (it touches a row once).
 */
export function keepLastWrites(w: BlockWrite): BlockWrite {
  const modules = lastWrites(w.modules, (m) => [m.address, m.stateKey, m.version]);
  const tableItems = lastWrites(w.tableItems, (t) => [t.handle, t.key, t.version]);
  const resources = lastWrites(w.resources, (r) => [r.address, r.type, r.version]);
  return modules === w.modules && tableItems === w.tableItems && resources === w.resources ? w : { ...w, modules, tableItems, resources };
}

/** State rows prepared as they are (`pack`: how non-null resource values are packed, in order). */
export function prepareState(w: Pick<BlockWrite, "modules" | "tableItems" | "resources">, pack: PackValue = packHere): PreparedState {
  return {
    modules: w.modules.map((m) => new PreparedModule(m)),
    tableItems: w.tableItems,
    resources: w.resources.map((r) => ({ write: r, value: storedValue(r, pack) })),
  };
}

/** A resource write's stored value: its text packed by `pack`, or the bytes packed where it was parsed. */
function storedValue(r: ResourceWrite, pack: PackValue): Buffer | null {
  const v = r.json;
  if (v === null) return null;
  if (typeof v === "string") return pack(r as ResourceWrite & { json: string });
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** A block prepared for a dialect: `keepLastWrites`, then `prepareState`. */
export function prepareBlock(w: BlockWrite, pack: PackValue = packHere): PreparedBlock {
  return prepareKept(keepLastWrites(w), pack);
}

/** `prepareBlock` of a block `keepLastWrites` gave (a caller that packs its values elsewhere first). */
export function prepareKept(w: BlockWrite, pack: PackValue = packHere): PreparedBlock {
  return { block: w.block, transactions: w.transactions, history: w.history ?? historyChunks(w.transactions), ...prepareState(w, pack) };
}

type WriteKey = [Uint8Array, Uint8Array | string, bigint];

/** Writes of one version compared pair by pair up to this many; a longer run (genesis) by a map. */
const PAIRWISE_MAX = 16;

/**
 * Keeps the last write of each key (order otherwise kept); the same array when no key repeats.
 * Writes come in version order (a block's transactions in turn), so a key can repeat only among
 * the writes of one version: those few are compared directly, without a text key for every write.
 */
function lastWrites<T>(writes: T[], key: (w: T) => WriteKey): T[] {
  if (writes.length < 2) return writes;
  const keys = writes.map(key);
  const dropped = new Set<number>();
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = keys[i]![2] >= keys[i - 1]![2];
  if (!sorted) dropRepeatsByText(keys, 0, keys.length, dropped);
  for (let start = 0; sorted && start < keys.length; ) {
    const v = keys[start]![2];
    let end = start + 1;
    while (end < keys.length && keys[end]![2] === v) end++;
    if (end - start > PAIRWISE_MAX) dropRepeatsByText(keys, start, end, dropped);
    else dropRepeatsPairwise(keys, start, end, dropped);
    start = end;
  }
  return dropped.size === 0 ? writes : writes.filter((_, i) => !dropped.has(i));
}

/** Adds to `dropped` each write of `keys[from..to)` whose key a later one there repeats. */
function dropRepeatsPairwise(keys: WriteKey[], from: number, to: number, dropped: Set<number>): void {
  for (let i = from; i < to; i++) {
    for (let j = i + 1; j < to; j++) {
      if (sameKey(keys[i]!, keys[j]!)) {
        dropped.add(i);
        break;
      }
    }
  }
}

/** `dropRepeatsPairwise` by a map of text keys (any order, any length). */
function dropRepeatsByText(keys: WriteKey[], from: number, to: number, dropped: Set<number>): void {
  const last = new Map<string, number>();
  const text: string[] = [];
  for (let i = from; i < to; i++) {
    const [a, b, v] = keys[i]!;
    const k = `${Buffer.from(a).toString("hex")}/${typeof b === "string" ? "s" + b : Buffer.from(b).toString("hex")}/${v}`;
    text.push(k);
    last.set(k, i);
  }
  for (let i = from; i < to; i++) if (last.get(text[i - from]!) !== i) dropped.add(i);
}

function sameKey(x: WriteKey, y: WriteKey): boolean {
  return sameBytes(x[0], y[0]) && (typeof x[1] === "string" || typeof y[1] === "string" ? x[1] === y[1] : sameBytes(x[1], y[1]));
}

function sameBytes(x: Uint8Array, y: Uint8Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
