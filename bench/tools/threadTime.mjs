/**
 * Where a server's CPU time goes by thread, under one request mix of bench/tools/rowMixes.mjs after a
 * long warm-up: `node bench/tools/threadTime.mjs --row summaries-25 [--floor] [--db FILE] [--warmup 20]
 * [--duration 10] [--dist DIR] [--node-args "--max-semi-space-size=16"] [--server-args "..."]
 * [--perf FILE] [--strace FILE] [--rate N] [--connections 10] [--log FILE]`.
 *
 * The server (the node's `serve`, as bench/scale.bench.ts starts it, or with `--floor`
 * bench/floorServer.ts) runs on core 0 and the load generator (bench/loadgen.mjs) on core 1. After
 * `--warmup` seconds of the row, each thread's CPU time (`/proc/PID/task/TID/schedstat`, in ns),
 * page faults and context switches are read before and after a measured run of `--duration`
 * seconds, and printed a request. `--perf FILE`: `perf record -e cpu-clock -F 2000 -g` of the
 * server over the measured run (start the node with `--node-args --perf-basic-prof` to name JS
 * frames); `--strace FILE`: `strace -c -f` of it over the run (slows it: its CPU figures then
 * mean nothing). `--rate N`: at most N requests a second over all connections (autocannon's
 * `overallRate`), to compare two servers at the same arrival rate. `--log FILE`: the server's
 * output (e.g. with `--node-args --trace-gc`).
 */
import { execFile, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { option, rowMixes, serverUrl } from "./rowMixes.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;
const argv = process.argv.slice(2);
const FLOOR = argv.includes("--floor");
const DB = option("db", `${ROOT}bench/out/scale-1000000.db`);
const ROW = option("row", "summaries-25");
const WARMUP = Number(option("warmup", "20"));
const DURATION = Number(option("duration", "10"));
const DIST = option("dist", ROOT);
const NODE_ARGS = option("node-args", "").split(" ").filter(Boolean);
const EXTRA = option("server-args", "").split(" ").filter(Boolean);
const PERF = option("perf", null);
const STRACE = option("strace", null);
const RATE = option("rate", null);
const LOG = option("log", null);
const CONNECTIONS = Number(option("connections", "10"));

const { targets } = JSON.parse(readFileSync(`${DB}.targets.json`, "utf8"));
const MIXES = rowMixes(targets);
const mix = MIXES[ROW];
if (!mix) throw new Error(`--row: one of ${Object.keys(MIXES).join(", ")}`);

const server = FLOOR
  ? [...NODE_ARGS, "--import", "tsx", `${DIST}/bench/floorServer.ts`, DB, "0"]
  : [...NODE_ARGS, `${DIST}/dist/cli.js`, "serve", "--db", DB, "--port", "0", "--quiet", "--no-prune", ...EXTRA];
const child = spawn("taskset", ["-c", "0", process.execPath, ...server], { cwd: DIST, stdio: ["ignore", "pipe", "pipe"] });
const { url, output } = await serverUrl(child, "server");

const dir = `${ROOT}bench/out/threadTime`;
mkdirSync(dir, { recursive: true });
const loadgen = async (duration, pid) => {
  const spec = `${dir}/loadgen-${process.pid}.json`;
  writeFileSync(spec, JSON.stringify({ opts: { url, connections: CONNECTIONS, duration, ...(RATE ? { overallRate: Number(RATE) } : {}) }, pid, mix, warmup: 0 }));
  const { stdout } = await promisify(execFile)("taskset", ["-c", "1", process.execPath, `${ROOT}bench/loadgen.mjs`, `@${spec}`], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout);
};

/** Each thread's name, CPU ns, minor faults and context switches. */
function threads(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const base = `/proc/${pid}/task/${tid}`;
      const comm = readFileSync(`${base}/comm`, "utf8").trim();
      const ns = Number(readFileSync(`${base}/schedstat`, "utf8").split(" ")[0]);
      const stat = readFileSync(`${base}/stat`, "utf8").split(") ")[1].split(" ");
      const status = readFileSync(`${base}/status`, "utf8");
      const sw = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)[1]);
      out.set(tid, { comm, ns, minflt: Number(stat[7]), switches: sw("voluntary_ctxt_switches") + sw("nonvoluntary_ctxt_switches") });
    } catch {
      // a thread gone between the listing and the read
    }
  }
  return out;
}

await loadgen(WARMUP, undefined);
const tracer = PERF
  ? spawn("perf", ["record", "-e", "cpu-clock", "-F", "2000", "-g", "-p", String(child.pid), "-o", PERF], { stdio: "ignore" })
  : STRACE
    ? spawn("strace", ["-c", "-f", "-p", String(child.pid), "-o", STRACE], { stdio: "ignore" })
    : null;
if (tracer) await new Promise((r) => setTimeout(r, 500));
const before = threads(child.pid);
const r = await loadgen(DURATION, child.pid);
const after = threads(child.pid);
if (tracer) {
  const done = new Promise((res) => tracer.once("exit", res));
  tracer.kill("SIGINT");
  await done;
}
child.kill("SIGINT");
if (LOG) writeFileSync(LOG, output());

const n = r.total;
console.log(`${FLOOR ? "floor" : "node"} ${ROW} on ${DB.split("/").at(-1)} ${NODE_ARGS.join(" ")} ${EXTRA.join(" ")}`);
console.log(`${n} requests, ${Math.round(r.rps)} req/s, non-2xx ${r.non2xx}, p50 ${r.p50} ms p99 ${r.p99} ms, loadgen's server CPU ${(r.serverCpu / n).toFixed(1)} µs/req, its own ${(r.ownCpu / n).toFixed(1)}`);
let total = 0;
const rows = [];
for (const [tid, a] of after) {
  const b = before.get(tid) ?? { ns: 0, minflt: 0, switches: 0 };
  const us = (a.ns - b.ns) / 1000 / n;
  total += us;
  if (a.ns - b.ns > 0 || a.minflt !== b.minflt) rows.push({ tid, comm: a.comm, us, minflt: (a.minflt - b.minflt) / n, switches: (a.switches - b.switches) / n });
}
rows.sort((x, y) => y.us - x.us);
for (const t of rows) console.log(`  ${t.comm.padEnd(16)} ${t.tid.padStart(8)} ${t.us.toFixed(2).padStart(8)} µs/req  ${t.minflt.toFixed(3)} faults/req  ${t.switches.toFixed(3)} switches/req`);
console.log(`  all threads ${total.toFixed(1)} µs/req`);
