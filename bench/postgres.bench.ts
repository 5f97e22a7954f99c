/**
 * PostgreSQL vs SQLite, and 1 vs 2 serve processes on PostgreSQL, in one run over the same ledger:
 *
 *   node --import tsx bench/postgres.bench.ts [--txns 100000] [--duration 4] [--rounds 3]
 *
 * - Ledger: the real genesis (test/fixtures: 57 framework modules at 0x1) followed by devnet
 *   blocks, imported in-process through the Importer into a SQLite file and into a throwaway
 *   PostgreSQL (test/helpers/postgres.ts; the import rate of each is reported too).
 * - Servers: three `ledger-node serve` processes (SQLite; PostgreSQL; PostgreSQL --workers 2),
 *   each on its own loopback port, all started before measuring.
 * - Load: autocannon (10 connections) from this process. For every operation the rounds
 *   alternate the three servers, so noise hits all of them alike; medians are reported.
 * - Writes the "PostgreSQL" section of bench/results/archive.md (other sections are kept).
 *
 * Runtime about 3 minutes with the defaults (4 operations x 3 servers x 3 rounds x 4 s, plus
 * import and warm-up).
 */
import autocannon from "autocannon";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { DEVNET_ACCOUNTS, DEVNET_TABLE_HANDLE, DevnetChain, defaultDevnetChainOptions, devnetAccount } from "../src/ingest/devnet/chain.js";
import { Importer } from "../src/ingest/importer.js";
import { parseAddress } from "../src/ledger/address.js";
import { openStore } from "../src/storage/open.js";
import { FIXTURES } from "../test/helpers/fixtures.js";
import { PgCluster } from "../test/helpers/postgres.js";

const ROOT = new URL("../", import.meta.url).pathname;
const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const TXNS = arg("txns", 100_000);
const DURATION = arg("duration", 4);
const ROUNDS = arg("rounds", 3);
const CONNECTIONS = 10;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The transactions of the ledger, generated on the fly. */
function* ledger(): Generator<unknown> {
  yield JSON.parse(readFileSync(`${FIXTURES}genesis_transaction.json`, "utf8"))[0];
  const chain = new DevnetChain(
    { version: 1n, height: 1n, epoch: 1n, sequence: Array.from({ length: DEVNET_ACCOUNTS }, () => 0n), upgrades: 0 },
    defaultDevnetChainOptions,
  );
  let ts = 1_700_000_000_000_000n;
  while (chain.pos.version < BigInt(TXNS)) {
    ts += 1_000_000n;
    yield* chain.nextBlock(ts);
  }
}

async function importInto(db: string): Promise<{ versions: bigint; rate: number }> {
  const store = await openStore(db);
  try {
    const t0 = performance.now();
    const imp = await Importer.open(store, 4);
    for (const t of ledger()) await imp.push(t);
    await imp.finish();
    const versions = imp.ledgerVersion! + 1n;
    return { versions, rate: Number(versions) / ((performance.now() - t0) / 1000) };
  } finally {
    await store.close();
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer().once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

interface Server {
  name: string;
  base: string;
  child: ChildProcess;
}

async function serve(name: string, db: string, extra: string[] = []): Promise<Server> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli.ts", "serve", "--db", db, "--port", String(port), "--quiet", "--prune-window", "1000000000", ...extra],
    { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] },
  );
  const base = `http://127.0.0.1:${port}/v1`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    const ok = await fetch(`${base}/estimate_gas_price`).then((r) => r.ok, () => false);
    if (ok) return { name, base, child };
    if (Date.now() > deadline) throw new Error(`${name} did not start`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** CPU time (ms) of processes, from /proc (Linux; 0 elsewhere). */
function cpuMs(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(pid, ((Number(f[11]) + Number(f[12])) * 1000) / 100); // utime + stime, 100 ticks/s
    } catch {
      // gone
    }
  }
  return out;
}

/** `pid` and all its descendants. */
function tree(pid: number): number[] {
  const children = new Map<number, number[]>();
  try {
    for (const d of readdirSync("/proc")) {
      if (!/^[0-9]+$/.test(d)) continue;
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
      } catch {
        // gone
      }
    }
  } catch {
    return [pid];
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]!) ?? []));
  return all;
}

interface Load {
  rps: number;
  p99: number;
  bad: number;
  requests: number;
  /** CPU ms during the run: the serving processes, PostgreSQL, this process (autocannon). */
  cpu: { node: number; pg: number; load: number };
}

let pgRoot = 0;

async function load(opts: autocannon.Options, server: Server): Promise<Load> {
  const serverPids = () => tree(server.child.pid!);
  const pgPids = () => (pgRoot ? tree(pgRoot) : []);
  const before = { node: cpuMs(serverPids()), pg: cpuMs(pgPids()), load: process.cpuUsage() };
  const r = await autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts });
  const spent = (b: Map<number, number>, a: Map<number, number>) => [...a].reduce((s, [pid, ms]) => s + ms - (b.get(pid) ?? 0), 0);
  const l = process.cpuUsage(before.load);
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    bad: r.non2xx + r.errors + r.timeouts,
    requests: r.requests.total,
    cpu: { node: spent(before.node, cpuMs(serverPids())), pg: spent(before.pg, cpuMs(pgPids())), load: (l.user + l.system) / 1000 },
  };
}

const u64le = (v: number): string => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(v));
  return "0x" + b.toString("hex");
};

/** Keys of the devnet table that hold a value at the newest version (the others answer 404). */
const liveKeys: number[] = [];

const OPS: Array<{ name: string; opts: (base: string) => autocannon.Options }> = [
  {
    name: "GET /v1/accounts/{a}/transaction_summaries?limit=25",
    opts: (b) => ({ url: `${b}/accounts/${devnetAccount(1)}/transaction_summaries?limit=25` }),
  },
  {
    name: "POST /v1/tables/{h}/raw_item (BCS)",
    opts: (b) => ({
      url: `${b}/tables/${DEVNET_TABLE_HANDLE}/raw_item`,
      requests: liveKeys.map((k) => ({
        method: "POST" as const,
        headers: { "content-type": "application/json", accept: "application/x-bcs" },
        body: JSON.stringify({ key: u64le(k) }),
      })),
    }),
  },
  { name: "GET /v1/accounts/0x1/modules?limit=25 (ABIs)", opts: (b) => ({ url: `${b}/accounts/0x1/modules?limit=25` }) },
  { name: "GET /v1/estimate_gas_price", opts: (b) => ({ url: `${b}/estimate_gas_price` }) },
];

/** Replaces (or appends) the section `## title` of bench/results/archive.md, keeping the others. */
function writeSection(title: string, body: string): void {
  const path = `${ROOT}bench/results/archive.md`;
  let text = existsSync(path) ? readFileSync(path, "utf8") : "# Benchmark results\n";
  const head = `## ${title}\n`;
  const section = `${head}\n${body.trim()}\n\n`;
  const start = text.indexOf(head);
  if (start === -1) text = text.trimEnd() + "\n\n" + section;
  else {
    const next = text.indexOf("\n## ", start + head.length);
    text = text.slice(0, start) + section + (next === -1 ? "" : text.slice(next + 1));
  }
  writeFileSync(path, text.trimEnd() + "\n");
}

async function main(): Promise<void> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "ledger-node-pgbench-"));
  const cluster = await PgCluster.start(["shared_buffers=256MB"]);
  const servers: Server[] = [];
  try {
    const sqliteDb = join(dir, "ledger.db");
    const pgDb = await cluster.newDb();
    console.error(`importing ~${TXNS} transactions into SQLite ...`);
    const si = await importInto(sqliteDb);
    console.error(`  ${si.versions} versions, ${Math.round(si.rate)} versions/s; into PostgreSQL ...`);
    const pi = await importInto(pgDb);
    console.error(`  ${pi.versions} versions, ${Math.round(pi.rate)} versions/s`);
    const check = await openStore(sqliteDb);
    const handle = parseAddress(DEVNET_TABLE_HANDLE)!;
    for (let k = 0; k < 64; k++) {
      if ((await check.readTableItem(handle, Buffer.from(u64le(k).slice(2), "hex"), undefined))?.value) liveKeys.push(k);
    }
    await check.close();
    pgRoot = cluster.postmasterPid();

    servers.push(await serve("SQLite", sqliteDb));
    servers.push(await serve("PostgreSQL", pgDb));
    servers.push(await serve("PostgreSQL ×2", pgDb, ["--workers", "2"]));

    // Warm-up: JIT, ABI and gas caches, PostgreSQL buffers, prepared statements on every pooled connection.
    for (const op of OPS) for (const s of servers) await autocannon({ connections: CONNECTIONS, ...op.opts(s.base), duration: 1 });

    const rows: string[] = [];
    const cpuRows: string[] = [];
    const ratios = { pg: [] as number[], x2: [] as number[], nodeExtra: [] as number[], pgCpu: [] as number[], x2Node: [] as number[] };
    for (const op of OPS) {
      const runs = new Map<string, Load[]>(servers.map((s) => [s.name, []]));
      for (let r = 0; r < ROUNDS; r++) {
        for (const s of servers) runs.get(s.name)!.push(await load(op.opts(s.base), s));
      }
      const perReq = (n: string) => {
        const rs = runs.get(n)!;
        const reqs = rs.reduce((a, x) => a + x.requests, 0);
        const us = (k: keyof Load["cpu"]) => Math.round((1000 * rs.reduce((a, x) => a + x.cpu[k], 0)) / Math.max(reqs, 1));
        return `${us("node")} + ${us("pg")} + ${us("load")}`;
      };
      cpuRows.push(`| ${op.name} | ${perReq("SQLite")} | ${perReq("PostgreSQL")} | ${perReq("PostgreSQL ×2")} |`);
      const cpuPerReq = (n: string, k: keyof Load["cpu"]) => {
        const rs = runs.get(n)!;
        return (1000 * rs.reduce((a, x) => a + x.cpu[k], 0)) / Math.max(rs.reduce((a, x) => a + x.requests, 0), 1);
      };
      ratios.nodeExtra.push(cpuPerReq("PostgreSQL", "node") - cpuPerReq("SQLite", "node"));
      ratios.pgCpu.push(cpuPerReq("PostgreSQL", "pg"));
      ratios.x2Node.push(cpuPerReq("PostgreSQL ×2", "node") / cpuPerReq("PostgreSQL", "node"));
      const rps = (n: string) => median(runs.get(n)!.map((x) => x.rps));
      const p99 = (n: string) => median(runs.get(n)!.map((x) => x.p99));
      const bad = [...runs.values()].flat().reduce((a, x) => a + x.bad, 0);
      ratios.pg.push(rps("PostgreSQL") / rps("SQLite"));
      ratios.x2.push(rps("PostgreSQL ×2") / rps("PostgreSQL"));
      const row =
        `| ${op.name} | ${Math.round(rps("SQLite"))} / ${p99("SQLite")} | ${Math.round(rps("PostgreSQL"))} / ${p99("PostgreSQL")} ` +
        `| ${Math.round(rps("PostgreSQL ×2"))} / ${p99("PostgreSQL ×2")} | ${(rps("PostgreSQL") / rps("SQLite")).toFixed(2)} ` +
        `| ${(rps("PostgreSQL ×2") / rps("PostgreSQL")).toFixed(2)} | ${bad} |`;
      console.error(row);
      rows.push(row);
    }
    const minutes = ((performance.now() - started) / 60_000).toFixed(1);
    const body = `
Command: \`node --import tsx bench/postgres.bench.ts --txns ${TXNS} --duration ${DURATION} --rounds ${ROUNDS}\`
(${new Date().toISOString().slice(0, 10)}, Node ${process.versions.node}, ${cpus().length}-core VM shared with other work,
PostgreSQL ${cluster.bin.match(/postgresql\/([0-9]+)/)?.[1] ?? "?"} on loopback; whole run ${minutes} min).

Ledger: the real genesis (57 modules at 0x1) + devnet blocks, ${pi.versions.toLocaleString("en")} versions, the same in
both databases. Import through the Importer in one process: SQLite ${Math.round(si.rate).toLocaleString("en")} versions/s,
PostgreSQL ${Math.round(pi.rate).toLocaleString("en")} versions/s.

Each cell: requests/s / p99 ms, median of ${ROUNDS} rounds of ${DURATION} s with ${CONNECTIONS} connections (autocannon in the
bench process). The rounds alternate the three servers. "PostgreSQL ×2" is \`serve --workers 2\`: two processes on one
port over the same database. Default pool (10 connections per process), default timeouts.

| operation | SQLite | PostgreSQL | PostgreSQL ×2 | PG / SQLite | ×2 / ×1 | non-2xx |
|---|---|---|---|---|---|---|
${rows.join("\n")}

Where the CPU goes, in µs of CPU per request: serving node process(es) + PostgreSQL server processes + the load
generator (from /proc, over all rounds). The machine has ${cpus().length} cores, so
${cpus().length} s of CPU per second is the ceiling: throughput ≈ ${cpus().length},000,000 / (sum of the three) when the box is saturated.

| operation | SQLite | PostgreSQL | PostgreSQL ×2 |
|---|---|---|---|
${cpuRows.join("\n")}

Reading (computed from the tables above, medians over the operations):
- PostgreSQL answers at ${median(ratios.pg).toFixed(2)}× the SQLite throughput in one process. Each request here makes one
  round trip (the ledger position in the same statement as the table item or the page's cache key; the ledger
  alone for gas), where SQLite answers the same reads from an in-process memo while the file is unchanged; the
  round trip costs the serving process ${Math.round(median(ratios.nodeExtra))} µs more CPU than SQLite's reads, and PostgreSQL itself ${Math.round(median(ratios.pgCpu))} µs.
- Two processes give ${median(ratios.x2).toFixed(2)}× one process here: the load generator, PostgreSQL and the
  servers share ${cpus().length} cores, and each request costs the serving processes ${median(ratios.x2Node).toFixed(2)}× the CPU of one process
  (less batching per event loop, more context switches). A second process pays off when it gets a core of its own;
  more machines (or \`--workers\` on a machine with idle cores) in front of one database is what the backend is for.
`;
    writeSection("PostgreSQL", body);
    console.log(body);
  } finally {
    for (const s of servers) s.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    await cluster.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
