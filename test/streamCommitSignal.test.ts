/**
 * A node without a writer of its own (serve --no-prune) streams the blocks another process
 * commits, told of each by the database (SQLite: the file system's notice of the WAL write;
 * PostgreSQL: the commit's NOTIFY), and polls only each second meanwhile instead of every 10 ms.
 * The other process is a real `ledger-node import`, on a real SQLite file and a real PostgreSQL,
 * which is also restarted under a listening node.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendFactories } from "./helpers/backends.js";
import { ChainBuilder, addr } from "./helpers/chain.js";
import { requireBuiltCli } from "./helpers/cli.js";
import { importMore, metricOf, quietLooks } from "./helpers/commitSignal.js";
import { startTestNode, stopNode, type TestNode } from "./helpers/node.js";
import { DEFAULT_PG_MAJOR, findPostgresBin, PgCluster } from "./helpers/postgres.js";
import { openStream, range, versionsOf } from "./helpers/stream.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-signal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const makeBackend of backendFactories) {
  const backend = makeBackend();

  describe(`a node without a writer of its own, told of another process's commits (${backend.name})`, () => {
    let node: TestNode;
    const chain = new ChainBuilder().genesis().block([{ sender: addr("a11ce"), seq: 0 }]);
    const metric = (name: string) => metricOf(node, name);

    beforeAll(async () => {
      requireBuiltCli();
      const db = await backend.newDb();
      await chain.importInto(db);
      node = await startTestNode(db, { prune: false, api: { streamHeartbeatMs: 60_000 } });
    });
    afterAll(() => stopNode(node, backend));

    it("streams an import's blocks from another process as they commit, and polls only each second meanwhile", async () => {
      const s = await openStream(`${node.base}/transactions/stream`);
      try {
        // Open, nothing committed: the feed's first look, the database's signal set up, then a poll each second.
        const polls = await quietLooks(node);
        expect(polls).toBeGreaterThanOrEqual(1);
        expect(polls).toBeLessThanOrEqual(4);

        const signals = await metric("ledger_node_stream_commit_signals_total");
        const { first, last } = await importMore(chain, node.db, dir);
        await s.until((c) => c.transactions.length >= last - first + 1, `versions ${first} to ${last}`);
        expect(versionsOf(s)).toEqual(range(first, last));
        expect(await metric("ledger_node_stream_commit_signals_total")).toBeGreaterThan(signals);
      } finally {
        s.close();
      }
    });

    if (backend.kind === "postgres") {
      it("keeps one listening session however often a client opens and closes its streams", async () => {
        const c = new pg.Client({ connectionString: node.db });
        await c.connect();
        const listening = async () =>
          (await c.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN ledger_node_commits'")).rows.map((r) => r.pid);
        try {
          const first = await openStream(`${node.base}/transactions/stream`);
          await expect.poll(listening, { timeout: 10_000 }).toHaveLength(1);
          const before = await listening();
          first.close();
          await first.closed;
          for (let i = 0; i < 30; i++) {
            const s = await openStream(`${node.base}/transactions/stream`);
            await sleep(10);
            s.close();
            await s.closed;
          }
          expect(await listening()).toEqual(before);
        } finally {
          await c.end();
        }
      });
    }
  });
}

describe(`a node listening on PostgreSQL ${DEFAULT_PG_MAJOR} for commits when the database restarts`, () => {
  let cluster: PgCluster;
  let node: TestNode;
  const chain = new ChainBuilder().genesis().block([{ sender: addr("a11ce"), seq: 0 }]);

  beforeAll(async () => {
    requireBuiltCli();
    cluster = await PgCluster.start([], findPostgresBin(DEFAULT_PG_MAJOR));
    const db = `${await cluster.newDb()}?connect_timeout=1&statement_timeout=1000`;
    await chain.importInto(db);
    node = await startTestNode(db, { prune: false, api: { streamHeartbeatMs: 60_000 } });
  });
  afterAll(async () => {
    await node?.close();
    await cluster?.destroy();
  });

  it("listens again once the database is back, and its streams go on with no gap", async () => {
    const s = await openStream(`${node.base}/transactions/stream`);
    try {
      await expect.poll(() => metricOf(node, "ledger_node_stream_commit_signals_total"), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      const before = await importMore(chain, node.db, dir);
      await s.until((c) => c.transactions.length === before.last - before.first + 1, "the blocks before the restart");

      await cluster.stopServer("fast");
      await sleep(500);
      const listened = await metricOf(node, "ledger_node_stream_commit_signals_total");
      await cluster.startServer();
      // Listening again is told as a signal of its own: the feed looks once for what it may have missed.
      await expect.poll(() => metricOf(node, "ledger_node_stream_commit_signals_total"), { timeout: 20_000, interval: 200 }).toBeGreaterThan(listened);
      const looks = await metricOf(node, "ledger_node_stream_feed_looks_total");
      await sleep(2_000);
      expect((await metricOf(node, "ledger_node_stream_feed_looks_total")) - looks).toBeLessThanOrEqual(4);

      const after = await importMore(chain, node.db, dir);
      await s.until((c) => c.transactions.length === after.last - before.first + 1, "the blocks after the restart");
      expect(versionsOf(s)).toEqual(range(before.first, after.last));
    } finally {
      s.close();
    }
  });
});
