/**
 * Pruning half a scale ledger while the node serves the scale rows over HTTP (issue 35, target 6):
 *
 *   npm run build && nice -n -10 node --import tsx bench/prune.bench.ts [--versions 10000000] [--work DIR]
 *        [--pruner cli|serve] [--rate 300] [--connections 10] [--baseline 15] [--pg [--pg-setting NAME=VALUE]…] [--compare DIR] [--prune-nice N]
 *
 * - The ledger `bench/out/scale-N.db` (bench/scaleLedger.ts; never written here) is copied to
 *   `--work` (default bench/out/prune/) and served by `serve --no-prune` from this build.
 * - Load: every row of bench/scaleRows.ts in turn on each of `--connections` connections, at
 *   `--rate` requests a second in all (autocannon's `overallRate`, bench/loadgen.mjs in a process of
 *   its own), with the versions the rows ask about drawn above the prune's target: no answer may
 *   change while the prune runs. Answers are 200s and 404s (the missing keys, and a random key at a
 *   version before it was written), the same share with and without the prune; a 410, any 5xx, a
 *   connection error or a timeout is a failure.
 * - First `--baseline` seconds of that load without a prune; then the same load while half the
 *   versions are pruned: `--pruner cli` runs `ledger-node prune --db COPY --window N` in a process of
 *   its own, `--pruner serve` serves with `--prune-window N` instead of `--no-prune` (the built-in
 *   pruner, on the node's writer thread) and waits for its first prune run in /metrics.
 * - Reported: the prune's duration, the requests and their latency p50/p99/max (autocannon, 1 ms
 *   resolution: what the load generator waited, its own scheduling on a loaded machine included),
 *   the node's own time a request (its `ledger_node_http_request_duration_seconds` histogram, from
 *   a request's arrival to its response sent: p99 as the bucket it falls in, and the requests over
 *   50 ms), the node's event-loop delay (prom-client's, reset by each scrape) and how long its main
 *   thread waited on a run queue for a core (/proc schedstat; the rest of the client's wait is the
 *   machine's), answers by status, the server's CPU a request, the largest WAL seen (the -wal
 *   file stat'ed every 20 ms: a stat does not open it), the file size before and after, and the
 *   serving process's RSS (its peak, VmHWM, and at the end, anonymous and file-backed).
 * - `--compare DIR`: then the same with another checkout's build (`DIR/dist/cli.js` serving and
 *   pruning a fresh copy of its own), e.g. the commit a change started from.
 * - `--pg`: the same on the PostgreSQL ledger of bench/scalePg.ts (its cluster under
 *   bench/out/scale-pg-N/, built at the first run): a copy of the ledger's database (CREATE
 *   DATABASE … TEMPLATE) is served and pruned, step-wise (`prune_step_versions`, `prune_step_rows`);
 *   its transactions partitioned every 4,194,304 versions (`partition_versions`, given when the
 *   cluster's ledger is created or migrated), so that pruning half of 10M drops a partition.
 *   "WAL" is then the cluster's pg_wal directory (its size follows the cluster's checkpoint
 *   settings: `max_wal_size` of bench/scalePg.ts; segments an earlier run's larger setting made stay
 *   until the WAL passes them, so its size as the prune ends is given too), with the WAL the prune wrote (LSN difference),
 *   and the size pg_database_size of the copy. The WAL the prune's statements wrote, by statement
 *   (pg_stat_statements, reset as the prune starts: calls, rows, WAL records, full page images, bytes).
 *   `--pg-setting NAME=VALUE` (repeatable): a server setting of the cluster's besides
 *   bench/scalePg.ts's (a later one wins), e.g. `max_wal_size=64MB` or `full_page_writes=on`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { pruneTarget } from "../src/ingest/pruneToWindow.js";
import { parsePruneWindow } from "../src/ledger/pruning.js";
import { openStore } from "../src/storage/open.js";
import { OUT, ROOT, argOption, startServer } from "./common.js";
import { ScalePg } from "./scalePg.js";
import { type Targets, readTargets, rowsOf, targetsOf } from "./scaleRows.js";

const argv = process.argv.slice(2);
const opt = argOption(argv);
const VERSIONS = Number(opt("versions", "10000000"));
const WORK = opt("work", `${OUT}prune/`).replace(/\/?$/, "/");
const PRUNER = opt("pruner", "cli");
const RATE = Number(opt("rate", "300"));
const CONNECTIONS = Number(opt("connections", "10"));
const BASELINE_S = Number(opt("baseline", "15"));
const PG = argv.includes("--pg");
/** `--prune-nice N`: the prune process runs N nice levels below the bench (and the node it serves). */
const PRUNE_NICE = argv.includes("--prune-nice") ? opt("prune-nice", "10") : null;
const COMPARE = argv.includes("--compare") ? opt("compare", "").replace(/\/$/, "") : null;
/** `--pg-setting NAME=VALUE`, each given. */
const PG_EXTRA = argv.flatMap((a, i) => (a === "--pg-setting" && argv[i + 1] !== undefined ? [argv[i + 1]!] : []));
if (PRUNER !== "cli" && PRUNER !== "serve") throw new Error(`--pruner ${PRUNER}: cli or serve`);

const MIB = 1024 * 1024;

/** What the load generator saw over one run. */
interface LoadRun {
  total: number;
  p50: number;
  p99: number;
  max: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  serverCpu: number;
}

/** Starts bench/loadgen.mjs on the rows until `stop()` (SIGUSR2) or for `seconds`. */
function startLoad(url: string, targets: Targets, serverPid: number, seconds: number | null): { stop: () => void; done: Promise<LoadRun> } {
  const spec = `${WORK}prune-loadgen-${process.pid}.json`;
  const mixes = rowsOf(targets).map((r) => r.mix);
  const opts = { url, connections: CONNECTIONS, overallRate: RATE, ...(seconds === null ? {} : { duration: seconds }) };
  writeFileSync(spec, JSON.stringify({ opts, pid: serverPid, mixes, untilSignal: seconds === null }));
  const child = spawn(process.execPath, [`${ROOT}bench/loadgen.mjs`, `@${spec}`], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const done = new Promise<LoadRun>((resolve, reject) =>
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as LoadRun) : reject(new Error(`loadgen exited ${code}: ${out}`)))),
  );
  return { stop: () => child.kill("SIGUSR2"), done: done.finally(() => rmSync(spec, { force: true })) };
}

/** Upper bounds (s) of the node's request duration buckets, and the requests in each so far (cumulative, all operations). */
async function serverDurations(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map<string, number>();
  for (const m of text.matchAll(/^ledger_node_http_request_duration_seconds_bucket\{le="([^"]+)",operation="([^"]+)"[^}]*\} (\d+)$/gmu)) {
    if (m[2] === "metrics") continue;
    buckets.set(m[1]!, (buckets.get(m[1]!) ?? 0) + Number(m[3]));
  }
  return buckets;
}

/** The node's own time over a run (two `serverDurations`): the p99's bucket bound in ms, and the requests over 50 ms. */
function durationsBetween(before: Map<string, number>, after: Map<string, number>): { p99: string; over50: number; total: number } {
  const les = [...after.keys()];
  const cumulative = les.map((le) => after.get(le)! - (before.get(le) ?? 0));
  const total = cumulative.at(-1)!;
  const i = cumulative.findIndex((n) => n >= total * 0.99);
  const p99 = les[i] === "+Inf" ? `> ${Number(les[i - 1]) * 1000}` : `≤ ${Number(les[i]) * 1000}`;
  return { p99, over50: total - cumulative[les.indexOf("0.05")]!, total };
}

/** Nanoseconds the process's main thread has run, and waited on a run queue for a core (/proc schedstat). */
function schedOf(pid: number): { ran: number; waited: number } {
  const [ran, waited] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ").map(Number);
  return { ran: ran!, waited: waited! };
}

/** The node's event-loop delay since the previous scrape (prom-client resets it on each), p99 and max in ms. */
async function eventLoopDelay(url: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const ms = (name: string) => (Number(new RegExp(`^ledger_node_nodejs_eventloop_lag_${name}_seconds ([\\d.e+-]+)$`, "mu").exec(text)?.[1]) * 1000).toFixed(0);
  return `${ms("p99")} / ${ms("max")}`;
}

/** A process's memory from /proc: peak RSS, and now anonymous and file-backed (MiB). */
function memoryOf(pid: number): { peak: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
  return { peak: kb("VmHWM"), anon: kb("RssAnon"), file: kb("RssFile") };
}

/** Total bytes of the files in a directory (PostgreSQL's pg_wal), 0 if it cannot be read. */
function directoryBytes(dir: string): number {
  try {
    return readdirSync(dir).reduce((sum, name) => sum + (statSync(join(dir, name), { throwIfNoEntry: false })?.size ?? 0), 0);
  } catch {
    return 0;
  }
}

/** The ledger to serve and prune: a fresh copy of the scale ledger, with its size and WAL as the bench sees them. */
interface Ledger {
  db: string;
  targets: Targets;
  walBytes: () => number;
  sizeBytes: () => Promise<number>;
  /** PostgreSQL: the cluster's WAL position (bytes); the WAL a prune wrote is its difference. */
  walPosition: () => Promise<number | null>;
  /** PostgreSQL: forgets the statements' counters (as the prune starts). */
  resetStatements: () => Promise<void>;
  /** PostgreSQL: the WAL each statement wrote since `resetStatements`, as table rows (none on SQLite). */
  walByStatement: () => Promise<string[]>;
  drop: () => Promise<void>;
  describe: string;
}

async function sqliteLedger(): Promise<Ledger> {
  const source = `${OUT}scale-${VERSIONS}.db`;
  // read (and kept next to the source) once; the copy holds the same ledger
  const targets = readTargets(source);
  const db = `${WORK}scale-${VERSIONS}.db`;
  for (const suffix of ["", "-wal", "-shm"]) rmSync(db + suffix, { force: true });
  copyFileSync(source, db);
  return {
    db,
    targets,
    walBytes: () => statSync(`${db}-wal`, { throwIfNoEntry: false })?.size ?? 0,
    sizeBytes: async () => statSync(db).size,
    walPosition: async () => null,
    resetStatements: async () => undefined,
    walByStatement: async () => [],
    drop: async () => undefined,
    describe: `SQLite, a copy of ${source} in ${WORK}`,
  };
}

/**
 * The transactions' partition span the `--pg` cluster's ledger is created or migrated with: under
 * the half of the ledger a run prunes, so that the prune drops a partition (the default span,
 * 2^25, holds the whole 10M ledger in one). A cluster partitioned with another span is refused by name.
 */
const PG_PARTITION_VERSIONS = 4_194_304;

async function postgresLedger(cluster: ScalePg): Promise<Ledger> {
  await cluster.ledger(console.error, `partition_versions=${PG_PARTITION_VERSIONS}`);
  const copy = `prune_${cluster.db}`;
  const admin = new pg.Client({ connectionString: cluster.url("postgres") });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`);
    // PostgreSQL 15+ copies a database through the WAL by default (WAL_LOG): FILE_COPY writes the
    // copy's files directly, and the checkpoint after it lets pg_wal shrink back to what the
    // cluster's settings keep, so that the directory measured during the prune is the prune's.
    const version = Number((await admin.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0]!.v);
    await admin.query(`CREATE DATABASE ${copy} TEMPLATE ${cluster.db}${version >= 150000 ? " STRATEGY FILE_COPY" : ""}`);
    await admin.query("CHECKPOINT");
  } finally {
    await admin.end();
  }
  const targets = targetsOf(await cluster.targetsOf(copy));
  return {
    db: cluster.url(copy),
    targets,
    walBytes: () => directoryBytes(join(cluster.dataDir, "pg_wal")),
    sizeBytes: () => cluster.sizeBytes(copy),
    walPosition: async () => Number((await adminQuery(cluster, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS at"))[0]!.at),
    resetStatements: async () => void (await adminQuery(cluster, "SELECT pg_stat_statements_reset()")),
    walByStatement: async () =>
      (
        await adminQuery(
          cluster,
          `SELECT s.calls, s.rows, s.wal_records, s.wal_fpi, s.wal_bytes, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 70) AS query
           FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
           WHERE d.datname = $1 AND s.wal_bytes > 0 ORDER BY s.wal_bytes DESC LIMIT 12`,
          [copy],
        )
      ).map((r) => `| \`${r.query}\` | ${r.calls} | ${r.rows} | ${r.wal_records} | ${r.wal_fpi} | ${(Number(r.wal_bytes) / MIB).toFixed(1)} |`),
    drop: async () => {
      const c = new pg.Client({ connectionString: cluster.url("postgres") });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`);
      await c.end();
    },
    describe: `PostgreSQL ${cluster.bin}, a copy (CREATE DATABASE … TEMPLATE) of ${cluster.db} in ${cluster.dataDir}`,
  };
}

/** One statement on the cluster's `postgres` database, its rows. */
async function adminQuery(cluster: ScalePg, text: string, values: unknown[] = []): Promise<Record<string, string>[]> {
  const c = new pg.Client({ connectionString: cluster.url("postgres") });
  await c.connect();
  try {
    return (await c.query(text, values)).rows;
  } finally {
    await c.end();
  }
}

/**
 * Waits for the node's built-in pruner to finish its first run (its /metrics; the first starts
 * `serve`'s prune interval after the start) and gives the run's own seconds; rejects if it failed.
 */
async function firstPruneRun(url: string): Promise<number> {
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    if (/ledger_node_prune_runs_total\{result="failed"\} [1-9]/.test(text)) throw new Error("the built-in prune failed");
    if (/ledger_node_prune_runs_total\{result="pruned"\} [1-9]/.test(text)) {
      return Number(/^ledger_node_prune_last_duration_seconds ([\d.e+-]+)$/mu.exec(text)![1]);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** One build's run: a fresh copy served and pruned under the load; its table rows. */
async function runBuild(label: string, dir: string, cluster: ScalePg | null): Promise<{ phases: string[]; prune: string; head: string }> {
  const cli = `${dir}/dist/cli.js`;
  const ledger = cluster ? await postgresLedger(cluster) : await sqliteLedger();
  let server: { url: string; child: ChildProcess } | null = null;
  try {
    const { targets } = ledger;
    const window = Math.floor((targets.latest - targets.oldest + 1) / 2);
    const reader = await openStore(ledger.db, { readonly: true });
    const target = (await pruneTarget(reader, parsePruneWindow(String(window))))!;
    await reader.close();
    // Every version asked about stays above the prune's target: each answer is the same before, during and after.
    const above: Targets = { ...targets, oldest: Number(target.oldestVersion) };
    const sizeBefore = await ledger.sizeBytes();
    const serveArgs = [cli, "serve", "--db", ledger.db, "--port", "0", "--quiet", ...(PRUNER === "serve" ? ["--prune-window", String(window)] : ["--no-prune"])];
    console.error(`${label}: ${ledger.describe}: versions ${targets.oldest}–${targets.latest}, pruning ${window} versions to ${target.oldestVersion} (${PRUNER}); ${RATE} req/s`);

    let walMax = 0;
    let pruneRssPeak = 0;
    let pruner: ChildProcess | null = null;
    const watch = setInterval(() => {
      walMax = Math.max(walMax, ledger.walBytes());
      if (pruner?.pid) {
        try {
          pruneRssPeak = Math.max(pruneRssPeak, memoryOf(pruner.pid).peak);
        } catch {
          // ended between the check and the read
        }
      }
    }, 20);

    server = await startServer(serveArgs);
    const serverPid = server.child.pid!;
    const phases: string[] = [];
    if (PRUNER === "cli" && BASELINE_S > 0) {
      const before = await serverDurations(server.url);
      const sched = schedOf(serverPid);
      const t = performance.now();
      const baseline = await startLoad(server.url, above, serverPid, BASELINE_S).done;
      const waited = waitedShare(sched, schedOf(serverPid), t);
      const loop = await eventLoopDelay(server.url); // before the next scrape resets it
      const node = { ...durationsBetween(before, await serverDurations(server.url)), loop, waited };
      phases.push(phaseLine(`${label}, serving, no prune`, baseline, String(BASELINE_S), node));
      console.error(phases.at(-1));
    }
    const durationsBefore = await serverDurations(server.url);
    await eventLoopDelay(server.url); // resets the node's event-loop delay histogram
    const schedBefore = schedOf(serverPid);
    const walBeforePrune = walMax;
    walMax = 0;
    const walAtStart = await ledger.walPosition();
    await ledger.resetStatements();
    const load = startLoad(server.url, above, serverPid, null);
    const t0 = performance.now();
    let pruneOutput = "";
    if (PRUNER === "cli") {
      const pruneArgv = [process.execPath, cli, "prune", "--db", ledger.db, "--window", String(window)];
      const argvNiced = PRUNE_NICE === null ? pruneArgv : ["nice", "-n", PRUNE_NICE, ...pruneArgv];
      pruner = spawn(argvNiced[0]!, argvNiced.slice(1), { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
      pruner.stdout!.on("data", (d: Buffer) => (pruneOutput += d.toString()));
      const code = await new Promise<number | null>((resolve) => pruner!.once("exit", resolve));
      if (code !== 0) throw new Error(`prune exited ${code}: ${pruneOutput}`);
    } else {
      const seconds = await firstPruneRun(server.url);
      pruneOutput = `the built-in pruner's first run: ${seconds.toFixed(1)} s (the phase's seconds include the wait for it)`;
    }
    const pruneSeconds = (performance.now() - t0) / 1000;
    const walAtEnd = await ledger.walPosition();
    const walDirAtEnd = ledger.walBytes();
    const walStatements = await ledger.walByStatement();
    load.stop();
    const during = await load.done;
    clearInterval(watch);
    const waited = waitedShare(schedBefore, schedOf(serverPid), t0);
    // (the built-in pruner's wait polls /metrics, which resets the event-loop delay histogram)
    const loop = PRUNER === "cli" ? await eventLoopDelay(server.url) : "–";
    phases.push(phaseLine(`${label}, serving while pruning`, during, pruneSeconds.toFixed(1), { ...durationsBetween(durationsBefore, await serverDurations(server.url)), loop, waited }));
    console.error(phases.at(-1));
    const memory = memoryOf(serverPid);
    server.child.kill();
    server = null;
    const sizeAfter = await ledger.sizeBytes();
    const mib = (b: number) => (b / MIB).toFixed(0);
    const walWritten = walAtStart === null || walAtEnd === null ? "" : ` (${mib(walAtEnd - walAtStart)} MiB of WAL written)`;
    const prune = `| ${label} | ${pruneOutput.trim()}${walWritten} | ${mib(walBeforePrune)} → ${mib(walMax)} (${mib(walDirAtEnd)} at the end) | ${mib(sizeBefore)} → ${mib(sizeAfter)} | ${memory.peak.toFixed(0)}, ${memory.anon.toFixed(0)} + ${memory.file.toFixed(0)} | ${PRUNER === "cli" ? pruneRssPeak.toFixed(0) : "(in the node)"} |`;
    console.error(prune);
    if (walStatements.length > 0) {
      const table = ["| statement | calls | rows | WAL records | full page images | WAL MiB |", "|---|---|---|---|---|---|", ...walStatements].join("\n");
      console.error(table);
      walTables.push(`${label}'s prune, WAL by statement (pg_stat_statements):\n\n${table}`);
    }
    const head = `${ledger.describe}; versions ${targets.oldest}–${targets.latest}, pruned to ${target.oldestVersion} (window ${window}); load: ${rowsOf(above).length} rows in turn on ${CONNECTIONS} connections, ${RATE} req/s, versions asked about ${target.oldestVersion}–${targets.latest}; pruner: ${PRUNER === "cli" ? "`ledger-node prune` in its own process" : "the node's built-in pruner (`serve --prune-window`)"}.`;
    return { phases, prune, head };
  } finally {
    server?.child.kill();
    await ledger.drop();
  }
}

/** Answers that fail the target: any status but 200 and 404, connection errors, timeouts. */
const failures = (r: LoadRun) =>
  Object.entries(r.statusCodes)
    .filter(([code]) => code !== "200" && code !== "404")
    .reduce((sum, [, n]) => sum + n, 0) +
  r.errors +
  r.timeouts;
const statuses = (r: LoadRun) =>
  Object.entries(r.statusCodes)
    .map(([code, n]) => `${code}: ${n}`)
    .join(", ") + (r.errors + r.timeouts > 0 ? `, errors ${r.errors}, timeouts ${r.timeouts}` : "");
/** The share of a phase's wall time the node's main thread waited for a core, in %. */
const waitedShare = (before: { waited: number }, after: { waited: number }, since: number) =>
  (((after.waited - before.waited) / 1e6 / (performance.now() - since)) * 100).toFixed(0);
const phaseLine = (name: string, r: LoadRun, seconds: string, node: ReturnType<typeof durationsBetween> & { loop: string; waited: string }) =>
  `| ${name} | ${seconds} | ${r.total} | ${r.p50} | ${r.p99} | ${r.max} | ${node.p99} | ${node.over50} of ${node.total} | ${node.loop} | ${node.waited} | ${statuses(r)} | ${failures(r)} | ${(r.serverCpu / r.total).toFixed(0)} |`;

const builds: Array<[string, string]> = [["this build", ROOT.replace(/\/$/, "")]];
if (COMPARE) builds.push(["compared build", COMPARE]);
mkdirSync(WORK, { recursive: true });
const walTables: string[] = [];
const cluster = PG ? await ScalePg.start(VERSIONS, false, console.error, PG_EXTRA) : null;
try {
  const runs = [];
  for (const [label, dir] of builds) runs.push(await runBuild(label, dir, cluster));
  console.log(`
${runs[0]!.head}${COMPARE ? ` "compared build": ${COMPARE} (its server and its prune on a copy of its own).` : ""}

| phase | seconds | requests | p50 ms | p99 ms | max ms | node's own p99 ms | node's own > 50 ms | node's event-loop delay p99 / max ms | node's main thread waiting for a core, % of the phase | answers by status | failures | server CPU µs/req |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
${runs.flatMap((r) => r.phases).join("\n")}

| build | prune | largest WAL MiB (no prune → pruning, and as the prune ended) | size MiB before → after | node RSS MiB: peak, at the end anon + file | prune process peak RSS MiB |
|---|---|---|---|---|---|
${runs.map((r) => r.prune).join("\n")}
${walTables.map((t) => `\n${t}\n`).join("")}${PG_EXTRA.length > 0 ? `\nCluster settings besides bench/scalePg.ts's: ${PG_EXTRA.join(", ")}.\n` : ""}`);
} finally {
  await cluster?.stop();
}
