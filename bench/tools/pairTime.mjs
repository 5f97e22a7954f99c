/**
 * Two servers' CPU time a request measured at the same time, under the same load: on a machine
 * shared with other work, CPU time a request moves by 10–40% between runs (co-runners evict the
 * caches, the scheduler's share changes), so two servers measured one after the other differ by
 * more than a runtime setting does. Here both run on core 0 at once, each driven at the same fixed
 * rate by its own load generator on core 1, so both see the same co-runners; their ratio is the
 * figure, over rounds that alternate which one starts first.
 *
 *   node bench/tools/pairTime.mjs --row summaries-25 [--db FILE] [--rounds 5] [--warmup 10] [--duration 8]
 *        [--rate 1000] --a "node:--single-threaded-gc" --b "node:" [--a-dist DIR] [--b-dist DIR]
 *        [--a-row ROW] [--b-row ROW] [--a-node PATH] [--b-node PATH] [--a-streams N] [--b-streams N]
 *        [--a-serve "ARGS"] [--b-serve "ARGS"]
 *
 * A server is `node:FLAGS` (the node's `serve`, as bench/scale.bench.ts starts it, under node
 * FLAGS), `floor:FLAGS` (bench/floorServer.ts) or `fastify:FLAGS` (the floor behind a bare Fastify); `--a-dist`/`--b-dist` serve another checkout's
 * build; `--a-row`/`--b-row` give a side a row of its own (the compressed miss against the plain
 * one, on two servers of the same build); `--a-node`/`--b-node` run a side's server on another Node
 * binary (a build on one Node line against another; by default the node running this script);
 * `--a-streams`/`--b-streams` open that many idle transaction streams on a side's server before its
 * warm-up (each filtered by a random sender, so nothing matches; clients in bench/streamClients.mjs
 * on core 1), closed before the server stops; `--a-serve`/`--b-serve` add arguments to a side's `serve`. Rows: those of bench/tools/rowMixes.mjs. CPU time is every thread's (`/proc/PID/task/TID/schedstat`).
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { option, rowMixes, serverUrl, streamCapFlags } from "./rowMixes.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;
const DB = option("db", `${ROOT}bench/out/scale-1000000.db`);
const ROW = option("row", "summaries-25");
const ROUNDS = Number(option("rounds", "5"));
const WARMUP = Number(option("warmup", "10"));
const DURATION = Number(option("duration", "8"));
const RATE = Number(option("rate", "1000"));
const SIDES = [
  { name: "a", spec: option("a", "node:"), dist: option("a-dist", ROOT), row: option("a-row", ROW), node: option("a-node", process.execPath), streams: Number(option("a-streams", "0")), serve: option("a-serve", "") },
  { name: "b", spec: option("b", "node:"), dist: option("b-dist", ROOT), row: option("b-row", ROW), node: option("b-node", process.execPath), streams: Number(option("b-streams", "0")), serve: option("b-serve", "") },
];

const { targets } = JSON.parse(readFileSync(`${DB}.targets.json`, "utf8"));
const MIXES = rowMixes(targets);
for (const s of SIDES) if (!MIXES[s.row]) throw new Error(`--row: one of ${Object.keys(MIXES).join(", ")}`);

/** Starts a side's server on core 0; resolves with its process and URL. */
function start(side) {
  const [kind, flagText = ""] = side.spec.split(/:(.*)/su);
  const flags = flagText.split(" ").filter(Boolean);
  const args =
    kind === "floor" || kind === "fastify"
      ? [...flags, "--import", "tsx", `${side.dist}/bench/floorServer.ts`, DB, "0", ...(kind === "fastify" ? ["--fastify"] : [])]
      : [...flags, `${side.dist}/dist/cli.js`, "serve", "--db", DB, "--port", "0", "--quiet", "--no-prune", ...(side.streams > 0 ? streamCapFlags(side.dist, side.streams + 100) : []), ...side.serve.split(" ").filter(Boolean)];
  const child = spawn("taskset", ["-c", "0", side.node, ...args], { cwd: side.dist, stdio: ["ignore", "pipe", "pipe"] });
  return serverUrl(child, side.spec).then(({ url }) => ({ child, url }));
}

/** A process of stream clients (bench/streamClients.mjs) on core 1, asked over IPC; started once, when a side has streams. */
let streamClients = null;
function askClients(message) {
  return new Promise((resolve) => {
    streamClients.once("message", resolve);
    streamClients.send(message);
  });
}
async function openStreams(side, url) {
  if (side.streams === 0) return;
  if (!streamClients) {
    streamClients = spawn("taskset", ["-c", "1", process.execPath, `${ROOT}bench/streamClients.mjs`], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    await new Promise((resolve) => streamClients.once("message", resolve));
  }
  const path = "/v1/transactions/stream?sender=0x{random}";
  const { statuses } = await askClients({ cmd: "open", base: url, specs: [{ kind: side.name, path, accept: "text/event-stream", count: side.streams }] });
  if (statuses["200"] !== side.streams) throw new Error(`${side.name}: opening ${side.streams} streams answered ${JSON.stringify(statuses)}`);
}

const dir = `${ROOT}bench/out/pairTime`;
mkdirSync(dir, { recursive: true });
/** One load generator run on core 1 at the fixed rate; resolves with its figures. */
async function loadgen(url, row, duration, tag) {
  const spec = `${dir}/loadgen-${process.pid}-${tag}.json`;
  writeFileSync(spec, JSON.stringify({ opts: { url, connections: 10, duration, overallRate: RATE }, mix: MIXES[row], warmup: 0 }));
  const { stdout } = await promisify(execFile)("taskset", ["-c", "1", process.execPath, `${ROOT}bench/loadgen.mjs`, `@${spec}`], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout);
}

/** CPU time of every thread of a process so far, in ns. */
function cpuNs(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // a thread gone between the listing and the read
    }
  }
  return ns;
}

for (const s of SIDES) console.log(`${s.name}: ${s.spec}${s.streams > 0 ? ` with ${s.streams} idle streams` : ""} on ${s.node} (${execFileSync(s.node, ["--version"], { encoding: "utf8" }).trim()}), ${s.dist}`);
const perRequest = { a: [], b: [] };
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? SIDES : [...SIDES].reverse();
  const servers = {};
  for (const side of order) servers[side.name] = await start(side);
  for (const side of order) await openStreams(side, servers[side.name].url);
  await Promise.all(SIDES.map((s) => loadgen(servers[s.name].url, s.row, WARMUP, `${s.name}w`)));
  const before = Object.fromEntries(SIDES.map((s) => [s.name, cpuNs(servers[s.name].child.pid)]));
  const runs = await Promise.all(SIDES.map((s) => loadgen(servers[s.name].url, s.row, DURATION, s.name)));
  const line = [];
  for (const [i, s] of SIDES.entries()) {
    const us = (cpuNs(servers[s.name].child.pid) - before[s.name]) / 1000 / runs[i].total;
    perRequest[s.name].push(us);
    line.push(`${s.spec} ${s.row}: ${us.toFixed(1)} µs/req (${Math.round(runs[i].rps)} req/s, non-2xx ${runs[i].non2xx})`);
  }
  for (const s of SIDES) if (s.streams > 0) await askClients({ cmd: "close", kind: s.name });
  for (const s of SIDES) servers[s.name].child.kill("SIGINT");
  console.log(`round ${round + 1}: ${line.join("; ")}; a ÷ b ${(perRequest.a.at(-1) / perRequest.b.at(-1)).toFixed(3)}`);
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const ratios = perRequest.a.map((x, i) => x / perRequest.b[i]);
console.log(
  `at ${RATE} req/s each: a (${SIDES[0].spec} ${SIDES[0].row}) ${median(perRequest.a).toFixed(1)} µs/req, b (${SIDES[1].spec} ${SIDES[1].row}) ${median(perRequest.b).toFixed(1)} µs/req (medians of ${ROUNDS}); a ÷ b by round ${ratios.map((r) => r.toFixed(3)).join(", ")}, median ${median(ratios).toFixed(3)}`,
);
if (streamClients) streamClients.send({ cmd: "exit" });
