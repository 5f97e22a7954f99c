/**
 * Issue 31 §1: other processes open the SQLite file a node writes (a monitoring script, a tool in
 * exclusive locking mode, `ledger-node prune`, an online backup, `VACUUM INTO`, the `sqlite3`
 * shell), again and again, while `serve` writes with the devnet (one process and
 * `--workers 2`) and with `--follow`; then the node is killed with SIGKILL. Every block it served
 * must be on disk, the file whole.
 *
 * The node held no POSIX lock on the file once it had read the file's header with node:fs (a close
 * drops all of the process's locks on a file): the next process to close the database took itself
 * for the last one and checkpointed and deleted the WAL the node went on writing into.
 */
import Database from "better-sqlite3";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, requireBuiltCli } from "./helpers/cli.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";
import { type ServeProcess, startServe } from "./helpers/serveProcess.js";

const OTHER = new URL("./helpers/otherSqliteProcess.mjs", import.meta.url).pathname;
const REPO = new URL("..", import.meta.url).pathname;
/** How long the other processes keep at the file before the kill. */
const TOUCH_MS = 6_000;

const dir = mkdtempSync(join(tmpdir(), "ledger-node-others-"));
/**
 * The `sqlite3` shell, another SQLite build opening the file. CI installs it (`.ci/run`) and a run
 * there fails without it; elsewhere its absence shows as a skipped test, never silently.
 */
const sqliteShell = spawnSync("sqlite3", ["-version"], { encoding: "utf8" });
const hasSqliteShell = sqliteShell.status === 0;
const UNDER_CI = !["", "0", "false"].includes(process.env.CI ?? "");
/** The other processes every case must have run. */
const REQUIRED = ["read", "exclusive", "prune", "backup", "vacuum", ...(hasSqliteShell || UNDER_CI ? ["sqlite3"] : [])];

/** Runs a process to its end: its exit code and output. */
function run(cmd: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const p = spawn(cmd, args, { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  p.stdout!.on("data", (d) => (out += d));
  p.stderr!.on("data", (d) => (out += d));
  return new Promise((resolve) => p.once("close", (code) => resolve({ code, out })));
}

interface Touches {
  /** Runs of each action, by name. */
  runs: Map<string, number>;
  /** Failures (an action that exited non-zero), with its output. */
  failures: string[];
  /** Times a process in exclusive locking mode got the file the node had open. */
  exclusiveGot: number;
  /** Times the node's -wal or -shm file was missing while it ran. */
  walMissing: number;
}

/** Other processes at `db`, one after another, until `until` resolves. */
async function touchUntil(db: string, until: Promise<void>): Promise<Touches> {
  const t: Touches = { runs: new Map(), failures: [], exclusiveGot: 0, walMissing: 0 };
  let done = false;
  void until.then(() => (done = true));
  const actions: Array<[string, () => Promise<{ code: number | null; out: string }>]> = [
    ["read", () => run(process.execPath, [OTHER, "read", db])],
    ["exclusive", () => run(process.execPath, [OTHER, "exclusive", db])],
    ["prune", () => run(process.execPath, [CLI, "prune", "--db", db, "--window", "200"])],
    ["backup", () => run(process.execPath, [OTHER, "backup", db, join(dir, "backup.db")])],
    ["read", () => run(process.execPath, [OTHER, "read", db])],
    ["vacuum", () => run(process.execPath, [OTHER, "vacuum", db, join(dir, "vacuum.db")])],
    ["exclusive", () => run(process.execPath, [OTHER, "exclusive", db])],
  ];
  if (hasSqliteShell) actions.push(["sqlite3", () => run("sqlite3", [db, "SELECT max(height) FROM blocks"])]);
  for (let i = 0; !done || i < actions.length; i++) {
    const [name, action] = actions[i % actions.length]!;
    const r = await action();
    t.runs.set(name, (t.runs.get(name) ?? 0) + 1);
    if (r.code !== 0) t.failures.push(`${name} exited ${r.code}: ${r.out}`);
    if (name === "exclusive" && r.out.trim() === "got") t.exclusiveGot++;
    if (!existsSync(`${db}-wal`) || !existsSync(`${db}-shm`)) t.walMissing++;
  }
  return t;
}

/** What the node answered to GET /v1: the newest block height, and the requests it failed. */
interface Served {
  height: bigint;
  failed: string[];
}

/** GET /v1 once: a newer block height goes into `s`, a failed request into `s.failed`. */
async function askHead(base: string, s: Served): Promise<void> {
  try {
    const res = await fetch(base);
    const body = await res.text();
    if (res.status !== 200) {
      s.failed.push(`${res.status}: ${body}`);
      return;
    }
    const h = BigInt((JSON.parse(body) as { block_height: string }).block_height);
    if (h > s.height) s.height = h;
  } catch (e) {
    s.failed.push(String((e as Error).cause ?? e));
  }
}

/** GET /v1 until `until` resolves. */
async function servedUntil(base: string, until: Promise<void>): Promise<Served> {
  let done = false;
  void until.then(() => (done = true));
  const s: Served = { height: -1n, failed: [] };
  while (!done) {
    await askHead(base, s);
    await new Promise((r) => setTimeout(r, 20));
  }
  return s;
}

/** GET /v1 once more, then SIGKILL at once (the whole group for `--workers`): false if the node had exited already. */
async function serveOnceThenKill(node: ServeProcess, s: Served, group: boolean): Promise<boolean> {
  await askHead(node.base, s);
  if (node.proc.exitCode !== null || node.proc.signalCode !== null) return false;
  if (group) process.kill(-node.proc.pid!, "SIGKILL");
  else node.proc.kill("SIGKILL");
  return true;
}

/** Waits until no process of the group led by `pid` is left. */
async function groupGone(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(-pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The blocks on disk after the crash (the node is gone: nothing else has the file open). */
function onDisk(db: string): { newest: bigint; oldest: bigint; count: bigint; integrity: string } {
  const conn = new Database(db, { readonly: true });
  try {
    conn.defaultSafeIntegers(true);
    const r = conn.prepare("SELECT max(height) AS newest, min(height) AS oldest, count(*) AS count FROM blocks").get() as { newest: bigint; oldest: bigint; count: bigint };
    const integrity = String(conn.pragma("integrity_check", { simple: true }));
    return { ...r, integrity };
  } finally {
    conn.close();
  }
}

const started: ChildProcess[] = [];

/**
 * Starts `serve ARGS`, lets other processes at its file for TOUCH_MS while asking its head, kills
 * it with SIGKILL, and returns what it served, what is on disk and what the other processes saw.
 */
async function crashWhileTouched(db: string, args: string[], opts: { group: boolean; whileRunning?: (until: Promise<void>) => Promise<void> }) {
  const node = await startServe(["--db", db, "--quiet", ...args], 60_000, { detached: opts.group });
  started.push(node.proc);
  const exited = new Promise<void>((r) => node.proc.once("exit", () => r()));
  // (a follower's ledger is empty, and /v1 a 503 saying so, until its first block)
  for (let i = 0; (await fetch(node.base)).status !== 200; i++) {
    expect(i, "tries before the first block").toBeLessThan(500);
    await new Promise((r) => setTimeout(r, 20));
  }
  const until = new Promise<void>((r) => setTimeout(r, TOUCH_MS));
  const [touches, served] = await Promise.all([touchUntil(db, until), servedUntil(node.base, until), opts.whileRunning?.(until)]);
  const killed = await serveOnceThenKill(node, served, opts.group);
  await exited;
  if (opts.group) await groupGone(node.proc.pid!);
  return { served: served.height, requestsFailed: served.failed, killed, disk: onDisk(db), touches, stderr: node.stderr() };
}

function expectNothingLost(r: Awaited<ReturnType<typeof crashWhileTouched>>): void {
  // (soft: a failure shows every point that failed, not only the first)
  // every block served is on disk after SIGKILL, with every block below it down to the oldest kept
  expect.soft(r.disk.newest, "newest block on disk against the newest served").toBeGreaterThanOrEqual(r.served);
  expect.soft(r.disk.integrity).toBe("ok");
  expect.soft(r.disk.count, "blocks on disk, oldest to newest").toBe(r.disk.newest - r.disk.oldest + 1n);
  // the node held its lock on the file throughout: a process asking for the file exclusively was
  // refused every time, and the WAL the node writes into was never checkpointed away and deleted
  expect.soft(r.touches.exclusiveGot, "times another process got the file exclusively").toBe(0);
  expect.soft(r.touches.walMissing, "times the -wal or -shm file was gone").toBe(0);
  // the node wrote and served blocks meanwhile, and the other processes all ran and succeeded
  expect.soft(r.served, r.stderr).toBeGreaterThan(10n);
  expect.soft(r.requestsFailed, r.stderr).toEqual([]);
  expect.soft(r.killed, `the node was running until the kill: ${r.stderr}`).toBe(true);
  expect.soft(r.touches.failures).toEqual([]);
  for (const name of REQUIRED) expect.soft(r.touches.runs.get(name) ?? 0, `runs of ${name}`).toBeGreaterThan(0);
}

describe("SQLite: other processes open the file while serve writes; SIGKILL loses nothing served (issue 31 §1)", () => {
  let up: FakeUpstream | null = null;
  beforeAll(() => requireBuiltCli());
  afterAll(async () => {
    for (const p of started) {
      try {
        process.kill(-p.pid!, "SIGKILL");
      } catch {
        // not a group leader, or gone
      }
      p.kill("SIGKILL");
    }
    await up?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!hasSqliteShell && !UNDER_CI)("has the sqlite3 shell to open the file with (CI installs it: .ci/run)", () => {
    expect(hasSqliteShell, `sqlite3 -version: ${sqliteShell.error?.message ?? sqliteShell.stderr}`).toBe(true);
  });

  it("serve --devnet", async () => {
    const r = await crashWhileTouched(join(dir, "devnet.db"), ["--devnet", "--block-interval", "50"], { group: false });
    expectNothingLost(r);
  }, 60_000);

  it("serve --devnet --workers 2 (SIGKILL to the whole process group)", async () => {
    const r = await crashWhileTouched(join(dir, "workers.db"), ["--devnet", "--block-interval", "50", "--workers", "2"], { group: true });
    expectNothingLost(r);
  }, 60_000);

  it("serve --follow, the upstream growing meanwhile", async () => {
    up = await FakeUpstream.start({ blocks: 20 });
    const upstream = up;
    const grow = async (until: Promise<void>) => {
      let done = false;
      void until.then(() => (done = true));
      while (!done) {
        await upstream.extend(2);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const r = await crashWhileTouched(join(dir, "follow.db"), ["--follow", upstream.base, "--from", "genesis", "--poll", "20", "--max-rps", "5000"], {
      group: false,
      whileRunning: grow,
    });
    expectNothingLost(r);
  }, 90_000);
});
