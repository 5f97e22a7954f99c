/**
 * GET /v1/transactions over real HTTP on SQLite: pages as the reference computes them, each
 * transaction byte for byte the JSON it was imported as (here the test chain's objects, and the
 * real genesis a node printed), the latest page, the bounds and the 410 below the pruning window.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr } from "../../../../test/helpers/chain.js";
import { FIXTURES, pruneServed, serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";

const backend = sqliteBackend();

/** The texts the chain was imported from: what a page must hold, byte for byte. */
const texts = (chain: ChainBuilder, from: number, to: number) => chain.txns.slice(from, to + 1).map((t) => JSON.stringify(t));

describe(`transactions (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis();
  beforeAll(async () => {
    for (let i = 0; i < 12; i++) chain.block([{ sender: addr("a11ce"), seq: 2 * i }, { sender: addr("b0b"), nonce: 1000 + i }]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const get = (q: string) => fetch(`${node.base}/transactions${q}`);

  it("pages from start, limit of them, each transaction as it was imported", async () => {
    const res = await get("?start=3&limit=7");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("x-node-ledger-version")).toBe(String(chain.version - 1n));
    expect(await res.text()).toBe(`[${texts(chain, 3, 9).join(",")}]`);
    // a page reaching past the ledger ends with it
    const last = Number(chain.version - 1n);
    expect(await (await get(`?start=${last - 1}&limit=10`)).text()).toBe(`[${texts(chain, last - 1, last).join(",")}]`);
  });

  it("gives the latest 25 without start, and clamps a limit past 100", async () => {
    const last = Number(chain.version - 1n);
    expect(await (await get("")).text()).toBe(`[${texts(chain, last - 24, last).join(",")}]`);
    const all = JSON.parse(await (await get("?start=0&limit=65535")).text()) as unknown[];
    expect(all).toHaveLength(Math.min(100, last + 1));
  });

  it("refuses limit 0, a start past the ledger, a start that is not a u64, and BCS, in the reference's words", async () => {
    const last = chain.version - 1n;
    const zero = await get("?limit=0");
    expect(zero.status).toBe(400);
    expect(await zero.json()).toEqual({ message: "Given limit value (0) must not be zero", error_code: "invalid_input" });
    const past = await get(`?start=${last + 1n}`);
    expect(past.status).toBe(400);
    expect(await past.json()).toEqual({
      message: `Given start value (${last + 1n}) is higher than the current ledger version, it must be < ${last}`,
      error_code: "invalid_input",
    });
    const bad = await get("?start=-1");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toContain('Parsing u64 string "-1" failed');
    const bcs = await fetch(`${node.base}/transactions?start=0`, { headers: { accept: "application/x-bcs" } });
    expect(bcs.status).toBe(406);
    expect(((await bcs.json()) as { error_code: string }).error_code).toBe("bcs_not_supported");
  });

  it("answers 410 for a start below the pruning window, and the latest page from what is kept", async () => {
    const c = new ChainBuilder().genesis();
    for (let i = 0; i < 6; i++) c.block([{ sender: addr("a11ce"), seq: i }]);
    const pruned = await serveChain(backend, c);
    try {
      await pruneServed(pruned, "8");
      const oldest = BigInt((await fetch(`${pruned.base}/info`).then((r) => r.json()) as { oldest_ledger_version: string }).oldest_ledger_version);
      expect(oldest).toBeGreaterThan(0n);
      const gone = await fetch(`${pruned.base}/transactions?start=${oldest - 1n}`);
      expect(gone.status).toBe(410);
      expect(await gone.json()).toEqual({ message: `Ledger version(${oldest - 1n}) has been pruned`, error_code: "version_pruned" });
      const kept = await fetch(`${pruned.base}/transactions?start=${oldest}&limit=100`);
      expect(await kept.text()).toBe(`[${texts(c, Number(oldest), Number(c.version - 1n)).join(",")}]`);
      // without start: the latest page, which starts no lower than the oldest version kept
      expect(await (await fetch(`${pruned.base}/transactions`)).text()).toBe(`[${texts(c, Number(oldest), Number(c.version - 1n)).join(",")}]`);
    } finally {
      await stopNode(pruned, backend);
    }
  });
});

describe(`transactions of a real chain (${backend.name})`, () => {
  it("serves the transactions a node printed (the genesis, then a block of test/fixtures/transactions), byte for byte as recorded", async () => {
    const genesis = (JSON.parse(readFileSync(`${FIXTURES}genesis_transaction.json`, "utf8")) as Array<Record<string, unknown>>)[0]!;
    const block = JSON.parse(
      readFileSync(`${FIXTURES}transactions/aptos_api__tests__transactions_test__test_get_transactions_output_user_transaction_with_entry_function_payload.json`, "utf8"),
    ) as Array<Record<string, unknown>>;
    const chain = new ChainBuilder();
    chain.txns.push(genesis, ...block);
    chain.version = 4n;
    chain.height = 2n;
    const node = await serveChain(backend, chain);
    try {
      // The node's REST JSON is compact serde output: each recorded object printed compactly is its text.
      const recorded = [genesis, ...block].map((t) => JSON.stringify(t));
      for (let v = 0; v < 4; v++) expect(await (await fetch(`${node.base}/transactions/by_version/${v}`)).text()).toBe(recorded[v]);
      expect(await (await fetch(`${node.base}/transactions?start=1&limit=3`)).text()).toBe(`[${recorded.slice(1).join(",")}]`);
    } finally {
      await stopNode(node, backend);
    }
  });
});

describe(`transactions past the page's byte budget (${backend.name})`, () => {
  it("cuts a page, and a block's transactions, once their texts would pass transactionsPageBytes, never before the first", async () => {
    const chain = new ChainBuilder().genesis();
    for (let i = 0; i < 4; i++) chain.block([{ sender: addr("a11ce"), seq: i }, { sender: addr("a11ce"), seq: 100 + i }]);
    const text = (v: number) => JSON.stringify(chain.txns[v]);
    // Room for versions 1 and 2, not 3.
    const budget = Buffer.byteLength(text(1)) + Buffer.byteLength(text(2)) + 1;
    const node = await serveChain(backend, chain, { api: { transactionsPageBytes: budget } });
    try {
      expect(await (await fetch(`${node.base}/transactions?start=1&limit=100`)).text()).toBe(`[${text(1)},${text(2)}]`);
      const block = JSON.parse(await (await fetch(`${node.base}/blocks/by_height/1?with_transactions=true`)).text()) as { transactions: unknown[]; last_version: string };
      expect(block.transactions).toEqual([chain.txns[1], chain.txns[2]]);
      expect(block.last_version).toBe("4");
    } finally {
      await stopNode(node, backend);
    }
  });
});
