/**
 * Which blocks are full (docs/decisions.md §14), on real SQLite stores filled through the importer: the
 * execution config comes from the ledger's `0x1::execution_config::ExecutionConfig` resource, read
 * once per epoch; epilogue flags never count; use cases as aptos-core's `parse_use_case`.
 */
import { afterAll, describe, expect, it } from "vitest";
import { IngestError } from "../src/ingest/aptosJson.js";
import { Importer } from "../src/ingest/importer.js";
import { GasEstimator, defaultGasConfig, type GasEstimate, type GasEstimationConfig } from "../src/ledger/gas.js";
import {
  EXECUTION_CONFIG_TYPE,
  OnChainExecutionConfigBcs,
  type OnChainExecutionConfigInput,
} from "../src/ledger/executionConfig.js";
import { openStore } from "../src/storage/open.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { sqliteBackend } from "./helpers/backends.js";
import { ChainBuilder, addr, type UserTxn } from "./helpers/chain.js";

type Json = Record<string, unknown>;
type V4 = Extract<OnChainExecutionConfigInput, { V4: unknown }>["V4"];

const backend = sqliteBackend();
const stores: Storage[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
  await backend.cleanup();
});

const est = (low: number, market: number, aggressive: number): GasEstimate => ({
  deprioritized_gas_estimate: low,
  gas_estimate: market,
  prioritized_gas_estimate: aggressive,
});
const NOT_FULL = est(0, 0, 150);

/** A write of the execution config resource, as the REST JSON shows it. */
function writeExecutionConfig(config: OnChainExecutionConfigInput): Json {
  const hex = "0x" + Buffer.from(OnChainExecutionConfigBcs.serialize(config).toBytes()).toString("hex");
  return { type: "write_resource", address: "0x1", data: { type: EXECUTION_CONFIG_TYPE, data: { config: hex } } };
}

const v4 = (shuffler: V4["transaction_shuffler_type"], limit: V4["block_gas_limit_type"]): OnChainExecutionConfigInput => ({
  V4: { transaction_shuffler_type: shuffler, block_gas_limit_type: limit, transaction_deduper_type: { TxnHashAndAuthenticatorV1: true } },
});
const useCaseAware = { UseCaseAware: { sender_spread_factor: 32n, platform_use_case_spread_factor: 0n, user_use_case_spread_factor: 4n } };
/** The reference's default_for_genesis(): UseCaseAware, ComplexLimitV1 with an effective limit. */
const v7Complex = (effective: bigint): OnChainExecutionConfigInput => ({
  V7: {
    transaction_shuffler_type: useCaseAware,
    block_gas_limit_type: {
      ComplexLimitV1: {
        effective_block_gas_limit: effective,
        execution_gas_effective_multiplier: 1n,
        io_gas_effective_multiplier: 1n,
        conflict_penalty_window: 9,
        use_granular_resource_group_conflicts: false,
        use_module_publishing_block_conflict: true,
        block_output_limit: 4194304n,
        include_user_txn_size_in_block_output: true,
        add_block_limit_outcome_onchain: true,
      },
    },
    enable_per_block_gas_limit: false,
    transaction_deduper_type: { TxnHashAndAuthenticatorV1: true },
    gas_price_to_burn: 90n,
    persisted_auxiliary_info_version: 1,
  },
});

/** Genesis with a gas schedule (min price 0, as the reference's test chains) and, optionally, an execution config. */
function genesis(config?: OnChainExecutionConfigInput): ChainBuilder {
  const changes: Json[] = [
    {
      type: "write_resource",
      address: "0x1",
      data: { type: "0x1::gas_schedule::GasScheduleV2", data: { feature_version: "12", entries: [{ key: "txn.min_price_per_gas_unit", val: "0" }] } },
    },
  ];
  if (config) changes.push(writeExecutionConfig(config));
  return new ChainBuilder().genesis(changes);
}

const users = (n: number, u: Partial<UserTxn> = {}): UserTxn[] =>
  Array.from({ length: n }, (_, i) => ({ sender: addr((0x1000 + i).toString(16)), seq: 0, ...u }));

async function storeOf(chain: ChainBuilder): Promise<Storage> {
  const db = await backend.newDb();
  await chain.importInto(db);
  const store = await openStore(db);
  stores.push(store);
  return store;
}

async function estimate(store: Storage, gas = new GasEstimator({ ...defaultGasConfig, cacheExpirationMs: 0 })): Promise<GasEstimate> {
  const info = await store.getLedgerInfo(true);
  if (!info) throw new Error("empty ledger");
  return gas.estimate(info, store);
}

/** One block under test, then an empty newest block (which the walk skips). */
async function oneBlock(chain: ChainBuilder, txns: UserTxn[], cfg: Partial<GasEstimationConfig> = {}, endInfo?: { gas: boolean; output: boolean }) {
  chain.block(txns, endInfo ? { endInfo } : {});
  chain.block([]);
  const store = await storeOf(chain);
  return estimate(store, new GasEstimator({ ...defaultGasConfig, ...cfg }));
}

describe("full blocks on an imported ledger", () => {
  it("full by count: 250 user txns (next_bucket(100) = 150), 249 not", async () => {
    expect(await oneBlock(genesis(), users(250, { price: 100 }))).toEqual(est(150, 150, 300));
    expect(await oneBlock(genesis(), users(249, { price: 100 }))).toEqual(NOT_FULL);
  });

  it("full by the on-chain block gas limit: Σ gas_used of the user txns >= the limit, for Limit and ComplexLimitV1", async () => {
    const txns = [400, 150, 900].map((price, i) => ({ sender: addr((0x2000 + i).toString(16)), price, gasUsed: 400 }));
    // 3 × 400 = 1200; the block's minimum price 150 → next_bucket = 300.
    expect(await oneBlock(genesis(v4({ NoShuffling: true }, { Limit: 1200n })), txns)).toEqual(est(300, 300, 500));
    expect(await oneBlock(genesis(v4({ NoShuffling: true }, { Limit: 1201n })), txns)).toEqual(NOT_FULL);
    expect(await oneBlock(genesis(v7Complex(1200n)), txns)).toEqual(est(300, 300, 500));
    expect(await oneBlock(genesis(v7Complex(1201n)), txns)).toEqual(NOT_FULL);
    // No execution config: Missing, so no limit.
    expect(await oneBlock(genesis(), txns)).toEqual(NOT_FULL);
  });

  it("NOT full despite the epilogue's limit flags: the epilogue is the block's last version, never read", async () => {
    const chain = genesis();
    chain.block(users(3, { price: 300 }), { endInfo: { gas: true, output: true } });
    chain.block([]);
    const store = await storeOf(chain);
    // The flags are stored with the block…
    const block = await store.getBlockByVersion(2n);
    expect(block?.endInfo).toEqual({ blockGasLimitReached: true, blockOutputLimitReached: true });
    // …but do not make it full.
    expect(await estimate(store)).toEqual(NOT_FULL);
  });

  it("not full by the majority rule: > 0.5 of the txns call one contract under a use-case-aware shuffler", async () => {
    const contract = users(300, { price: 100, fn: `${addr("abc")}::game::play` });
    const FULL = est(150, 150, 300);
    expect(await oneBlock(genesis(v4(useCaseAware, { NoLimit: true })), contract)).toEqual(NOT_FULL);
    // Without the use-case-aware shuffler, or with incorporateReorderingEffects off, the count rule applies.
    expect(await oneBlock(genesis(v4({ SenderAwareV2: 32 }, { NoLimit: true })), contract)).toEqual(FULL);
    expect(await oneBlock(genesis(v4(useCaseAware, { NoLimit: true })), contract, { incorporateReorderingEffects: false })).toEqual(FULL);
    // Platform functions (0x1) are not a contract majority.
    expect(await oneBlock(genesis(v4(useCaseAware, { NoLimit: true })), users(300, { price: 100 }))).toEqual(FULL);
  });

  it("use cases of other payloads: V2 multisig (nonce) counts by its entry function; legacy multisig and scripts are Others", async () => {
    const config = v4(useCaseAware, { NoLimit: true });
    async function run(payload: Json, nonce: boolean): Promise<GasEstimate> {
      const chain = genesis(config);
      chain.block(users(300, nonce ? { price: 100, nonce: 7 } : { price: 100 }));
      for (const t of chain.txns) if (t.type === "user_transaction") t.payload = payload;
      chain.block([]);
      return estimate(await storeOf(chain));
    }
    const inner = { type: "entry_function_payload", function: `${addr("abc")}::game::play`, type_arguments: [], arguments: [] };
    const multisig = { type: "multisig_payload", multisig_address: addr("4"), transaction_payload: inner };
    expect(await run(multisig, true)).toEqual(NOT_FULL);
    expect(await run(multisig, false)).toEqual(est(150, 150, 300));
    const script = { type: "script_payload", code: { bytecode: "0x00" }, type_arguments: [], arguments: [] };
    expect(await run(script, false)).toEqual(est(150, 150, 300));
  });

  it("reads the execution config once per epoch: a new config counts from the next epoch on", async () => {
    const txns = (base: number) => users(3, { price: 300, gasUsed: 400 }).map((u, i) => ({ ...u, sender: addr((base + i).toString(16)) }));
    const chain = genesis(); // no execution config: no block gas limit
    chain.block(txns(0x3000));
    chain.block([]);
    const db = await backend.newDb();
    await chain.importInto(db);
    const store = await openStore(db);
    stores.push(store);
    const gas = new GasEstimator({ ...defaultGasConfig, cacheExpirationMs: 0 });
    expect(await estimate(store, gas)).toEqual(NOT_FULL);

    // Governance writes a block gas limit of 1000 in epoch 1: the estimate keeps epoch 1's config.
    chain.block([{ sender: addr("a11ce"), price: 300, changes: [writeExecutionConfig(v4({ NoShuffling: true }, { Limit: 1000n }))] }]);
    chain.block(txns(0x4000));
    chain.block([]);
    await chain.importInto(db);
    expect(await estimate(store, gas)).toEqual(NOT_FULL);

    // Epoch 2: the new limit applies (3 × 400 >= 1000, next_bucket(300) = 500).
    chain.block(txns(0x5000), { epoch: 2n });
    chain.block([]);
    await chain.importInto(db);
    expect(await estimate(store, gas)).toEqual(est(500, 500, 1000));
    // A fresh estimator agrees: the config is the ledger's newest.
    expect(await estimate(store)).toEqual(est(500, 500, 1000));
  });
});

describe("import keeps the epilogue last", () => {
  it("refuses a transaction after the block epilogue in the same block, naming both versions", async () => {
    const chain = genesis();
    chain.block(users(1));
    // Move the epilogue (version 3) before the user transaction (version 2) of its block.
    const [user, epilogue] = chain.txns.slice(2, 4) as [Json, Json];
    chain.txns.splice(2, 2, { ...epilogue, version: "2" }, { ...user, version: "3" });
    const db = await backend.newDb();
    const store = await openStore(db);
    stores.push(store);
    const imp = await Importer.open(store, 4);
    let error: unknown = null;
    try {
      for (const t of chain.txns) await imp.push(t);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(IngestError);
    expect((error as Error).message).toBe(
      "version 3: user_transaction follows the block epilogue at version 2; a block epilogue must be the last transaction of its block",
    );
  });
});
