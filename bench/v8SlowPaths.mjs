/**
 * V8's per-request slow paths on one row, after a long warm-up: inline-cache misses (a megamorphic
 * IC's stub-cache miss, an IC reset by a flushed feedback vector), map transitions and migrations,
 * objects turned to dictionary mode, deoptimisations and (re)compiles, each summed by the source
 * site that took it, counted only over the measured window and divided by its requests.
 *
 *   node bench/v8SlowPaths.mjs --row summaries-25 [--db FILE] [--warmup 20] [--duration 8]
 *        [--rate 1000] [--dist DIR] [--top 40] [--keep LOG]
 *
 * The node (`serve`, as bench/threadTime.mjs starts it) runs on core 0 under V8's own log
 * (`--log-ic --log-maps --log-deopt --log-code`), the load generator on core 1. Each log event
 * names the abstract pc of the JavaScript frame that took it; the code-creation events place that
 * pc in a function and its script, and the event's line and column in the script. The window is
 * told apart by the log's timestamps (µs since the isolate started, taken as the spawn). The log
 * slows the server: these are counts, not times.
 */
import { execFile, spawn } from "node:child_process";
import { createReadStream, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { option, rowMixes, serverUrl } from "./rowMixes.mjs";

const ROOT = new URL("../", import.meta.url).pathname;
const DB = option("db", `${ROOT}bench/out/scale-1000000.db`);
const ROW = option("row", "summaries-25");
const WARMUP = Number(option("warmup", "20"));
const DURATION = Number(option("duration", "8"));
const RATE = option("rate", null);
const DIST = option("dist", ROOT);
const TOP = Number(option("top", "40"));
const KEEP = option("keep", null);

const { targets } = JSON.parse(readFileSync(`${DB}.targets.json`, "utf8"));
const mix = rowMixes(targets)[ROW];
if (!mix) throw new Error(`--row: one of ${Object.keys(rowMixes(targets)).join(", ")}`);

const ANALYSE = option("analyse", null);
let logFile;
let from;
let to;
let run;
/** When the server listened (µs on the log's clock): the megamorphic sites after it are the request path's. */
let listening = 0;
if (ANALYSE) {
  // `--analyse LOG --window FROM,TO,REQUESTS`: a kept log read again (the figures the run printed)
  logFile = ANALYSE;
  const [a, b, n, l = 0] = option("window", "0,0,1").split(",").map(Number);
  listening = l;
  from = a;
  to = b;
  run = { total: n, rps: 0, non2xx: 0 };
} else {
  const dir = `${ROOT}bench/out/v8SlowPaths`;
  mkdirSync(dir, { recursive: true });
  logFile = KEEP ?? `${dir}/v8-${process.pid}.log`;
  const flags = ["--log-ic", "--log-maps", "--log-deopt", "--log-code", `--logfile=${logFile}`, "--no-logfile-per-isolate"];
  const started = performance.now();
  const child = spawn("taskset", ["-c", "0", process.execPath, ...flags, `${DIST}/dist/cli.js`, "serve", "--db", DB, "--port", "0", "--quiet", "--no-prune"], {
    cwd: DIST,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const { url } = await serverUrl(child, "server");
  const loadgen = async (duration) => {
    const spec = `${dir}/loadgen-${process.pid}.json`;
    writeFileSync(spec, JSON.stringify({ opts: { url, connections: 10, duration, ...(RATE ? { overallRate: Number(RATE) } : {}) }, mix, warmup: 0 }));
    const { stdout } = await promisify(execFile)("taskset", ["-c", "1", process.execPath, `${ROOT}bench/loadgen.mjs`, `@${spec}`], { maxBuffer: 1 << 20 });
    return JSON.parse(stdout);
  };
  listening = (performance.now() - started) * 1000;
  await loadgen(WARMUP);
  from = (performance.now() - started) * 1000;
  run = await loadgen(DURATION);
  to = (performance.now() - started) * 1000;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGINT");
  await exited;

console.log(`window --window ${Math.round(from)},${Math.round(to)},${run.total},${Math.round(listening)}`);
}

/** Code objects by start address, sorted: the function (and its script) a pc falls in. */
const starts = [];
const code = new Map();
/** Where `addr` is, or would go, in `starts`. */
function positionOf(addr) {
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid] < addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
function place(addr, entry) {
  if (!code.has(addr)) starts.splice(positionOf(addr), 0, addr);
  code.set(addr, entry);
}
function remove(addr) {
  if (!code.delete(addr)) return;
  starts.splice(positionOf(addr), 1);
}
function functionAt(pc) {
  // The first start above pc (addresses are integers), so the code object before it holds pc if any does.
  const lo = positionOf(pc + 1);
  if (lo === 0) return null;
  const e = code.get(starts[lo - 1]);
  return pc < starts[lo - 1] + e.size ? e : null;
}

/** Where a site is: ours, Fastify's, find-my-way's, Node's, another package's. */
function owner(file) {
  if (file.startsWith("node:")) return "node";
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (m) return m[1];
  if (file.startsWith("dist/") || file.includes("/dist/")) return "ours";
  return file === "" ? "?" : "other";
}
/** `fn file:line:col` of a code-creation name, split. */
function parseName(name) {
  const m = /^(.*?) ?((?:file:\/\/|node:|\/)[^ ]*?)(?::(\d+):(\d+))?$/.exec(name);
  if (!m) return { fn: name, file: "" };
  return { fn: m[1].replace(/^[~^+*]/, ""), file: m[2].replace("file://", "").replace(ROOT, "").replace(DIST, "") };
}
const short = (file) => file.replace(/^.*node_modules\//, "").replace(/^dist\//, "dist/");

const counts = new Map();
/** Each IC site's last state, keys and events since the server listened. */
const icSites = new Map();
const totals = new Map();
function count(kind, site) {
  const k = `${kind}\t${site}`;
  counts.set(k, (counts.get(k) ?? 0) + 1);
  totals.set(kind, (totals.get(kind) ?? 0) + 1);
}
function siteOf(pc, line, column) {
  const f = functionAt(pc);
  if (!f) return `? ${pc.toString(16)}`;
  const { fn, file } = parseName(f.name);
  return `${owner(file)}\t${short(file)}:${line}:${column} (${fn || "anonymous"})`;
}

const lines = createInterface({ input: createReadStream(logFile) });
for await (const line of lines) {
  const f = line.split(",");
  const ev = f[0];
  if (ev === "code-creation") {
    // code-creation,type,kind,time,address,size,name[,sfi,state]
    place(Number(f[4]), { size: Number(f[5]), name: f.slice(6, f.length > 8 ? -2 : undefined).join(",") });
    const t = Number(f[3]);
    if (t >= from && t < to && f[1] !== "Builtin" && f[1] !== "RegExp" && f[1] !== "Handler") count(`compile ${f[1]}${f.length > 8 ? ` ${f.at(-1)}` : ""}`, `${owner(parseName(f[6]).file)}\t${f[6].replace(ROOT, "")}`);
  } else if (ev === "code-move") {
    const e = code.get(Number(f[1]));
    if (e) {
      remove(Number(f[1]));
      place(Number(f[2]), e);
    }
  } else if (ev === "code-delete") {
    remove(Number(f[1]));
  } else if (/IC$/.test(ev)) {
    // type,pc,time,line,column,old,new,map,key,modifier,slow_reason
    const t = Number(f[2]);
    if (t >= listening && t < to) {
      const site = `${ev}\t${siteOf(Number(f[1]), f[3], f[4])}`;
      const s = icSites.get(site) ?? { state: "", keys: new Set(), events: 0 };
      s.state = f[6];
      s.events++;
      if (s.keys.size < 4) s.keys.add(f.slice(8, f.length - 2).join(",").slice(0, 30));
      icSites.set(site, s);
    }
    if (t < from || t >= to) continue;
    const key = f.slice(8, f.length - 2).join(",");
    count(`${ev} ${f[5]}->${f[6]}${f.at(-1) ? ` (${f.at(-1)})` : ""}`, `${siteOf(Number(f[1]), f[3], f[4])} .${key.slice(0, 40)}`);
  } else if (ev === "map") {
    // map,type,time,from,to,pc,line,column,reason,name
    const t = Number(f[2]);
    if (t < from || t >= to) continue;
    count(`map ${f[1]}${f[8] ? ` ${f[8]}` : ""}`, `${siteOf(Number(f[5]), f[6], f[7])} ${f.slice(9).join(",").slice(0, 40)}`);
  } else if (ev === "code-deopt") {
    const t = Number(f[1]);
    if (t < from || t >= to) continue;
    count(`deopt ${f[6]}`, `${f.slice(7).join(",")}`);
  }
}
if (!KEEP) rmSync(logFile, { force: true });

const n = run.total;
console.log(`${ROW} on ${DB.split("/").at(-1)} (${DIST}): ${n} requests in the window (${Math.round(run.rps)}/s), non-2xx ${run.non2xx}`);
console.log("\nby kind, a request:");
for (const [k, c] of [...totals].sort((a, b) => b[1] - a[1])) console.log(`  ${(c / n).toFixed(3).padStart(9)}  ${k}`);
const byOwner = new Map();
for (const [k, c] of counts) {
  const [kind, who] = k.split("\t");
  const key = `${who}\t${kind.split(" ")[0]}`;
  byOwner.set(key, (byOwner.get(key) ?? 0) + c);
}
console.log("\nby owner and kind, a request:");
for (const [k, c] of [...byOwner].sort((a, b) => b[1] - a[1])) console.log(`  ${(c / n).toFixed(3).padStart(9)}  ${k.replace("\t", "  ")}`);
console.log(`\ntop ${TOP} sites, a request:`);
for (const [k, c] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`  ${(c / n).toFixed(3).padStart(9)}  ${k.replaceAll("\t", "  ")}`);

const mega = [...icSites].filter(([, s]) => s.state === "N");
console.log(`\nIC sites megamorphic at the end, seen since the server listened (${mega.length}; a megamorphic site's hits in the stub cache are not logged):`);
for (const [site, s] of mega.sort((a, b) => a[0].split("\t")[1].localeCompare(b[0].split("\t")[1]) || b[1].events - a[1].events)) {
  console.log(`  ${site.replaceAll("\t", "  ")}  [${[...s.keys].join(" ")}] ${s.events} events`);
}
