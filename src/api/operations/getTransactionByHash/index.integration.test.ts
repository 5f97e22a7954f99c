/**
 * GET /v1/transactions/by_hash/{h} and wait_by_hash over real HTTP on SQLite: found by hash with
 * or without 0x, 404 for a hash no committed transaction has, 400 for one that is not 32 bytes of
 * hex; the wait answers a transaction committed while it waits (by another process writing the
 * file), and 404 after the reference's timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr } from "../../../../test/helpers/chain.js";
import { serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";

const backend = sqliteBackend();
describe(`transaction by hash (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis();
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) chain.block([{ sender: addr("a11ce"), seq: i }]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const hashOf = (v: number) => chain.txns[v]!.hash as string;

  it("finds each transaction by its hash, with or without 0x and in either case", async () => {
    for (const v of [0, 2, 5, Number(chain.version - 1n)]) {
      for (const spelling of [hashOf(v), hashOf(v).slice(2), `0x${hashOf(v).slice(2).toUpperCase()}`]) {
        const res = await fetch(`${node.base}/transactions/by_hash/${spelling}`);
        expect(res.status).toBe(200);
        expect(await res.text()).toBe(JSON.stringify(chain.txns[v]));
      }
    }
  });

  it("answers a hash no transaction has 404 and a malformed one 400, in the reference's words", async () => {
    const unknown = `0x${"ab".repeat(32)}`;
    const res = await fetch(`${node.base}/transactions/by_hash/${unknown}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: `Transaction not found by Transaction hash(${unknown})`, error_code: "transaction_not_found" });
    for (const bad of ["0x12", "zz".repeat(32), `0x${"a".repeat(63)}`]) {
      const r = await fetch(`${node.base}/transactions/by_hash/${bad}`);
      expect(r.status).toBe(400);
      const body = (await r.json()) as { message: string; error_code: string };
      expect(body.error_code).toBe("web_framework_error");
      expect(body.message).toContain('failed to parse path `txn_hash`: failed to parse "string(HashValue)"');
    }
  });

  it("waits for a transaction committed while it waits, and answers 404 after the timeout for one never committed", async () => {
    const next = new ChainBuilder().genesis();
    for (let i = 0; i < 3; i++) next.block([{ sender: addr("a11ce"), seq: i }]);
    next.block([{ sender: addr("a11ce"), seq: 3 }]);
    const hash = next.txns[Number(next.version) - 2]!.hash as string;
    const started = Date.now();
    const waiting = fetch(`${node.base}/transactions/wait_by_hash/${hash}`);
    await new Promise((r) => setTimeout(r, 150));
    await next.importInto(node.db);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(JSON.stringify(next.txns[Number(next.version) - 2]));
    expect(Date.now() - started).toBeLessThan(1000);

    const unknown = `0x${"cd".repeat(32)}`;
    const before = Date.now();
    const none = await fetch(`${node.base}/transactions/wait_by_hash/${unknown}`);
    expect(none.status).toBe(404);
    expect(Date.now() - before).toBeGreaterThanOrEqual(950);
    // a committed one is answered at once
    const now = await fetch(`${node.base}/transactions/wait_by_hash/${hashOf(2)}`);
    expect(await now.text()).toBe(JSON.stringify(chain.txns[2]));
  });
});
