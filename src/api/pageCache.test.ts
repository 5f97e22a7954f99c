import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { EncodedBody } from "./compression.js";
import { PageCache } from "./pageCache.js";

const page = (bytes: Buffer) => ({ body: new EncodedBody(bytes), meta: null });

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
    grows.body.encode("gzip");
    expect(grows.body.size).toBeGreaterThan(5_500);
    expect(cache.get("old")).toBeUndefined();
    expect(cache.get("grows")).toBe(grows);
    // grown past the whole bound, it is let go rather than overflow the cache
    grows.body.encode("deflate");
    expect(cache.get("grows")).toBeUndefined();
  });

  it("holds nothing with a bound of 0", () => {
    const cache = new PageCache(0);
    cache.set("a", page(Buffer.from("x")));
    expect(cache.get("a")).toBeUndefined();
  });
});
