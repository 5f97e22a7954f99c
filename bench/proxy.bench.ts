/**
 * What the pass-through of `serve --follow URL --proxy` costs (issue 34): sequential latency of
 * proxied routes, asked of the fake upstream directly and through a replica; and the mean latency
 * of two locally served operations on a replica with and without `--proxy` (the wildcard route
 * must not slow the node's own routes), rounds alternating.
 *
 *   npm run build && node --import tsx bench/proxy.bench.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeUpstream } from "../test/helpers/fakeUpstream.js";
import { startServe } from "../test/helpers/serveProcess.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-proxy-bench-"));
const up = await FakeUpstream.start({ blocks: 130 });
const args = (db: string) => ["--follow", up.base, "--db", join(dir, db), "--no-prune", "--quiet", "--max-rps", "5000", "--poll", "1000"];
const plain = await startServe(args("plain.db"));
const proxied = await startServe([...args("proxied.db"), "--proxy", "--proxy-max-rps", "100000"]);

/** `n` requests one after another: their latencies (ms), sorted. */
async function latencies(base: string, path: string, n: number): Promise<number[]> {
  const t: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await (await fetch(base + path)).arrayBuffer();
    t.push(performance.now() - s);
  }
  return t.sort((a, b) => a - b);
}
const at = (t: number[], p: number) => t[Math.floor(t.length * p)]!.toFixed(2);
const mean = (t: number[]) => ((t.reduce((a, b) => a + b, 0) / t.length) * 1000).toFixed(0);

try {
  for (const path of ["/blocks/by_height/3", "/transactions?start=5&limit=25"]) {
    await latencies(up.base, path, 200);
    await latencies(proxied.base, path, 200);
    const direct = await latencies(up.base, path, 1000);
    const through = await latencies(proxied.base, path, 1000);
    console.log(`${path}: direct p50 ${at(direct, 0.5)} ms, p99 ${at(direct, 0.99)} ms; through --proxy p50 ${at(through, 0.5)} ms, p99 ${at(through, 0.99)} ms`);
  }
  for (const path of ["/estimate_gas_price", "/accounts/0x1/modules?limit=5"]) {
    for (const node of [plain, proxied]) await latencies(node.base, path, 300);
    const rounds: string[] = [];
    for (let round = 0; round < 3; round++) {
      rounds.push(`plain ${mean(await latencies(plain.base, path, 2000))} µs, --proxy ${mean(await latencies(proxied.base, path, 2000))} µs`);
    }
    console.log(`${path} (mean of 2000, 3 rounds): ${rounds.join("; ")}`);
  }
} finally {
  await plain.stop();
  await proxied.stop();
  await up.close();
  rmSync(dir, { recursive: true, force: true });
}
