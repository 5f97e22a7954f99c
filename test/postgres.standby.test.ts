/**
 * API processes on a PostgreSQL hot standby (issue 33), on a real pair: a primary and a
 * streaming-replication standby made with initdb, pg_ctl and postgres only
 * (`PgCluster.startStandbyPair`). The standby cancels reads at once when a replay conflicts with
 * them (`max_standby_streaming_delay=0`, no feedback): the worst case an operator can configure.
 * Every test runs on each PostgreSQL major of `PG_MAJORS`, a pair of that major each.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Importer } from "../src/ingest/importer.js";
import { DevnetChain, defaultDevnetChainOptions } from "../src/ingest/devnet/chain.js";
import { pruneNow } from "../src/ingest/pruneToWindow.js";
import { parsePruneWindow } from "../src/ledger/pruning.js";
import { followUpstream, importIntoLedger, pruneLedger } from "../src/server.js";
import { openStore } from "../src/storage/open.js";
import { NotifySignal } from "../src/storage/postgres/commitSignal.js";
import { primaryProblem } from "../src/storage/postgres/primaryCheck.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { ChainBuilder, addr } from "./helpers/chain.js";
import { requireBuiltCli, runCli } from "./helpers/cli.js";
import { importMore, metricOf, quietLooks } from "./helpers/commitSignal.js";
import { startTestNode, type TestNode } from "./helpers/node.js";
import { startServe } from "./helpers/serveProcess.js";
import { devnetLedger, readsAt } from "./helpers/parityReads.js";
import { findPostgresBin, PG_MAJORS, PgCluster, type StandbyPair } from "./helpers/postgres.js";
import { parsePrometheus } from "./helpers/prometheus.js";
import { openStream, range, versionsOf } from "./helpers/stream.js";

const STANDBY_SETTINGS = ["max_standby_streaming_delay=0", "hot_standby_feedback=off"];

const dir = mkdtempSync(join(tmpdir(), "ledger-node-standby-"));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Whether the table `schema_version` exists in the database at `url`. */
async function hasSchema(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ t: string | null }>("SELECT to_regclass('schema_version')::text AS t")).rows[0]!.t !== null;
  } finally {
    await c.end();
  }
}

/** A ledger of `L`'s transactions imported into the primary database `url`. */
async function importLedger(url: string, L: ReturnType<typeof devnetLedger>): Promise<void> {
  const store = await openStore(url);
  try {
    const imp = await Importer.open(store, 4);
    for (const t of L.txns) await imp.push(t);
    await imp.finish();
  } finally {
    await store.close();
  }
}

/** For a describe block: a devnet node writing the primary of `pair()` (a block every 50 ms) and a node serving its standby. */
function writerAndReader(pair: () => StandbyPair): { db: { primary: string; standby: string }; writer: TestNode; reader: TestNode } {
  const nodes = {} as { db: { primary: string; standby: string }; writer: TestNode; reader: TestNode };
  beforeAll(async () => {
    nodes.db = await pair().newDb();
    nodes.writer = await startTestNode(nodes.db.primary, { devnet: { blockIntervalMs: 50 }, pruneWindow: "100000" });
    await pair().caughtUp();
    nodes.reader = await startTestNode(nodes.db.standby, { prune: false });
  });
  afterAll(async () => {
    await nodes.reader?.close();
    await nodes.writer?.close();
  });
  return nodes;
}

for (const major of PG_MAJORS) describe(`a hot standby on PostgreSQL ${major}`, () => {
  let pair: StandbyPair;
  beforeAll(async () => {
    pair = await PgCluster.startStandbyPair(STANDBY_SETTINGS, [], findPostgresBin(major));
  });
  afterAll(async () => {
    await pair?.destroy();
  });

  describe("a writer against a hot standby", () => {
    it("is refused naming the command and the primary, and nothing is written anywhere", async () => {
      const db = await pair.newDb();
      const file = join(dir, "chain.ndjson");
      const chain = DevnetChain.fresh(defaultDevnetChainOptions);
      writeFileSync(file, chain.genesis().map((t) => JSON.stringify(t)).join("\n"));
      const refusals: Array<[string, () => Promise<unknown>]> = [
        ["serve --devnet", () => startTestNode(db.standby, { devnet: { blockIntervalMs: 3_600_000 } })],
        ["the pruner (serve without --no-prune)", () => startTestNode(db.standby)],
        [
          "serve --follow",
          () =>
            startTestNode(db.standby, {
              follow: { upstream: "http://127.0.0.1:9/v1", apiKey: null, from: { kind: "latest" }, concurrency: 1, maxRequestsPerSecond: 1, pollMs: 1000, upstreamTimeoutMs: 1000 },
            }),
        ],
        ["import", () => importIntoLedger(db.standby, [file], { chainId: 4 })],
        ["prune", () => pruneLedger(db.standby, parsePruneWindow("100"))],
        [
          "follow",
          () =>
            followUpstream({
              upstream: "http://127.0.0.1:9/v1", db: db.standby, apiKey: null, from: { kind: "latest" }, concurrency: 1,
              maxRequestsPerSecond: 1, pollMs: 1000, exitAtHead: true, log: { info: () => undefined, warn: () => undefined },
            }),
        ],
      ];
      for (const [writer, start] of refusals) {
        await expect(start(), writer).rejects.toThrow(`is a hot standby (in recovery, read-only): ${writer} writes, so run it against the primary`);
      }
      await pair.caughtUp();
      expect(await hasSchema(db.primary)).toBe(false);
      expect(await hasSchema(db.standby)).toBe(false);
    });

    it("exits 1 from the command line naming the command and the primary (import, prune, serve --devnet)", async () => {
      requireBuiltCli();
      const db = await pair.newDb();
      const file = join(dir, "genesis.ndjson");
      writeFileSync(file, DevnetChain.fresh(defaultDevnetChainOptions).genesis().map((t) => JSON.stringify(t)).join("\n"));
      const runs: Array<[string, string[]]> = [
        ["import", ["import", "--db", db.standby, file]],
        ["prune", ["prune", "--db", db.standby, "--window", "100"]],
        ["serve --devnet", ["serve", "--db", db.standby, "--devnet", "--port", "0"]],
      ];
      for (const [writer, args] of runs) {
        const r = await runCli(args);
        expect(r.code, writer).toBe(1);
        expect(r.stderr, writer).toContain(`ledger-node: ${db.standby} is a hot standby (in recovery, read-only): ${writer} writes, so run it against the primary`);
      }
      await pair.caughtUp();
      expect(await hasSchema(db.primary)).toBe(false);
    });

    it("a reader of a standby whose primary never ran a writer is told to start one there first", async () => {
      const db = await pair.newDb();
      await expect(startTestNode(db.standby, { prune: false })).rejects.toThrow(
        /is a hot standby \(read-only\) whose schema is not created yet, older than this program reads \([0-9]+\): start a writer .* against the primary first/,
      );
    });
  });

  describe("reads on the standby equal the primary's at the same ledger version", () => {
    const L = devnetLedger();
    let db: { primary: string; standby: string };
    let primary: Storage;
    let standby: Storage;

    beforeAll(async () => {
      db = await pair.newDb();
      await importLedger(db.primary, L);
      await pair.caughtUp();
      primary = await openStore(db.primary);
      standby = await openStore(db.standby, { readonly: true });
    });
    afterAll(async () => {
      await primary?.close();
      await standby?.close();
    });

    it("has the parity suite's reads after the import and after every prune step on the primary", async () => {
      expect(standby.standby).not.toBeNull();
      expect(primary.standby).toBeNull();
      const last = (await primary.getLedgerInfo(true))!.ledgerVersion;
      for (const window of [null, "6000", "4000", "1500", "120s"]) {
        if (window !== null) await pruneNow(primary, parsePruneWindow(window));
        await pair.caughtUp();
        const now = (await primary.getLedgerInfo(true))!;
        expect(await standby.getLedgerInfo(true)).toEqual(now);
        const span = last - now.oldestVersion;
        const versions = new Set([now.oldestVersion, last]);
        for (let i = 1n; i < 5n; i++) versions.add(now.oldestVersion + (span * i) / 5n);
        for (const v of versions) expect(await readsAt(standby, v, L), `reads at ${v} after prune to ${window}`).toEqual(await readsAt(primary, v, L));
      }
    });
  });

  describe("nodes on the standby while the primary is written", () => {
    const nodes = writerAndReader(() => pair);

    async function ledgerVersion(node: TestNode): Promise<bigint> {
      const r = await fetch(`${node.base}/`);
      expect(r.status).toBe(200);
      return BigInt(r.headers.get("x-node-ledger-version")!);
    }

    it("streams what the standby has replayed, in order, as the primary's node answers each version", async () => {
      const replay = await openStream(`${nodes.reader.base}/transactions/stream?start_version=0`, { accept: "application/x-ndjson" });
      const live = await openStream(`${nodes.reader.base}/transactions/stream`);
      const opened = BigInt(String(live.headers["x-node-ledger-version"]));
      for (const s of [replay, live]) await s.until((c) => c.transactions.length > 0 && BigInt(c.transactions.at(-1)!.id!) >= opened + 30n, "thirty versions past the opening");
      replay.close();
      live.close();
      expect(versionsOf(replay)).toEqual(range(0, versionsOf(replay).length - 1));
      expect(versionsOf(live)).toEqual(range(Number(opened) + 1, Number(opened) + versionsOf(live).length));
      // never ahead of what the standby serves
      expect(BigInt(versionsOf(replay).at(-1)!)).toBeLessThanOrEqual(await ledgerVersion(nodes.reader));
      for (const e of [...replay.transactions.filter((_, i) => i % 17 === 0), live.transactions[0]!, live.transactions.at(-1)!]) {
        expect(e.data, `version ${e.id}`).toBe(await (await fetch(`${nodes.writer.base}/transactions/by_version/${e.id}`)).text());
      }
    });

    it("answers every read as the primary's node does at the same ledger version", async () => {
      // Wait for some devnet blocks on the standby.
      while ((await ledgerVersion(nodes.reader)) < 40n) await new Promise((r) => setTimeout(r, 50));
      const v = await ledgerVersion(nodes.reader);
      const paths = [
        `/accounts/0x1/modules?ledger_version=${v}&limit=3`,
        `/accounts/0x1/transaction_summaries?ledger_version=${v}&limit=5`,
        `/accounts/0x1/modules?ledger_version=${v - 10n}&limit=50`,
      ];
      for (const p of paths) {
        const [a, b] = await Promise.all([fetch(`${nodes.writer.base}${p}`), fetch(`${nodes.reader.base}${p}`)]);
        expect(b.status, p).toBe(a.status);
        expect(await b.text(), p).toBe(await a.text());
      }
    });

    it("shows its replay lag in /v1/info and as a gauge; the primary's /v1/info has no such field", async () => {
      const onStandby = (await (await fetch(`${nodes.reader.base}/info`)).json()) as Record<string, unknown>;
      expect(typeof onStandby.standby_replay_lag_seconds).toBe("number");
      expect(onStandby.standby_replay_lag_seconds as number).toBeGreaterThanOrEqual(0);
      const onPrimary = (await (await fetch(`${nodes.writer.base}/info`)).json()) as Record<string, unknown>;
      expect(Object.keys(onPrimary)).not.toContain("standby_replay_lag_seconds");
      const metrics = parsePrometheus(await (await fetch(`${nodes.reader.url}/metrics`)).text());
      expect(metrics.samples.filter((s) => s.name === "ledger_node_standby_replay_lag_seconds")).toHaveLength(1);
      const primaryMetrics = parsePrometheus(await (await fetch(`${nodes.writer.url}/metrics`)).text());
      expect(primaryMetrics.samples.filter((s) => s.name === "ledger_node_standby_replay_lag_seconds")).toHaveLength(0);
    });
  });

  describe("a node on the standby that hears its primary's commits (serve --primary)", () => {
    let db: { primary: string; standby: string };
    let reader: TestNode;
    const chain = new ChainBuilder().genesis().block([{ sender: addr("a11ce"), seq: 0 }]);
    beforeAll(async () => {
      requireBuiltCli();
      db = await pair.newDb();
      await chain.importInto(db.primary);
      await pair.caughtUp();
      reader = await startTestNode(db.standby, { prune: false, primary: db.primary, api: { streamHeartbeatMs: 60_000 } });
    });
    afterAll(async () => {
      await reader?.close();
    });

    it("streams an import into the primary by another process as the standby replays it, and polls only each second meanwhile", async () => {
      const s = await openStream(`${reader.base}/transactions/stream`);
      try {
        // Open, nothing committed: the first look, the primary's session set up, then a poll each second (not every 10 ms).
        const polls = await quietLooks(reader);
        expect(polls).toBeGreaterThanOrEqual(1);
        expect(polls).toBeLessThanOrEqual(4);

        const signals = await metricOf(reader, "ledger_node_stream_commit_signals_total");
        const { first, last } = await importMore(chain, db.primary, dir);
        await s.until((c) => c.transactions.length >= last - first + 1, `versions ${first} to ${last}`);
        expect(versionsOf(s)).toEqual(range(first, last));
        expect(await metricOf(reader, "ledger_node_stream_commit_signals_total")).toBeGreaterThan(signals);
        for (const e of [s.transactions[0]!, s.transactions.at(-1)!]) {
          expect(JSON.parse(e.data).hash, `version ${e.id}`).toBe(chain.txns[Number(e.id)]!.hash);
        }
      } finally {
        s.close();
      }
    });

    it("given a primary it cannot reach, says why in its log, once, and streams the standby's commits by polling it", async () => {
      const serve = await startServe(["--db", db.standby, "--no-prune", "--primary", "postgres://postgres:secret@127.0.0.1:1/nowhere"]);
      try {
        const s = await openStream(`${serve.base}/transactions/stream`);
        try {
          await expect.poll(() => serve.stdout(), { timeout: 10_000 }).toContain("not told of commits");
          const first = Number(chain.version);
          chain.block([{ sender: addr("b0b"), seq: Number(chain.height) }]);
          await chain.importInto(db.primary);
          const last = Number(chain.version) - 1;
          await s.until((c) => c.transactions.length >= last - first + 1, `versions ${first} to ${last}`);
          expect(versionsOf(s)).toEqual(range(first, last));
        } finally {
          s.close();
        }
        // The session is tried again after 1 s, then 2 s: by now three times.
        await sleep(2_500);
        const warnings = serve.stdout().split("\n").filter((l) => l.includes("not told of commits"));
        // Once for the outage, however many times the session was tried; the password is not shown.
        expect(warnings).toHaveLength(1);
        expect(JSON.parse(warnings[0]!).msg).toMatch(/^transaction streams: not told of commits \(the primary postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/nowhere: .*ECONNREFUSED.*\); looking every 10 ms until told again$/);
      } finally {
        await serve.stop();
      }
    });

    it("is refused at start where --primary is not this standby's primary: a standby, a database without a ledger, another ledger", async () => {
      const [empty, otherChainId, otherLedger] = [await pair.newDb(), await pair.newDb(), await pair.newDb()];
      await new ChainBuilder().genesis().block([{ sender: addr("0dd"), seq: 0 }]).importInto(otherChainId.primary, 5);
      await importLedger(otherLedger.primary, devnetLedger());
      await pair.caughtUp();
      const head = (await fetch(`${reader.base}`)).headers.get("x-node-ledger-version")!;
      const cases: Array<[string, RegExp]> = [
        [db.standby, /: it is a hot standby itself, not a primary$/m],
        [empty.primary, /: it holds no ledger$/m],
        [otherChainId.primary, /: it holds chain 5, this standby chain 4$/m],
        [otherLedger.primary, new RegExp(`: its transaction at version ${head} is 0x[0-9a-f]{64}, this standby's ${chain.txns[Number(head)]!.hash}$`, "m")],
      ];
      for (const [primary, why] of cases) {
        const r = await runCli(["serve", "--no-prune", "--port", "0", "--db", db.standby, "--primary", primary]);
        expect(r.code, primary).toBe(1);
        expect(r.stderr, primary).toMatch(/is not the primary of the hot standby postgres:\/\/\S+: /);
        expect(r.stderr, primary).toMatch(why);
      }
    });

    it("checks each listening session it opens: one on another ledger's primary is refused, said why once, and tells no commit", async () => {
      const other = await pair.newDb();
      await importLedger(other.primary, devnetLedger());
      await pair.caughtUp();
      const otherStandby = new pg.Pool({ connectionString: other.standby });
      const signal = new NotifySignal({ connectionString: db.primary }, "the primary P", (session) => primaryProblem(session, otherStandby));
      const told: Array<bigint | null> = [];
      const lost: string[] = [];
      const w = signal.watch((v) => told.push(v), (why) => lost.push(why));
      try {
        await expect.poll(() => lost.length, { timeout: 10_000 }).toBe(1);
        expect(lost[0]).toMatch(/^the primary P: its (transaction at version \d+ is 0x[0-9a-f]{64}|ledger ends at version \d+, before)/);
        await importMore(chain, db.primary, dir);
        // Tried again after 1 s: refused again, and not said again.
        await sleep(1_500);
        expect(w.live).toBe(false);
        expect(told).toEqual([]);
        expect(lost).toHaveLength(1);
      } finally {
        signal.stopAll();
        await otherStandby.end();
      }
    });

    it("on a primary, says once that --primary is not used, and streams what is committed there", async () => {
      const serve = await startServe(["--db", db.primary, "--no-prune", "--primary", db.primary]);
      try {
        const s = await openStream(`${serve.base}/transactions/stream`);
        try {
          const { first, last } = await importMore(chain, db.primary, dir);
          await s.until((c) => c.transactions.length >= last - first + 1, `versions ${first} to ${last}`);
          expect(versionsOf(s)).toEqual(range(first, last));
        } finally {
          s.close();
        }
        const said = serve.stdout().split("\n").filter((l) => l.includes("--primary is not used"));
        expect(said).toHaveLength(1);
        expect(JSON.parse(said[0]!).msg).toBe("--primary is not used: the ledger database is a primary, whose own commits the streams hear");
      } finally {
        await serve.stop();
      }
    });

    it("is refused from the command line, naming why, where the ledger or the primary is not PostgreSQL or the primary's URL is bad", async () => {
      const cases: Array<[string[], string]> = [
        [["--db", join(dir, "ledger.db"), "--primary", db.primary], "the ledger (--db) is not PostgreSQL"],
        [["--db", db.standby, "--primary", "./ledger.db"], '"./ledger.db" is not a postgres:// URL'],
        [["--db", db.standby, "--primary", `${db.primary}?pool_size=abc`], 'invalid pool_size="abc" in the PostgreSQL URL'],
      ];
      for (const [args, why] of cases) {
        const r = await runCli(["serve", "--no-prune", "--port", "0", ...args]);
        expect(r.code, args.join(" ")).toBe(1);
        expect(r.stderr, args.join(" ")).toContain(`--primary needs a postgres:// --db (a hot standby) and the postgres:// URL of its primary: ${why}`);
      }
    });
  });

  describe("a standby whose replay is paused while the primary is written", () => {
    const nodes = writerAndReader(() => pair);

    async function onStandby(sql: string): Promise<void> {
      const c = new pg.Client({ connectionString: nodes.db.standby });
      await c.connect();
      try {
        await c.query(sql);
      } finally {
        await c.end();
      }
    }

    /** The reader's readiness for blocks at most 2 s old, once it passes (a loaded machine starts the writer slowly), or the last status. */
    async function readyWithin(ms: number): Promise<number> {
      let status = 0;
      for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
        status = (await fetch(`${nodes.reader.base}/-/healthy?duration_secs=2`)).status;
        if (status === 200) break;
      }
      return status;
    }

    it("shows the lag in /v1/info and the gauge, and fails readiness while the primary's node passes", async () => {
      expect(await readyWithin(30_000)).toBe(200);
      await onStandby("SELECT pg_wal_replay_pause()");
      try {
        await new Promise((r) => setTimeout(r, 2_500));
        const info = (await (await fetch(`${nodes.reader.base}/info`)).json()) as { standby_replay_lag_seconds: number };
        expect(info.standby_replay_lag_seconds).toBeGreaterThan(2);
        const metrics = parsePrometheus(await (await fetch(`${nodes.reader.url}/metrics`)).text());
        expect(metrics.value("ledger_node_standby_replay_lag_seconds")).toBeGreaterThan(2);
        expect((await fetch(`${nodes.reader.base}/-/healthy?duration_secs=2`)).status).toBe(503);
        expect((await fetch(`${nodes.writer.base}/-/healthy?duration_secs=2`)).status).toBe(200);
      } finally {
        await onStandby("SELECT pg_wal_replay_resume()");
      }
      await pair.caughtUp();
      expect(await readyWithin(30_000)).toBe(200);
    });
  });

  describe("a standby that replays the primary's locks and prunes under its readers", () => {
    const L = devnetLedger();
    let db: { primary: string; standby: string };
    let onPrimary: TestNode;
    let onStandby: TestNode;
    let last: bigint;
    /** Each path's answer on the primary before anything was pruned. */
    const expected = new Map<string, string>();

    const hex = (b: Uint8Array): string => `0x${Buffer.from(b).toString("hex")}`;
    /** Pages whose reads touch every table a prune deletes from, at versions across the ledger. */
    function paths(): string[] {
      const out: string[] = [];
      for (let i = 0n; i <= 8n; i++) {
        const v = (last * i) / 8n;
        out.push(`/accounts/0x1/modules?ledger_version=${v}&limit=4`);
        for (const sender of L.senders.slice(0, 3)) out.push(`/accounts/${hex(sender)}/transaction_summaries?ledger_version=${v}&limit=5`);
      }
      return out;
    }

    /** Requests `list` from `node` round-robin with `concurrency` in flight until `until` says stop; each answer's path, status and body. */
    async function load(node: TestNode, list: string[], concurrency: number, until: () => boolean): Promise<Array<[string, number, string]>> {
      const answers: Array<[string, number, string]> = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (!until()) {
            const p = list[next++ % list.length]!;
            const r = await fetch(`${node.base}${p}`);
            answers.push([p, r.status, await r.text()]);
          }
        }),
      );
      return answers;
    }

    /** The standby's recovery-conflict counts for `db`'s database. */
    async function conflicts(): Promise<{ lock: number; snapshot: number }> {
      const c = new pg.Client({ connectionString: db.standby });
      await c.connect();
      try {
        const r = await c.query<{ lock: string; snapshot: string }>(
          "SELECT confl_lock AS lock, confl_snapshot AS snapshot FROM pg_stat_database_conflicts WHERE datname = current_database()",
        );
        return { lock: Number(r.rows[0]!.lock), snapshot: Number(r.rows[0]!.snapshot) };
      } finally {
        await c.end();
      }
    }

    /**
     * The lock conflicts counted once more than `than`, or the last count after 20 s: a cancelled
     * backend adds its count to the view when it next flushes its statistics, which a busy server
     * may put off for seconds after the cancel.
     */
    async function lockConflictsAbove(than: number): Promise<number> {
      let lock = (await conflicts()).lock;
      for (const until = Date.now() + 20_000; lock <= than && Date.now() < until; lock = (await conflicts()).lock) {
        await new Promise((r) => setTimeout(r, 200));
      }
      return lock;
    }

    beforeAll(async () => {
      db = await pair.newDb();
      // Transactions in partitions of 2048 versions (five), so that the prunes below drop some; the
      // processes after this one, without the setting, keep the database's span.
      await (await openStore(`${db.primary}?partition_versions=2048`)).close();
      await importLedger(db.primary, L);
      await pair.caughtUp();
      // No page caches: every request reads the database.
      const api = { pageCacheBytes: 0, moduleCacheBytes: 0 };
      onPrimary = await startTestNode(db.primary, { prune: false, api });
      onStandby = await startTestNode(db.standby, { prune: false, api: { ...api } });
      last = BigInt(((await (await fetch(`${onPrimary.base}/info`)).json()) as { ledger_version: string }).ledger_version);
      for (const p of paths()) {
        const r = await fetch(`${onPrimary.base}${p}`);
        expect(r.status, p).toBe(200);
        expected.set(p, await r.text());
        expect(await (await fetch(`${onStandby.base}${p}`)).text(), p).toBe(expected.get(p));
      }
    });
    afterAll(async () => {
      await onStandby?.close();
      await onPrimary?.close();
    });

    it("refuses a reader given another partition_versions than the span its primary partitioned by, naming both; the same or none serves", async () => {
      await expect(openStore(`${db.standby}?partition_versions=4096`, { readonly: true })).rejects.toThrow(
        "partition_versions=4096 differs from the span this database's transactions are partitioned by (2048 versions a partition)",
      );
      const primary = await openStore(db.primary);
      const expected = await primary.getLedgerInfo(true);
      await primary.close();
      for (const url of [`${db.standby}?partition_versions=2048`, db.standby]) {
        const reader = await openStore(url, { readonly: true });
        expect(await reader.getLedgerInfo(true)).toEqual(expected);
        await reader.close();
      }
    });

    /** 4 s of bursts of locks on the primary while 8 clients read the standby: the locks taken, and the answers. */
    async function readsUnderLocks(): Promise<{ locks: number; answers: Array<[string, number, string]> }> {
      const locker = new pg.Client({ connectionString: db.primary });
      await locker.connect();
      let locks = 0;
      const deadline = Date.now() + 4_000;
      const locking = (async () => {
        try {
          while (Date.now() < deadline) {
            // Bursts of locks as a prune step takes them, each shorter than the retries' pauses
            // (`RECOVERY_CONFLICT_ATTEMPTS`), with a quiet gap after it longer than any read: a read
            // cancelled in a burst is retried into the gap. Without gaps, a read slower than the
            // locks' spacing (a loaded machine) is cancelled every time, and no bounded retry answers it.
            for (const burstEnd = Date.now() + 150; Date.now() < burstEnd; ) {
              // Replayed on the standby as an exclusive lock: its readers of these tables are cancelled at once.
              // The transactions' table itself (ONLY), as a prune's drop of one of its partitions locks it;
              // locking every partition too (which nothing in the node does) is replayed as a lock each.
              await locker.query("BEGIN; LOCK TABLE ledger, modules, ONLY transactions IN ACCESS EXCLUSIVE MODE; COMMIT");
              locks++;
              await new Promise((r) => setTimeout(r, 5));
            }
            await new Promise((r) => setTimeout(r, 350));
          }
        } finally {
          await locker.end();
        }
      })();
      const answers = await load(onStandby, paths(), 8, () => Date.now() >= deadline);
      await locking;
      return { locks, answers };
    }

    it("retries the reads a replayed lock cancels: every answer exact, none an error", async () => {
      const before = await conflicts();
      let locks = 0;
      const answers: Array<[string, number, string]> = [];
      // A round in which no read met a replayed lock (on a loaded machine they can all fall in the
      // gaps) tests nothing: up to three rounds, until the standby has cancelled one.
      for (let round = 0; round < 3; round++) {
        const r = await readsUnderLocks();
        locks += r.locks;
        answers.push(...r.answers);
        if ((await conflicts()).lock > before.lock) break;
      }
      expect(locks).toBeGreaterThan(10);
      expect((await lockConflictsAbove(before.lock)) - before.lock, "reads the standby cancelled").toBeGreaterThan(0);
      expect(answers.length).toBeGreaterThan(50);
      expect(answers.filter(([, status]) => status !== 200)).toEqual([]);
      expect(answers.filter(([p, , body]) => body !== expected.get(p)).map(([p]) => p)).toEqual([]);
    });

    it("answers exactly or 410 while the primary prunes (dropping partitions) and vacuums, never an error", async () => {
      const partitions = async (url: string) => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          return (await c.query("SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'transactions'::regclass")).rows[0]!.n as number;
        } finally {
          await c.end();
        }
      };
      const partitionsBefore = await partitions(db.standby);
      const vacuum = new pg.Client({ connectionString: db.primary });
      await vacuum.connect();
      let pruning = true;
      const pruned = (async () => {
        try {
          for (const window of ["6000", "5000", "4000", "3000", "2000", "1000", "500"]) {
            await pruneLedger(db.primary, parsePruneWindow(window));
            await vacuum.query("VACUUM");
          }
        } finally {
          pruning = false;
          await vacuum.end();
        }
      })();
      const answers = await load(onStandby, paths(), 6, () => !pruning);
      await pruned;
      await pair.caughtUp();
      const now = (await (await fetch(`${onStandby.base}/info`)).json()) as { oldest_ledger_version: string };
      expect(BigInt(now.oldest_ledger_version)).toBeGreaterThan(0n);
      expect(answers.length).toBeGreaterThan(20);
      expect(answers.filter(([, status]) => status !== 200 && status !== 410)).toEqual([]);
      expect(answers.filter(([p, status, body]) => status === 200 && body !== expected.get(p)).map(([p]) => p)).toEqual([]);
      expect(answers.filter(([, status]) => status === 410).length).toBeGreaterThan(0);
      // The standby replayed the partitions' drops.
      expect(await partitions(db.standby)).toBeLessThan(partitionsBefore);
    });

    it("answers 503 while the standby is stopped and serves again once it is back, without a restart", async () => {
      const p = `/accounts/0x1/modules?limit=2`;
      expect((await fetch(`${onStandby.base}${p}`)).status).toBe(200);
      await pair.standby.stopServer("fast");
      const down = await fetch(`${onStandby.base}${p}`);
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({ error_code: "internal_error", message: expect.stringContaining("PostgreSQL is unavailable") });
      await pair.standby.startServer();
      const deadline = Date.now() + 30_000;
      let status = 0;
      while (Date.now() < deadline && status !== 200) {
        status = (await fetch(`${onStandby.base}${p}`)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(200);
      expect(await (await fetch(`${onStandby.base}${p}`)).text()).toBe(await (await fetch(`${onPrimary.base}${p}`)).text());
    });
  });
});
