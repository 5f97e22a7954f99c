/**
 * The summaries statements on a PostgreSQL ledger: buffers touched and execution time of
 * `EXPLAIN (ANALYZE, BUFFERS)` over the same seeded random requests, generic plans (as a serving
 * node's named statements run after their fifth use); then the database backend's CPU time
 * (/proc, user + system) for `--cpu` executions of each as the node sends them (named
 * statements, the server's own plan choice). Run against two databases (e.g. one before and one
 * after migration 7) to compare them side by side.
 *
 * Run: node --import tsx bench/pgPartitionPlans.ts URL [URL...] [--requests 200]
 */
import { readFileSync } from "node:fs";
import pg from "pg";
import { SQL } from "../src/storage/postgres/sql.js";
import { argOption } from "./common.js";
import { prng } from "../src/ingest/devnet/chain.js";

const argv = process.argv.slice(2);
const opt = argOption(argv);
const REQUESTS = Number(opt("requests", "200"));
const CPU_REQUESTS = Number(opt("cpu", "3000"));

/** CPU time (µs, user + system) process `pid` has used so far. */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}
const urls = argv.filter((a) => a.startsWith("postgres://"));

interface Totals {
  hit: number;
  read: number;
  ms: number;
  planMs: number;
  cpuUs: number;
}

async function measure(url: string): Promise<Record<string, Totals>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("SET plan_cache_mode = force_generic_plan");
    const senders = (await c.query<{ address: Buffer }>("SELECT address FROM addresses WHERE id IN (SELECT DISTINCT sender_id FROM transactions WHERE version < 100000) ORDER BY id")).rows.map((r) => r.address);
    const top = Number((await c.query<{ v: string }>("SELECT ledger_version AS v FROM ledger")).rows[0]!.v);
    const random = prng(35);
    const statements: Record<string, (s: Buffer, v: number) => unknown[]> = {
      summariesJsonBackward: (s, v) => [s, String(v), 25, `0x${s.toString("hex")}`],
      summariesJsonForward: (s, v) => [s, String(v), 25, `0x${s.toString("hex")}`],
      summariesVersionAt: (s, v) => [s, String(v)],
    };
    const out: Record<string, Totals> = {};
    for (const [name, values] of Object.entries(statements)) {
      await c.query(`PREPARE ${name} AS ${(SQL as Record<string, string>)[name]}`);
      const t: Totals = { hit: 0, read: 0, ms: 0, planMs: 0, cpuUs: 0 };
      for (let i = 0; i < REQUESTS; i++) {
        const sender = senders[Math.floor(random() * senders.length)]!;
        const version = Math.floor(random() * top);
        const params = values(sender, version).map((p) => (Buffer.isBuffer(p) ? `'\\x${p.toString("hex")}'::bytea` : typeof p === "number" ? String(p) : `'${p}'`));
        const r = await c.query<{ "QUERY PLAN": Array<{ Plan: Record<string, number>; "Execution Time": number; "Planning Time": number }> }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE ${name}(${params.join(", ")})`,
        );
        const p = r.rows[0]!["QUERY PLAN"][0]!;
        t.hit += p.Plan["Shared Hit Blocks"]!;
        t.read += p.Plan["Shared Read Blocks"]!;
        t.ms += p["Execution Time"];
        t.planMs += p["Planning Time"];
      }
      out[name] = t;
    }
    await c.query("RESET plan_cache_mode");
    const pid = (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    for (const [name, values] of Object.entries(statements)) {
      const text = (SQL as Record<string, string>)[name]!;
      const requests = Array.from({ length: CPU_REQUESTS }, () => values(senders[Math.floor(random() * senders.length)]!, Math.floor(random() * top)));
      for (const v of requests.slice(0, 20)) await c.query({ name: `cpu_${name}`, text, values: v });
      const before = cpuMicros(pid);
      for (const v of requests) await c.query({ name: `cpu_${name}`, text, values: v });
      out[name]!.cpuUs = (cpuMicros(pid) - before) / CPU_REQUESTS;
    }
    return out;
  } finally {
    await c.end();
  }
}

for (const url of urls) {
  const r = await measure(url);
  for (const [name, t] of Object.entries(r)) {
    console.log(
      `${url.replace(/^.*\//, "")} ${name}: buffers ${(t.hit / REQUESTS).toFixed(1)} hit + ${(t.read / REQUESTS).toFixed(1)} read, execution ${((t.ms / REQUESTS) * 1000).toFixed(0)} µs, planning ${((t.planMs / REQUESTS) * 1000).toFixed(0)} µs a request; backend CPU ${t.cpuUs.toFixed(0)} µs a request (${CPU_REQUESTS})`,
    );
  }
}
