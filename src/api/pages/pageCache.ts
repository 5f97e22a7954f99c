/**
 * Encoded response bodies of page operations (modules, transaction summaries), least recently used
 * out first, bounded in bytes. A key names everything the body depends on, including the store's
 * version of the account's data (`readModulesVersion`, `readSummariesVersion`) or a committed
 * version the page ends at, so an entry is never stale: a change to the account makes a new key,
 * and the old entry ages out.
 *
 * A page is kept only once its key is asked for a second time (`offer`): traffic over many
 * accounts and versions asks for most pages once, and storing those would cost every miss an
 * eviction and the garbage collection of bodies nobody reads again, and push out the pages that
 * are asked for again. That holds while the cache still has room too: a fresh node that kept every
 * page would spend its first megabytes storing pages nobody reads again, its heap growing with each
 * (bench/results/archive.md, "Measurements behind the code's choices").
 */
import { LRUCache } from "lru-cache";
import type { EncodedBody } from "../http/compression.js";

export interface Page<M> {
  body: EncodedBody;
  /** What the handler needs besides the body (the next-page cursor, the first version). */
  meta: M;
}

/**
 * The keys offered once and not stored, in two generations: when the newer one is full it becomes
 * the older one and the oldest is dropped, so it holds at most twice `perGeneration` keys and
 * remembers at least the last `perGeneration`. A key is remembered by a 63-bit fingerprint (two
 * 32-bit hashes of it) in an open-addressed table of numbers, not as a string in a `Set`: on
 * traffic that misses, a `Set` of many thousands of keys costs each lookup several cache misses
 * (its buckets and the keys compared along a chain), more time than hashing the key here
 * (bench/results/archive.md, part T). Two keys with one fingerprint would at worst store a page on its
 * first ask; the page cache's keys stay exact.
 */
export class SeenOnce {
  /** Fingerprints as pairs of 32-bit words (the second never 0; 0 marks an empty slot), at most half full. */
  private current: Uint32Array;
  private previous: Uint32Array;
  private count = 0;
  private readonly mask: number;

  constructor(private readonly perGeneration: number) {
    if (!(perGeneration >= 1)) throw new RangeError(`perGeneration ${perGeneration} must be >= 1`);
    const slots = 2 ** Math.ceil(Math.log2(perGeneration * 2));
    this.mask = slots - 1;
    this.current = new Uint32Array(slots * 2);
    this.previous = new Uint32Array(slots * 2);
  }

  /** Whether `key` was seen since it was last forgotten; remembers it when not. */
  seenBefore(key: string): boolean {
    // FNV-1a and a second multiplicative hash in one pass, each mixed (murmur3's finalizer)
    let a = 0x811c9dc5;
    let b = 0x9747b28c;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
    }
    a = mix(a);
    b = (mix(b) | 1) >>> 0;
    if (slotOf(this.current, this.mask, a, b) < 0 || slotOf(this.previous, this.mask, a, b) < 0) return true;
    if (this.count >= this.perGeneration) {
      const emptied = this.previous.fill(0);
      this.previous = this.current;
      this.current = emptied;
      this.count = 0;
    }
    const free = slotOf(this.current, this.mask, a, b);
    this.current[free * 2] = a;
    this.current[free * 2 + 1] = b;
    this.count++;
    return false;
  }
}

/** murmur3's 32-bit finalizer: every bit of `h` reaches every bit of the result. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Linear probing for fingerprint (a, b): -1 when the table holds it, else the empty slot where it would go. */
function slotOf(table: Uint32Array, mask: number, a: number, b: number): number {
  for (let i = a & mask; ; i = (i + 1) & mask) {
    const second = table[i * 2 + 1]!;
    if (second === 0) return i;
    if (second === b && table[i * 2] === a) return -1;
  }
}

/** Keys remembered per generation: about one per 8 KiB of cache, within 1,024..65,536. */
const seenPerGeneration = (maxBytes: number) => Math.min(65_536, Math.max(1_024, Math.floor(maxBytes / 8_192)));

/** One cache per app, shared by the page operations; each prefixes its keys with its own name. */
export class PageCache {
  private readonly lru: LRUCache<string, Page<unknown>> | null;
  private readonly seen: SeenOnce | null;
  private readonly requests: SeenOnce | null;
  /** Lookups that found a page and that did not, for the metrics (plain numbers: free per request). */
  hits = 0;
  misses = 0;

  /** `maxBytes` 0 turns the cache off. */
  constructor(maxBytes: number) {
    this.lru =
      maxBytes > 0
        ? new LRUCache<string, Page<unknown>>({ maxSize: maxBytes, sizeCalculation: (p, key) => Math.max(1, p.body.size + key.length) })
        : null;
    this.seen = maxBytes > 0 ? new SeenOnce(seenPerGeneration(maxBytes)) : null;
    this.requests = maxBytes > 0 ? new SeenOnce(seenPerGeneration(maxBytes)) : null;
  }

  /**
   * Whether a request for a page (`request`: everything its key names but the store's version) is
   * asked for the first time, as far as the cache remembers; remembers it. A request asked before
   * may find its page here; one never asked cannot, but by a page of the same key another request
   * left (another version with the same newest change). With the cache off, every request is new.
   */
  firstAsk(request: string): boolean {
    return this.requests === null || !this.requests.seenBefore(request);
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

  /**
   * A page just read for `key`: stored when the key was offered before (a page asked for again),
   * else only remembered as asked for. Returns the page; once stored, a change in the size of its
   * encodings is counted anew.
   */
  offer<M>(key: string, page: Page<M>): Page<M> {
    if (!this.lru) return page;
    const lru = this.lru;
    if (!this.seen!.seenBefore(key)) return page;
    page.body.keep();
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
