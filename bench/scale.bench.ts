/**
 * The API where the cache misses and the ledger is large: request mixes that ask about a random
 * account, table key or version per request, on ledgers of 1M and 10M versions with thousands of
 * senders and keys (bench/scaleLedger.ts), next to the same-size response replayed by the constant
 * server (the floor). Server CPU per request from /proc, req/s, p50/p99, medians of alternated rounds.
 *
 *   npm run bench:scale -- [--versions 1000000,10000000] [--rounds 5] [--duration 3] [--warmup 1] [--compare DIR [--compare-out DIR2]]
 *                          [--cache-off] [--page-cache-mb N] [--only REGEX] [--connections 10] [--pg [--with-sqlite] [--pg-socket] [--pg-pool]] [--floor]
 *
 * - `--pg`: the same ledgers in PostgreSQL instead of SQLite (bench/scalePg.ts): a cluster of the
 *   bench's own per size under bench/out/scale-pg-<versions>/ (kept, with the ledger built into it,
 *   for the next run), served by ONE server process (`serve --db postgres://…`, its default connections:
 *   the reads' pipelined ones and the pool, over TCP on 127.0.0.1). `npm run bench:scale:pg` is `bench:scale --pg`. The cluster runs on core 0 with the server. Each row also reports the
 *   cluster's processes' CPU per request (/proc: the postmaster and its children, summed) and the
 *   round trips per request (calls in pg_stat_statements of the ledger's database ÷ requests), by
 *   statement. There, each row's warm-up is an autocannon run of its own right before the measured
 *   one, so that the cluster's counters can be read around the measured run alone.
 *   `--pg-socket`: also serve it from this build connected over the cluster's Unix socket
 *   instead of TCP, in the same rounds (what TCP loopback costs a round trip).
 *   `--pg-pool`: also serve it from this build with its reads on the pool (`read_connections=0`).
 *   `--with-sqlite`: also serve the SQLite ledger of the same size (bench/out/scale-N.db, the
 *   same ledger: it is deterministic) in the same rounds, as a column of its own.
 * - `--floor` (SQLite): also serve the cache-missing rows from bench/floorServer.ts, a bare
 *   `node:http` server running the store's own statements and nothing else, in the same rounds:
 *   what the reads and a send cost, apart from the API around them. Rows it does not serve (the
 *   newest version, hot pages) show "–".
 * - `--fastify-floor` (SQLite): also that floor served by a bare Fastify (bench/floorServer.ts
 *   --fastify), in the same rounds: what the HTTP framework alone adds to the floor.
 * - `--compare DIR`: also serve each ledger from another checkout's build (`DIR/dist/cli.js`, e.g. a
 *   worktree of main), in the same rounds: a change measured side by side. `--compare-out DIR2`:
 *   the compared build serves DIR2/scale-N.db instead (a copy of the ledger in the schema it reads,
 *   for a build before a migration).
 * - `--cache-off`: also run every build with `--page-cache-mb 0`; `--page-cache-mb N` sets the size
 *   of the cache-on servers (default: the node's default).
 * - The ledgers are built once under bench/out/ (10M takes many minutes) and reused; the request
 *   targets (senders, module accounts, table keys, the version range) are read from the ledger file
 *   once and kept next to it.
 * - With two or more cores the servers run on core 0 and the load generator on core 1 (`taskset`).
 * - Every server is started anew for each round; within a round, each row runs on every server in
 *   an order that rotates round by round.
 *
 * Prints markdown tables for bench/RESULTS.md.
 */
import { execFile, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { promisify } from "node:util";
import { rawRequest } from "../test/helpers/rawHttp.js";
import { OUT, ROOT, argOption, median, startServer } from "./common.js";
import { SQL as POSTGRES_SQL } from "../src/storage/postgres/PostgresStore.js";
import { buildScaleLedger } from "./scaleLedger.js";
import { type Mix, type Row, type Targets, readTargets, rowsOf, sample, targetsOf } from "./scaleRows.js";
import { PG_SETTINGS, ScalePg } from "./scalePg.js";

const argv = process.argv.slice(2);
const opt = argOption(argv);
const SIZES = opt("versions", "1000000,10000000").split(",").map(Number);
const ROUNDS = Number(opt("rounds", "5"));
const DURATION = Number(opt("duration", "3"));
/** Seconds of each row on each server right before it is measured (JIT, connections), in the same load process. */
const WARMUP = Number(opt("warmup", "1"));
const CONNECTIONS = Number(opt("connections", "10"));
const COMPARE = argv.includes("--compare") ? opt("compare", "") : null;
/** `--compare-out DIR`: the compared build serves DIR/scale-N.db (a copy in its own schema) instead of this build's file. */
const COMPARE_OUT = argv.includes("--compare-out") ? opt("compare-out", "").replace(/\/?$/, "/") : null;
const comparedDb = (db: string) => (COMPARE_OUT ? db.replace(OUT, COMPARE_OUT) : db);
const CACHE_OFF = argv.includes("--cache-off");
const CACHE_MB = argv.includes("--page-cache-mb") ? opt("page-cache-mb", "64") : null;
const ONLY = argv.includes("--only") ? new RegExp(opt("only", "")) : null;
const PINNED = availableParallelism() >= 2;
const PG = argv.includes("--pg");
const WITH_SQLITE = argv.includes("--with-sqlite");
const FLOOR_ON = argv.includes("--floor");
const PG_SOCKET = argv.includes("--pg-socket");

/** Headers Node or Fastify write on every response by themselves: the replaying server writes its own. */
const OWN_HEADERS = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"]);

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

interface Server {
  label: string;
  url: string;
  child: ChildProcess;
}

/** Starts a process that prints its URL, on core 0 when pinned. */
async function start(label: string, args: string[]): Promise<Server> {
  return { label, ...(await startServer(args, { pinned: PINNED })) };
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  cpuUsPerReq: number;
  /** Requests answered in the run. */
  total: number;
  /** `--pg`, a node server: what the run cost the cluster. */
  pg?: PgLoad;
}

interface PgLoad {
  requests: number;
  /** CPU of the cluster's processes per request, µs. */
  cpuUsPerReq: number;
  /** Statement calls per request (round trips), and by statement. */
  trips: number;
  byStatement: Map<string, number>;
  /** Execution time of the statements per request (pg_stat_statements' total_exec_time), µs. */
  execUsPerReq: number;
}

const specFile = `${OUT}scale-loadgen.json`;

/** One autocannon run of a mix against `base`, on core 1 when pinned, with the server's CPU per request. */
async function load(base: string, mix: Mix, pid: number, duration: number, warmup: number): Promise<Load> {
  writeFileSync(specFile, JSON.stringify({ opts: { url: base, connections: CONNECTIONS, duration }, pid, mix, warmup }));
  const args = [`${ROOT}bench/loadgen.mjs`, `@${specFile}`];
  const { stdout } = await promisify(execFile)(PINNED ? "taskset" : process.execPath, PINNED ? ["-c", "1", process.execPath, ...args] : args, {
    cwd: ROOT,
    maxBuffer: 1 << 20,
  });
  const r = JSON.parse(stdout) as { rps: number; total: number; p50: number; p99: number; non2xx: number; serverCpu: number };
  return { rps: r.rps, p50: r.p50, p99: r.p99, non2xx: r.non2xx, cpuUsPerReq: r.total > 0 ? r.serverCpu / r.total : NaN, total: r.total };
}

/**
 * API requests the node at `base` answered so far (`ledger_node_http_requests_total` of its
 * /metrics, less the scrapes): unlike the load generator's count, it includes the requests in
 * flight when a run stops, whose statements pg_stat_statements counts too.
 */
async function served(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^ledger_node_http_requests_total\{([^}]*)\} (\d+)$/gmu)) if (!m[1]!.includes('operation="metrics"')) n += Number(m[2]);
  return n;
}

/**
 * Statement text → its name in the PostgreSQL store (`SQL`), for the round-trip tables. Compared
 * with constants and parameters alike (pg_stat_statements shows a constant as `$n`).
 */
const shape = (text: string) => text.replace(/'(?:[^']|'')*'|\$\d+|\b\d+\b|\b(?:true|false)\b/giu, "?").replace(/\s+/gu, " ").trim();
const STATEMENT_NAMES = new Map(Object.entries(POSTGRES_SQL).map(([name, text]) => [shape(text as string), name]));
const statementName = (text: string) => STATEMENT_NAMES.get(shape(text)) ?? shape(text).slice(0, 40);

/**
 * `--pg`: `load` with the cluster's CPU and statements read around the measured run alone (the
 * warm-up is a run of its own before it). Requests in flight when a load generator stops still
 * end (and query) in the server: each reading waits until the ledger's statements stop. The
 * requests are the node's own count (/metrics), read outside the statements' window (a scrape
 * reads the ledger row).
 */
async function loadPg(pg: ScalePg, db: string, base: string, mix: Mix, pid: number, countStatements: boolean): Promise<Load> {
  if (WARMUP > 0) await load(base, mix, pid, WARMUP, 0);
  await pg.settle(db);
  const served0 = countStatements ? await served(base) : 0;
  const before = countStatements ? await pg.statements(db) : null;
  const cpu0 = pg.cpuMicros();
  const l = await load(base, mix, pid, DURATION, 0);
  await pg.settle(db);
  const cpu1 = pg.cpuMicros();
  if (!before) return { ...l, pg: { requests: l.total, cpuUsPerReq: (cpu1 - cpu0) / l.total, trips: NaN, byStatement: new Map(), execUsPerReq: NaN } };
  const delta = ScalePg.delta(before, await pg.statements(db));
  const requests = (await served(base)) - served0;
  const byStatement = new Map<string, number>();
  let calls = 0;
  let ms = 0;
  for (const [text, d] of delta) {
    const name = statementName(text);
    byStatement.set(name, (byStatement.get(name) ?? 0) + d.calls);
    calls += d.calls;
    ms += d.ms;
  }
  return { ...l, pg: { requests, cpuUsPerReq: (cpu1 - cpu0) / requests, trips: calls / requests, byStatement, execUsPerReq: (ms * 1000) / requests } };
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** A response of a row, median-sized among a few drawn, saved for the constant server's /replay. */
async function saveReplay(dir: string, name: string, url: string, mix: Mix): Promise<number> {
  const got = [];
  for (let i = 0; i < 21; i++) {
    const s = sample(mix);
    const headers: Record<string, string> = { ...mix.headers };
    delete headers["content-type"];
    got.push(await rawRequest(url + s.path, headers, s.body));
  }
  got.sort((a, b) => a.body.length - b.body.length);
  const r = got[Math.floor(got.length / 2)]!;
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([k]) => !OWN_HEADERS.has(k)));
  writeFileSync(`${dir}/${name}`, r.body);
  writeFileSync(`${dir}/${name}.headers`, JSON.stringify({ ...headers, ":status": String(r.status) }));
  return r.body.length;
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

interface Variant {
  label: string;
  args: (db: string) => string[];
}

const serveArgs = (dir: string, db: string, cacheMb: string | null) => [
  `${dir}/dist/cli.js`,
  "serve",
  "--db",
  db,
  "--port",
  "0",
  "--quiet",
  "--no-prune",
  ...(cacheMb === null ? [] : ["--page-cache-mb", cacheMb]),
];
const variants: Variant[] = [{ label: "this build", args: (db) => serveArgs(ROOT, db, CACHE_MB) }];
if (CACHE_OFF) variants.push({ label: "this build, cache off", args: (db) => serveArgs(ROOT, db, "0") });
if (COMPARE) {
  variants.push({ label: "compared build", args: (db) => serveArgs(COMPARE, comparedDb(db), CACHE_MB) });
  if (CACHE_OFF) variants.push({ label: "compared build, cache off", args: (db) => serveArgs(COMPARE, comparedDb(db), "0") });
}
const REPLAY = "same response replayed";
/** `--pg --pg-socket`: this build connected to the cluster over its Unix socket (`host=` its directory) instead of TCP. */
const PG_SOCKET_LABEL = "this build, Unix socket";
let currentPgDir = "";
if (PG && PG_SOCKET) variants.push({ label: PG_SOCKET_LABEL, args: (db) => serveArgs(ROOT, `${db}?host=${encodeURIComponent(currentPgDir)}`, CACHE_MB) });
/** `--pg --pg-pool`: this build with its reads on the pool (`read_connections=0`) instead of its pipelined connections. */
const PG_POOL_LABEL = "this build, reads on the pool";
if (PG && argv.includes("--pg-pool")) variants.push({ label: PG_POOL_LABEL, args: (db) => serveArgs(ROOT, `${db}?read_connections=0`, CACHE_MB) });
/** `--pg --with-sqlite`: the SQLite ledger of the same size (the same ledger: it is deterministic) served in the same rounds. */
const SQLITE = "this build, SQLite";
if (PG && WITH_SQLITE) variants.push({ label: SQLITE, args: () => serveArgs(ROOT, `${OUT}scale-${currentSize}.db`, CACHE_MB) });
/** `--floor`: bench/floorServer.ts over the same file. */
const FLOOR = "floor: node:http + the store's statements";
if (FLOOR_ON && !PG) variants.push({ label: FLOOR, args: (db) => ["--import", "tsx", "bench/floorServer.ts", db, "0"] });
/** `--fastify-floor`: the same floor behind a bare Fastify (its routing, schemas and reply, no hooks). */
const FASTIFY_FLOOR = "floor behind a bare Fastify";
if (argv.includes("--fastify-floor") && !PG) variants.push({ label: FASTIFY_FLOOR, args: (db) => ["--import", "tsx", "bench/floorServer.ts", db, "0", "--fastify"] });
/** Whether the floor server answers a row's requests: pages at a given version, raw_item, and the transactions. */
const floorServes = (mix: Mix) => /end_version=|ledger_version=|raw_item|\/transactions/u.test(mix.path);
const NOT_SERVED: Load = { rps: NaN, p50: NaN, p99: NaN, non2xx: 0, cpuUsPerReq: NaN, total: 0 };
let currentSize = 0;

async function runLedger(size: number, pg: ScalePg | null): Promise<string> {
  let db = `${OUT}scale-${size}.db`;
  let targets: Targets;
  let describe: string;
  const pgDb = `scale_${size}`;
  currentSize = size;
  if (pg) {
    currentPgDir = pg.dir;
    if (WITH_SQLITE) await buildScaleLedger(db, size);
    db = await pg.ledger();
    const t0 = performance.now();
    targets = targetsOf(await pg.targetsOf(pgDb));
    console.error(`read the targets of ${pgDb} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    describe = `PostgreSQL database ${pgDb} of ${(await pg.sizeBytes(pgDb) / 1e9).toFixed(2)} GB (pg_database_size)`;
  } else {
    await buildScaleLedger(db, size);
    targets = readTargets(db);
    describe = `${(statSync(db).size / 1e9).toFixed(2)} GB`;
  }
  const rows = rowsOf(targets, ONLY);
  const replayDir = `${OUT}scale-${pg ? "pg-" : ""}responses-${size}`;
  rmSync(replayDir, { recursive: true, force: true });
  mkdirSync(replayDir, { recursive: true });
  const replayBytes: number[] = [];
  {
    const first = await start("sampler", variants[0]!.args(db));
    for (const [i, row] of rows.entries()) replayBytes.push(await saveReplay(replayDir, `row${i}`, first.url, row.mix));
    first.child.kill();
  }
  const names = [...variants.map((v) => v.label), REPLAY];
  // results[row][variant] = loads over rounds
  const results = rows.map(() => names.map(() => [] as Load[]));
  const rss: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const servers = await Promise.all(variants.map((v) => start(v.label, v.args(db))));
    servers.push(await start(REPLAY, ["--import", "tsx", "bench/constServer.ts", "0", replayDir]));
    for (const [i, row] of rows.entries()) {
      const target = (s: Server): { base: string; mix: Mix } =>
        s.label === REPLAY ? { base: s.url, mix: { ...row.mix, path: `/replay/row${i}`, choices: [{}] } } : { base: s.url, mix: row.mix };
      for (let k = 0; k < servers.length; k++) {
        const j = (k + round + i) % servers.length;
        const s = servers[j]!;
        const { base, mix } = target(s);
        if ((s.label === FLOOR || s.label === FASTIFY_FLOOR) && !floorServes(mix)) {
          results[i]![j]!.push(NOT_SERVED);
          continue;
        }
        results[i]![j]!.push(
          pg ? await loadPg(pg, pgDb, base, mix, s.child.pid!, s.label !== REPLAY && s.label !== SQLITE) : await load(base, mix, s.child.pid!, DURATION, WARMUP),
        );
      }
    }
    rss.push(rssMb(servers[0]!.child.pid!));
    for (const s of servers) s.child.kill();
    console.error(`${size.toLocaleString("en")} versions: round ${round + 1} of ${ROUNDS} done`);
  }

  const med = (xs: Load[], f: (l: Load) => number) => median(xs.map(f));
  const replayAt = names.length - 1;
  const cpuRows = rows.map((row, i) => {
    const cpu = results[i]!.map((xs) => med(xs, (l) => l.cpuUsPerReq));
    const ratios = [`${(cpu[0]! / cpu[replayAt]!).toFixed(1)}×`];
    const at = (label: string) => variants.findIndex((v) => v.label === label);
    const compared = at("compared build");
    if (compared !== -1) ratios.push(`${(cpu[0]! / cpu[compared]!).toFixed(2)}`);
    // what the page cache costs or saves, build by build
    if (CACHE_OFF) ratios.push(`${(cpu[0]! / cpu[at("this build, cache off")]!).toFixed(2)}`);
    if (CACHE_OFF && compared !== -1) ratios.push(`${(cpu[compared]! / cpu[at("compared build, cache off")]!).toFixed(2)}`);
    const floorAt = at(FLOOR);
    if (floorAt !== -1) {
      const floor = cpu[floorAt]!;
      ratios.push(...(Number.isNaN(floor) ? ["–", "–"] : [`${(floor / cpu[replayAt]!).toFixed(1)}×`, `${(cpu[0]! - floor).toFixed(0)}`]));
    }
    return `| ${row.name} | ${cpu.map((c) => (Number.isNaN(c) ? "–" : c.toFixed(0))).join(" | ")} | ${replayBytes[i]!.toLocaleString("en")} | ${ratios.join(" | ")} |`;
  });
  const loadRows = rows.map((row, i) => {
    const cells = results[i]!.map((xs) => {
      if (xs.every((l) => l === NOT_SERVED)) return "–";
      const bad = xs.reduce((s, l) => s + l.non2xx, 0);
      return `${Math.round(med(xs, (l) => l.rps))} / ${med(xs, (l) => l.p50)} / ${med(xs, (l) => l.p99)}${bad > 0 ? ` (${bad} non-2xx)` : ""}`;
    });
    return `| ${row.name} | ${cells.join(" | ")} |`;
  });
  const extra = [
    ...(COMPARE ? ["this ÷ compared (cache on)"] : []),
    ...(CACHE_OFF ? ["this: on ÷ off"] : []),
    ...(CACHE_OFF && COMPARE ? ["compared: on ÷ off"] : []),
    ...(FLOOR_ON && !pg ? ["floor ÷ replay", "this − floor, µs"] : []),
  ];
  const compareHead = extra.map((h) => ` | ${h}`).join("");
  return `
### ${size.toLocaleString("en")} versions${pg ? ", PostgreSQL" : ""}

Ledger: ${targets.senders.length.toLocaleString("en")} senders, ${targets.moduleAccounts.length.toLocaleString("en")} accounts with modules, ${targets.items.length.toLocaleString("en")} table keys, versions ${targets.oldest}–${targets.latest}; ${describe}. RSS of "this build" after each round: ${rss.map((r) => r.toFixed(0)).join(", ")} MB.

Server CPU µs per request (median of ${ROUNDS} rounds of ${DURATION} s, after ${WARMUP} s of warm-up):

| request (${CONNECTIONS} connections) | ${names.join(" | ")} | replayed body bytes | this ÷ replay${compareHead} |
|---|${names.map(() => "---|").join("")}---|---|${extra.map(() => "---|").join("")}
${cpuRows.join("\n")}

req/s / p50 ms / p99 ms (medians):

| request | ${names.join(" | ")} |
|---|${names.map(() => "---|").join("")}
${loadRows.join("\n")}
${pg ? pgTables(rows, results, names) : ""}`;
}

/** `--pg`: per server, the cluster's share of each row: round trips, CPU, statements. */
function pgTables(rows: Row[], results: Load[][][], names: string[]): string {
  return names
    .filter((n) => n !== REPLAY && n !== SQLITE)
    .map((name) => {
      const j = names.indexOf(name);
      const lines = rows.map((row, i) => {
        const xs = results[i]![j]!.filter((l) => l.pg);
        const m = (f: (l: Load) => number) => median(xs.map(f));
        const node = m((l) => l.cpuUsPerReq);
        const cluster = m((l) => l.pg!.cpuUsPerReq);
        const both = m((l) => l.cpuUsPerReq + l.pg!.cpuUsPerReq);
        // by statement: calls over all rounds ÷ requests over all rounds
        const requests = xs.reduce((a, l) => a + l.pg!.requests, 0);
        const calls = new Map<string, number>();
        for (const l of xs) for (const [s, c] of l.pg!.byStatement) calls.set(s, (calls.get(s) ?? 0) + c);
        const by = [...calls]
          .sort((a, b) => b[1] - a[1])
          .map(([s, c]) => `${s} ${(c / requests).toFixed(2)}`)
          .join(", ");
        const sqlite = names.includes(SQLITE) ? median(results[i]![names.indexOf(SQLITE)]!.map((l) => l.cpuUsPerReq)) : null;
        const vsSqlite = sqlite === null ? "" : ` ${sqlite.toFixed(0)} | ${(both / sqlite).toFixed(1)}× |`;
        return `| ${row.name} | ${m((l) => l.pg!.trips).toFixed(2)} | ${node.toFixed(0)} | ${cluster.toFixed(0)} | ${both.toFixed(0)} | ${m((l) => l.pg!.execUsPerReq).toFixed(0)} |${vsSqlite} ${by} |`;
      });
      const sqliteHead = names.includes(SQLITE) ? " SQLite server CPU µs/req | server + cluster ÷ SQLite |" : "";
      return `
PostgreSQL, "${name}" (medians of the rounds; round trips = statement calls in pg_stat_statements ÷ requests; cluster CPU = the postmaster and all its processes, from /proc; execution = pg_stat_statements' total_exec_time):

| request | round trips / req | server CPU µs/req | cluster CPU µs/req | server + cluster µs/req | statement execution µs/req |${sqliteHead} statements / req |
|---|---|---|---|---|---|${sqliteHead ? "---|---|" : ""}---|
${lines.join("\n")}
`;
    })
    .join("");
}

const sections: string[] = [];
let pgBin = "";
for (const size of SIZES) {
  const pg = PG ? await ScalePg.start(size, PINNED) : null;
  try {
    const section = await runLedger(size, pg);
    console.error(section);
    sections.push(section);
    pgBin = pg?.bin ?? "";
  } finally {
    await pg?.stop();
  }
}
console.log(`Command: \`npm run bench:scale -- ${argv.join(" ")}\`
(${new Date().toISOString().slice(0, 16)} UTC, ${availableParallelism()}-core VM shared with other work${PINNED ? "; servers pinned to core 0, the load generator to core 1 (taskset)" : ""}; autocannon in a process of its own; every server started anew each round, rows run on the servers in an order rotating by round)
${COMPARE ? `\n"compared build": ${COMPARE}${COMPARE_OUT ? `, serving its own copies of the ledgers in ${COMPARE_OUT}` : ""}\n` : ""}${PG ? `\nPostgreSQL: ${pgBin}, a cluster of the bench's own per ledger (bench/out/scale-pg-<versions>/data)${PINNED ? " on core 0 with the server" : ""}, settings ${PG_SETTINGS.join(", ")}; one server process, pool of 10 connections over TCP; each row's warm-up an autocannon run of its own before the measured run\n` : ""}
${sections.join("\n")}`);
