/**
 * The devnet's chain: a deterministic stream of Aptos REST JSON transactions (the ingest format),
 * so that a fresh install serves live data and tests and benchmarks get realistic ledgers.
 *
 * - Genesis: framework-like modules at 0x1 and an app module at a user address (built by the
 *   module builder), the gas schedule (min price 100), a table with a few items, the accounts.
 * - Then one block per call: block metadata, user transactions from a handful of accounts
 *   (sequence-number and orderless), table writes and deletes, an occasional module upgrade,
 *   bursts that fill blocks at higher prices (so the gas estimate moves), and a block epilogue.
 */
import { createHash } from "node:crypto";
import { formatAddress, toHex } from "../../ledger/address.js";
import { appModuleBytecode, frameworkModules } from "./modules.js";

export const DEVNET_ACCOUNTS = 6;
export const DEVNET_APP_ADDRESS = "0x" + "a11ce".padStart(64, "0");
export const DEVNET_TABLE_HANDLE = "0x" + "7ab1e".padStart(64, "0");
export const DEVNET_MIN_GAS_PRICE = 100n;

export interface DevnetPosition {
  /** Next version to emit. */
  version: bigint;
  /** Height of the next block. */
  height: bigint;
  epoch: bigint;
  /** Next sequence number per account. */
  sequence: bigint[];
  /** How many times the app module was upgraded. */
  upgrades: number;
}

type Json = Record<string, unknown>;

function clonePosition(p: DevnetPosition): DevnetPosition {
  return { ...p, sequence: [...p.sequence] };
}

/** Small deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function devnetAccount(i: number): string {
  return "0x" + createHash("sha256").update(`ledger-node devnet account ${i}`).digest("hex");
}

const u64le = (v: bigint): string => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return toHex(b);
};

export interface DevnetChainOptions {
  chainId: number;
  /** Ordinary blocks carry 1..maxTxnsPerBlock user transactions. */
  maxTxnsPerBlock: number;
  /**
   * Congestion: the last `burstLength` blocks of every `burstEvery` are full (300 transactions at
   * raised prices). A run of full blocks, not a single one, is what moves the estimate: the p90 of
   * the reference algorithm needs more than a tenth of the recent blocks full.
   */
  burstEvery: number;
  burstLength: number;
  /** Every `upgradeEvery` blocks the app module is upgraded. */
  upgradeEvery: number;
}

export const defaultDevnetChainOptions: DevnetChainOptions = {
  chainId: 4,
  maxTxnsPerBlock: 8,
  burstEvery: 30,
  burstLength: 5,
  upgradeEvery: 50,
};

export class DevnetChain {
  constructor(
    readonly pos: DevnetPosition,
    private readonly opts: DevnetChainOptions = defaultDevnetChainOptions,
  ) {}

  static fresh(opts: DevnetChainOptions = defaultDevnetChainOptions): DevnetChain {
    return new DevnetChain(
      { version: 0n, height: 0n, epoch: 1n, sequence: Array.from({ length: DEVNET_ACCOUNTS }, () => 0n), upgrades: 0 },
      opts,
    );
  }

  private hash(kind: string, version: bigint): string {
    return "0x" + createHash("sha256").update(`${this.opts.chainId}/${kind}/${version}`).digest("hex");
  }

  /** The fields every REST transaction carries, for a successful one. */
  private envelope(kind: string, version: bigint, gasUsed = "0"): Json {
    return {
      version: version.toString(),
      hash: this.hash(kind, version),
      state_change_hash: "",
      event_root_hash: "",
      state_checkpoint_hash: null,
      gas_used: gasUsed,
      success: true,
      vm_status: "Executed successfully",
      accumulator_root_hash: "",
    };
  }

  /** The genesis transaction (version 0). */
  genesis(): Json[] {
    if (this.pos.version !== 0n) throw new Error("genesis is only the first transaction");
    const changes: Json[] = [];
    for (const m of frameworkModules()) {
      changes.push({ type: "write_module", address: "0x1", state_key_hash: "", data: { bytecode: toHex(m), abi: null } });
    }
    changes.push({
      type: "write_module",
      address: DEVNET_APP_ADDRESS,
      state_key_hash: "",
      data: { bytecode: toHex(appModuleBytecode(0)), abi: null },
    });
    changes.push({
      type: "write_resource",
      address: "0x1",
      state_key_hash: "",
      data: {
        type: "0x1::gas_schedule::GasScheduleV2",
        data: {
          feature_version: "12",
          entries: [
            { key: "txn.min_price_per_gas_unit", val: DEVNET_MIN_GAS_PRICE.toString() },
            { key: "txn.max_price_per_gas_unit", val: "10000000000" },
          ],
        },
      },
    });
    for (let i = 0; i < DEVNET_ACCOUNTS; i++) {
      changes.push(this.accountResource(i, 0n));
    }
    for (let k = 0n; k < 4n; k++) {
      changes.push({ type: "write_table_item", state_key_hash: "", handle: DEVNET_TABLE_HANDLE, key: u64le(k), value: u64le(k * 1000n), data: null });
    }
    const txn = {
      ...this.envelope("genesis", 0n),
      changes,
      payload: { type: "write_set_payload", write_set: { type: "direct_write_set", changes: [], events: [] } },
      events: [],
      type: "genesis_transaction",
    };
    this.pos.version = 1n;
    this.pos.height = 1n;
    return [txn];
  }

  private accountResource(i: number, seq: bigint): Json {
    const addr = devnetAccount(i);
    return {
      type: "write_resource",
      address: addr,
      state_key_hash: "",
      data: {
        type: "0x1::account::Account",
        data: { authentication_key: addr, sequence_number: seq.toString(), guid_creation_num: "0" },
      },
    };
  }

  /**
   * The next block, stamped `timestampUsec`, without moving this chain: the live devnet keeps the
   * block until it is committed and only then moves to `next` (`advanceTo`), so a failed commit
   * is retried with the very same block and leaves no gap.
   */
  peekBlock(timestampUsec: bigint): { txns: Json[]; next: DevnetPosition } {
    const copy = new DevnetChain(clonePosition(this.pos), this.opts);
    const txns = copy.nextBlock(timestampUsec);
    return { txns, next: copy.pos };
  }

  /** Moves to a position `peekBlock` returned, once its block is committed. */
  advanceTo(next: DevnetPosition): void {
    Object.assign(this.pos, clonePosition(next));
  }

  /** The next block, stamped `timestampUsec` (moves the chain at once: for writing files). */
  nextBlock(timestampUsec: bigint): Json[] {
    const p = this.pos;
    const rand = prng(Number(p.height % 4294967291n) ^ this.opts.chainId);
    const height = p.height;
    const out: Json[] = [];
    const v = () => p.version++;

    const metaVersion = v();
    out.push({
      ...this.envelope("block", metaVersion),
      changes: [],
      id: this.hash("block-id", height),
      epoch: p.epoch.toString(),
      round: height.toString(),
      events: [
        {
          guid: { creation_number: "3", account_address: "0x1" },
          sequence_number: height.toString(),
          type: "0x1::block::NewBlockEvent",
          data: { epoch: p.epoch.toString(), height: height.toString(), round: height.toString(), time_microseconds: timestampUsec.toString() },
        },
      ],
      previous_block_votes_bitvec: [],
      proposer: devnetAccount(0),
      failed_proposer_indices: [],
      timestamp: timestampUsec.toString(),
      type: "block_metadata_transaction",
    });

    const every = BigInt(this.opts.burstEvery);
    const burst = every > 0n && height % every >= every - BigInt(this.opts.burstLength);
    const count = burst ? 300 : 1 + Math.floor(rand() * this.opts.maxTxnsPerBlock);
    const upgrade = this.opts.upgradeEvery > 0 && height % BigInt(this.opts.upgradeEvery) === 0n;
    for (let n = 0; n < count; n++) {
      const i = Math.floor(rand() * DEVNET_ACCOUNTS);
      const orderless = !burst && rand() < 0.2;
      const version = v();
      const price = burst ? DEVNET_MIN_GAS_PRICE + BigInt(50 + Math.floor(rand() * 200)) : DEVNET_MIN_GAS_PRICE;
      const changes: Json[] = [];
      let payload: Json;
      if (upgrade && n === 0) {
        p.upgrades++;
        const code = toHex(appModuleBytecode(p.upgrades));
        changes.push({ type: "write_module", address: DEVNET_APP_ADDRESS, state_key_hash: "", data: { bytecode: code, abi: null } });
        payload = { type: "module_bundle_payload", modules: [{ bytecode: code, abi: null }] };
      } else if (rand() < 0.5) {
        const key = BigInt(Math.floor(rand() * 64));
        const del = rand() < 0.25;
        changes.push(
          del
            ? { type: "delete_table_item", state_key_hash: "", handle: DEVNET_TABLE_HANDLE, key: u64le(key), data: null }
            : { type: "write_table_item", state_key_hash: "", handle: DEVNET_TABLE_HANDLE, key: u64le(key), value: u64le(version), data: null },
        );
        payload = {
          type: "entry_function_payload",
          function: `${formatAddress(Buffer.from(DEVNET_APP_ADDRESS.slice(2), "hex"))}::registry::${del ? "remove" : "set"}`,
          type_arguments: [],
          arguments: [key.toString()],
        };
      } else {
        payload = {
          type: "entry_function_payload",
          function: "0x1::aptos_account::transfer",
          type_arguments: [],
          arguments: [devnetAccount((i + 1) % DEVNET_ACCOUNTS), String(1 + Math.floor(rand() * 1000))],
        };
      }
      const seq = p.sequence[i]!;
      if (!orderless) {
        p.sequence[i] = seq + 1n;
        changes.push(this.accountResource(i, seq + 1n));
      }
      out.push({
        ...this.envelope("user", version, String(5 + Math.floor(rand() * 20))),
        changes,
        sender: devnetAccount(i),
        sequence_number: orderless ? "18446744073709551615" : seq.toString(),
        replay_protection_nonce: orderless ? String(Math.floor(rand() * 2 ** 48)) : null,
        max_gas_amount: "200000",
        gas_unit_price: price.toString(),
        expiration_timestamp_secs: String(timestampUsec / 1_000_000n + 600n),
        payload,
        signature: { type: "ed25519_signature", public_key: "0x" + "00".repeat(32), signature: "0x" + "00".repeat(64) },
        events: [],
        timestamp: timestampUsec.toString(),
        type: "user_transaction",
      });
    }

    const endVersion = v();
    out.push({
      ...this.envelope("epilogue", endVersion),
      state_checkpoint_hash: this.hash("checkpoint", endVersion),
      changes: [],
      timestamp: timestampUsec.toString(),
      block_end_info: {
        block_gas_limit_reached: false,
        block_output_limit_reached: false,
        block_effective_block_gas_units: 0,
        block_approx_output_size: 0,
      },
      type: "block_epilogue_transaction",
    });
    p.height++;
    return out;
  }
}
