/**
 * The code hashes each account's module pages listed when last read, so that the next page read of
 * the account can name the ones whose code its caller does not want (`WantsCode` says no: the
 * caller holds their records) and the database leaves their code out of its answer, which it would
 * otherwise build and send for every listed module. A hash named that is not listed, or one the
 * caller wants again by the time the rows arrive, changes nothing the page means: the caller reads
 * a missing code by its hash (`getModuleCode`), as for any module the page brought no code for.
 */
import { LRUCache } from "lru-cache";
import type { WantsCode } from "../reader.js";

/** Hashes remembered in all (about 100 bytes each), over the least recently read accounts first. */
const MAX_HASHES = 1 << 16;

const HEX = /^[0-9a-f]+$/i;

export class ListedCode {
  private readonly listed = new LRUCache<string, readonly string[]>({ maxSize: MAX_HASHES, sizeCalculation: (hashes) => Math.max(1, hashes.length) });

  /**
   * The hashes the account's last page listed whose code `code` does not want, as a PostgreSQL
   * `text[]` literal (`{}` when none). Only hashes of hex digits are named, which need no quoting
   * in it (storage writes no other kind).
   */
  unwanted(account: string, code: WantsCode | undefined): string {
    const hashes = code === undefined ? undefined : this.listed.get(account);
    if (hashes === undefined) return "{}";
    let literal = "";
    for (const hash of hashes) if (HEX.test(hash) && !code!(hash)) literal += literal === "" ? hash : `,${hash}`;
    return `{${literal}}`;
  }

  /** Remembers the hashes a page of `account` listed (replacing the account's earlier ones). */
  saw(account: string, hashes: readonly string[]): void {
    if (hashes.length > 0) this.listed.set(account, hashes);
  }
}
