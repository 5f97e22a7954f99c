/**
 * /-/healthy reflects the store's health, not only whether the ledger position can be read: a
 * database with a damaged page answers 500 for the reads that touch it, and from then on the
 * health check says 503 naming the corruption (it said 200 while the data reads failed).
 */
import Database from "better-sqlite3";
import { openSync, writeSync, closeSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "./helpers/backends.js";
import { ChainBuilder, addr, u64le, writeTable } from "./helpers/chain.js";
import { startTestNode, type TestNode } from "./helpers/node.js";

const H = addr("7ab1e");

describe("/-/healthy after a corrupt page (sqlite)", () => {
  const backend = sqliteBackend();
  let node: TestNode;
  /** What the node logged at error level: the first argument of each call (pino's merge object). */
  const errors: Array<{ reqId?: string; err?: { message?: string; stack?: string } }> = [];
  beforeAll(async () => {
    const chain = new ChainBuilder().genesis();
    for (let b = 0; b < 20; b++) {
      chain.block([{ sender: addr("b0b"), seq: b, changes: Array.from({ length: 50 }, (_, i) => writeTable(H, u64le(b * 50 + i), "0x" + "ab".repeat(64))) }]);
    }
    const db = await backend.newDb();
    await chain.importInto(db);
    // Damage the root page of table_items (its page-type byte and header), leaving the ledger,
    // blocks and transactions readable.
    const c = new Database(db);
    c.pragma("wal_checkpoint(TRUNCATE)");
    const root = (c.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'table_items'").get() as { rootpage: number }).rootpage;
    const pageSize = c.pragma("page_size", { simple: true }) as number;
    c.close();
    const fd = openSync(db, "r+");
    writeSync(fd, Buffer.alloc(64, 0xff), 0, 64, (root - 1) * pageSize);
    closeSync(fd);
    node = await startTestNode(db, {
      prune: false,
      logger: {
        level: "error",
        hooks: {
          logMethod(args: unknown[]) {
            errors.push(args[0] as (typeof errors)[number]);
          },
        },
      },
    });
  });
  afterAll(async () => {
    await node?.close();
    await backend.cleanup();
  });

  it("answers 500 for a read of the damaged table, and 503 health_check_failed naming it from then on", async () => {
    expect((await fetch(`${node.base}/-/healthy`)).status).toBe(200);
    const res = await fetch(`${node.base}/tables/${H}/raw_item`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/x-bcs" },
      body: JSON.stringify({ key: u64le(3) }),
    });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error_code: string }).error_code).toBe("internal_error");
    // logged at error with the request's id, the failure's own message and its stack in the logged error
    const logged = errors.find((e) => e.reqId === res.headers.get("x-request-id"));
    expect(logged?.err?.message).toMatch(/Failed when trying to retrieve table item from the DB with key: 0x.*(malformed|corrupt)/i);
    expect(logged?.err?.stack).toMatch(/\n\s+at /);
    // The ledger position still reads: the node serves what it can, but says it is not healthy.
    expect((await fetch(`${node.base}/info`)).status).toBe(200);
    const health = await fetch(`${node.base}/-/healthy`);
    expect(health.status).toBe(503);
    const body = (await health.json()) as { error_code: string; message: string };
    expect(body.error_code).toBe("health_check_failed");
    expect(body.message).toMatch(/^the database is corrupt: /);
    // A successful read since does not clear it: the damaged pages fail again whenever read.
    expect((await fetch(`${node.base}/accounts/0x1/transaction_summaries`)).status).toBe(200);
    expect((await fetch(`${node.base}/-/healthy`)).status).toBe(503);
  });
});
