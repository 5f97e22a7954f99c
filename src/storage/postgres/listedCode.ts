/**
 * The code hashes each account's module pages listed when last read, so that the next page read of
 * the account can name the ones whose code its caller does not want (`WantsCode` says no: the
 * caller holds their records) and the database leaves their code out of its answer, which it would
 * otherwise build and send for every listed module. The caller may so be asked, before the read,
 * about a module its previous page listed and this one does not; a hash named that is not listed
 * changes nothing, and a module whose record the caller no longer holds when it joins the page is
 * read by its hash (`getModuleCode`), as for any module the page brought no code for. An account
 * whose last page listed none of the hashes of the page before it (a module republished with new
 * code at every version, read at random versions) is sent no names: they would only cost its
 * statement the array and a comparison a row. Naming resumes once a page lists a hash again.
 */
import { LRUCache } from "lru-cache";
import type { WantsCode } from "../contracts/pageReads.js";

/** Hashes remembered in all (about 100 bytes each), over the least recently read accounts first. */
const MAX_HASHES = 1 << 16;

const HEX = /^[0-9a-f]+$/i;

/**
 * `code` asked at most once a hash, so that what a page read names before its statement and what
 * it takes from the rows after agree, and a caller is asked about each module once.
 */
export function askedOnce(code: WantsCode): WantsCode {
  const answers = new Map<string, boolean>();
  return (hash) => {
    let wanted = answers.get(hash);
    if (wanted === undefined) {
      wanted = code(hash);
      answers.set(hash, wanted);
    }
    return wanted;
  };
}

/** An account's last page: the hashes it listed, and whether it listed any the page before it did. */
interface Listing {
  readonly hashes: readonly string[];
  readonly repeated: boolean;
}

export class ListedCode {
  private readonly listed = new LRUCache<string, Listing>({ maxSize: MAX_HASHES, sizeCalculation: (l) => Math.max(1, l.hashes.length) });

  /**
   * The hashes the account's last page listed whose code `code` does not want, as a PostgreSQL
   * `text[]` literal (`{}` when none). Only hashes of hex digits are named, which need no quoting
   * in it (storage writes no other kind). None for an account whose last page repeated no hash.
   */
  unwanted(account: string, code: WantsCode | undefined): string {
    const last = code === undefined ? undefined : this.listed.get(account);
    if (last === undefined || !last.repeated) return "{}";
    let literal = "";
    for (const hash of last.hashes) if (HEX.test(hash) && !code!(hash)) literal += literal === "" ? hash : `,${hash}`;
    return `{${literal}}`;
  }

  /**
   * Remembers the hashes a page of `account` listed (replacing the account's earlier ones), and
   * whether it listed one of them again (the account's first page counts as repeating, so the
   * next read names what it can).
   */
  saw(account: string, hashes: readonly string[]): void {
    if (hashes.length === 0) return;
    const before = this.listed.get(account)?.hashes;
    let repeated = before === undefined;
    if (!repeated) {
      const earlier = new Set(before);
      repeated = hashes.some((h) => earlier.has(h));
    }
    this.listed.set(account, { hashes, repeated });
  }
}
