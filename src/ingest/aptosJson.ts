/**
 * Reads one transaction in the Aptos REST JSON format (the objects `GET /v1/transactions` returns)
 * into what the ledger stores (DECISIONS §16). Every malformed field is an `IngestError` naming the
 * version and the field; nothing here writes.
 */
import { parseAddress, parseHexBytes } from "../ledger/address.js";
import { moduleStateKey } from "../ledger/stateKey.js";
import type { BlockEndInfo } from "../ledger/types.js";
import type {
  ModuleWrite,
  ResourceWrite,
  TableItemWrite,
  TxnKind,
  TxnWrite,
} from "../storage/LedgerStore.js";
import { moduleAbi } from "../move/abi.js";
import { TXN_KINDS } from "../storage/rules.js";

export class IngestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IngestError";
  }
}

const KINDS = new Set<TxnKind>(TXN_KINDS);

const U64_MAX = (1n << 64n) - 1n;
const ZERO_HASH = new Uint8Array(32);

/** A transaction read for ingest. */
export interface ParsedTxn {
  txn: TxnWrite;
  /** For block metadata: the block's epoch, timestamp and (when its NewBlockEvent says) height. */
  blockStart: { epoch: bigint; timestampUsec: bigint; height: bigint | null } | null;
  endInfo: BlockEndInfo | null;
  modules: ModuleWrite[];
  tableItems: TableItemWrite[];
  resources: ResourceWrite[];
}

type Json = Record<string, unknown>;

/** Parses one Aptos REST JSON transaction. */
export function parseAptosTransaction(value: unknown, index: number): ParsedTxn {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new IngestError(`transaction #${index} is not a JSON object`);
  }
  const t = value as Json;
  const version = u64Field(t, "version", `transaction #${index}`);
  const where = `version ${version}`;
  const kind = t.type;
  if (typeof kind !== "string" || !KINDS.has(kind as TxnKind)) {
    throw new IngestError(`${where}: unknown transaction type ${JSON.stringify(kind)}`);
  }
  const hash = hashField(t.hash, where);

  let user: TxnWrite["user"] = null;
  let blockStart: ParsedTxn["blockStart"] = null;
  let endInfo: BlockEndInfo | null = null;

  if (kind === "user_transaction") {
    const sender = addressField(t, "sender", where);
    const nonce = t.replay_protection_nonce;
    const replayProtector =
      nonce !== undefined && nonce !== null
        ? { type: "nonce" as const, value: u64Field(t, "replay_protection_nonce", where) }
        : { type: "sequence_number" as const, value: u64Field(t, "sequence_number", where) };
    const contractAddress = useCaseAddress(t.payload, replayProtector.type === "nonce", where);
    user = {
      sender,
      replayProtector,
      gasUnitPrice: u64Field(t, "gas_unit_price", where),
      gasUsed: u64Field(t, "gas_used", where),
      success: t.success !== false,
      contractAddress,
    };
  } else if (kind === "block_metadata_transaction") {
    let height: bigint | null = null;
    if (Array.isArray(t.events)) {
      for (const e of t.events as Json[]) {
        if (typeof e?.type === "string" && e.type.endsWith("::block::NewBlockEvent")) {
          const d = e.data as Json | undefined;
          if (d && d.height !== undefined) height = u64Field(d, "height", `${where} NewBlockEvent`);
        }
      }
    }
    blockStart = {
      epoch: u64Field(t, "epoch", where),
      timestampUsec: u64Field(t, "timestamp", where),
      height,
    };
  } else if (kind === "genesis_transaction") {
    blockStart = { epoch: 0n, timestampUsec: 0n, height: 0n };
  } else if (kind === "block_epilogue_transaction") {
    const info = t.block_end_info as Json | null | undefined;
    if (info) {
      endInfo = {
        blockGasLimitReached: info.block_gas_limit_reached === true,
        blockOutputLimitReached: info.block_output_limit_reached === true,
      };
    }
  }

  const modules: ModuleWrite[] = [];
  const tableItems: TableItemWrite[] = [];
  const resources: ResourceWrite[] = [];
  const changes = t.changes ?? [];
  if (!Array.isArray(changes)) throw new IngestError(`${where}: changes is not an array`);
  changes.forEach((c: unknown, i: number) => {
    const at = `${where} change #${i}`;
    if (typeof c !== "object" || c === null) throw new IngestError(`${at} is not an object`);
    const ch = c as Json;
    switch (ch.type) {
      case "write_module": {
        const address = addressField(ch, "address", at);
        const data = ch.data as Json | undefined;
        const bytecode = hexField(data ?? {}, "bytecode", at);
        const name = moduleAbi(bytecode)?.name ?? nameFromAbi(data?.abi);
        if (!name) throw new IngestError(`${at}: module bytecode does not decode and carries no name`);
        modules.push({ version, address, name, stateKey: moduleStateKey(address, name), bytecode });
        break;
      }
      case "delete_module": {
        const address = addressField(ch, "address", at);
        const id = typeof ch.module === "string" ? ch.module : "";
        const name = id.split("::")[1];
        if (!name) throw new IngestError(`${at}: bad module id ${JSON.stringify(ch.module)}`);
        modules.push({ version, address, name, stateKey: moduleStateKey(address, name), bytecode: null });
        break;
      }
      case "write_table_item":
      case "delete_table_item": {
        const handle = addressField(ch, "handle", at);
        const key = hexField(ch, "key", at);
        const value = ch.type === "write_table_item" ? hexField(ch, "value", at) : null;
        tableItems.push({ version, handle, key, value });
        break;
      }
      case "write_resource": {
        const address = addressField(ch, "address", at);
        const data = ch.data as Json | undefined;
        if (!data || typeof data.type !== "string") throw new IngestError(`${at}: write_resource without data.type`);
        resources.push({ version, address, type: data.type, json: JSON.stringify(data.data ?? null) });
        break;
      }
      case "delete_resource": {
        const address = addressField(ch, "address", at);
        if (typeof ch.resource !== "string") throw new IngestError(`${at}: delete_resource without resource`);
        resources.push({ version, address, type: ch.resource, json: null });
        break;
      }
      default:
        throw new IngestError(`${at}: unknown change type ${JSON.stringify(ch.type)}`);
    }
  });

  return {
    txn: { version, kind: kind as TxnKind, hash, user },
    blockStart,
    endInfo,
    modules,
    tableItems,
    resources,
  };
}

/**
 * The module address of the entry function a user transaction runs, as aptos-core's
 * `parse_use_case` (`types/src/transaction/use_case.rs`) finds it, or null for its `Others`
 * (scripts, module bundles, legacy multisig). The REST JSON shows two payloads the same way:
 * - `entry_function_payload` is a legacy EntryFunction or a V2 payload without a multisig
 *   address; both count by the module address.
 * - `multisig_payload` is a legacy Multisig (Others) or a V2 payload with a multisig address,
 *   which counts by its entry function. Only V2 payloads carry a replay nonce, so a nonce tells
 *   them apart; a sequence-number multisig is taken as the legacy form.
 */
function useCaseAddress(payload: unknown, hasNonce: boolean, where: string): string | null {
  const p = payload as Json | null | undefined;
  if (typeof p !== "object" || p === null) return null;
  let entry: Json | null = null;
  if (p.type === "entry_function_payload") entry = p;
  else if (p.type === "multisig_payload" && hasNonce) entry = (p.transaction_payload as Json | null | undefined) ?? null;
  if (entry === null || typeof entry !== "object") return null;
  const fn = entry.function;
  const addr = typeof fn === "string" ? parseAddress(fn.split("::")[0] ?? "") : null;
  if (!addr || typeof fn !== "string" || fn.split("::").length !== 3) {
    throw new IngestError(`${where}: payload function is not an entry function id (address::module::name): ${JSON.stringify(fn)}`);
  }
  return Buffer.from(addr).toString("hex");
}

function nameFromAbi(abi: unknown): string | null {
  const n = (abi as Json | null | undefined)?.name;
  return typeof n === "string" && n.length > 0 ? n : null;
}

function u64Field(o: Json, field: string, where: string): bigint {
  const v = o[field];
  if (typeof v !== "string" || !/^[0-9]{1,20}$/.test(v) || BigInt(v) > U64_MAX) {
    throw new IngestError(`${where}: ${field} must be a u64 decimal string, got ${JSON.stringify(v)}`);
  }
  return BigInt(v);
}

function addressField(o: Json, field: string, where: string): Uint8Array {
  const v = o[field];
  const a = typeof v === "string" ? parseAddress(v) : null;
  if (!a) throw new IngestError(`${where}: ${field} is not an address: ${JSON.stringify(v)}`);
  return a;
}

function hexField(o: Json, field: string, where: string): Uint8Array {
  const v = o[field];
  const b = typeof v === "string" ? parseHexBytes(v) : null;
  if (!b) throw new IngestError(`${where}: ${field} is not hex bytes: ${JSON.stringify(v)?.slice(0, 80)}`);
  return b;
}

function hashField(v: unknown, where: string): Uint8Array {
  if (v === undefined || v === null || v === "") return ZERO_HASH;
  const b = typeof v === "string" ? parseHexBytes(v) : null;
  if (b?.length !== 32) throw new IngestError(`${where}: hash is not 32 hex bytes: ${JSON.stringify(v)}`);
  return b;
}
