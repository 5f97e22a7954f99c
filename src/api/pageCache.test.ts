import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { brotliCompressSync, brotliDecompressSync, constants } from "node:zlib";
import { BROTLI_BEST_AFTER, BrotliRefiner, EncodedBody } from "./compression.js";
import { PageCache } from "./pageCache.js";

const page = (bytes: Buffer) => ({ body: new EncodedBody(bytes), meta: null });
const refiner = new BrotliRefiner();

describe("PageCache", () => {
  it("keeps pages within its byte bound, least recently used out first", () => {
    const cache = new PageCache(2_500);
    const [a, b, c] = [page(Buffer.alloc(1_000, 1)), page(Buffer.alloc(1_000, 2)), page(Buffer.alloc(1_000, 3))];
    cache.set("a", a);
    cache.set("b", b);
    expect(cache.get("a")).toBe(a); // a is now the most recent
    cache.set("c", c);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe(a);
    expect(cache.get("c")).toBe(c);
  });

  it("counts an encoding made later, so a page that grows pushes older ones out", () => {
    const cache = new PageCache(7_000);
    const old = page(Buffer.alloc(1_500, 7));
    const grows = page(randomBytes(3_000)); // random bytes do not compress: gzip adds about 3 KB
    cache.set("old", old);
    cache.set("grows", grows);
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

  it("counts a page again when its brotli is re-encoded smaller in the background", async () => {
    // JSON-like text with some variety: brotli's best quality beats quality 4 on it
    const text = JSON.stringify(Array.from({ length: 3_000 }, (_, i) => ({ name: `module_${(i * 7_919) % 1_000}`, v: (i * 31).toString(16) })));
    const p = page(Buffer.from(text));
    const quick = p.body.encode("br", refiner);
    const sizeQuick = p.body.size;
    const bestLength = brotliCompressSync(text, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
    const saved = quick.length - bestLength;
    expect(saved).toBeGreaterThan(100);
    // room for p, and for p and another page only once p's smaller encoding is counted
    const other = page(randomBytes(Math.floor(saved / 2)));
    const cache = new PageCache(sizeQuick + 1 + Math.floor(saved / 4));
    cache.set("p", p);
    for (let i = 0; i < BROTLI_BEST_AFTER; i++) expect(p.body.encode("br", refiner)).toBe(quick);
    const deadline = Date.now() + 10_000;
    while (p.body.size === sizeQuick && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
      p.body.encode("br", refiner); // another send, in case the refiner's budget held this one back
    }
    const best = p.body.encode("br", refiner);
    expect(best.length).toBe(bestLength);
    expect(p.body.size).toBe(sizeQuick - saved);
    expect(brotliDecompressSync(best).toString()).toBe(text);
    cache.set("o", other);
    expect(cache.get("p")).toBe(p);
    expect(cache.get("o")).toBe(other);
  });

  it("holds nothing with a bound of 0", () => {
    const cache = new PageCache(0);
    cache.set("a", page(Buffer.from("x")));
    expect(cache.get("a")).toBeUndefined();
  });
});
