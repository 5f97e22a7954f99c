import { bcs } from "@mysten/bcs";
import { describe, expect, it } from "vitest";
import {
  ExecutionConfigError,
  MISSING_EXECUTION_CONFIG,
  OnChainExecutionConfigBcs,
  configBytesOf,
  decodeExecutionConfig,
  executionConfigFromResource,
  executionConfigInfo,
  type OnChainExecutionConfigInput,
} from "./executionConfig.js";

type V7 = Extract<OnChainExecutionConfigInput, { V7: unknown }>["V7"];
type Shuffler = V7["transaction_shuffler_type"];
type Limit = V7["block_gas_limit_type"];

const encode = (c: OnChainExecutionConfigInput): Uint8Array => OnChainExecutionConfigBcs.serialize(c).toBytes();
const resource = (c: OnChainExecutionConfigInput): string =>
  JSON.stringify({ config: "0x" + Buffer.from(encode(c)).toString("hex") });

const USE_CASE: Shuffler = {
  UseCaseAware: { sender_spread_factor: 32n, platform_use_case_spread_factor: 0n, user_use_case_spread_factor: 4n },
};
const COMPLEX: Limit = {
  ComplexLimitV1: {
    effective_block_gas_limit: 20_000n,
    execution_gas_effective_multiplier: 1n,
    io_gas_effective_multiplier: 1n,
    conflict_penalty_window: 9,
    use_granular_resource_group_conflicts: false,
    use_module_publishing_block_conflict: true,
    block_output_limit: 4n * 1024n * 1024n,
    include_user_txn_size_in_block_output: true,
    add_block_limit_outcome_onchain: true,
  },
};

describe("decodeExecutionConfig: every variant of OnChainExecutionConfig", () => {
  // [config, variant, block gas limit, user use-case spread factor]
  const cases: [OnChainExecutionConfigInput, string, bigint | null, bigint | null][] = [
    [{ V1: { transaction_shuffler_type: USE_CASE } }, "V1", null, 4n],
    [{ V2: { transaction_shuffler_type: { SenderAwareV2: 32 }, block_gas_limit: 35_000n } }, "V2", 35_000n, null],
    [{ V2: { transaction_shuffler_type: { NoShuffling: true }, block_gas_limit: null } }, "V2", null, null],
    [
      {
        V3: {
          transaction_shuffler_type: { DeprecatedSenderAwareV1: 8 },
          block_gas_limit: 12n,
          transaction_deduper_type: { TxnHashAndAuthenticatorV1: true },
        },
      },
      "V3",
      12n,
      null,
    ],
    [{ Missing: true }, "Missing", null, null],
    [
      {
        V4: {
          transaction_shuffler_type: { DeprecatedFairness: true },
          block_gas_limit_type: { Limit: 777n },
          transaction_deduper_type: { NoDedup: true },
        },
      },
      "V4",
      777n,
      null,
    ],
    [
      {
        V5: {
          transaction_shuffler_type: USE_CASE,
          block_gas_limit_type: { NoLimit: true },
          enable_per_block_gas_limit: true,
          transaction_deduper_type: { NoDedup: true },
        },
      },
      "V5",
      null,
      4n,
    ],
    [
      {
        V6: {
          transaction_shuffler_type: { SenderAwareV2: 256 },
          block_gas_limit_type: COMPLEX,
          enable_per_block_gas_limit: false,
          transaction_deduper_type: { TxnHashAndAuthenticatorV1: true },
          gas_price_to_burn: 90n,
        },
      },
      "V6",
      20_000n,
      null,
    ],
    // The reference's default_for_genesis().
    [
      {
        V7: {
          transaction_shuffler_type: USE_CASE,
          block_gas_limit_type: COMPLEX,
          enable_per_block_gas_limit: false,
          transaction_deduper_type: { TxnHashAndAuthenticatorV1: true },
          gas_price_to_burn: 90n,
          persisted_auxiliary_info_version: 1,
        },
      },
      "V7",
      20_000n,
      4n,
    ],
  ];

  for (const [config, variant, limit, spread] of cases) {
    it(`${variant}: block gas limit ${limit}, user use-case spread factor ${spread}`, () => {
      const bytes = encode(config);
      const decoded = decodeExecutionConfig(bytes);
      expect(decoded.$kind).toBe(variant);
      // Every field survives: the decoded value encodes back to the same bytes.
      expect(Buffer.from(encode(decoded as OnChainExecutionConfigInput))).toEqual(Buffer.from(bytes));
      expect(executionConfigInfo(decoded)).toEqual({ variant, blockGasLimit: limit, userUseCaseSpreadFactor: spread, problem: null });
      expect(executionConfigFromResource(resource(config))).toEqual({
        variant,
        blockGasLimit: limit,
        userUseCaseSpreadFactor: spread,
        problem: null,
      });
    });
  }

  it("variant indexes follow the reference's declaration order (Missing is 3, V4 is 4)", () => {
    expect(encode({ Missing: true })).toEqual(Uint8Array.of(3));
    expect(encode({ V1: { transaction_shuffler_type: { NoShuffling: true } } })).toEqual(Uint8Array.of(0, 0));
    const v4 = encode({
      V4: { transaction_shuffler_type: { DeprecatedFairness: true }, block_gas_limit_type: { NoLimit: true }, transaction_deduper_type: { NoDedup: true } },
    });
    expect(v4).toEqual(Uint8Array.of(4, 3, 0, 0));
  });

  it("UseCaseAware spread factors are usize, i.e. u64 in BCS", () => {
    const bytes = encode({ V1: { transaction_shuffler_type: USE_CASE } });
    const u64 = (n: bigint) => [...bcs.u64().serialize(n).toBytes()];
    expect([...bytes]).toEqual([0, 4, ...u64(32n), ...u64(0n), ...u64(4n)]);
  });
});

describe("bad bytes", () => {
  const good = encode({ V2: { transaction_shuffler_type: { SenderAwareV2: 32 }, block_gas_limit: 35_000n } });

  it("an unknown variant, a short input, trailing bytes, a bad bool or option tag are errors", () => {
    const bad: [Uint8Array, string][] = [
      [Uint8Array.of(8), "Unknown value 8"],
      [Uint8Array.of(0, 5), "Unknown value 5"],
      [good.slice(0, good.length - 1), "does not decode"],
      [Uint8Array.of(...good, 0), "not canonical"],
      [Uint8Array.of(1, 0, 2), "does not decode"], // option tag 2
      [Uint8Array.of(5, 0, 0, 2, 0), "Invalid bool"], // V5 NoShuffling NoLimit bool=2
      [Uint8Array.of(0x83, 0x00), "non-canonical"], // Missing with a two-byte ULEB tag
      [new Uint8Array(0), "does not decode"],
    ];
    for (const [bytes, message] of bad) {
      expect(() => decodeExecutionConfig(bytes)).toThrow(ExecutionConfigError);
      expect(() => decodeExecutionConfig(bytes)).toThrow(message);
    }
  });

  it("the resource falls back to Missing as the reference's fetch_config(..).unwrap_or_else(default_if_missing), saying why", () => {
    expect(executionConfigFromResource(null)).toBe(MISSING_EXECUTION_CONFIG);
    for (const json of [
      JSON.stringify({ config: "0x08" }),
      JSON.stringify({ config: "0x" + Buffer.from(good).toString("hex") + "00" }),
      JSON.stringify({ config: "zz" }),
      JSON.stringify({ other: 1 }),
      "{",
    ]) {
      const info = executionConfigFromResource(json);
      expect(info).toMatchObject({ variant: "Missing", blockGasLimit: null, userUseCaseSpreadFactor: null });
      expect(info.problem).toMatch(/execution config/);
    }
  });

  it("configBytesOf reads the stored form and the REST wrapper", () => {
    const hex = "0x" + Buffer.from(good).toString("hex");
    expect(Buffer.from(configBytesOf(JSON.stringify({ config: hex })))).toEqual(Buffer.from(good));
    const wrapped = JSON.stringify({ type: "0x1::execution_config::ExecutionConfig", data: { config: hex } });
    expect(Buffer.from(configBytesOf(wrapped))).toEqual(Buffer.from(good));
    expect(() => configBytesOf("[]")).toThrow('no hex "config" field');
  });
});
