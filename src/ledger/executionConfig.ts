/**
 * The on-chain execution config (`0x1::execution_config::ExecutionConfig`), as the gas estimator
 * needs it: the block gas limit and whether the transaction shuffler is use-case aware.
 *
 * The resource's `config` field is the BCS of aptos-core's `OnChainExecutionConfig`
 * (`types/src/on_chain_config/execution_config.rs`); every variant that file knows is decoded
 * here, field for field, so a config we cannot read is a real decode failure, not a gap in the
 * layout. docs/decisions.md §14.
 */
import { bcs } from "@mysten/bcs";
import { parseHexBytes } from "./address.js";

/** Move type of the resource at 0x1. */
export const EXECUTION_CONFIG_TYPE = "0x1::execution_config::ExecutionConfig";

// BCS layouts, in the reference's declaration order (the enum index is the position).
// Rust `usize` is serialized by serde/BCS as a u64.

const TransactionShufflerType = bcs.enum("TransactionShufflerType", {
  NoShuffling: null,
  DeprecatedSenderAwareV1: bcs.u32(),
  SenderAwareV2: bcs.u32(),
  DeprecatedFairness: null,
  UseCaseAware: bcs.struct("UseCaseAware", {
    sender_spread_factor: bcs.u64(),
    platform_use_case_spread_factor: bcs.u64(),
    user_use_case_spread_factor: bcs.u64(),
  }),
});

const TransactionDeduperType = bcs.enum("TransactionDeduperType", {
  NoDedup: null,
  TxnHashAndAuthenticatorV1: null,
});

const BlockGasLimitType = bcs.enum("BlockGasLimitType", {
  NoLimit: null,
  Limit: bcs.u64(),
  ComplexLimitV1: bcs.struct("ComplexLimitV1", {
    effective_block_gas_limit: bcs.u64(),
    execution_gas_effective_multiplier: bcs.u64(),
    io_gas_effective_multiplier: bcs.u64(),
    conflict_penalty_window: bcs.u32(),
    use_granular_resource_group_conflicts: bcs.bool(),
    use_module_publishing_block_conflict: bcs.bool(),
    block_output_limit: bcs.option(bcs.u64()),
    include_user_txn_size_in_block_output: bcs.bool(),
    add_block_limit_outcome_onchain: bcs.bool(),
  }),
});

/** `OnChainExecutionConfig`: `Missing` sits between V3 and V4 ("order matters for enums"). */
export const OnChainExecutionConfigBcs = bcs.enum("OnChainExecutionConfig", {
  V1: bcs.struct("ExecutionConfigV1", {
    transaction_shuffler_type: TransactionShufflerType,
  }),
  V2: bcs.struct("ExecutionConfigV2", {
    transaction_shuffler_type: TransactionShufflerType,
    block_gas_limit: bcs.option(bcs.u64()),
  }),
  V3: bcs.struct("ExecutionConfigV3", {
    transaction_shuffler_type: TransactionShufflerType,
    block_gas_limit: bcs.option(bcs.u64()),
    transaction_deduper_type: TransactionDeduperType,
  }),
  Missing: null,
  V4: bcs.struct("ExecutionConfigV4", {
    transaction_shuffler_type: TransactionShufflerType,
    block_gas_limit_type: BlockGasLimitType,
    transaction_deduper_type: TransactionDeduperType,
  }),
  V5: bcs.struct("ExecutionConfigV5", {
    transaction_shuffler_type: TransactionShufflerType,
    block_gas_limit_type: BlockGasLimitType,
    enable_per_block_gas_limit: bcs.bool(),
    transaction_deduper_type: TransactionDeduperType,
  }),
  V6: bcs.struct("ExecutionConfigV6", {
    transaction_shuffler_type: TransactionShufflerType,
    block_gas_limit_type: BlockGasLimitType,
    enable_per_block_gas_limit: bcs.bool(),
    transaction_deduper_type: TransactionDeduperType,
    gas_price_to_burn: bcs.u64(),
  }),
  V7: bcs.struct("ExecutionConfigV7", {
    transaction_shuffler_type: TransactionShufflerType,
    block_gas_limit_type: BlockGasLimitType,
    enable_per_block_gas_limit: bcs.bool(),
    transaction_deduper_type: TransactionDeduperType,
    gas_price_to_burn: bcs.u64(),
    persisted_auxiliary_info_version: bcs.u8(),
  }),
});

/** A decoded `OnChainExecutionConfig` (u64 fields as decimal strings, as @mysten/bcs reads them). */
export type OnChainExecutionConfig = ReturnType<(typeof OnChainExecutionConfigBcs)["parse"]>;
/** What {@link OnChainExecutionConfigBcs} serializes (tests build configs with it). */
export type OnChainExecutionConfigInput = Parameters<(typeof OnChainExecutionConfigBcs)["serialize"]>[0];

type Shuffler = ReturnType<(typeof TransactionShufflerType)["parse"]>;
type GasLimit = ReturnType<(typeof BlockGasLimitType)["parse"]>;

/** What the gas estimator reads from the execution config. */
export interface ExecutionConfigInfo {
  /** The variant in force (`Missing` when the resource is absent or undecodable). */
  readonly variant: OnChainExecutionConfig["$kind"];
  /** `block_gas_limit_type().block_gas_limit()`; null = no limit. */
  readonly blockGasLimit: bigint | null;
  /** `transaction_shuffler_type().user_use_case_spread_factor()`; null unless UseCaseAware. */
  readonly userUseCaseSpreadFactor: bigint | null;
  /** Why the resource was not used, when it exists but could not be decoded. */
  readonly problem: string | null;
}

/** The reference's `default_if_missing()`: NoShuffling, NoLimit. */
export const MISSING_EXECUTION_CONFIG: ExecutionConfigInfo = Object.freeze({
  variant: "Missing",
  blockGasLimit: null,
  userUseCaseSpreadFactor: null,
  problem: null,
});

/** The config bytes or the resource JSON are not a valid execution config. */
export class ExecutionConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExecutionConfigError";
  }
}

/**
 * Decodes the BCS of an `OnChainExecutionConfig` as strictly as the Rust `bcs` crate: an unknown
 * variant, a bad bool or option tag, a short input, trailing bytes or a non-canonical ULEB fail.
 *
 * @throws {ExecutionConfigError} naming what is wrong.
 */
export function decodeExecutionConfig(bytes: Uint8Array): OnChainExecutionConfig {
  let value: OnChainExecutionConfig;
  try {
    value = OnChainExecutionConfigBcs.parse(bytes);
  } catch (e) {
    throw new ExecutionConfigError(`execution config BCS does not decode: ${(e as Error).message}`);
  }
  // Re-serializing catches what the stock reader lets through (trailing bytes, long ULEBs).
  const again = OnChainExecutionConfigBcs.serialize(value as OnChainExecutionConfigInput).toBytes();
  if (again.length !== bytes.length || !again.every((b, i) => b === bytes[i])) {
    throw new ExecutionConfigError(
      `execution config BCS is not canonical: ${bytes.length} bytes given, the ${value.$kind} value takes ${again.length}`,
    );
  }
  return value;
}

/** `transaction_shuffler_type()` of each variant (`Missing` → NoShuffling, here null). */
function shufflerOf(c: OnChainExecutionConfig): Shuffler | null {
  switch (c.$kind) {
    case "Missing":
      return null;
    case "V1":
      return c.V1.transaction_shuffler_type;
    case "V2":
      return c.V2.transaction_shuffler_type;
    case "V3":
      return c.V3.transaction_shuffler_type;
    case "V4":
      return c.V4.transaction_shuffler_type;
    case "V5":
      return c.V5.transaction_shuffler_type;
    case "V6":
      return c.V6.transaction_shuffler_type;
    case "V7":
      return c.V7.transaction_shuffler_type;
  }
}

/** `block_gas_limit_type()` of each variant (V2 and V3 carry an `Option<u64>`: None is NoLimit). */
function gasLimitTypeOf(c: OnChainExecutionConfig): GasLimit | { $kind: "NoLimit" } | { $kind: "Limit"; Limit: string } {
  const optional = (l: string | null | undefined) => (l === null || l === undefined ? { $kind: "NoLimit" as const } : { $kind: "Limit" as const, Limit: l });
  switch (c.$kind) {
    case "Missing":
    case "V1":
      return { $kind: "NoLimit" };
    case "V2":
      return optional(c.V2.block_gas_limit);
    case "V3":
      return optional(c.V3.block_gas_limit);
    case "V4":
      return c.V4.block_gas_limit_type;
    case "V5":
      return c.V5.block_gas_limit_type;
    case "V6":
      return c.V6.block_gas_limit_type;
    case "V7":
      return c.V7.block_gas_limit_type;
  }
}

/** `BlockGasLimitType::block_gas_limit()`: ComplexLimitV1 gives its `effective_block_gas_limit`. */
function blockGasLimitOf(c: OnChainExecutionConfig): bigint | null {
  const t = gasLimitTypeOf(c);
  switch (t.$kind) {
    case "NoLimit":
      return null;
    case "Limit":
      return BigInt(t.Limit);
    case "ComplexLimitV1":
      return BigInt(t.ComplexLimitV1.effective_block_gas_limit);
  }
}

/** What the estimator needs of a decoded config. */
export function executionConfigInfo(c: OnChainExecutionConfig): ExecutionConfigInfo {
  const s = shufflerOf(c);
  return Object.freeze({
    variant: c.$kind,
    blockGasLimit: blockGasLimitOf(c),
    userUseCaseSpreadFactor: s?.$kind === "UseCaseAware" ? BigInt(s.UseCaseAware.user_use_case_spread_factor) : null,
    problem: null,
  });
}

/**
 * The `config` bytes of the resource's JSON (`{"config": "0x…"}`; the REST wrapper
 * `{"type", "data": {…}}` is accepted too).
 *
 * @throws {ExecutionConfigError} when the JSON has no hex `config`.
 */
export function configBytesOf(json: string): Uint8Array {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (e) {
    throw new ExecutionConfigError(`execution config resource is not valid JSON: ${(e as Error).message}`);
  }
  const obj = (v: unknown): Record<string, unknown> | null =>
    typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  const d = obj(doc);
  const hex = d?.config ?? obj(d?.data)?.config;
  const bytes = typeof hex === "string" ? parseHexBytes(hex) : null;
  if (bytes === null) {
    throw new ExecutionConfigError(`execution config resource has no hex "config" field: ${json.slice(0, 80)}`);
  }
  return bytes;
}

/**
 * The execution config in force, as the reference's `execution_onchain_config` gets it:
 * `fetch_config(..).unwrap_or_else(default_if_missing)`, so an absent resource and one that does
 * not decode (unknown variant, bad bytes) both give `Missing`. The decode failure is kept in
 * `problem` so the caller can report it; it does not fail the request, as in the reference.
 *
 * @param json The resource's JSON text at the ledger version, or null when absent.
 */
export function executionConfigFromResource(json: string | null): ExecutionConfigInfo {
  if (json === null) return MISSING_EXECUTION_CONFIG;
  try {
    return executionConfigInfo(decodeExecutionConfig(configBytesOf(json)));
  } catch (e) {
    if (!(e instanceof ExecutionConfigError)) throw e;
    return Object.freeze({ ...MISSING_EXECUTION_CONFIG, problem: e.message });
  }
}
