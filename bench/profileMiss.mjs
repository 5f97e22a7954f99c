/**
 * A CPU profile of the server under one request mix of bench/scale.bench.ts (the cache-miss rows),
 * and where its time goes: `node bench/profileMiss.mjs --db bench/out/scale-10000000.db --row modules
 * [--duration 10] [--dist DIR] [--top 40] [--server-args "--page-cache-mb 0"] [--targets FILE]`.
 *
 * The server is started as bench/scale.bench.ts starts it (`serve --port 0 --quiet --no-prune`, on
 * core 0 with two cores), under `node --cpu-prof`; the load generator (bench/loadgen.mjs) runs the
 * row's mix on core 1 with the targets scale.bench.ts saved next to the ledger
 * (`<db>.targets.json`). Prints the server CPU per request (from /proc, as scale.bench.ts) and the
 * profile's self time by function and by group (GC, SQLite, compression, Fastify, ...), and the
 * inclusive share of a few frames. The profile file stays under bench/out/profiles/.
 */
import { execFile, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { promisify } from "node:util";
import { option, rowMixes, serverUrl } from "./rowMixes.mjs";

const ROOT = new URL("../", import.meta.url).pathname;
const DB = option("db", `${ROOT}bench/out/scale-10000000.db`);
const ROW = option("row", "modules");
const DURATION = Number(option("duration", "10"));
const DIST = option("dist", ROOT);
const TOP = Number(option("top", "40"));
const EXTRA = option("server-args", "").split(" ").filter(Boolean);
const PINNED = availableParallelism() >= 2;

// A postgres:// --db has none beside it: `--targets` names the SQLite ledger's of the same size
// (bench/scaleLedger.ts writes the same ledger into both).
const { targets } = JSON.parse(readFileSync(option("targets", `${DB}.targets.json`), "utf8"));
const MIXES = rowMixes(targets);
const mix = MIXES[ROW];
if (!mix) throw new Error(`--row: one of ${Object.keys(MIXES).join(", ")}`);

const dir = `${ROOT}bench/out/profiles/${ROW}-${Date.now()}`;
mkdirSync(dir, { recursive: true });
const args = ["--cpu-prof", "--cpu-prof-dir", dir, `${DIST}/dist/cli.js`, "serve", "--db", DB, "--port", "0", "--quiet", "--no-prune", ...EXTRA];
const child = spawn(PINNED ? "taskset" : process.execPath, PINNED ? ["-c", "0", process.execPath, ...args] : args, { stdio: ["ignore", "pipe", "pipe"] });
const { url } = await serverUrl(child, "server");
const spec = `${dir}/loadgen.json`;
writeFileSync(spec, JSON.stringify({ opts: { url, connections: 10, duration: DURATION }, pid: child.pid, mix, warmup: 1 }));
const loadArgs = [`${ROOT}bench/loadgen.mjs`, `@${spec}`];
const { stdout } = await promisify(execFile)(PINNED ? "taskset" : process.execPath, PINNED ? ["-c", "1", process.execPath, ...loadArgs] : loadArgs, { maxBuffer: 1 << 20 });
const r = JSON.parse(stdout);
const exited = new Promise((resolve) => child.once("exit", resolve));
child.kill("SIGINT");
await exited;

console.log(`${ROW} on ${DB}: ${Math.round(r.rps)} req/s, server CPU ${(r.serverCpu / r.total).toFixed(0)} µs/req, non-2xx ${r.non2xx}`);
const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
const profile = JSON.parse(readFileSync(`${dir}/${file}`, "utf8"));
summarize(profile);
rmSync(spec);
console.log(`profile: ${dir}/${file}`);

/** Self time by function and by group, and the inclusive share of named frames. */
function summarize(p) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map();
  const incl = new Map();
  const groups = new Map();
  let total = 0;
  const label = (n) => {
    const f = n.callFrame;
    const where = f.url.split("/").slice(-2).join("/");
    return `${f.functionName || "(anon)"} ${where}:${f.lineNumber + 1}`;
  };
  const groupOf = (n) => {
    const f = n.callFrame;
    if (f.functionName === "(garbage collector)") return "GC";
    if (f.functionName === "(program)" || f.functionName === "(idle)") return f.functionName;
    const u = f.url;
    if (/better-sqlite3/.test(u) || /^(all|get|run|iterate)$/.test(f.functionName) && !u) return "sqlite";
    if (/zlib/.test(u)) return "zlib";
    if (/node_modules\/fastify|node_modules\/find-my-way|node_modules\/light-my-request|node_modules\/avvio|node_modules\/@fastify/.test(u)) return "fastify";
    if (/fast-json-stringify|ajv/.test(u)) return "json-schema";
    if (/lru-cache/.test(u)) return "lru-cache";
    if (/\/dist\/move\//.test(u)) return "move (ABI decode)";
    if (/\/dist\/storage\//.test(u)) return "storage (ours)";
    if (/\/dist\/api\//.test(u)) return "api (ours)";
    if (/\/dist\//.test(u)) return "other (ours)";
    if (/^node:/.test(u)) return `node:${u.slice(5).split("/")[0]}`;
    if (!u) return "native/builtin";
    return "other";
  };
  const dt = p.timeDeltas;
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i]);
    const t = dt[i + 1] ?? dt[i] ?? 0;
    if (n.callFrame.functionName === "(idle)") continue;
    total += t;
    const l = label(n);
    self.set(l, (self.get(l) ?? 0) + t);
    const g = groupOf(n);
    groups.set(g, (groups.get(g) ?? 0) + t);
    const seen = new Set();
    for (let id = n.id; id !== undefined; id = parent.get(id)) {
      const pl = label(byId.get(id));
      if (seen.has(pl)) continue;
      seen.add(pl);
      incl.set(pl, (incl.get(pl) ?? 0) + t);
    }
  }
  const pct = (t) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
  console.log(`\nbusy samples: ${(total / 1e6).toFixed(2)} s\n\nby group (self):`);
  for (const [g, t] of [...groups].sort((a, b) => b[1] - a[1])) console.log(`${pct(t)}  ${g}`);
  console.log(`\ntop ${TOP} by self time:`);
  for (const [l, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${pct(t)}  ${l}`);
  console.log(`\ntop ${TOP} by inclusive time:`);
  for (const [l, t] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${pct(t)}  ${l}`);
}
