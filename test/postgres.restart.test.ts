/**
 * A server on PostgreSQL outlives its database: while the database is away every data operation
 * answers 503 with the JSON error object instead of hanging, and once it is back the server
 * answers 200 again by itself (real HTTP, real PostgreSQL stopped and started, or frozen). A hung
 * request is caught by its abort signal (HANG_MS, far above the 1 s limits set here), not by a
 * latency assertion; recovery is polled until it happens.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "./helpers/node.js";
import { DEFAULT_PG_MAJOR, findPostgresBin, PgCluster } from "./helpers/postgres.js";

/** Short limits so a frozen database is noticed quickly (the defaults are 3 s and 5 s). */
const SETTINGS = "?connect_timeout=1&statement_timeout=1000";
/** A request not answered by then hangs (the limits above answer within about 3 s). */
const HANG_MS = 20_000;

describe(`a server on PostgreSQL ${DEFAULT_PG_MAJOR} when the database goes away and comes back`, () => {
  let cluster: PgCluster;
  let node: TestNode;

  beforeAll(async () => {
    cluster = await PgCluster.start([], findPostgresBin(DEFAULT_PG_MAJOR));
    const db = (await cluster.newDb()) + SETTINGS;
    // the devnet writes genesis; its next block would come in an hour
    node = await startTestNode(db, { devnet: { blockIntervalMs: 3_600_000 } });
  });
  afterAll(async () => {
    await node?.close();
    await cluster?.destroy();
  });

  const requests = (): Array<[string, RequestInit?]> => [
    [`${node.base}/accounts/0x1/modules?limit=1`],
    [`${node.base}/accounts/0x1/transaction_summaries`],
    [`${node.base}/estimate_gas_price`],
    [
      `${node.base}/tables/0x${"7ab1e".padStart(64, "0")}/raw_item`,
      { method: "POST", headers: { "content-type": "application/json", accept: "application/x-bcs" }, body: JSON.stringify({ key: "0x01" }) },
    ],
  ];

  /** Every data operation: status, timing, body. */
  async function probe() {
    return Promise.all(
      requests().map(async ([url, init]) => {
        const res = await fetch(url, { ...init, signal: AbortSignal.timeout(HANG_MS) }).catch((e: Error) => {
          throw new Error(`${url} hung (no answer within ${HANG_MS} ms): ${e.message}`);
        });
        const text = await res.text();
        return { url, status: res.status, type: res.headers.get("content-type"), text };
      }),
    );
  }

  async function expectUnavailable() {
    for (const r of await probe()) {
      expect(r.status, `${r.url}: ${r.text}`).toBe(503);
      expect(r.type).toMatch(/^application\/json/);
      const body = JSON.parse(r.text) as { error_code: string; message: string };
      expect(body.error_code).toBe("internal_error");
      expect(body.message).toMatch(/unavailable/i);
    }
  }

  /** Polls until every operation answers a non-5xx (at most `withinMs`). */
  async function expectRecovered(withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const rs = await probe();
      if (rs.every((r) => r.status < 500)) {
        expect(rs.map((r) => r.status)).toEqual([200, 200, 200, 404]); // the item is not in the devnet table
        return;
      }
      if (Date.now() > deadline) throw new Error(`not recovered after ${withinMs} ms: ${rs.map((r) => `${r.status} ${r.text}`).join("; ")}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it("answers 503 while PostgreSQL is stopped and 200 again once it is restarted", async () => {
    await expectRecovered(0);
    await cluster.stopServer("fast");
    await expectUnavailable();
    await expectUnavailable(); // and keeps doing so (no hung pool, no crash)
    const info = await fetch(`${node.base}/info`);
    expect(info.status).toBe(200); // /v1/info still answers, without a ledger position
    expect(((await info.json()) as { ledger_version: unknown }).ledger_version).toBeNull();
    await cluster.startServer();
    await expectRecovered(10_000);
  });

  it("answers 503 while PostgreSQL hangs (no request hangs with it), and recovers when it resumes", async () => {
    await expectRecovered(0);
    const pids = cluster.serverPids();
    signal(pids, "STOP");
    try {
      await expectUnavailable();
    } finally {
      signal(pids, "CONT");
    }
    await expectRecovered(10_000);
  });
});

function signal(pids: number[], sig: "STOP" | "CONT"): void {
  execFileSync("kill", [`-${sig}`, ...pids.map(String)]);
}
