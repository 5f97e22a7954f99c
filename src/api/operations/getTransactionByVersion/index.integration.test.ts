/**
 * GET /v1/transactions/by_version/{v} over real HTTP on SQLite: each version byte for byte as
 * imported, the reference's 404 past the ledger, 410 below the window, 400 for a bad version, 406
 * for BCS.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr } from "../../../../test/helpers/chain.js";
import { pruneServed, serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";

const backend = sqliteBackend();
describe(`transaction by version (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis();
  beforeAll(async () => {
    for (let i = 0; i < 5; i++) chain.block([{ sender: addr("a11ce"), seq: i }]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const get = (v: string, headers: Record<string, string> = {}) => fetch(`${node.base}/transactions/by_version/${v}`, { headers });

  it("answers every version with the transaction as it was imported", async () => {
    for (let v = 0; v < Number(chain.version); v++) {
      const res = await get(String(v));
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(JSON.stringify(chain.txns[v]));
    }
  });

  it("answers a version past the ledger 404, a bad version 400 and BCS 406", async () => {
    const past = await get(String(chain.version));
    expect(past.status).toBe(404);
    expect(await past.json()).toEqual({ message: `Transaction not found by Ledger version(${chain.version})`, error_code: "transaction_not_found" });
    expect(past.headers.get("x-node-ledger-version")).toBe(String(chain.version - 1n));
    const huge = await get("18446744073709551616");
    expect(huge.status).toBe(400);
    expect(await huge.json()).toEqual({
      message:
        'failed to parse path `txn_version`: failed to parse "string(U64)": Parsing u64 string "18446744073709551616" failed, caused by error: number too large to fit in target type',
      error_code: "web_framework_error",
    });
    expect((await get("0x1")).status).toBe(400);
    const bcs = await get("1", { accept: "application/x-bcs" });
    expect(bcs.status).toBe(406);
  });

  it("answers 410 below the pruning window", async () => {
    await pruneServed(node, "6");
    const oldest = BigInt((await fetch(`${node.base}/info`).then((r) => r.json()) as { oldest_ledger_version: string }).oldest_ledger_version);
    const gone = await get(String(oldest - 1n));
    expect(gone.status).toBe(410);
    expect(await gone.json()).toEqual({ message: `Ledger version(${oldest - 1n}) has been pruned`, error_code: "version_pruned" });
    expect(await (await get(String(oldest))).text()).toBe(JSON.stringify(chain.txns[Number(oldest)]));
  });
});
