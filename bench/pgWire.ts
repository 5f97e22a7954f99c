/**
 * Kernel crossings and wake-ups a PostgreSQL request, under bench:scale's load: the node serving a
 * scale ledger from the bench's cluster (bench/scalePg.ts) and the backends its reads use, counted
 * with `perf stat` (syscall tracepoints and context switches, counted in the kernel: unlike strace,
 * nothing stops the process at each call, so the timing that decides how statements group is kept).
 *
 *   node --import tsx bench/pgWire.ts [--versions 1000000] [--rounds 2] [--duration 3] [--warmup 2]
 *                                     [--only REGEX] [--compare DIR] [--socket] [--env-variant NAME=VALUE]… [--connections 10]
 *
 * - Each round starts each server anew (this build, `--compare DIR`'s build, and with `--socket` this
 *   build over the cluster's Unix socket, and with `--env-variant NAME=VALUE` this build with that
 *   variable in its environment); for each row: a warm-up run, then perf attached to the
 *   node (all its threads) and, separately, to every backend of the ledger's database, around one
 *   measured autocannon run (bench/loadgen.mjs, the bench's 10 connections, on core 1).
 * - Requests are the node's own count (/metrics), trips pg_stat_statements' calls, as bench:scale.
 * - Per request: the CPU of the node and of the cluster (/proc, as bench:scale; perf's counting is
 *   included, alike for every build), all system calls, the socket writes (`write`, `writev`, `sendto`) and reads (`read`,
 *   `recvfrom`), `epoll_wait`/`epoll_pwait`, and context switches (each is the task leaving the CPU:
 *   a sleep, woken later, or a preemption). The node's writes include its HTTP responses (one a
 *   request), its reads the HTTP requests (one a request) and the reads that find nothing.
 *
 * Prints a markdown table: medians over rounds.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import pg from "pg";
import { OUT, ROOT, argOption, median, startServer } from "./common.js";
import { type Mix, rowsOf, targetsOf } from "./scaleRows.js";
import { ScalePg } from "./scalePg.js";

const argv = process.argv.slice(2);
const opt = argOption(argv);
const VERSIONS = Number(opt("versions", "1000000"));
const ROUNDS = Number(opt("rounds", "2"));
const DURATION = Number(opt("duration", "3"));
const WARMUP = Number(opt("warmup", "2"));
const CONNECTIONS = Number(opt("connections", "10"));
const ONLY = argv.includes("--only") ? new RegExp(opt("only", "")) : /random key, random|10,001/;
const COMPARE = argv.includes("--compare") ? opt("compare", "") : null;
const SOCKET = argv.includes("--socket");

const EVENTS = {
  all: ["raw_syscalls:sys_enter"],
  writes: ["syscalls:sys_enter_write", "syscalls:sys_enter_writev", "syscalls:sys_enter_sendto"],
  reads: ["syscalls:sys_enter_read", "syscalls:sys_enter_recvfrom"],
  epoll: ["syscalls:sys_enter_epoll_wait", "syscalls:sys_enter_epoll_pwait"],
  switches: ["context-switches"],
} as const;
type Counts = Record<keyof typeof EVENTS, number>;

/** `perf stat` counting EVENTS on `pids` until `stop()`, which resolves with the counts. */
function perfStat(pids: number[]): { stop: () => Promise<Counts> } {
  const events = Object.values(EVENTS).flat();
  const child = spawn("perf", ["stat", "-x,", "-e", events.join(","), "-p", pids.join(",")], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const ended = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    stop: async () => {
      child.kill("SIGINT");
      await ended;
      const by = new Map<string, number>();
      for (const line of err.split("\n")) {
        const f = line.split(",");
        if (f.length > 2 && /^\d+$/.test(f[0]!)) by.set(f[2]!, Number(f[0]));
      }
      if (by.size === 0) throw new Error(`perf stat gave nothing: ${err}`);
      const sum = (names: readonly string[]) => names.reduce((a, n) => a + (by.get(n) ?? 0), 0);
      return Object.fromEntries(Object.entries(EVENTS).map(([k, names]) => [k, sum(names)])) as Counts;
    },
  };
}

/** A build's server on core 0 over `db`, with extra environment. */
async function startBuild(label: string, dir: string, db: string, env: Record<string, string> = {}): Promise<{ label: string; url: string; child: ChildProcess }> {
  const args = [`${dir}/dist/cli.js`, "serve", "--db", db, "--port", "0", "--quiet", "--no-prune"];
  return { label, ...(await startServer(args, { pinned: true, env })) };
}

const specFile = `${OUT}pgwire-loadgen.json`;
async function load(base: string, mix: Mix, duration: number): Promise<number> {
  writeFileSync(specFile, JSON.stringify({ opts: { url: base, connections: CONNECTIONS, duration }, mix, warmup: 0 }));
  const { stdout } = await promisify(execFile)("taskset", ["-c", "1", process.execPath, `${ROOT}bench/loadgen.mjs`, `@${specFile}`], { cwd: ROOT, maxBuffer: 1 << 20 });
  return (JSON.parse(stdout) as { total: number }).total;
}

async function served(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^ledger_node_http_requests_total\{([^}]*)\} (\d+)$/gmu)) if (!m[1]!.includes('operation="metrics"')) n += Number(m[2]);
  return n;
}

const cluster = await ScalePg.start(VERSIONS, true);
const url = await cluster.ledger();
const db = cluster.db;
const rows = rowsOf(targetsOf(await cluster.targetsOf(db)), ONLY);
const probe = new pg.Client({ connectionString: cluster.url("postgres") });
await probe.connect();
const probePid = Number((await probe.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid);
/** The client backends of the ledger's database (the node's connections; the bench's own left out). */
async function backends(): Promise<number[]> {
  const { rows: r } = await probe.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' AND pid <> $2",
    [db, probePid],
  );
  return r.map((x) => Number(x.pid));
}

const builds: { label: string; dir: string; db: string; env?: Record<string, string> }[] = [{ label: "this build", dir: ROOT, db: url }];
if (COMPARE) builds.push({ label: "compared build", dir: COMPARE, db: url });
if (SOCKET) builds.push({ label: "this build, Unix socket", dir: ROOT, db: `${url}?host=${encodeURIComponent(cluster.dir)}` });
for (const [i, a] of argv.entries()) {
  if (a !== "--env-variant") continue;
  const [name, value] = argv[i + 1]!.split("=") as [string, string];
  builds.push({ label: `this build, ${name}=${value}`, dir: ROOT, db: url, env: { [name]: value } });
}

/** user + system CPU of a process so far, µs (/proc, 100 Hz ticks). */
const cpuOf = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1e6) / 100;
};

interface Measured {
  requests: number;
  /** CPU of the node and of the cluster over the measured window, µs. */
  nodeCpu: number;
  clusterCpu: number;
  trips: number;
  node: Counts;
  backends: Counts;
  backendCount: number;
}
const results = rows.map(() => builds.map(() => [] as Measured[]));
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (let b0 = 0; b0 < builds.length; b0++) {
      const b = (b0 + round) % builds.length;
      const build = builds[b]!;
      const server = await startBuild(build.label, build.dir, build.db, build.env);
      try {
        for (const [i, row] of rows.entries()) {
          await load(server.url, row.mix, WARMUP);
          await cluster.settle(db);
          const pids = await backends();
          const nodePerf = perfStat([server.child.pid!]);
          const backendPerf = perfStat(pids);
          await new Promise((r) => setTimeout(r, 300)); // perf attached
          const served0 = await served(server.url);
          const before = await cluster.statements(db);
          const cpu0 = [cpuOf(server.child.pid!), cluster.cpuMicros()];
          await load(server.url, row.mix, DURATION);
          await cluster.settle(db);
          const cpu1 = [cpuOf(server.child.pid!), cluster.cpuMicros()];
          const requests = (await served(server.url)) - served0;
          const calls = [...ScalePg.delta(before, await cluster.statements(db)).values()].reduce((a, s) => a + s.calls, 0);
          const [node, back] = await Promise.all([nodePerf.stop(), backendPerf.stop()]);
          results[i]![b]!.push({ requests, nodeCpu: cpu1[0]! - cpu0[0]!, clusterCpu: cpu1[1]! - cpu0[1]!, trips: calls / requests, node, backends: back, backendCount: pids.length });
          console.error(`${build.label}, ${row.name}: ${requests} requests, node ${JSON.stringify(node)}, backends (${pids.length}) ${JSON.stringify(back)}`);
        }
      } finally {
        server.child.kill();
      }
    }
    console.error(`round ${round + 1} of ${ROUNDS} done`);
  }
} finally {
  await probe.end();
  await cluster.stop();
}

const per = (xs: Measured[], f: (m: Measured) => number, digits = 2) => median(xs.map((m) => f(m) / m.requests)).toFixed(digits);
const keys = Object.keys(EVENTS) as (keyof Counts)[];
let out = `| row | build | trips | node CPU µs | cluster CPU µs | node + cluster | ${keys.map((k) => `node ${k}`).join(" | ")} | ${keys.map((k) => `backends ${k}`).join(" | ")} |\n`;
out += `|---|---|---|---|---|---|${keys.map(() => "---|").join("")}${keys.map(() => "---|").join("")}\n`;
for (const [i, row] of rows.entries()) {
  for (const [b, build] of builds.entries()) {
    const xs = results[i]![b]!;
    out += `| ${row.name} | ${build.label} | ${median(xs.map((m) => m.trips)).toFixed(2)} | ${per(xs, (m) => m.nodeCpu, 0)} | ${per(xs, (m) => m.clusterCpu, 0)} | ${per(xs, (m) => m.nodeCpu + m.clusterCpu, 0)} | ${keys.map((k) => per(xs, (m) => m.node[k])).join(" | ")} | ${keys
      .map((k) => per(xs, (m) => m.backends[k]))
      .join(" | ")} |\n`;
  }
}
console.log(`${VERSIONS.toLocaleString("en")} versions, ${ROUNDS} rounds of ${DURATION} s (${CONNECTIONS} connections), a request, medians:\n\n${out}`);
