/**
 * `bench:scale`'s rows measured in instructions instead of time: a steady measure for comparing two
 * builds on a shared, noisy machine, where CPU-time medians move by more than the difference sought.
 *
 *   npm run bench:instructions -- [--versions 1000000,10000000] [--compare DIR] [--requests 200]
 *                                 [--warmup 1000] [--repeat 2] [--only REGEX]
 *
 * - For each row, each build serves the ledger (bench/out/scale-N.db, as `bench:scale` builds it)
 *   from a server started for that row alone (rows run one after another in one server move each
 *   other's counts by JIT and heap state), under valgrind's callgrind with instrumentation off:
 *   `--warmup` requests run first (the JIT and the caches reach their steady state), then
 *   instrumentation is switched on, `--requests` requests run, and the guest instructions the
 *   server executed meanwhile are dumped a thread each: instructions a request on the serving
 *   thread (the compared figure), and on all threads (V8 compiles and marks on threads of its own).
 * - The requests are drawn from a seeded generator, so every build answers the same requests in the
 *   same order, one at a time over one keep-alive connection. `--repeat` runs everything again with
 *   other seeds, the builds' order swapped.
 * - Instruction counts leave out what a memory access or a cache miss costs: they compare the code,
 *   not the machine; `bench:scale` stays the measure of time.
 *
 * Prints markdown tables for bench/RESULTS.md.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { prng } from "../src/ingest/devnetChain.js";
import { OUT, ROOT, argOption, median } from "./common.js";
import { buildScaleLedger } from "./scaleLedger.js";
import { type Mix, type Row, readTargets, rowsOf, sample } from "./scaleRows.js";

const argv = process.argv.slice(2);
const opt = argOption(argv);
const SIZES = opt("versions", "1000000,10000000").split(",").map(Number);
const REQUESTS = Number(opt("requests", "200"));
const WARMUP = Number(opt("warmup", "1000"));
const REPEAT = Number(opt("repeat", "2"));
const COMPARE = argv.includes("--compare") ? opt("compare", "") : null;
const ONLY = argv.includes("--only") ? new RegExp(opt("only", "")) : null;
/** Where the dumps go (emptied first): `--dumps DIR`, by default bench/out/callgrind/. */
const DUMPS = opt("dumps", `${OUT}callgrind`).replace(/\/?$/, "/");
/** V8 flags for every server, e.g. `--single-threaded` (no compiler or GC threads beside the serving one). */
const NODE_FLAGS = argv.includes("--node-flags") ? opt("node-flags", "").split(" ").filter(Boolean) : [];

interface Build {
  label: string;
  dir: string;
}
const builds: Build[] = [{ label: "this build", dir: ROOT }];
if (COMPARE) builds.push({ label: "compared build", dir: COMPARE.replace(/\/?$/, "/") });

interface Served {
  child: ChildProcess;
  url: string;
  prefix: string;
}

/** Starts `serve` of a build under callgrind (instrumentation off) and waits for its URL. */
function serve(build: Build, db: string, tag: string): Promise<Served> {
  const prefix = `${DUMPS}${tag}`;
  const args = [
    "--tool=callgrind",
    "--instr-atstart=no",
    "--separate-threads=yes",
    `--callgrind-out-file=${prefix}.%p`,
    process.execPath,
    ...NODE_FLAGS,
    `${build.dir}dist/cli.js`,
    "serve",
    "--db",
    db,
    "--port",
    "0",
    "--quiet",
    "--no-prune",
  ];
  return new Promise((resolve, reject) => {
    const child = spawn("valgrind", args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let buf = "";
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(buf);
      if (m) resolve({ child, url: m[0], prefix: `${prefix}.${child.pid}` });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${build.label} exited (${code}): ${buf.slice(-2000)}`)));
  });
}

/** One request of a mix; resolves with its status once the body is read. */
function send(agent: Agent, base: string, mix: Mix, random: () => number): Promise<number> {
  const s = sample(mix, random);
  return new Promise((resolve, reject) => {
    const req = request(`${base}${s.path}`, { method: mix.method, agent, headers: mix.headers ?? {} }, (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode!));
    });
    req.once("error", reject);
    req.end(s.body);
  });
}

function callgrind(pid: number, ...command: string[]): void {
  execFileSync("callgrind_control", [...command, String(pid)], { stdio: "ignore" });
}

/**
 * Instructions of the newest dump of a run (`--separate-threads`: a file a thread, `<part>-<thread>`):
 * the serving thread's (thread 1: the request's JavaScript, SQLite's statements, the GC work done
 * there), and all threads' (with V8's optimizing compiler and GC helpers, which a run's first
 * thousand requests keep busy).
 */
function lastDump(prefix: string): { serving: number; all: number } {
  const dir = DUMPS;
  const base = prefix.slice(dir.length);
  const files = readdirSync(dir)
    .filter((f) => f.startsWith(`${base}.`))
    .map((f) => ({ f, m: /^(\d+)-(\d+)$/.exec(f.slice(base.length + 1)) }))
    .filter((x) => x.m !== null)
    .map((x) => ({ f: x.f, part: Number(x.m![1]), thread: Number(x.m![2]) }));
  const part = Math.max(...files.map((x) => x.part));
  let serving = 0;
  let all = 0;
  for (const x of files.filter((y) => y.part === part)) {
    const m = /^totals:\s+(\d+)/m.exec(readFileSync(`${dir}${x.f}`, "utf8"));
    const n = m ? Number(m[1]) : 0;
    all += n;
    if (x.thread === 1) serving = n;
  }
  if (serving === 0) throw new Error(`no serving thread's totals in ${prefix}.${part}-01`);
  return { serving, all };
}

interface Measured {
  /** The serving thread's instructions a request. */
  perRequest: number;
  /** All threads' instructions a request. */
  allThreads: number;
  non2xx: number;
}

/** One row on a server of its own, started for it: warm-up, then the counted requests. */
async function measureRow(build: Build, db: string, row: Row, seed: number, tag: string): Promise<Measured> {
  const s = await serve(build, db, tag);
  const pid = s.child.pid!;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const random = prng(seed);
    for (let n = 0; n < WARMUP; n++) await send(agent, s.url, row.mix, random);
    callgrind(pid, "-i", "on");
    callgrind(pid, "-z");
    let non2xx = 0;
    for (let n = 0; n < REQUESTS; n++) if ((await send(agent, s.url, row.mix, random)) >= 300) non2xx++;
    callgrind(pid, "-d", "counted");
    const counted = lastDump(s.prefix);
    const m = { perRequest: counted.serving / REQUESTS, allThreads: counted.all / REQUESTS, non2xx };
    console.error(`${build.label} ${tag} ${row.name}: ${(m.perRequest / 1000).toFixed(0)}k instructions a request on the serving thread, ${(m.allThreads / 1000).toFixed(0)}k in all`);
    return m;
  } finally {
    agent.destroy();
    s.child.kill();
    await new Promise((r) => s.child.once("exit", r));
  }
}

async function runLedger(size: number): Promise<string> {
  const db = `${OUT}scale-${size}.db`;
  await buildScaleLedger(db, size);
  const rows = rowsOf(readTargets(db), ONLY);
  // results[build][row] = instructions a request, one per repetition
  const results = builds.map(() => rows.map(() => [] as Measured[]));
  for (let rep = 0; rep < REPEAT; rep++) {
    const order = rep % 2 === 0 ? builds.map((_, i) => i) : builds.map((_, i) => builds.length - 1 - i);
    for (const [i, row] of rows.entries()) {
      for (const b of order) results[b]![i]!.push(await measureRow(builds[b]!, db, row, (rep + 1) * 1000 + i, `${size}-b${b}-r${rep}-row${i}`));
    }
  }
  const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
  const head = `| row | ${builds.map((b) => `${b.label}: serving thread (all threads), instructions a request, median of ${REPEAT}`).join(" | ")} |${COMPARE ? " this ÷ compared, serving thread, each repetition | median ratio |" : ""}`;
  const lines = rows.map((row, i) => {
    const per = builds.map((_, b) => results[b]![i]!.map((m) => m.perRequest));
    const ratios = COMPARE ? per[0]!.map((x, r) => x / per[1]![r]!) : [];
    const non2xx = builds.map((_, b) => results[b]![i]!.reduce((a, m) => a + m.non2xx, 0));
    const flag = non2xx.some((n) => n > 0) ? ` (non-2xx: ${non2xx.join("/")})` : "";
    const all = builds.map((_, b) => median(results[b]![i]!.map((m) => m.allThreads)));
    return `| ${row.name}${flag} | ${per.map((p, b) => `${k(median(p))} (${k(all[b]!)})`).join(" | ")} |${COMPARE ? ` ${ratios.map((r) => r.toFixed(3)).join(", ")} | **${median(ratios).toFixed(3)}** |` : ""}`;
  });
  return `#### ${size.toLocaleString("en")} versions\n\n${head}\n|${"---|".repeat(builds.length + (COMPARE ? 3 : 1))}\n${lines.join("\n")}\n`;
}

rmSync(DUMPS, { recursive: true, force: true });
mkdirSync(DUMPS, { recursive: true });
const sections: string[] = [];
for (const size of SIZES) sections.push(await runLedger(size));
console.log(`### bench:instructions (${new Date().toISOString().slice(0, 16)} UTC; valgrind callgrind; ${REQUESTS} counted requests a row after ${WARMUP} warm-up requests, one at a time; ${REPEAT} repetitions with other seeds, builds' order swapped)
${COMPARE ? `\n"compared build": ${COMPARE}\n` : ""}
${sections.join("\n")}`);
