/**
 * What brotli costs a compressed miss, by its parameters: the pages the SDK row asks for (summaries
 * of 100 and of 25 at random versions, and random modules pages, fetched from a node on a bench
 * ledger), each compressed by `brotliCompressSync` with the encoder's set-up parameters varied
 * (quality 0 or 1, `BROTLI_PARAM_SIZE_HINT`, a window sized to the body), and by gzip and deflate
 * at level 1 (`gzipSync`, `deflateSync`), which the SDK's Accept-Encoding also names. Node has no encoder to
 * keep between bodies: `brotliCompressSync` makes one a call, and a stream's synchronous finish
 * (`_processChunk`, private) closes its handle.
 *
 *   node --import tsx bench/brotliMiss.ts [--db bench/out/scale-1000000.db] [--pages 8] [--rounds 15] [--each 40]
 *
 * CPU time of this process (`process.cpuUsage`), the median of `--rounds` interleaved rounds of
 * `--each` compressions of every page by every variant, and the bytes each makes (every output is
 * checked to decode to its page).
 */
import { brotliCompressSync, brotliDecompressSync, constants, deflateSync, gunzipSync, gzipSync, inflateSync, type BrotliOptions } from "node:zlib";
import { prng } from "../src/ingest/devnet/chain.js";
import { OUT, ROOT, argOption, median, startServer } from "./common.js";
import { readTargets, rowsOf, sample } from "./scaleRows.js";

const opt = argOption(process.argv.slice(2));
const DB = opt("db", `${OUT}scale-1000000.db`);
const PAGES = Number(opt("pages", "8"));
const ROUNDS = Number(opt("rounds", "15"));
const EACH = Number(opt("each", "40"));

const Q = constants.BROTLI_PARAM_QUALITY;
const HINT = constants.BROTLI_PARAM_SIZE_HINT;
const LGWIN = constants.BROTLI_PARAM_LGWIN;
/** The smallest window that holds `bytes` (a window of w bits holds 2^w - 16). */
const windowFor = (bytes: number) => Math.min(constants.BROTLI_DEFAULT_WINDOW, Math.max(constants.BROTLI_MIN_WINDOW_BITS, 32 - Math.clz32(bytes + 16)));

type Variant = { name: string; compress: (b: Buffer) => Buffer; decompress: (b: Buffer) => Buffer };
const sync = (name: string, params: (b: Buffer) => Record<number, number>): Variant => ({
  name,
  compress: (b) => brotliCompressSync(b, { params: params(b) } as BrotliOptions),
  decompress: (b) => brotliDecompressSync(b),
});
const VARIANTS: Variant[] = [
  sync("q0 + size hint (the node's)", (b) => ({ [Q]: 0, [HINT]: b.length })),
  sync("q0, no hint", () => ({ [Q]: 0 })),
  sync("q0 + hint + window to size", (b) => ({ [Q]: 0, [HINT]: b.length, [LGWIN]: windowFor(b.length) })),
  sync("q0 + hint, window 14 (blocks of 16 KiB)", (b) => ({ [Q]: 0, [HINT]: b.length, [LGWIN]: Math.min(14, windowFor(b.length)) })),
  sync("q1 + size hint", (b) => ({ [Q]: 1, [HINT]: b.length })),
  sync("q1 + hint + window to size", (b) => ({ [Q]: 1, [HINT]: b.length, [LGWIN]: windowFor(b.length) })),
  { name: "gzip level 1", compress: (b) => gzipSync(b, { level: 1 }), decompress: (b) => gunzipSync(b) },
  { name: "deflate level 1", compress: (b) => deflateSync(b, { level: 1 }), decompress: (b) => inflateSync(b) },
];

async function fetchPages(): Promise<Record<string, Buffer[]>> {
  const s = await startServer([`${ROOT}dist/cli.js`, "serve", "--db", DB, "--port", "0", "--quiet", "--no-prune"]);
  try {
    const rows = rowsOf(readTargets(DB));
    const pick = (re: RegExp) => rows.find((r) => re.test(r.name))!.mix;
    const random = prng(7);
    const sets: Record<string, Buffer[]> = {};
    for (const [label, mix] of [
      ["summaries of 100", pick(/^summaries limit=100, random sender, random/)],
      ["summaries of 25", pick(/^summaries limit=25, random sender, random/)],
      ["modules of 25", pick(/^modules limit=25, random account/)],
      ["one module's page", pick(/^modules of the account with/)],
    ] as const) {
      const pages: Buffer[] = [];
      while (pages.length < PAGES) {
        const res = await fetch(`${s.url}${sample(mix, random).path}`);
        const body = Buffer.from(await res.arrayBuffer());
        if (res.status === 200 && body.length > 200) pages.push(body);
      }
      sets[label] = pages;
    }
    return sets;
  } finally {
    s.child.kill();
  }
}

function cpuMicros(run: () => void): number {
  const t = process.cpuUsage();
  run();
  const d = process.cpuUsage(t);
  return d.user + d.system;
}

const sets = await fetchPages();
console.log(`### brotli for a miss (${new Date().toISOString().slice(0, 16)} UTC; ${PAGES} pages a set; median of ${ROUNDS} rounds of ${EACH} compressions of each page; µs of CPU a compression)\n`);
console.log(`| body | ${VARIANTS.map((v) => v.name).join(" | ")} |`);
console.log(`|---|${VARIANTS.map(() => "---|").join("")}`);
for (const [label, pages] of Object.entries(sets)) {
  const mean = pages.reduce((a, p) => a + p.length, 0) / pages.length;
  const bytes = VARIANTS.map((v) => {
    let n = 0;
    for (const p of pages) {
      const out = v.compress(p);
      if (!v.decompress(out).equals(p)) throw new Error(`${v.name}: does not decode to its page`);
      n += out.length;
    }
    return n / pages.length;
  });
  const times: number[][] = VARIANTS.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, v] of VARIANTS.entries()) {
      times[i]!.push(cpuMicros(() => {
        for (let k = 0; k < EACH; k++) for (const p of pages) v.compress(p);
      }) / (EACH * pages.length));
    }
  }
  const cells = VARIANTS.map((_, i) => {
    const us = median(times[i]!);
    return `${us.toFixed(1)} µs, ${Math.round(bytes[i]!)} B (${((us * 1000) / mean).toFixed(2)} ns/B)`;
  });
  console.log(`| ${label}, mean ${Math.round(mean)} B | ${cells.join(" | ")} |`);
}
