import { randomBytes } from "node:crypto";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from "node:zlib";
import { BEST_AFTER, EncodedBody, Refiner } from "../http/compression.js";
import { PageCache, SeenOnce } from "./pageCache.js";

const page = (bytes: Buffer) => ({ body: new EncodedBody(bytes), meta: null });
const refiner = new Refiner();
/** Offers a page twice, as two requests for it would: stored, whether the cache has room or not. */
const admit = <M>(cache: PageCache, key: string, p: { body: EncodedBody; meta: M }) => {
  cache.offer(key, p);
  return cache.offer(key, p);
};

describe("PageCache", () => {
  it("keeps a page only when its key is offered a second time, empty or full", () => {
    const cache = new PageCache(1_000);
    const first = page(Buffer.alloc(900));
    expect(cache.offer("first", first)).toBe(first);
    expect(cache.get("first")).toBeUndefined(); // asked for once: remembered, not kept, room or not
    cache.offer("first", first);
    expect(cache.get("first")).toBe(first);
    const a = page(Buffer.alloc(200));
    expect(cache.offer("a", a)).toBe(a);
    expect(cache.get("a")).toBeUndefined(); // would push "first" out: only remembered
    expect(cache.get("first")).toBe(first);
    const again = page(Buffer.alloc(200));
    cache.offer("a", again);
    expect(cache.get("a")).toBe(again);
    expect(cache.get("first")).toBeUndefined();
    expect(cache.hits).toBe(3);
    expect(cache.misses).toBe(3);
  });

  it("forgets a key offered once when many others have been offered since", () => {
    const bytes = 1 << 20; // remembers at least 1,024 keys
    const cache = new PageCache(bytes);
    admit(cache, "full", page(Buffer.alloc(bytes - "full".length))); // no room left for another page
    cache.offer("early", page(Buffer.from("x")));
    for (let i = 0; i < 5_000; i++) cache.offer(`other ${i}`, page(Buffer.from("y")));
    cache.offer("early", page(Buffer.from("x")));
    expect(cache.get("early")).toBeUndefined();
    cache.offer("early", page(Buffer.from("x")));
    expect(cache.get("early")).toBeDefined();
  });

  it("holds a page with only the encodings clients asked for", () => {
    const cache = new PageCache(1 << 20);
    const text = Buffer.from(JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ version: String(i * 7) }))));
    const p = admit(cache, "p", page(text));
    expect(cache.get("p")).toBe(p);
    expect(p.body.size).toBe(text.length);
    const gz = p.body.encode("gzip", refiner);
    expect(p.body.size).toBe(text.length + gz.length);
    expect(p.body.encode("gzip", refiner)).toBe(gz);
    expect(cache.bytes).toBe(text.length + gz.length + "p".length);
  });

  it("keeps pages within its byte bound, least recently used out first", () => {
    const cache = new PageCache(2_500);
    const [a, b, c] = [page(Buffer.alloc(1_000, 1)), page(Buffer.alloc(1_000, 2)), page(Buffer.alloc(1_000, 3))];
    admit(cache, "a", a);
    admit(cache, "b", b);
    expect(cache.get("a")).toBe(a); // a is now the most recent
    admit(cache, "c", c);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe(a);
    expect(cache.get("c")).toBe(c);
  });

  it("counts an encoding made later, so a page that grows pushes older ones out", () => {
    const cache = new PageCache(7_000);
    const old = page(Buffer.alloc(1_500, 7));
    const grows = page(randomBytes(3_000)); // random bytes do not compress: gzip adds about 3 KB
    admit(cache, "old", old);
    admit(cache, "grows", grows);
    expect(cache.get("old")).toBe(old);
    expect(cache.get("grows")).toBe(grows);
    grows.body.encode("gzip", refiner);
    expect(grows.body.size).toBeGreaterThan(5_500);
    expect(cache.get("old")).toBeUndefined();
    expect(cache.get("grows")).toBe(grows);
    // grown past the whole bound, it is let go rather than overflow the cache
    grows.body.encode("deflate", refiner);
    expect(cache.get("grows")).toBeUndefined();
  });

  const levels = {
    br: {
      at: (text: string, quality: number) =>
        brotliCompressSync(text, { params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(text) } }),
      fast: 0,
      best: constants.BROTLI_MAX_QUALITY,
      decode: brotliDecompressSync,
    },
    gzip: { at: (text: string, level: number) => gzipSync(text, { level }), fast: 1, best: constants.Z_BEST_COMPRESSION, decode: gunzipSync },
  } as const;

  it.each(["br", "gzip"] as const)("makes %s at its fast level first, and counts a page again when it is re-made smaller at its best in the background", async (e) => {
    // JSON-like text with some variety: the best level beats the fast one on it
    const text = JSON.stringify(Array.from({ length: 3_000 }, (_, i) => ({ name: `module_${(i * 7_919) % 1_000}`, v: (i * 31).toString(16) })));
    const p = page(Buffer.from(text));
    const quick = p.body.encode(e, refiner);
    expect(quick.equals(levels[e].at(text, levels[e].fast))).toBe(true);
    const sizeQuick = p.body.size;
    const bestLength = levels[e].at(text, levels[e].best).length;
    const saved = quick.length - bestLength;
    expect(saved).toBeGreaterThan(100);
    // room for p, and for p and another page only once p's smaller encoding is counted
    const other = page(randomBytes(Math.floor(saved / 2)));
    const cache = new PageCache(sizeQuick + 1 + Math.floor(saved / 4));
    admit(cache, "p", p);
    const held = p.body.encode(e, refiner); // kept: the same bytes, in memory of their own size
    expect(held.equals(quick)).toBe(true);
    for (let i = 1; i < BEST_AFTER; i++) expect(p.body.encode(e, refiner)).toBe(held);
    const deadline = Date.now() + 10_000;
    while (p.body.size === sizeQuick && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
      p.body.encode(e, refiner); // another send, in case the refiner's budget held this one back
    }
    const best = p.body.encode(e, refiner);
    expect(best.length).toBe(bestLength);
    expect(p.body.size).toBe(sizeQuick - saved);
    expect(levels[e].decode(best).toString()).toBe(text);
    admit(cache, "o", other);
    expect(cache.get("p")).toBe(p);
    expect(cache.get("o")).toBe(other);
  });

  it("holds a kept page's body and encodings in memory of their own size, so the bytes it counts are the memory held", () => {
    // a small body is a slice of Node's 8 KiB pool, a fast encoding a slice of zlib's 16 KiB chunk
    const text = JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ version: String(i * 7_919) })));
    const held = (b: Buffer) => b.buffer.byteLength;
    const sent = page(Buffer.from(text));
    const once = sent.body.encode("br", refiner);
    expect(held(sent.body.identity)).toBeGreaterThan(sent.body.identity.length); // sent once: never copied
    expect(held(once)).toBeGreaterThan(once.length);
    const cache = new PageCache(1 << 20);
    const p = page(Buffer.from(text));
    const before = p.body.encode("gzip", refiner);
    admit(cache, "p", p);
    const encodings = [p.body.encode("gzip", refiner), p.body.encode("br", refiner), p.body.encode("deflate", refiner)];
    expect(encodings[0]!.equals(before)).toBe(true);
    expect(brotliDecompressSync(encodings[1]!).toString()).toBe(text);
    const buffers = [p.body.identity, ...encodings];
    expect(buffers.map(held)).toEqual(buffers.map((b) => b.length));
    expect(cache.bytes).toBe(buffers.reduce((n, b) => n + b.length, 0) + "p".length);
  });

  it("holds nothing with a bound of 0", () => {
    const cache = new PageCache(0);
    admit(cache, "a", page(Buffer.from("x")));
    expect(cache.get("a")).toBeUndefined();
  });

  it("tells a request asked for the first time from one asked before, apart from the pages' keys; with the cache off every request is new", () => {
    const cache = new PageCache(1 << 20);
    expect(cache.firstAsk("r")).toBe(true);
    expect(cache.firstAsk("r")).toBe(false);
    expect(cache.firstAsk("s")).toBe(true);
    admit(cache, "t", page(Buffer.from("x")));
    expect(cache.firstAsk("t")).toBe(true); // a page's key is not a request
    const off = new PageCache(0);
    expect([off.firstAsk("r"), off.firstAsk("r")]).toEqual([true, true]);
  });
});

describe("SeenOnce", () => {
  it("remembers at least a generation of keys, and no more than two", () => {
    const seen = new SeenOnce(100);
    expect(seen.seenBefore("k")).toBe(false);
    for (let i = 0; i < 99; i++) seen.seenBefore(`a${i}`);
    expect(seen.seenBefore("k")).toBe(true);
    for (let i = 0; i < 250; i++) seen.seenBefore(`b${i}`);
    expect(seen.seenBefore("k")).toBe(false);
  });

  it("tells apart two keys whose 32-bit FNV-1a hashes collide (it holds the keys, not a hash)", () => {
    const seen = new SeenOnce(100);
    expect(seen.seenBefore("summaries|json|key3899")).toBe(false);
    expect(seen.seenBefore("summaries|json|key921922")).toBe(false);
    expect(seen.seenBefore("summaries|json|key921922")).toBe(true);
  });

  it("rejects a bound below 1", () => {
    expect(() => new SeenOnce(0)).toThrow(RangeError);
  });

  it("holds no copy of the keys it remembers: its memory does not grow with them", () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const seen = new SeenOnce(1_000);
    gc();
    const before = process.memoryUsage().heapUsed;
    // 1,000 flat keys of 10 KB each, all remembered (one generation): 10 MB if they were held
    let last = "";
    for (let i = 0; i < 1_000; i++) {
      last = randomBytes(5_000).toString("hex");
      expect(seen.seenBefore(last)).toBe(false);
    }
    const kept = last;
    last = "";
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    expect(grown).toBeLessThan(2_000_000);
    expect(seen.seenBefore(kept)).toBe(true);
  });
});
