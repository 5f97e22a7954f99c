/**
 * What a node costs with nothing to do but hold open transaction streams: its CPU time a second
 * (user and system, every process of it) over a window with no request, against the same with no
 * stream. The server runs on core 0, the stream clients (bench/streamClients.mjs, each stream
 * filtered by a random sender, so nothing matches) on core 1.
 *
 *   node bench/tools/idleCpu.mjs [--dist DIR] [--streams 10000] [--seconds 20] [--rounds 2]
 *        [--db FILE] [--devnet] [--workers N] [--serve "ARGS"]
 *   node --import tsx bench/tools/idleCpu.mjs --postgres [--standby [--primary]] [--streams 1] ...
 *
 * Without `--devnet` it serves `--db` (default: the 1M bench:scale ledger) read-only with `--no-prune`;
 * with it, a devnet on a new file (a block a second), whose writer tells the streams of each commit.
 * `--postgres` serves, read-only, a throwaway PostgreSQL (the test suite's, PgCluster) holding a
 * devnet chain of 1,000 blocks, and also reports the cluster's CPU a second (its postmaster and
 * every backend) and the transactions a second the database counted (`pg_stat_database`).
 * `--standby`: the chain on the primary of a pair (`PgCluster.startStandbyPair`), the node on its hot
 * standby (the cluster: both servers; the transactions: the standby's), with `--primary` given the
 * primary's URL (`serve --primary`).
 * `--workers N` serves from N processes (streams dealt round-robin by node:cluster). Each round
 * measures with the streams and then without. `--dist` serves another checkout's build.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { option, streamCapFlags } from "./rowMixes.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;
const DIST = option("dist", ROOT);
const STREAMS = Number(option("streams", "10000"));
const SECONDS = Number(option("seconds", "20"));
const ROUNDS = Number(option("rounds", "2"));
const DB = option("db", `${ROOT}bench/out/scale-1000000.db`);
const DEVNET = process.argv.includes("--devnet");
const WORKERS = Number(option("workers", "1"));
const SERVE = option("serve", "").split(" ").filter(Boolean);
const POSTGRES = process.argv.includes("--postgres");
const STANDBY = process.argv.includes("--standby");
const PRIMARY = process.argv.includes("--primary");

/** `--postgres`: a throwaway cluster with a devnet chain, and how to read what it spent. */
async function postgresLedger() {
  const { PgCluster } = await import("../../test/helpers/postgres.ts");
  const pg = (await import("pg")).default;
  const pair = STANDBY ? await PgCluster.startStandbyPair() : null;
  const cluster = pair ? pair.primary : await PgCluster.start();
  const primary = await cluster.newDb();
  const file = join(mkdtempSync(join(tmpdir(), "idle-cpu-pg-")), "chain.ndjson");
  execFileSync(process.execPath, [`${ROOT}dist/cli.js`, "devnet", "--out", file, "--blocks", "1000"], { stdio: "ignore" });
  execFileSync(process.execPath, [`${ROOT}dist/cli.js`, "import", "--db", primary, file], { stdio: "ignore" });
  rmSync(file);
  await pair?.caughtUp();
  const url = pair ? pair.onStandby(primary) : primary;
  const transactions = async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      // Flushed by the backends at most a second late (PostgreSQL 15+), more while they are idle: read over long windows.
      const r = await c.query("SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()");
      return Number(r.rows[0].n);
    } finally {
      await c.end();
    }
  };
  return {
    url,
    serve: PRIMARY ? ["--primary", primary] : [],
    pids: () => [...cluster.serverPids(), ...(pair ? pair.standby.serverPids() : [])],
    transactions,
    destroy: () => (pair ?? cluster).destroy(),
  };
}
const PG = POSTGRES ? await postgresLedger() : null;

/** Starts the server on core 0; resolves with its process and port once every worker listens. */
async function start(streams) {
  const dir = mkdtempSync(join(tmpdir(), "idle-cpu-"));
  const db = DEVNET ? join(dir, "devnet.db") : PG ? PG.url : DB;
  const args = [`${DIST}/dist/cli.js`, "serve", "--db", db, "--port", "0", ...(DEVNET ? ["--devnet"] : ["--no-prune"])];
  args.push(...streamCapFlags(DIST, streams + 100), ...(WORKERS > 1 ? ["--workers", String(WORKERS)] : []), ...(PG?.serve ?? []), ...SERVE);
  const child = spawn("taskset", ["-c", "0", process.execPath, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const read = (d) => {
    // Only the start is needed: the listening lines.
    if (out.length < 1 << 20) out += d;
  };
  child.stdout.on("data", read);
  child.stderr.on("data", read);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ports = [...out.matchAll(/listening at http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => m[1]);
    if (ports.length >= WORKERS) return { child, url: `http://127.0.0.1:${ports[0]}`, dir };
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The pids of the server: taskset execs node, whose children are the workers. */
function pidsOf(child) {
  let kids = [];
  try {
    kids = execFileSync("pgrep", ["-P", String(child.pid)], { encoding: "utf8" }).trim().split("\n").filter(Boolean).map(Number);
  } catch {
    // no children: one process
  }
  return [child.pid, ...kids];
}

/** User and system CPU ms of `pids` so far (clock ticks of /proc/PID/stat, 10 ms each). */
function cpuMs(pids) {
  const t = { user: 0, sys: 0 };
  for (const pid of pids) {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    t.user += Number(f[11]) * 10;
    t.sys += Number(f[12]) * 10;
  }
  return t;
}

let clients = null;
function ask(message) {
  return new Promise((resolve) => {
    clients.once("message", resolve);
    clients.send(message);
  });
}

async function measure(streams) {
  const { child, url, dir } = await start(streams);
  try {
    if (streams > 0) {
      const { statuses } = await ask({ cmd: "open", base: url, specs: [{ kind: "idle", path: "/v1/transactions/stream?sender=0x{random}", accept: "text/event-stream", count: streams }] });
      if (statuses["200"] !== streams) throw new Error(`opening ${streams} streams answered ${JSON.stringify(statuses)}`);
    }
    // Settle: the opening's garbage collected, the devnet past its genesis.
    await new Promise((r) => setTimeout(r, 5_000));
    const pids = pidsOf(child);
    const clusterPids = PG?.pids() ?? [];
    const txBefore = PG ? await PG.transactions() : 0;
    const before = cpuMs(pids);
    const clusterBefore = cpuMs(clusterPids);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const after = cpuMs(pids);
    const clusterAfter = cpuMs(clusterPids.filter((p) => existsSync(`/proc/${p}`)));
    const s = (performance.now() - t0) / 1000;
    const txAfter = PG ? await PG.transactions() : 0;
    if (streams > 0) await ask({ cmd: "close", kind: "idle" });
    return {
      user: (after.user - before.user) / s,
      sys: (after.sys - before.sys) / s,
      cluster: (clusterAfter.user + clusterAfter.sys - clusterBefore.user - clusterBefore.sys) / s,
      // Less the two reads of the count itself.
      transactions: (txAfter - txBefore - 2) / s,
    };
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
    if (DEVNET) rmSync(dir, { recursive: true, force: true });
  }
}

clients = spawn("taskset", ["-c", "1", process.execPath, `${ROOT}bench/streamClients.mjs`], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
await new Promise((resolve) => clients.once("message", resolve));
const what = `${DIST}${DEVNET ? ", devnet" : ""}${PG ? `, PostgreSQL${STANDBY ? ` standby${PRIMARY ? " --primary" : ""}` : ""}` : ""}${WORKERS > 1 ? `, --workers ${WORKERS}` : ""}${SERVE.length ? `, ${SERVE.join(" ")}` : ""}`;
for (let round = 1; round <= ROUNDS; round++) {
  for (const n of [STREAMS, 0]) {
    const r = await measure(n);
    const cluster = PG ? `; the cluster ${r.cluster.toFixed(1)} ms of CPU a second, ${r.transactions.toFixed(1)} transactions a second` : "";
    console.log(`round ${round}: ${what}, ${n} idle streams: ${(r.user + r.sys).toFixed(1)} ms of CPU a second (user ${r.user.toFixed(1)}, system ${r.sys.toFixed(1)})${cluster}`);
  }
}
clients.send({ cmd: "exit" });
await PG?.destroy();
