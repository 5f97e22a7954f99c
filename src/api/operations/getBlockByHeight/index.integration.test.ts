/**
 * GET /v1/blocks/by_height/{h} and /v1/blocks/by_version/{v} over real HTTP on SQLite: the block's
 * hash (its metadata's id; zeros for genesis), timestamp and versions, its transactions byte for
 * byte as imported with with_transactions=true, the reference's 404s and 410s.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr } from "../../../../test/helpers/chain.js";
import { pruneServed, serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";

const backend = sqliteBackend();
describe(`blocks (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis();
  beforeAll(async () => {
    for (let i = 0; i < 6; i++) chain.block([{ sender: addr("a11ce"), seq: 2 * i }, { sender: addr("a11ce"), seq: 2 * i + 1 }]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  /** Block h of the chain: genesis alone, then metadata, two user transactions and an epilogue. */
  const expected = (h: number, withTransactions: boolean) => {
    const [first, last] = h === 0 ? [0, 0] : [1 + 4 * (h - 1), 4 * h];
    const meta = chain.txns[first]!;
    const texts = chain.txns.slice(first, last + 1).map((t) => JSON.stringify(t));
    return (
      `{"block_height":"${h}","block_hash":"${h === 0 ? `0x${"0".repeat(64)}` : meta.id}","block_timestamp":"${h === 0 ? 0 : meta.timestamp}",` +
      `"first_version":"${first}","last_version":"${last}","transactions":${withTransactions ? `[${texts.join(",")}]` : "null"}}`
    );
  };

  it("answers each block by height and by each of its versions, with and without its transactions", async () => {
    for (let h = 0; h <= 6; h++) {
      expect(await (await fetch(`${node.base}/blocks/by_height/${h}`)).text()).toBe(expected(h, false));
      expect(await (await fetch(`${node.base}/blocks/by_height/${h}?with_transactions=true`)).text()).toBe(expected(h, true));
    }
    for (let v = 0; v < Number(chain.version); v++) {
      const h = v === 0 ? 0 : Math.ceil(v / 4);
      expect(await (await fetch(`${node.base}/blocks/by_version/${v}?with_transactions=${v % 2 === 0}`)).text()).toBe(expected(h, v % 2 === 0));
    }
  });

  it("answers a height or version past the ledger 404, bad input 400 and BCS 406, in the reference's words", async () => {
    const high = await fetch(`${node.base}/blocks/by_height/7`);
    expect(high.status).toBe(404);
    expect(await high.json()).toEqual({ message: "Block not found by Block height(7)", error_code: "block_not_found" });
    const late = await fetch(`${node.base}/blocks/by_version/${chain.version}`);
    expect(late.status).toBe(404);
    expect(await late.json()).toEqual({ message: `Ledger version not found by Ledger version(${chain.version})`, error_code: "version_not_found" });
    expect((await fetch(`${node.base}/blocks/by_height/x`)).status).toBe(400);
    expect((await fetch(`${node.base}/blocks/by_height/1?with_transactions=maybe`)).status).toBe(400);
    expect((await fetch(`${node.base}/blocks/by_height/1`, { headers: { accept: "application/x-bcs" } })).status).toBe(406);
  });

  it("answers a block below the pruning window 410 block_pruned, and a version there 410 version_pruned", async () => {
    await pruneServed(node, "10");
    const info = (await fetch(`${node.base}/info`).then((r) => r.json())) as { oldest_ledger_version: string };
    const oldestHeight = BigInt((await fetch(`${node.base}/transactions?limit=1`)).headers.get("x-node-oldest-block-height")!);
    const gone = await fetch(`${node.base}/blocks/by_height/${oldestHeight - 1n}`);
    expect(gone.status).toBe(410);
    expect(await gone.json()).toEqual({ message: `Block(${oldestHeight - 1n}) has been pruned`, error_code: "block_pruned" });
    const v = BigInt(info.oldest_ledger_version) - 1n;
    const old = await fetch(`${node.base}/blocks/by_version/${v}`);
    expect(old.status).toBe(410);
    expect(await old.json()).toEqual({ message: `Ledger version(${v}) has been pruned`, error_code: "version_pruned" });
    expect(await (await fetch(`${node.base}/blocks/by_height/${oldestHeight}?with_transactions=true`)).text()).toBe(expected(Number(oldestHeight), true));
  });
});
