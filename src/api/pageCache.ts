/**
 * Encoded response bodies of page operations (modules, transaction summaries), least recently used
 * out first, bounded in bytes. A key names everything the body depends on, including the store's
 * version of the account's data (`readModulesVersion`, `readSummariesVersion`), so an entry is
 * never stale: a change to the account makes a new key, and the old entry ages out.
 */
import { LRUCache } from "lru-cache";
import type { EncodedBody } from "./compression.js";

export interface Page<M> {
  body: EncodedBody;
  /** What the handler needs besides the body (the next-page cursor, the first version). */
  meta: M;
}

/** One cache per app, shared by the page operations; each prefixes its keys with its own name. */
export class PageCache {
  private readonly lru: LRUCache<string, Page<unknown>> | null;
  /** Lookups that found a page and that did not, for the metrics (plain numbers: free per request). */
  hits = 0;
  misses = 0;

  /** `maxBytes` 0 turns the cache off. */
  constructor(maxBytes: number) {
    this.lru =
      maxBytes > 0
        ? new LRUCache<string, Page<unknown>>({ maxSize: maxBytes, sizeCalculation: (p, key) => Math.max(1, p.body.size + key.length) })
        : null;
  }

  get<M>(key: string): Page<M> | undefined {
    if (!this.lru) return undefined;
    const p = this.lru.get(key) as Page<M> | undefined;
    if (p === undefined) this.misses++;
    else this.hits++;
    return p;
  }

  /** Bytes held (as the cache counts them: bodies and keys). */
  get bytes(): number {
    return this.lru?.calculatedSize ?? 0;
  }

  /** Stores a page and returns it; when its encodings later change size, it is counted anew. */
  set<M>(key: string, page: Page<M>): Page<M> {
    if (!this.lru) return page;
    const lru = this.lru;
    page.body.onResize = () => {
      if (lru.peek(key) !== page) return;
      // set() with the value already stored keeps the old size: store it anew to count it again
      lru.delete(key);
      lru.set(key, page as Page<unknown>);
    };
    lru.set(key, page as Page<unknown>);
    return page;
  }
}
