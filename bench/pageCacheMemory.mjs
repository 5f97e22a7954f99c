/**
 * What a full page cache holds in memory against the bytes it counts: a cache of 64 MB (the
 * default) offered `--pages` pages of about `--bytes` bytes of summaries JSON, each asked twice (so
 * kept) and sent br, as a client of the official SDK would ask. Prints the bytes the cache counts,
 * the ArrayBuffer memory held after two full collections, and RSS.
 *
 *   node --expose-gc bench/pageCacheMemory.mjs [--dist DIR] [--bytes 1200] [--pages 20000]
 *
 * `--dist`: the checkout whose build (`DIR/dist/`) is measured (default: this one).
 */
import { randomBytes } from "node:crypto";
import { option } from "./rowMixes.mjs";

const DIST = option("dist", new URL("../", import.meta.url).pathname).replace(/\/?$/, "/");
const BYTES = Number(option("bytes", "1200"));
const PAGES = Number(option("pages", "20000"));
const { PageCache } = await import(`${DIST}dist/api/pages/pageCache.js`);
const { EncodedBody, Refiner } = await import(`${DIST}dist/api/http/compression.js`);

const cache = new PageCache(64 << 20);
const refiner = new Refiner();
const hex = (n) => randomBytes(n).toString("hex");
const row = (i) =>
  `{"sender":"0x${hex(32)}","version":"${i * 7_919}","transaction_hash":"0x${hex(32)}","replay_protector":{"type":"nonce","nonce":"${i * 31}"}}`;
const before = process.memoryUsage().arrayBuffers;
for (let p = 0; p < PAGES; p++) {
  const rows = [];
  for (let n = 2, i = 0; n < BYTES; i++) {
    rows.push(row(p + i));
    n += rows.at(-1).length + 1;
  }
  const json = `[${rows.join(",")}]`;
  for (let ask = 0; ask < 2; ask++) cache.offer(`page ${p}`, { body: new EncodedBody(Buffer.from(json, "latin1")), meta: null }).body.encode("br", refiner);
}
globalThis.gc?.();
globalThis.gc?.();
const m = process.memoryUsage();
const mib = (b) => (b / 2 ** 20).toFixed(1);
console.log(`${DIST}: ${PAGES} pages of about ${BYTES} B: the cache counts ${mib(cache.bytes)} MiB, ArrayBuffers hold ${mib(m.arrayBuffers - before)} MiB, RSS ${mib(m.rss)} MiB`);
