/**
 * Move decode benchmark: bytecode → ABI objects throughput over the 63 genesis modules, and the
 * cost of a cached `ModuleRecords.record` hit (the module record a modules page sends).
 *
 *   node --import tsx bench/move-decode.bench.ts
 */
import { moduleAbi } from "../src/move/abi.js";
import { ModuleRecords } from "../src/api/pages/moduleRecords.js";
import { codeHash } from "../src/ledger/codeHash.js";
import { genesisModules } from "../test/helpers/moveFixtures.js";

const RUNS = 7;
const modules = genesisModules().map((m) => m.bytecode);
const totalBytes = modules.reduce((n, b) => n + b.length, 0);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** One run: decode every module `reps` times; returns MB/s (10^6 bytes). */
function decodeRun(reps: number): number {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let r = 0; r < reps; r++) {
    for (const b of modules) sink += moduleAbi(b)!.structs.length;
  }
  const ns = Number(process.hrtime.bigint() - start);
  if (sink === 0) throw new Error("nothing decoded");
  return (totalBytes * reps) / 1e6 / (ns / 1e9);
}

/** One run: `lookups` cache hits; returns ns per lookup. */
function cacheRun(cache: ModuleRecords, hashes: string[], lookups: number): number {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < lookups; i++) {
    const j = i % modules.length;
    sink += cache.record(hashes[j]!, modules[j]!).length;
  }
  const ns = Number(process.hrtime.bigint() - start);
  if (sink === 0) throw new Error("nothing looked up");
  return ns / lookups;
}

decodeRun(20); // warm-up (JIT)
const decode = Array.from({ length: RUNS }, () => decodeRun(50));

const cache = new ModuleRecords();
const hashes = modules.map(codeHash);
for (const [i, h] of hashes.entries()) cache.record(h, modules[i]!);
cacheRun(cache, hashes, 1_000_000); // warm-up
const hits = Array.from({ length: RUNS }, () => cacheRun(cache, hashes, 2_000_000));

const mbps = median(decode);
console.log(`modules: ${modules.length}, bytecode: ${totalBytes} bytes (genesis, v5)`);
console.log(`decode → ABI objects: median ${mbps.toFixed(1)} MB/s over ${RUNS} runs ` +
  `(min ${Math.min(...decode).toFixed(1)}, max ${Math.max(...decode).toFixed(1)}); ` +
  `${((totalBytes / modules.length) / mbps).toFixed(2)} µs per average module`);
console.log(`ModuleRecords.record hit: median ${median(hits).toFixed(1)} ns/module over ${RUNS} runs ` +
  `(min ${Math.min(...hits).toFixed(1)}, max ${Math.max(...hits).toFixed(1)})`);
console.log(`target ≥ 50 MB/s: ${mbps >= 50 ? "met" : "NOT met"}`);
