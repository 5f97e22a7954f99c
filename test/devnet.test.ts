/**
 * The embedded default: `serve --devnet` writes genesis and live blocks; a restart continues the
 * same chain; the spec, explorer and info answer.
 */
import { afterAll, describe, expect, it } from "vitest";
import { devnetAccount } from "../src/ingest/devnet/chain.js";
import { backendFactories } from "./helpers/backends.js";
import { startTestNode, type TestNode } from "./helpers/node.js";

for (const factory of backendFactories) {
  const backend = factory();
  describe(`devnet (${backend.name})`, () => {
    const nodes: TestNode[] = [];
    afterAll(async () => {
      for (const n of nodes) await n.close().catch(() => undefined);
      await backend.cleanup();
    });

    it("serves live data, and a restart continues the same chain", async () => {
      const db = await backend.newDb();
      const a = await startTestNode(db, { devnet: { blockIntervalMs: 3_600_000 } });
      nodes.push(a);
      for (let i = 0; i < 30; i++) await a.devnet!.produceBlock();
      const info1 = (await (await fetch(`${a.base}/info`)).json()) as Record<string, string>;
      expect(info1.block_height).toBe("30");
      const modules = (await (await fetch(`${a.base}/accounts/0x1/modules`)).json()) as Array<{ abi: { name: string } }>;
      expect(modules.map((m) => m.abi.name)).toEqual(["table", "option", "string", "account", "aptos_account"]);
      const sender = devnetAccount(2);
      const before = (await (await fetch(`${a.base}/accounts/${sender}/transaction_summaries`)).json()) as Array<{
        version: string;
        replay_protector: { type: string; sequence_number?: string };
      }>;
      expect(before.length).toBeGreaterThan(0);
      // Blocks 25-29 were full (300 transactions at raised prices): the prioritized estimate moved.
      const gas = (await (await fetch(`${a.base}/estimate_gas_price`)).json()) as Record<string, number>;
      expect(gas.prioritized_gas_estimate).toBeGreaterThan(150);
      await a.close();

      const b = await startTestNode(db, { devnet: { blockIntervalMs: 3_600_000 } });
      nodes.push(b);
      for (let i = 0; i < 3; i++) await b.devnet!.produceBlock();
      const info2 = (await (await fetch(`${b.base}/info`)).json()) as Record<string, string>;
      expect(info2.block_height).toBe("33");
      expect(BigInt(info2.ledger_version!)).toBeGreaterThan(BigInt(info1.ledger_version!));
      // Sequence numbers continue where they stopped: no repeats, no gaps.
      const after = (await (await fetch(`${b.base}/accounts/${sender}/transaction_summaries`)).json()) as typeof before;
      const seqs = after.filter((s) => s.replay_protector.type === "sequence_number").map((s) => Number(s.replay_protector.sequence_number));
      expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
    });
  });
}

describe("spec and info", () => {
  const backend = backendFactories[0]!();
  let node: TestNode;
  afterAll(async () => {
    await node?.close();
    await backend.cleanup();
  });

  it("serves the explorer page, its own assets, and the spec generated from the routes", async () => {
    node = await startTestNode(await backend.newDb(), { devnet: { blockIntervalMs: 3_600_000 } });
    const page = await fetch(`${node.base}/spec`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//); // no CDN: works offline
    for (const asset of html.match(/spec\/assets\/[a-z-.]+/g)!) {
      const res = await fetch(`${node.base}/${asset}`);
      expect(res.status, asset).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    }
    const json = await fetch(`${node.base}/spec.json`);
    expect(json.headers.get("content-type")).toMatch(/^application\/json/);
    const spec = (await json.json()) as { servers: Array<{ url: string }>; paths: Record<string, Record<string, { operationId: string }>>; components: { schemas: Record<string, unknown> } };
    expect(spec.servers).toEqual([{ url: "/v1" }]);
    const ops = Object.values(spec.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
    for (const op of ["spec", "info", "get_account_transaction_summaries", "get_account_modules", "get_raw_table_item", "estimate_gas_price"]) {
      expect(ops).toContain(op);
    }
    expect(Object.keys(spec.components.schemas)).toEqual(expect.arrayContaining(["AptosError", "MoveModuleBytecode", "TransactionSummary", "GasEstimation", "RawTableItemRequest"]));
    const yaml = await fetch(`${node.base}/spec.yaml`);
    expect(yaml.headers.get("content-type")).toMatch(/^application\/x-yaml/);
    const text = await yaml.text();
    expect(text).toContain("get_account_modules");
    expect(text).not.toContain("charset=utf-8");
  });

  it("describes the node in /v1/info", async () => {
    const info = (await (await fetch(`${node.base}/info`)).json()) as Record<string, unknown>;
    expect(info).toMatchObject({ chain_id: 4, node_type: "ledger-node", storage: "sqlite", prune_window: "2000", ledger_version: "0", block_height: "0" });
    expect(typeof info.version).toBe("string");
  });
});
