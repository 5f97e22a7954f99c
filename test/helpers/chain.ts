/**
 * Builds small chains in the Aptos REST JSON format for tests: each scenario states exactly what
 * it writes, and the result goes through the real Importer.
 */
import { createHash } from "node:crypto";
import { Importer } from "../../src/ingest/importer.js";
import { openStore } from "../../src/storage/open.js";

type Json = Record<string, unknown>;

export const addr = (hex: string): string => "0x" + hex.replace(/^0x/, "").padStart(64, "0");

export function u64le(v: bigint | number): string {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(v));
  return "0x" + b.toString("hex");
}

export class ChainBuilder {
  version = 0n;
  height = 0n;
  timestampUsec = 1_000_000n;
  epoch = 1n;
  readonly txns: Json[] = [];

  private hash(kind: string, v: bigint): string {
    return "0x" + createHash("sha256").update(`${kind}/${v}`).digest("hex");
  }

  genesis(changes: Json[] = []): this {
    this.txns.push({ version: "0", hash: this.hash("g", 0n), changes, events: [], success: true, type: "genesis_transaction" });
    this.version = 1n;
    this.height = 1n;
    return this;
  }

  /** A whole block: metadata, the given user transactions, and an epilogue. */
  block(users: UserTxn[] = [], opts: { epoch?: bigint; endInfo?: { gas: boolean; output: boolean } | null } = {}): this {
    if (opts.epoch !== undefined) this.epoch = opts.epoch;
    this.timestampUsec += 1_000_000n;
    const v0 = this.version++;
    this.txns.push({
      version: v0.toString(),
      hash: this.hash("m", v0),
      id: this.hash("block", this.height),
      epoch: this.epoch.toString(),
      round: this.height.toString(),
      timestamp: this.timestampUsec.toString(),
      events: [{ type: "0x1::block::NewBlockEvent", data: { height: this.height.toString(), epoch: this.epoch.toString() } }],
      changes: [],
      type: "block_metadata_transaction",
    });
    for (const u of users) {
      const v = this.version++;
      this.txns.push({
        version: v.toString(),
        hash: this.hash("u", v),
        sender: u.sender,
        sequence_number: u.nonce !== undefined ? "18446744073709551615" : String(u.seq ?? 0),
        replay_protection_nonce: u.nonce !== undefined ? String(u.nonce) : null,
        gas_unit_price: String(u.price ?? 100),
        gas_used: String(u.gasUsed ?? 10),
        success: true,
        payload: { type: "entry_function_payload", function: u.fn ?? "0x1::aptos_account::transfer", type_arguments: [], arguments: [] },
        changes: u.changes ?? [],
        events: [],
        timestamp: this.timestampUsec.toString(),
        type: "user_transaction",
      });
    }
    const ve = this.version++;
    const endInfo = opts.endInfo === undefined ? { gas: false, output: false } : opts.endInfo;
    this.txns.push({
      version: ve.toString(),
      hash: this.hash("e", ve),
      changes: [],
      block_end_info: endInfo && { block_gas_limit_reached: endInfo.gas, block_output_limit_reached: endInfo.output },
      type: "block_epilogue_transaction",
    });
    this.height++;
    return this;
  }

  /** Version the next user transaction of the next block will get (after its metadata). */
  get nextUserVersion(): bigint {
    return this.version + 1n;
  }

  ndjson(): string {
    return this.txns.map((t) => JSON.stringify(t)).join("\n") + "\n";
  }

  /** Imports everything built so far into the database `db` (idempotent). */
  async importInto(db: string, chainId = 4): Promise<void> {
    const store = await openStore(db);
    try {
      const imp = await Importer.open(store, chainId);
      for (const t of this.txns) await imp.push(t);
      await imp.finish();
    } finally {
      await store.close();
    }
  }
}

export interface UserTxn {
  sender: string;
  seq?: number | bigint;
  nonce?: number | bigint;
  price?: number | bigint;
  gasUsed?: number;
  fn?: string;
  changes?: Json[];
}

export const writeTable = (handle: string, key: string, value: string): Json => ({ type: "write_table_item", handle, key, value, data: null });
export const deleteTable = (handle: string, key: string): Json => ({ type: "delete_table_item", handle, key, data: null });
export const writeModule = (address: string, bytecode: Uint8Array | string, abiName?: string): Json => ({
  type: "write_module",
  address,
  data: { bytecode: typeof bytecode === "string" ? bytecode : "0x" + Buffer.from(bytecode).toString("hex"), abi: abiName ? { name: abiName } : null },
});
export const deleteModule = (address: string, name: string): Json => ({ type: "delete_module", address, module: `${address}::${name}` });
export const writeResource = (address: string, type: string, data: unknown): Json => ({ type: "write_resource", address, state_key_hash: "", data: { type, data } });
export const deleteResource = (address: string, type: string): Json => ({ type: "delete_resource", address, state_key_hash: "", resource: type });
