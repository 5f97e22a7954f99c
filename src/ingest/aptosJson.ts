/**
 * Reads one transaction in the Aptos REST JSON format (the objects `GET /v1/transactions` returns)
 * into what the ledger stores (docs/decisions.md §17). Every malformed field is an `IngestError` naming the
 * version and the field; nothing here writes.
 */
import { parseAddress, parseHexBytes } from "../ledger/address.js";
import { moduleStateKey } from "../ledger/stateKey.js";
import type { BlockEndInfo } from "../ledger/types.js";
import type { EventWrite, HistoryChunk, ModuleWrite, ResourceWrite, TableItemWrite, TxnKind, TxnWrite, UserTxnWrite } from "../storage/contracts/writer.js";
import { moduleAbi } from "../move/abi.js";
import { TXN_KINDS } from "../storage/common/storedCodes.js";

export class IngestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IngestError";
  }
}

const KINDS = new Set<TxnKind>(TXN_KINDS);

const U64_MAX = (1n << 64n) - 1n;
const ZERO_HASH = new Uint8Array(32);

/**
 * Something of a kind this reader does not know (a new transaction or change type, a module
 * whose bytecode does not decode), stored generically or skipped rather than stopping the ingest.
 */
export interface UnknownKind {
  /** `transaction`, `change` or `module`. */
  what: "transaction" | "change" | "module";
  /** The source's `type` (for a module: `undecodable_bytecode`), cut to a label-safe form. */
  type: string;
}

/** One line for the log: what was met and what was done with it. */
export function describeUnknown(u: UnknownKind): string {
  if (u.what === "transaction") return `a transaction of type ${u.type}, unknown here: stored its version, hash, block and known changes (and a sender's summary)`;
  if (u.what === "change") return `a change of type ${u.type}, unknown here: skipped`;
  return "a module whose bytecode does not decode here (a newer bytecode version): stored with the upstream's ABI";
}

/** A transaction read for ingest. */
export interface ParsedTxn {
  txn: TxnWrite;
  /** For block metadata: the block's epoch, timestamp and (when its NewBlockEvent says) height. */
  blockStart: { epoch: bigint; timestampUsec: bigint; height: bigint | null } | null;
  endInfo: BlockEndInfo | null;
  modules: ModuleWrite[];
  tableItems: TableItemWrite[];
  resources: ResourceWrite[];
  /** What of a new kind this transaction held: stored generically or skipped, one entry each. */
  unknown: UnknownKind[];
  /**
   * The packed history chunk that ends with this transaction, where the batch it was parsed in was
   * packed on the parsing thread (`encodeParsed`); its texts then travel only in it.
   */
  history?: HistoryChunk;
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
  const type = t.type;
  if (typeof type !== "string" || type.length === 0) {
    throw new IngestError(`${where}: transaction type is not a string: ${JSON.stringify(type)}`);
  }
  const unknown: UnknownKind[] = [];
  // A type added to the chain after this reader: stored by its generic parts (version, hash, its
  // place in a block, its changes of known kinds), never a block's start or end.
  const known = type !== UNKNOWN_TXN_KIND && KINDS.has(type as TxnKind);
  const kind: TxnKind = known ? (type as TxnKind) : UNKNOWN_TXN_KIND;
  if (!known) unknown.push({ what: "transaction", type: labelOf(type) });
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
  } else if (!known) {
    user = userLike(t, where);
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
        const decoded = moduleAbi(bytecode)?.name;
        const name = decoded ?? nameFromAbi(data?.abi);
        if (!name) throw new IngestError(`${at}: module bytecode does not decode and carries no name`);
        const write: ModuleWrite = { version, address, name, stateKey: moduleStateKey(address, name), bytecode };
        if (decoded === undefined) {
          // Bytecode newer than the decoder (or not a module it accepts): the source's ABI is kept
          // and served as the source printed it.
          const abi = upstreamAbiText(data?.abi);
          if (abi !== null) write.upstreamAbi = abi;
          unknown.push({ what: "module", type: "undecodable_bytecode" });
        }
        modules.push(write);
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
        // A change type added after this reader: skipped (and counted); the known ones are stored.
        if (typeof ch.type !== "string" || ch.type.length === 0) throw new IngestError(`${at}: change type is not a string: ${JSON.stringify(ch.type)}`);
        unknown.push({ what: "change", type: labelOf(ch.type) });
    }
  });

  // The whole transaction as received, which the history serves (docs/decisions.md §20).
  const txn: TxnWrite = { version, kind, hash, user, json: JSON.stringify(t) };
  const events = handleEvents(t.events, where);
  if (events !== null) txn.events = events;
  return {
    txn,
    blockStart,
    endInfo,
    modules,
    tableItems,
    resources,
    unknown,
  };
}

/**
 * The events of a transaction that belong to an event handle, with their place in its `events`
 * (docs/decisions.md §22), or null for none. The handle is the event's `guid`, or in older ledgers
 * its `key` (the creation number's 8 bytes little-endian, then the address). A module event has
 * no handle: the node prints it with creation number 0 at `0x0`, and it is left out.
 */
function handleEvents(value: unknown, where: string): EventWrite[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  let out: EventWrite[] | null = null;
  for (let index = 0; index < value.length; index++) {
    const at = `${where} event #${index}`;
    const e = value[index] as Json | null;
    if (typeof e !== "object" || e === null) throw new IngestError(`${at} is not an object`);
    let account: Uint8Array;
    let creationNumber: bigint;
    const guid = e.guid as Json | null | undefined;
    if (typeof guid === "object" && guid !== null) {
      creationNumber = u64Field(guid, "creation_number", at);
      account = addressField(guid, "account_address", at);
    } else if (typeof e.key === "string") {
      const key = parseHexBytes(e.key);
      if (key?.length !== 40) throw new IngestError(`${at}: key is not 40 hex bytes: ${JSON.stringify(e.key).slice(0, 100)}`);
      creationNumber = Buffer.from(key.buffer, key.byteOffset, 8).readBigUInt64LE(0);
      account = key.subarray(8);
    } else {
      continue;
    }
    if (creationNumber === 0n && account.every((b) => b === 0)) continue;
    const event = { account, creationNumber, sequenceNumber: u64Field(e, "sequence_number", at), index };
    if (out === null) out = [event];
    else out.push(event);
  }
  return out;
}

/** The stored kind of a transaction whose type this reader does not know. */
export const UNKNOWN_TXN_KIND = "unknown_transaction" satisfies TxnKind;

/**
 * A transaction of a new type that carries a sender and a replay protector (a sequence number or
 * a nonce), as user transactions do: its sender and replay protector are stored so that the
 * sender's transaction summaries list it. Its gas is stored when it carries it; the gas estimate
 * reads user transactions only. Null when it carries no sender; a malformed one is an error.
 */
function userLike(t: Json, where: string): TxnWrite["user"] {
  if (t.sender === undefined || t.sender === null) return null;
  const sender = addressField(t, "sender", where);
  let replayProtector: UserTxnWrite["replayProtector"];
  if (t.replay_protection_nonce !== undefined && t.replay_protection_nonce !== null) {
    replayProtector = { type: "nonce", value: u64Field(t, "replay_protection_nonce", where) };
  } else if (t.sequence_number !== undefined && t.sequence_number !== null) {
    replayProtector = { type: "sequence_number", value: u64Field(t, "sequence_number", where) };
  } else {
    return null;
  }
  const optionalU64 = (field: string) => (t[field] === undefined || t[field] === null ? 0n : u64Field(t, field, where));
  return {
    sender,
    replayProtector,
    gasUnitPrice: optionalU64("gas_unit_price"),
    gasUsed: optionalU64("gas_used"),
    success: t.success !== false,
    contractAddress: null,
  };
}

/** A type name as a metric label and log word: at most 64 of `[A-Za-z0-9_:<>]`, else `other`. */
function labelOf(type: string): string {
  return /^[A-Za-z0-9_:<>]{1,64}$/.test(type) ? type : "other";
}

/**
 * The source's ABI of a module, as JSON text, when it is an object naming the module (the node's
 * `MoveModule`); null otherwise. Property order is kept as the source sent it.
 */
function upstreamAbiText(abi: unknown): string | null {
  if (typeof abi !== "object" || abi === null || Array.isArray(abi)) return null;
  const a = abi as Json;
  if (typeof a.name !== "string" || typeof a.address !== "string") return null;
  return JSON.stringify(abi);
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
  const parts = typeof fn === "string" ? fn.split("::") : [];
  const addr = parts.length === 3 ? parseAddress(parts[0]!) : null;
  if (!addr) {
    throw new IngestError(`${where}: payload function is not an entry function id (address::module::name): ${JSON.stringify(fn)}`);
  }
  return Buffer.from(addr.buffer, addr.byteOffset, addr.byteLength).toString("hex");
}

function nameFromAbi(abi: unknown): string | null {
  const n = (abi as Json | null | undefined)?.name;
  return typeof n === "string" && n.length > 0 ? n : null;
}

const U64_DIGITS = /^[0-9]{1,20}$/;

function u64Field(o: Json, field: string, where: string): bigint {
  const v = o[field];
  if (typeof v === "string" && U64_DIGITS.test(v)) {
    const n = BigInt(v);
    // Up to 19 digits is below 2^64 whatever they are.
    if (v.length < 20 || n <= U64_MAX) return n;
  }
  throw new IngestError(`${where}: ${field} must be a u64 decimal string, got ${JSON.stringify(v)}`);
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
