/**
 * `bench:scale`'s rows measured in instructions instead of time: a steady measure for comparing two
 * builds on a shared, noisy machine, where CPU-time medians move by more than the difference sought.
 *
 *   npm run bench:instructions -- [--versions 1000000,10000000] [--compare DIR] [--requests 200]
 *                                 [--warmup 1000] [--repeat 2] [--only REGEX] [--floor]
 *                                 [--perf-map] [--v8-defaults] [--node-flags "…"] [--dumps DIR]
 *                                 [--serve-flags "…"] [--this-node-flags "…"] [--compare-out DIR2] [--cache-sim]
 *                                 [--compare-node PATH]
 *
 * - For each row, each build serves the ledger (bench/out/scale-N.db, as `bench:scale` builds it)
 *   from a server started for that row alone (rows run one after another in one server move each
 *   other's counts by JIT and heap state), under valgrind's callgrind with instrumentation off:
 *   `--warmup` requests run first (the JIT and the caches reach their steady state), then
 *   instrumentation is switched on, `--requests` requests run, and the guest instructions the
 *   server executed meanwhile are dumped a thread each: instructions a request on the main thread
 *   (the compared figure) and on all threads.
 * - The requests are drawn from a seeded generator, so every build answers the same requests in the
 *   same order, one at a time over one keep-alive connection. `--repeat` runs everything again with
 *   other seeds, the builds' order swapped.
 * - Instruction counts leave out what a memory access or a cache miss costs: they compare the code,
 *   not the machine; `bench:scale` stays the measure of time.
 *
 * - `--floor`: also counts bench/floorServer.ts (the store's own statements behind a bare
 *   `node:http` server, as `bench:scale -- --floor` serves it) on the rows it serves (pages at a
 *   given version, raw_item), under callgrind the same way: node − floor is then what the API
 *   around the reads costs, in instructions a request. Rows it does not serve show "–".
 *
 * - `--perf-map`: the servers run with Node's `--perf-basic-prof`, and each dump (a row's counted
 *   requests, `bench/out/callgrind/<size>-b<build>-r<repetition>-row<row>.<pid>.1-<thread>`) gets a copy with
 *   its JavaScript named (bench/tools/callgrindNames.mjs) for `callgrind_annotate --inclusive=yes`.
 *
 * - `--cache-sim`: callgrind also simulates the caches and the branch predictor (`--cache-sim=yes
 *   --branch-sim=yes`), and a third table gives the main thread's misses a request (first-level
 *   instruction and data, last-level, mispredicted branches) and callgrind's cycle estimate
 *   (Ir + 10 × first-level misses + 100 × last-level misses + 10 × mispredicted branches): what
 *   an instruction count leaves out of the time, without the machine's load in it.
 *
 * - `--compare-node PATH`: the compared build's server runs on that Node binary (a build on one Node
 *   line against another in one run); every other server runs on the node running this script.
 *
 * Prints markdown tables for bench/RESULTS.md.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { prng } from "../src/ingest/devnet/chain.js";
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
/** `--compare-out DIR`: the compared build serves DIR/scale-N.db (a copy in its own schema) instead of this build's file. */
const COMPARE_OUT = argv.includes("--compare-out") ? opt("compare-out", "").replace(/\/?$/, "/") : null;
const ONLY = argv.includes("--only") ? new RegExp(opt("only", "")) : null;
const FLOOR = argv.includes("--floor");
const PERF_MAP = argv.includes("--perf-map");
const CACHE_SIM = argv.includes("--cache-sim");
/**
 * V8 optimizes a function after it has run a budget of bytecode and its feedback has settled for
 * 500 calls, so a function that runs once a request is optimized only after about a thousand
 * requests: more than a warm-up under callgrind affords, which left the counted requests running
 * unoptimized code and V8's compiles. These budgets, an eighth of V8's, reach the optimized code
 * within the warm-up (the same for every server); `--v8-defaults` keeps V8's own.
 * Node 20's V8 counts that budget in bytecode run (`--interrupt-budget`); from Node 22 on V8 counts
 * invocations a tier (a function's budget is the count times its bytecode's length) and refuses the
 * old flag, so there the same eighth is taken of each count of the binary's own defaults.
 */
const OLD_FAST_TIER_UP = ["--interrupt-budget=8448", "--minimum-invocations-after-ic-update=60"];
const INVOCATION_COUNTS = ["invocation-count-for-maglev", "invocation-count-for-turbofan", "invocation-count-for-osr"];
const tierUps = new Map<string, string[]>();
function fastTierUp(nodePath: string): string[] {
  let flags = tierUps.get(nodePath);
  if (!flags) {
    const options = execFileSync(nodePath, ["--v8-options"], { encoding: "utf8" });
    const defaultOf = (name: string) => Number(new RegExp(`default: --${name}=(\\d+)`).exec(options)?.[1] ?? Number.NaN);
    flags = !Number.isNaN(defaultOf("interrupt-budget"))
      ? OLD_FAST_TIER_UP
      : [...INVOCATION_COUNTS.map((name) => `--${name}=${Math.ceil(defaultOf(name) / 8)}`), "--minimum-invocations-after-ic-update=60"];
    if (flags.some((f) => f.includes("NaN"))) throw new Error(`${nodePath} lists none of V8's tier-up budgets: ${flags.join(" ")}`);
    tierUps.set(nodePath, flags);
  }
  return flags;
}
/** Node's own flags for every server on `nodePath`; `--node-flags "…"` adds more. */
const nodeFlags = (nodePath: string) => [
  ...(argv.includes("--v8-defaults") ? [] : fastTierUp(nodePath)),
  ...(PERF_MAP ? ["--perf-basic-prof"] : []),
  ...(argv.includes("--node-flags") ? opt("node-flags", "").split(" ").filter(Boolean) : []),
];
/** Where the dumps go (emptied first): `--dumps DIR`, by default bench/out/callgrind/. */
const DUMPS = opt("dumps", `${OUT}callgrind`).replace(/\/?$/, "/");

interface Build {
  label: string;
  /** The Node binary its server runs on. */
  nodePath: string;
  /** The command line of its server (after `node`), serving `db` on a port of its choice. */
  command: (db: string) => string[];
  /** Whether it answers a row (the floor serves only some). */
  serves: (mix: Mix) => boolean;
}
/** `serve` flags for this build only (`--serve-flags "--plain-misses"`): a setting measured against the compared build's defaults. */
const SERVE_FLAGS = argv.includes("--serve-flags") ? opt("serve-flags", "").split(" ").filter(Boolean) : [];
/** Node flags for this build only (`--this-node-flags "--single-threaded-gc"`): a runtime setting measured against the compared build without it (`--compare` may name this checkout). */
const THIS_NODE_FLAGS = argv.includes("--this-node-flags") ? opt("this-node-flags", "").split(" ").filter(Boolean) : [];
const node =
  (nodePath: string, dir: string, extra: string[] = [], flags: string[] = []) =>
  (db: string) => [...nodeFlags(nodePath), ...flags, `${dir}dist/cli.js`, "serve", "--db", db, "--port", "0", "--quiet", "--no-prune", ...extra];
const everyRow = () => true;
const builds: Build[] = [{ label: "this build", nodePath: process.execPath, command: node(process.execPath, ROOT, SERVE_FLAGS, THIS_NODE_FLAGS), serves: everyRow }];
if (COMPARE) {
  const nodePath = argv.includes("--compare-node") ? opt("compare-node", "") : process.execPath;
  const served = node(nodePath, COMPARE.replace(/\/?$/, "/"));
  builds.push({ label: "compared build", nodePath, command: (db) => served(COMPARE_OUT ? db.replace(OUT, COMPARE_OUT) : db), serves: everyRow });
}
/** bench/floorServer.ts, started and limited to the rows it serves as bench:scale's `--floor` does. */
if (FLOOR) {
  builds.push({
    label: "floor",
    nodePath: process.execPath,
    command: (db) => [...nodeFlags(process.execPath), "--import", "tsx", "bench/floorServer.ts", db, "0"],
    serves: (mix) => /end_version=|ledger_version=|raw_item/u.test(mix.path),
  });
}
const NODES = builds.filter((b) => b.label !== "floor").length;

interface Served {
  child: ChildProcess;
  url: string;
  prefix: string;
}

/** Starts a build's server under callgrind (instrumentation off) and waits for its URL. */
function serve(build: Build, db: string, tag: string): Promise<Served> {
  const prefix = `${DUMPS}${tag}`;
  const args = ["--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes", ...(CACHE_SIM ? ["--cache-sim=yes", "--branch-sim=yes"] : []), `--callgrind-out-file=${prefix}.%p`, build.nodePath, ...build.command(db)];
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
 * Instructions of the newest dump of a run (`totals:` of each thread's file): all threads', and the
 * main thread's alone, which leaves out V8's background work (optimizing compiles, concurrent
 * marking) that a short warm-up under callgrind leaves running into the counted requests.
 */
function lastDump(prefix: string): { all: number; main: number; mainEvents: Record<string, number> } {
  const base = prefix.slice(DUMPS.length);
  const files = readdirSync(DUMPS)
    .map((f) => (f.startsWith(`${base}.`) ? /^(\d+)-(\d+)$/.exec(f.slice(base.length + 1)) : null))
    .filter((m) => m !== null);
  const last = Math.max(...files.map((m) => Number(m[1])));
  let all = 0;
  let main = 0;
  let mainEvents: Record<string, number> = {};
  for (const m of files) {
    if (Number(m[1]) !== last) continue;
    const file = `${prefix}.${m[0]}`;
    const text = readFileSync(file, "utf8");
    const t = /^totals:\s+([\d ]+)/m.exec(text);
    if (!t) throw new Error(`no totals in ${file}`);
    const counts = t[1]!.trim().split(/\s+/u).map(Number);
    all += counts[0]!;
    if (Number(m[2]) === 1) {
      main = counts[0]!;
      const names = /^events:\s+(.+)$/m.exec(text)?.[1]?.trim().split(/\s+/u) ?? [];
      mainEvents = Object.fromEntries(names.map((n, i) => [n, counts[i] ?? 0]));
    }
  }
  return { all, main, mainEvents };
}

interface Measured {
  /** Instructions a request, all threads. */
  perRequest: number;
  /** Instructions a request, the main thread alone. */
  mainPerRequest: number;
  /** `--cache-sim`: the main thread's simulated events a request, by callgrind's name (Ir, I1mr, D1mr, …). */
  mainEvents: Record<string, number>;
  non2xx: number;
}
const NOT_SERVED: Measured = { perRequest: Number.NaN, mainPerRequest: Number.NaN, mainEvents: {}, non2xx: 0 };

/** One row on a server of its own, started for it: warm-up, then the counted requests. */
async function measureRow(build: Build, db: string, row: Row, seed: number, tag: string): Promise<Measured> {
  if (!build.serves(row.mix)) return NOT_SERVED;
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
    console.error(
      `${build.label} ${tag} ${row.name}: ${(counted.all / REQUESTS / 1000).toFixed(0)}k instructions a request (main thread ${(counted.main / REQUESTS / 1000).toFixed(0)}k)`,
    );
    const mainEvents = Object.fromEntries(Object.entries(counted.mainEvents).map(([n, c]) => [n, c / REQUESTS]));
    return { perRequest: counted.all / REQUESTS, mainPerRequest: counted.main / REQUESTS, mainEvents, non2xx };
  } finally {
    agent.destroy();
    s.child.kill();
    await new Promise((r) => s.child.once("exit", r));
    if (PERF_MAP) {
      const dumps = readdirSync(DUMPS).filter((f) => f.startsWith(s.prefix.slice(DUMPS.length)) && /\.\d+-\d+$/.test(f));
      execFileSync(process.execPath, [`${ROOT}bench/tools/callgrindNames.mjs`, ...dumps.map((f) => `${DUMPS}${f}`)], { stdio: "inherit" });
    }
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
  const k = (x: number) => (Number.isNaN(x) ? "–" : `${(x / 1000).toFixed(1)}k`);
  const floorAt = FLOOR ? builds.length - 1 : -1;
  const heads = [
    ...builds.map((b) => `${b.label} (median of ${REPEAT})`),
    ...(COMPARE ? ["this ÷ compared, each repetition", "median ratio"] : []),
    ...(FLOOR ? builds.slice(0, NODES).map((b) => `${b.label} − floor`) : []),
  ];
  /** The table of one measure: instructions a request by row and build. */
  const table = (title: string, measure: (m: Measured) => number): string => {
    const lines = rows.map((row, i) => {
      const per = builds.map((_, b) => results[b]![i]!.map(measure));
      const ratios = COMPARE ? per[0]!.map((x, r) => x / per[1]![r]!) : [];
      const non2xx = builds.map((_, b) => results[b]![i]!.reduce((a, m) => a + m.non2xx, 0));
      const flag = non2xx.some((n) => n > 0) ? ` (non-2xx: ${non2xx.join("/")})` : "";
      const cells = [
        ...per.map((p) => k(median(p))),
        ...(COMPARE ? [ratios.map((r) => r.toFixed(3)).join(", "), `**${median(ratios).toFixed(3)}**`] : []),
        ...(FLOOR ? per.slice(0, NODES).map((p) => k(median(p) - median(per[floorAt]!))) : []),
      ];
      return `| ${row.name}${flag} | ${cells.join(" | ")} |`;
    });
    return `${title}\n\n| row | ${heads.join(" | ")} |\n|${"---|".repeat(heads.length + 1)}\n${lines.join("\n")}\n`;
  };
  const ev = (m: Measured, ...names: string[]) => names.reduce((a, n) => a + (m.mainEvents[n] ?? Number.NaN), 0);
  const simulated = CACHE_SIM
    ? [
        table("Main thread, first-level instruction cache misses a request (I1mr)", (m) => ev(m, "I1mr")),
        table("Main thread, first-level data cache misses a request (D1mr + D1mw)", (m) => ev(m, "D1mr", "D1mw")),
        table("Main thread, last-level cache misses a request (ILmr + DLmr + DLmw)", (m) => ev(m, "ILmr", "DLmr", "DLmw")),
        table("Main thread, mispredicted branches a request (Bcm + Bim)", (m) => ev(m, "Bcm", "Bim")),
        table(
          "Main thread, callgrind's cycle estimate a request (Ir + 10 × first-level misses + 100 × last-level misses + 10 × mispredicted branches)",
          (m) => ev(m, "Ir") + 10 * ev(m, "I1mr", "D1mr", "D1mw", "Bcm", "Bim") + 100 * ev(m, "ILmr", "DLmr", "DLmw"),
        ),
      ].join("\n")
    : "";
  return `#### ${size.toLocaleString("en")} versions\n\n${table("Instructions a request, main thread", (m) => m.mainPerRequest)}\n${table("Instructions a request, all threads (V8's background compiles and marking included)", (m) => m.perRequest)}${simulated ? `\n${simulated}` : ""}`;
}

rmSync(DUMPS, { recursive: true, force: true });
mkdirSync(DUMPS, { recursive: true });
const sections: string[] = [];
for (const size of SIZES) sections.push(await runLedger(size));
console.log(`### bench:instructions (${new Date().toISOString().slice(0, 16)} UTC; valgrind callgrind; ${REQUESTS} counted requests a row after ${WARMUP} warm-up requests, one at a time; ${REPEAT} repetitions with other seeds, builds' order swapped)
\n${builds.map((b) => `${b.label}: Node ${execFileSync(b.nodePath, ["--version"], { encoding: "utf8" }).trim()} (\`${nodeFlags(b.nodePath).join(" ") || "V8's own tier-up"}\`)`).join("; ")}
${COMPARE ? `\n"compared build": ${COMPARE}${COMPARE_OUT ? `, serving its own copies of the ledgers in ${COMPARE_OUT}` : ""}\n` : ""}
${sections.join("\n")}`);
