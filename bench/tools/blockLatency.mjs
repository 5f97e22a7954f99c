/**
 * Where a stream's latency goes by block size: a `serve --devnet --block-interval 100` node (core 0)
 * and ONE NDJSON stream of its NewBlockEvent transactions (this process, core 1), so nothing of
 * the fan-out to many streams is in it. Each block's metadata transaction arrives once; its latency
 * is arrival − its `timestamp` (the devnet takes it before it builds and commits the block), and
 * the block's size is the distance to the next one's version. Printed apart for the devnet's full
 * blocks (its congestion bursts, 300 transactions) and the others.
 *
 *   node bench/tools/blockLatency.mjs [--dist DIR] [--seconds 30]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { option, serverUrl } from "./rowMixes.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;
const DIST = option("dist", ROOT);
const SECONDS = Number(option("seconds", "30"));
/** A block of more transactions than this is one of the devnet's full ones. */
const FULL = 100;

const dir = mkdtempSync(join(tmpdir(), "block-latency-"));
const args = [join(DIST, "dist/cli.js"), "serve", "--devnet", "--block-interval", "100", "--db", join(dir, "ledger.db"), "--port", "0", "--no-prune"];
const server = spawn("taskset", ["-c", "0", process.execPath, ...args], { stdio: ["ignore", "pipe", "pipe"] });
try {
  const { url } = await serverUrl(server, "the devnet node");
  const res = await fetch(`${url}/v1/transactions/stream?event_type=0x1::block::NewBlockEvent`, { headers: { accept: "application/x-ndjson" } });
  const blocks = [];
  let previous = null;
  let pending = "";
  const decoder = new TextDecoder();
  const until = Date.now() + SECONDS * 1000;
  for await (const chunk of res.body) {
    const now = Date.now();
    pending += decoder.decode(chunk, { stream: true });
    for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (!line.startsWith("{")) continue;
      const t = JSON.parse(line);
      if (typeof t.timestamp !== "string") continue;
      const version = Number(t.version);
      if (previous) blocks.push({ size: version - previous.version, ms: previous.ms });
      previous = { version, ms: now - Number(t.timestamp) / 1000 };
    }
    if (now > until) break;
  }
  const latencies = (full) => blocks.filter((b) => (b.size > FULL) === full).map((b) => b.ms).sort((a, b) => a - b);
  const at = (a, q) => a[Math.min(a.length - 1, Math.floor(a.length * q))];
  console.log("| blocks | count | p50 ms | p90 ms | max ms |\n|---|---|---|---|---|");
  for (const [name, full] of [[`full (more than ${FULL} transactions)`, true], ["the others", false]]) {
    const l = latencies(full);
    if (l.length > 0) console.log(`| ${name} | ${l.length} | ${at(l, 0.5)} | ${at(l, 0.9)} | ${l.at(-1)} |`);
  }
  console.log(`\nCommand: \`node bench/tools/blockLatency.mjs --seconds ${SECONDS}\` (${new Date().toISOString().slice(0, 16)} UTC)`);
} finally {
  server.kill("SIGINT");
  await new Promise((r) => server.once("exit", r));
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
