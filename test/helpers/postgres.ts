/**
 * A throwaway PostgreSQL server for tests and benchmarks: `initdb` into a temp dir, start it on a
 * free loopback port (socket in the temp dir too), hand out one fresh database per `newDb()`,
 * stop and delete everything in `destroy()`.
 *
 * The server binaries are looked up in `$LEDGER_NODE_PG_BIN`, `/usr/lib/postgresql/<n>/bin`
 * (newest first; Debian/Ubuntu keep them off PATH), then PATH. When none is found this throws —
 * tests never skip silently. Running as root, the cluster runs as the `postgres` user.
 *
 * Durability is off (fsync, full_page_writes, synchronous_commit): the cluster lives for one test
 * file, and start-up takes about a second.
 *
 * A cluster never outlives its test process: besides `destroy()` (and a synchronous stop on normal
 * exit), a small detached watchdog stops and deletes it once the process is gone, however it ended
 * (a test runner killing its worker, a suite whose afterAll throws before cleaning up).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import type { Backend } from "./backends.js";

const run = promisify(execFile);

const INSTALL_HINT =
  "PostgreSQL server binaries (initdb, pg_ctl) were not found in $LEDGER_NODE_PG_BIN, /usr/lib/postgresql/*/bin or PATH. " +
  "The PostgreSQL tests need a local server installation: `apt-get install postgresql` (Debian/Ubuntu; " +
  "`brew install postgresql@15` on macOS), or set LEDGER_NODE_PG_BIN to the directory holding initdb and pg_ctl.";

/** The directory holding `initdb` and `pg_ctl`; throws with install instructions when none. */
export function findPostgresBin(): string {
  const candidates: string[] = [];
  if (process.env.LEDGER_NODE_PG_BIN) candidates.push(process.env.LEDGER_NODE_PG_BIN);
  const base = "/usr/lib/postgresql";
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => /^[0-9]+(\.[0-9]+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(join(base, v, "bin"));
  }
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir) candidates.push(dir);
  const found = candidates.find((d) => existsSync(join(d, "initdb")) && existsSync(join(d, "pg_ctl")));
  if (!found) throw new Error(INSTALL_HINT);
  return found;
}

async function freePort(): Promise<number> {
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

/** argv to run `bin/tool args…` as a user PostgreSQL accepts (not root). */
function asServerUser(tool: string, args: string[]): [string, string[]] {
  return isRoot ? ["runuser", ["-u", "postgres", "--", tool, ...args]] : [tool, args];
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
  private dbCount = 0;
  private running = false;
  private watchdog: ChildProcess | null = null;

  private constructor(
    readonly bin: string,
    readonly dir: string,
    readonly port: number,
    /** Extra server settings (`name=value`), e.g. for a benchmark. */
    readonly settings: readonly string[] = [],
  ) {}

  get dataDir(): string {
    return join(this.dir, "data");
  }

  /** `postgres://postgres@127.0.0.1:PORT/<db>` */
  url(db = "postgres"): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${db}`;
  }

  /** initdb + start; `settings` (`name=value`) override the throwaway defaults. */
  static async start(settings: readonly string[] = []): Promise<PgCluster> {
    const bin = findPostgresBin();
    const dir = mkdtempSync(join(tmpdir(), "ledger-node-pg-"));
    const cluster = new PgCluster(bin, dir, await freePort(), settings);
    try {
      if (isRoot) {
        const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
        const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
        chownSync(dir, uid, gid);
      }
      const [cmd, args] = asServerUser(join(bin, "initdb"), [
        "-D", cluster.dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync",
      ]);
      await run(cmd, args);
      cluster.startWatchdog();
      await cluster.startServer();
      liveClusters.add(cluster);
      return cluster;
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`could not start a throwaway PostgreSQL from ${bin}: ${(e as Error).message}`, { cause: e });
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

  /** (Re)starts the server on the same port and data directory. */
  async startServer(): Promise<void> {
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
    const name = `ledger_${process.pid}_${this.dbCount++}`;
    const c = new pg.Client({ connectionString: this.url() });
    await c.connect();
    try {
      await c.query(`CREATE DATABASE ${name} TEMPLATE template0 STRATEGY FILE_COPY`);
    } finally {
      await c.end();
    }
    return this.url(name);
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

/** Clusters still running; a test file that crashes still stops them on exit. */
const liveClusters = new Set<PgCluster>();
process.once("exit", () => {
  for (const c of liveClusters) c.destroySync();
});

/**
 * The cluster of this test file (process), started at the first use: every postgres backend of
 * the file shares it, and the last one to clean up stops it.
 */
let shared: { cluster: Promise<PgCluster>; users: number } | null = null;

export function postgresBackend(): Backend {
  let cluster: Promise<PgCluster> | null = null;
  return {
    name: "postgres",
    async newDb() {
      if (!cluster) {
        shared ??= { cluster: PgCluster.start(), users: 0 };
        shared.users++;
        cluster = shared.cluster;
      }
      return (await cluster).newDb();
    },
    async cleanup() {
      if (!cluster || !shared) return;
      cluster = null;
      if (--shared.users > 0) return;
      const s = shared;
      shared = null;
      await (await s.cluster.catch(() => null))?.destroy();
    },
  };
}
