/**
 * A replica that never goes down (issue 31, §3): `serve --follow` (the built CLI, a fake upstream,
 * real SQLite files and PostgreSQL) keeps serving through transient faults — a gateway's HTML page
 * in place of `GET /v1`, pages that 404 below the head the upstream announced, PostgreSQL stopped
 * for seconds — with `/-/healthy` answering 503 with the reason meanwhile and the recovery logged,
 * and ends with the same ledger as an import of the upstream's transactions; on SQLite also
 * another process holding the write lock past the busy timeout. A permanent stop
 * (another chain id) stops the follower only: the API keeps serving what it holds and says why in
 * `/-/healthy`, `/metrics` and the log, while `ledger-node follow` exits 1 with the message. Plain
 * `follow` keeps running through a PostgreSQL outage. Waits poll for the state they expect; no
 * assertion is on a duration.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendFactories, type Backend } from "./helpers/backends.js";
import { CLI, requireBuiltCli, runCli } from "./helpers/cli.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";
import { dumpTables, type TableDump } from "./helpers/ledgerTables.js";
import { DEFAULT_PG_MAJOR, findPostgresBin, PgCluster } from "./helpers/postgres.js";
import { type ServeProcess, startServe } from "./helpers/serveProcess.js";
import { holdWriteLock } from "./helpers/sqliteLock.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-down-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The serve process ended: what every wait on it then fails with at once. */
class ServeExited extends Error {}

function alive(r: ServeProcess): ServeProcess {
  if (r.proc.exitCode !== null) throw new ServeExited(`serve exited (${r.proc.exitCode}): ${r.stderr()}`);
  return r;
}

/** Polls `probe` until it gives a value (not null), for at most `withinMs`. */
async function waitFor<T>(what: string, probe: () => Promise<T | null>, withinMs = 60_000): Promise<T> {
  const until = Date.now() + withinMs;
  for (;;) {
    const v = await probe().catch((e: unknown) => {
      if (e instanceof ServeExited) throw e;
      return null;
    });
    if (v !== null) return v;
    if (Date.now() > until) throw new Error(`${what}: not seen within ${withinMs} ms`);
    await sleep(50);
  }
}

/**
 * The follower's recovery line in serve's output, waited for: it and `/-/healthy`'s 200 reach this
 * process on different streams, in either order.
 */
async function recoveryLogged(r: ServeProcess): Promise<void> {
  await waitFor("the follower's recovery line", async () => (alive(r).stdout().includes("follower: writing works again after") ? true : null), 10_000);
}

async function info(base: string): Promise<{ ledger_version: string | null; follow_lag_versions?: string }> {
  const res = await fetch(`${base}/info`);
  expect(res.status).toBe(200);
  return (await res.json()) as { ledger_version: string | null };
}

const caughtUp = (base: string, up: FakeUpstream) =>
  waitFor(`ledger version ${up.ledgerVersion}`, async () => ((await info(base)).ledger_version === String(up.ledgerVersion) ? true : null), 120_000);

async function healthy(base: string): Promise<{ status: number; message: string }> {
  const res = await fetch(`${base}/-/healthy`);
  return { status: res.status, message: ((await res.json()) as { message: string }).message };
}

/** The follower_state gauge's value for `state`, from `/metrics`. */
async function followerState(base: string, state: string): Promise<number | null> {
  const text = await (await fetch(`${base.replace(/\/v1$/, "")}/metrics`)).text();
  const m = new RegExp(`^ledger_node_follower_state\\{state="${state}"\\} (\\d+)$`, "m").exec(text);
  return m ? Number(m[1]) : null;
}

const followArgs = (up: FakeUpstream, db: string) => ["--follow", up.base, "--from", "genesis", "--db", db, "--no-prune", "--max-rps", "5000", "--poll", "50"];

/** The upstream's transactions through `ledger-node import` into `db`. */
function importInto(up: FakeUpstream, db: string): void {
  const file = join(dir, `import-${files++}.ndjson`);
  writeFileSync(file, up.txns.join("\n") + "\n");
  const r = spawnSync(process.execPath, [CLI, "import", "--db", db, file], { encoding: "utf8", timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  rmSync(file);
}

/** Table by table; `follow_base` is the follower's own record (a sync from genesis: version 0). */
function expectSameLedger(synced: TableDump, imported: TableDump): void {
  expect((synced.follow_base ?? []).map((r) => r.replace('"0"', "0"))).toEqual(['["first_synced_version",0]']);
  delete synced.follow_base;
  delete imported.follow_base;
  expect(Object.keys(synced)).toEqual(Object.keys(imported));
  for (const t of Object.keys(synced)) expect({ table: t, rows: synced[t] }).toEqual({ table: t, rows: imported[t] });
}

for (const makeBackend of backendFactories) {
  const backend: Backend = makeBackend();
  describe(`serve --follow through faults (${backend.name})`, () => {
    let up: FakeUpstream;
    let db: string;
    let replica: ServeProcess | undefined;
    beforeAll(async () => {
      requireBuiltCli();
      up = await FakeUpstream.start({ blocks: 20 });
      db = await backend.newDb();
      replica = await startServe(followArgs(up, db));
      await caughtUp(replica.base, up);
    }, 120_000);
    afterAll(async () => {
      await replica?.stop();
      await up?.close();
      await backend.cleanup();
    });

    /** The node serves, says the follower fails (naming `reason`), then recovers and catches up. */
    async function throughFault(reason: string, heal: () => void): Promise<void> {
      const r = replica!;
      await up.extend(5);
      const sick = await waitFor("/-/healthy 503", async () => {
        const h = await healthy(alive(r).base);
        return h.status === 503 ? h : null;
      });
      expect(sick.message).toContain("the follower is failing");
      expect(sick.message).toContain(reason);
      expect(await followerState(r.base, "retrying")).toBe(1);
      // Still serving what it holds.
      expect((await info(r.base)).ledger_version).not.toBeNull();
      expect((await fetch(`${r.base}/accounts/0x1/modules?limit=1`)).status).toBe(200);
      heal();
      await caughtUp(r.base, up);
      await waitFor("/-/healthy 200", async () => ((await healthy(r.base)).status === 200 ? true : null));
      expect(await followerState(r.base, "following")).toBe(1);
      await recoveryLogged(r);
      expect(r.proc.exitCode).toBeNull();
    }

    it("a gateway's HTML page in place of GET /v1: keeps serving, /-/healthy 503 naming it, recovers", async () => {
      up.faults.headHtml = true;
      await throughFault("answered a body that is not JSON", () => up.heal());
    }, 120_000);

    it("pages that 404 below the head the upstream announced (a lagging backend): keeps serving, 503 naming it, recovers", async () => {
      up.faults.pages404 = true;
      // Named by the page that 404s, or by the history check of the ledger's newest version, whichever asks first.
      await throughFault("answered 404", () => up.heal());
    }, 120_000);

    it("the ledger it kept through the faults equals an import of the upstream's transactions", async () => {
      await replica!.stop();
      replica = undefined;
      const ref = await backend.newDb();
      importInto(up, ref);
      expectSameLedger(await dumpTables(db), await dumpTables(ref));
    }, 120_000);

    it("a permanent stop (the upstream now serves another chain): the API stays up, /-/healthy, /metrics and the log say why; `follow` exits 1", async () => {
      up.faults.chainIdOverride = 9;
      try {
        replica = await startServe(followArgs(up, db));
        const r = replica;
        const stopped = await waitFor("/-/healthy 503", async () => {
          const h = await healthy(alive(r).base);
          return h.status === 503 ? h : null;
        });
        expect(stopped.message).toBe("the follower stopped and is not tried again: the upstream serves chain 9, but this ledger holds chain 4: nothing written");
        expect(await followerState(r.base, "stopped")).toBe(1);
        expect(r.stdout()).toContain("follower: stopped: the upstream serves chain 9");
        // What it holds is served, and it stays so.
        await sleep(500);
        expect((await info(r.base)).ledger_version).toBe(String(up.ledgerVersion));
        expect((await fetch(`${r.base}/accounts/0x1/modules?limit=1`)).status).toBe(200);
        expect((await healthy(r.base)).status).toBe(503);
        expect(r.proc.exitCode).toBeNull();
        const f = await runCli(["follow", "--upstream", up.base, "--db", db, "--quiet", "--poll", "50"]);
        expect(f.code).toBe(1);
        expect(f.stderr).toContain("ledger-node: the upstream serves chain 9, but this ledger holds chain 4");
      } finally {
        up.heal();
      }
    }, 120_000);
  });
}

describe("serve --follow while another process holds SQLite's write lock past the busy timeout", () => {
  let up: FakeUpstream;
  let replica: ServeProcess | undefined;
  afterAll(async () => {
    await replica?.stop();
    await up?.close();
  });

  it("the follower's commit fails (database locked) and is retried: 503 naming it meanwhile, then it commits; the ledger equals an import", async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: 20 });
    const db = join(dir, `locked-${files++}.db`);
    replica = await startServe(followArgs(up, db));
    const r = replica;
    await caughtUp(r.base, up);
    const lock = await holdWriteLock(db);
    try {
      await up.extend(5);
      // The writer's busy timeout (5 s) passes: the commit fails, and is tried again.
      const sick = await waitFor("/-/healthy 503", async () => {
        const h = await healthy(alive(r).base);
        return h.status === 503 ? h : null;
      });
      expect(sick.message).toContain("the follower is failing");
      expect(sick.message).toContain("locked");
      expect((await info(r.base)).ledger_version).not.toBe(String(up.ledgerVersion));
    } finally {
      expect(await lock.release()).toBe(0);
    }
    await caughtUp(r.base, up);
    await waitFor("/-/healthy 200", async () => ((await healthy(r.base)).status === 200 ? true : null));
    await recoveryLogged(r);
    await r.stop();
    replica = undefined;
    const ref = join(dir, `locked-ref-${files++}.db`);
    importInto(up, ref);
    expectSameLedger(await dumpTables(db), await dumpTables(ref));
  }, 120_000);
});

describe(`serve --follow and follow while PostgreSQL ${DEFAULT_PG_MAJOR} stops for a few seconds`, () => {
  let cluster: PgCluster;
  let up: FakeUpstream;
  let replica: ServeProcess | undefined;
  let plain: ReturnType<typeof spawn> | undefined;
  let plainErr = "";
  const dbs: string[] = [];
  beforeAll(async () => {
    requireBuiltCli();
    cluster = await PgCluster.start([], findPostgresBin(DEFAULT_PG_MAJOR));
    up = await FakeUpstream.start({ blocks: 20 });
    // Short limits, so a stopped server is noticed at once (as test/postgres.restart.test.ts).
    for (let i = 0; i < 2; i++) dbs.push(`${await cluster.newDb()}?connect_timeout=1&statement_timeout=1000`);
  }, 120_000);
  afterAll(async () => {
    await replica?.stop();
    plain?.kill("SIGKILL");
    await up?.close();
    await cluster?.destroy();
  });

  async function plainVersion(): Promise<string | null> {
    const c = new pg.Client({ connectionString: dbs[1] });
    await c.connect();
    try {
      const r = await c.query("SELECT ledger_version::text AS v FROM ledger");
      return (r.rows[0] as { v: string | null } | undefined)?.v ?? null;
    } finally {
      await c.end();
    }
  }

  it("both keep running, the node keeps answering, and both catch up once it is back; the ledgers equal an import", async () => {
    replica = await startServe(followArgs(up, dbs[0]!));
    const r = replica;
    plain = spawn(process.execPath, [CLI, "follow", "--upstream", up.base, "--db", dbs[1]!, "--from", "genesis", "--max-rps", "5000", "--poll", "50"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    plain.stderr!.on("data", (d) => (plainErr += d));
    const plainExit = new Promise<number | null>((resolve) => plain!.once("exit", (code) => resolve(code)));
    await caughtUp(r.base, up);
    await waitFor("plain follow caught up", async () => ((await plainVersion()) === String(up.ledgerVersion) ? true : null));

    await cluster.stopServer("fast");
    await up.extend(5);
    // The follower's commits and the node's reads fail meanwhile: the node answers, 503 where it must.
    await waitFor("/-/healthy 503", async () => ((await healthy(alive(r).base)).status === 503 ? true : null));
    await waitFor("follower retrying", async () => ((await followerState(r.base, "retrying")) === 1 ? true : null));
    await sleep(3000);
    expect((await fetch(`${r.base}/info`)).status).toBe(200);
    expect(r.proc.exitCode).toBeNull();
    expect(plain.exitCode).toBeNull();
    await cluster.startServer();

    await caughtUp(r.base, up);
    await waitFor("plain follow caught up again", async () => ((await plainVersion()) === String(up.ledgerVersion) ? true : null));
    await waitFor("follower following", async () => ((await followerState(r.base, "following")) === 1 ? true : null));
    expect(r.stdout()).toContain("follower: writing works again after");
    expect(plainErr).toContain("follower: writing failed");
    plain.kill("SIGTERM");
    expect(await plainExit).toBe(0);
    plain = undefined;
    await replica.stop();
    replica = undefined;

    const ref = await cluster.newDb();
    importInto(up, ref);
    const imported = await dumpTables(ref);
    for (const db of dbs) expectSameLedger(await dumpTables(db), structuredClone(imported));
  }, 180_000);
});
