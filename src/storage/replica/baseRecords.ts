/**
 * The base records of a replica: what a follower that started at a chain's head fetched from its
 * upstream, named by a digest of what they name (`baseRecordName`), and what this process knows
 * of them in bounded memory (`BaseRecords`), shared by the replica's reads and the base-state
 * service that fetches.
 */
import { LRUCache } from "lru-cache";
import { createHash } from "node:crypto";
import { toHex } from "../../ledger/address.js";
import type { BaseStateKey } from "../contracts/errors.js";

/**
 * The base record that names what a miss needs fetched (`BaseStateWrite.what`): its kind, then the
 * SHA-256 (hex) of its canonical text, `kind:` and the hex of the address or table handle, then
 * `:` and the table key's hex or the resource type (what the record was named before digests, so a
 * migration renames old records: SQLite's and PostgreSQL's schema). At most 75 characters, whatever
 * the size of the key a client sent.
 */
export function baseRecordName(key: BaseStateKey): string {
  const text = createHash("sha256");
  switch (key.kind) {
    case "modules":
    case "resources":
      text.update(`${key.kind}:${toHex(key.address)}`);
      break;
    case "table_item":
      text.update(`table_item:${toHex(key.handle)}:`).update(toHex(key.key));
      break;
    case "resource":
      text.update(`resource:${toHex(key.address)}:`).update(key.type);
      break;
  }
  return `${key.kind}:${text.digest("hex")}`;
}

/** Base record names each of `BaseRecords`' two sets keeps (about 150 bytes each). */
export const BASE_RECORDS_KEPT = 50_000;

/**
 * What this process knows of base records, in bounded memory (least recently used names go first):
 * names the store has recorded (forgotten, the store is read again), and names whose state the
 * upstream answered absent, which are kept only here (a forgotten one is fetched again). A
 * replica's `HeadStartedStorage` and its base-state service share one.
 */
export class BaseRecords {
  private readonly recorded: LRUCache<string, true>;
  private readonly absent: LRUCache<string, true>;

  constructor(kept = BASE_RECORDS_KEPT) {
    this.recorded = new LRUCache({ max: kept });
    this.absent = new LRUCache({ max: kept });
  }

  /** Whether `what` is known stored or known absent: a read needs nothing fetched for it. */
  has(what: string): boolean {
    return this.recorded.has(what) || this.absent.has(what);
  }

  noteRecorded(what: string): void {
    this.recorded.set(what, true);
  }

  /** The upstream's own "not found" of what `what` names, at the base (exact for good: the base never changes). */
  noteAbsent(what: string): void {
    this.absent.set(what, true);
  }

  /** How many names are held (for the tests of the bound). */
  get size(): number {
    return this.recorded.size + this.absent.size;
  }
}

/** A table key as a message names it: its first 32 bytes' hex, and its size when longer. */
export function keyText(key: Uint8Array): string {
  return key.length <= 32 ? toHex(key) : `${toHex(key.subarray(0, 32))}… (${key.length} bytes)`;
}
