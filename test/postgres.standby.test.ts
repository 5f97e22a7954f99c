/**
 * API processes on a PostgreSQL hot standby (issue 33), on a real pair: a primary and a
 * streaming-replication standby made with initdb, pg_ctl and postgres only
 * (`PgCluster.startStandbyPair`). The standby cancels reads at once when a replay conflicts with
 * them (`max_standby_streaming_delay=0`, no feedback): the worst case an operator can configure.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Importer } from "../src/ingest/importer.js";
import { DevnetChain, defaultDevnetChainOptions } from "../src/ingest/devnetChain.js";
import { parsePruneWindow, pruneNow } from "../src/ledger/pruning.js";
import { followUpstream, importIntoLedger, pruneLedger } from "../src/server.js";
import { openStore } from "../src/storage/open.js";
import type { Storage } from "../src/storage/storage.js";
import { startTestNode, type TestNode } from "./helpers/node.js";
import { devnetLedger, readsAt } from "./helpers/parityReads.js";
import { PgCluster, type StandbyPair } from "./helpers/postgres.js";
import { parsePrometheus } from "./helpers/prometheus.js";

const STANDBY_SETTINGS = ["max_standby_streaming_delay=0", "hot_standby_feedback=off"];

let pair: StandbyPair;
const dir = mkdtempSync(join(tmpdir(), "ledger-node-standby-"));

beforeAll(async () => {
  pair = await PgCluster.startStandbyPair(STANDBY_SETTINGS);
});
afterAll(async () => {
  await pair?.destroy();
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
  let db: { primary: string; standby: string };
  let writer: TestNode;
  let reader: TestNode;

  beforeAll(async () => {
    db = await pair.newDb();
    // The devnet writes the primary a block every 50 ms; the reader serves the standby.
    writer = await startTestNode(db.primary, { devnet: { blockIntervalMs: 50 }, pruneWindow: "100000" });
    await pair.caughtUp();
    reader = await startTestNode(db.standby, { prune: false });
  });
  afterAll(async () => {
    await reader?.close();
    await writer?.close();
  });

  async function ledgerVersion(node: TestNode): Promise<bigint> {
    const r = await fetch(`${node.base}/`);
    expect(r.status).toBe(200);
    return BigInt(r.headers.get("x-ledger-version") ?? (await r.json()).ledger_version);
  }

  it("answers every read as the primary's node does at the same ledger version", async () => {
    // Wait for some devnet blocks on the standby.
    while ((await ledgerVersion(reader)) < 40n) await new Promise((r) => setTimeout(r, 50));
    const v = await ledgerVersion(reader);
    const paths = [
      `/accounts/0x1/modules?ledger_version=${v}&limit=3`,
      `/accounts/0x1/transaction_summaries?ledger_version=${v}&limit=5`,
      `/accounts/0x1/modules?ledger_version=${v - 10n}&limit=50`,
    ];
    for (const p of paths) {
      const [a, b] = await Promise.all([fetch(`${writer.base}${p}`), fetch(`${reader.base}${p}`)]);
      expect(b.status, p).toBe(a.status);
      expect(await b.text(), p).toBe(await a.text());
    }
  });

  it("shows its replay lag in /v1/info and as a gauge; the primary's /v1/info has no such field", async () => {
    const onStandby = (await (await fetch(`${reader.base}/info`)).json()) as Record<string, unknown>;
    expect(typeof onStandby.standby_replay_lag_seconds).toBe("number");
    expect(onStandby.standby_replay_lag_seconds as number).toBeGreaterThanOrEqual(0);
    const onPrimary = (await (await fetch(`${writer.base}/info`)).json()) as Record<string, unknown>;
    expect(Object.keys(onPrimary)).not.toContain("standby_replay_lag_seconds");
    const metrics = parsePrometheus(await (await fetch(`${reader.url}/metrics`)).text());
    expect(metrics.samples.filter((s) => s.name === "ledger_node_standby_replay_lag_seconds")).toHaveLength(1);
    const primaryMetrics = parsePrometheus(await (await fetch(`${writer.url}/metrics`)).text());
    expect(primaryMetrics.samples.filter((s) => s.name === "ledger_node_standby_replay_lag_seconds")).toHaveLength(0);
  });
});
