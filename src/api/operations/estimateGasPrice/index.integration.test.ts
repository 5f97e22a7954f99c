/**
 * GET /v1/estimate_gas_price end to end: the reference node's own test chains rebuilt through our
 * ingest, answered over HTTP, compared with its goldens; BCS; the minimum price from the ledger's
 * gas schedule. SQLite only: the estimator's store reads are pinned on every backend by the store
 * suite and the parity test.
 */
import { bcs } from "@mysten/bcs";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it, vi } from "vitest";
import { EXECUTION_CONFIG_TYPE, OnChainExecutionConfigBcs } from "../../../ledger/executionConfig.js";
import { defaultGasConfig, type GasEstimationConfig } from "../../../ledger/gas.js";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr } from "../../../../test/helpers/chain.js";
import { FIXTURES, startTestNode, type TestNode } from "../../../../test/helpers/node.js";

const golden = (name: string) =>
  JSON.parse(readFileSync(`${FIXTURES}goldens/aptos_api__tests__transactions_test__test_gas_estimation_${name}.json`, "utf8"));

/** The reference test chain's genesis: a gas schedule with min price 0. */
function referenceGenesis(extra: Record<string, unknown>[] = []): ChainBuilder {
  return new ChainBuilder().genesis([
    {
      type: "write_resource",
      address: "0x1",
      data: { type: "0x1::gas_schedule::GasScheduleV2", data: { feature_version: "12", entries: [{ key: "txn.min_price_per_gas_unit", val: "0" }] } },
    },
    ...extra,
  ]);
}

/** A write of `0x1::execution_config::ExecutionConfig` with a V4 config: NoShuffling, `Limit(limit)`. */
function executionConfigLimit(limit: bigint): Record<string, unknown> {
  const config = OnChainExecutionConfigBcs.serialize({
    V4: { transaction_shuffler_type: { NoShuffling: true }, block_gas_limit_type: { Limit: limit }, transaction_deduper_type: { NoDedup: true } },
  }).toBytes();
  return { type: "write_resource", address: "0x1", data: { type: EXECUTION_CONFIG_TYPE, data: { config: "0x" + Buffer.from(config).toString("hex") } } };
}

const transfers = (n: number, price: number) =>
  Array.from({ length: n }, (_, i) => ({ sender: addr((0x1000 + (i % 50)).toString(16)), seq: i, price }));

const backend = sqliteBackend();
describe(`estimate_gas_price (${backend.name})`, () => {
  const nodes: TestNode[] = [];
  afterAll(async () => {
    for (const n of nodes) await n.close();
    await backend.cleanup();
  });
  async function serve(chain: ChainBuilder, gas?: Partial<GasEstimationConfig>): Promise<TestNode> {
    const db = await backend.newDb();
    await chain.importInto(db);
    const node = await startTestNode(db, gas ? { api: { gas: { ...defaultGasConfig, ...gas } } } : {});
    nodes.push(node);
    return node;
  }
  const estimate = async (node: TestNode) => {
    const res = await fetch(`${node.base}/estimate_gas_price`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-node-ledger-version")).not.toBeNull();
    return res.json();
  };

  it("test_gas_estimation_empty: a fresh chain answers the golden", async () => {
    const node = await serve(referenceGenesis());
    expect(await estimate(node)).toEqual(golden("empty"));
  });

  it("test_gas_estimation_ten_blocks: 11 blocks of 500 transfers at price 100 (the first ignored)", async () => {
    const chain = referenceGenesis();
    chain.block([{ sender: addr("a550c18"), seq: 0 }]); // mint
    for (let b = 0; b < 11; b++) chain.block(transfers(500, 100));
    const node = await serve(chain);
    const first = await estimate(node);
    expect(first).toEqual(golden("ten_blocks"));
    expect(JSON.stringify(await estimate(node))).toBe(JSON.stringify(first));
  });

  it("test_gas_estimation_ten_empty_blocks and _disabled answer their goldens", async () => {
    const empty = referenceGenesis();
    for (let b = 0; b < 11; b++) empty.block([]);
    expect(await estimate(await serve(empty))).toEqual(golden("ten_empty_blocks"));
    const full = referenceGenesis();
    for (let b = 0; b < 11; b++) full.block(transfers(300, 100));
    expect(await estimate(await serve(full, { enabled: false }))).toEqual(golden("disabled"));
  });

  it("test_gas_estimation_static_override answers its golden", async () => {
    const node = await serve(referenceGenesis(), { staticOverride: { low: 100n, market: 200n, aggressive: 300n } });
    expect(await estimate(node)).toEqual(golden("static_override"));
  });

  it("follows congestion: full blocks by the on-chain block gas limit, then idle again; BCS is the regular estimate", async () => {
    // A block gas limit of 100 in the ledger's execution config: 10 transfers × 10 gas fill a block.
    const chain = referenceGenesis([executionConfigLimit(100n)]);
    // The epilogue's flags do not count (it is the block's last version, which is not read).
    for (let b = 0; b < 5; b++) chain.block(transfers(10, 300), { endInfo: { gas: false, output: false } });
    chain.block([]);
    const node = await serve(chain);
    const e = await estimate(node);
    expect(e).toEqual({ deprioritized_gas_estimate: 500, gas_estimate: 500, prioritized_gas_estimate: 1000 });
    const res = await fetch(`${node.base}/estimate_gas_price`, { headers: { accept: "application/x-bcs" } });
    expect(res.headers.get("content-type")).toBe("application/x-bcs");
    expect(bcs.u64().parse(new Uint8Array(await res.arrayBuffer()))).toBe("500");
  });

  it("costs no block or transaction reads between blocks under load (400 requests over 3 cache expiries, on a fake clock)", async () => {
    const chain = referenceGenesis();
    for (let b = 0; b < 130; b++) chain.block(transfers(b % 10 === 0 ? 260 : 3, 100 + (b % 7) * 40));
    const node = await serve(chain);
    const counts = { blocks: 0, txns: 0 };
    // Counts the two reads of the gas walk through the store's public methods.
    const { store } = node;
    const blockByVersion = store.getBlockByVersion.bind(store);
    const userTxnGas = store.getUserTxnGas.bind(store);
    store.getBlockByVersion = (version) => {
      counts.blocks += 1;
      return blockByVersion(version);
    };
    store.getUserTxnGas = (first, last) => {
      counts.txns += 1;
      return userTxnGas(first, last);
    };
    const first = await estimate(node); // cold: walks the history once
    expect(counts.blocks).toBeGreaterThan(100);
    counts.blocks = counts.txns = 0;
    // 400 requests, 20 at a time, in 4 rounds with a cache expiry (500 ms) between them: the
    // estimator's clock (performance.now) is faked and moved past each expiry.
    vi.useFakeTimers({ toFake: ["performance"] });
    try {
      for (let round = 0; round < 4; round++) {
        if (round > 0) vi.advanceTimersByTime(501);
        for (let n = 0; n < 100; n += 20) {
          const batch = await Promise.all(Array.from({ length: 20 }, () => estimate(node)));
          for (const b of batch) expect(b).toEqual(first);
        }
      }
    } finally {
      vi.useRealTimers();
    }
    expect(counts).toEqual({ blocks: 0, txns: 0 });
  });

  it("uses the ledger's minimum price, or the setting (100) when genesis wrote no gas schedule", async () => {
    const idle = new ChainBuilder().genesis();
    idle.block([]);
    expect(await estimate(await serve(idle))).toEqual({ deprioritized_gas_estimate: 100, gas_estimate: 100, prioritized_gas_estimate: 150 });
  });
});
