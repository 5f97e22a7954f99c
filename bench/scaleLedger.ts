/**
 * The ledger of bench/scale.bench.ts: the real genesis (57 framework modules at 0x1), then blocks
 * in the devnet's transaction format but with many actors, so a request mix can ask about a
 * random account, key or version the way real traffic does:
 * - `SENDERS` accounts send sequence-number and orderless transactions (transfers, table writes);
 * - `TABLE_HANDLES` tables with `TABLE_KEYS` keys in all, every key written once up front, then
 *   overwritten (and now and then deleted and written again) at random;
 * - `MODULE_ACCOUNTS` of the senders publish 1 to 40 modules each up front and upgrade one now and then;
 * - `HISTORY_ACCOUNT` upgrades its one module `HISTORY_UPGRADES` times, spread over the whole ledger
 *   (each upgrade different bytecode), whatever the ledger's size.
 *
 * Built in process through the Importer (no NDJSON file). SQLite: into `DB.tmp`, renamed when
 * complete; PostgreSQL (bench/scalePg.ts): into database `scale_N_tmp`, renamed when complete.
 * Deterministic for a given size.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { Importer } from "../src/ingest/importer.js";
import { prng } from "../src/ingest/devnet/chain.js";
import { toHex } from "../src/ledger/address.js";
import { buildModule } from "../src/move/builder.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { openStore } from "../src/storage/open.js";
import { FIXTURES } from "../test/helpers/fixtures.js";

export const SENDERS = 5_000;
export const TABLE_HANDLES = 8;
export const TABLE_KEYS = 20_000;
export const MODULE_ACCOUNTS = 1_000;
export const HISTORY_UPGRADES = 10_000;
export const HISTORY_ACCOUNT = "0x" + "b15a0e".padStart(64, "0");
/** User transactions per ordinary block: 1 to this many. */
const MAX_TXNS_PER_BLOCK = 30;
const MIN_GAS_PRICE = 100n;
const NO_SEQUENCE = "18446744073709551615";

export const scaleAccount = (i: number): string => "0x" + createHash("sha256").update(`ledger-node scale account ${i}`).digest("hex");
export const scaleHandle = (i: number): string => "0x" + createHash("sha256").update(`ledger-node scale table ${i}`).digest("hex");
/** The i-th table key: 8 bytes spread over the key space (not in order of i). */
export const scaleKey = (i: number): string => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE((BigInt(i + 1) * 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn);
  return toHex(b);
};
const u64le = (v: bigint): string => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return toHex(b);
};

type Json = Record<string, unknown>;

function moduleBytes(address: string, name: string, revision: number): string {
  return toHex(
    buildModule({
      address,
      name,
      structs: [{ name: "State", abilities: ["key"], fields: [{ name: "value", type: "u64" }, { name: "owner", type: "address" }] }],
      functions: [
        { name: "init", entry: true, params: ["&signer", "u64"] },
        { name: "get", view: true, params: ["address"], returns: ["u64"] },
        { name: `revision_${revision}`, view: true, returns: ["u64"] },
      ],
    }),
  );
}

/**
 * Builds the ledger of `versions` (at least) versions at `db` (a SQLite file) unless it exists.
 * An existing one is opened once with a writer, which migrates a file an older version wrote (the
 * bench serves it read-only, and a read-only open does not migrate); a current file is not written.
 */
export async function buildScaleLedger(db: string, versions: number, log: (s: string) => void = console.error): Promise<void> {
  if (existsSync(db)) {
    await (await openStore(db)).close();
    return;
  }
  const tmp = `${db}.tmp`;
  for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`]) rmSync(f, { force: true });
  const store = await openStore(tmp, { create: true });
  await writeScaleLedger(store, versions, db, log);
  await store.close();
  for (const f of [`${tmp}-wal`, `${tmp}-shm`]) if (existsSync(f)) throw new Error(`${f} is left after closing the store`);
  renameSync(tmp, db);
}

/**
 * Writes the ledger of `versions` (at least) versions into the empty `store` through the Importer
 * (the store's own write path, SQLite or PostgreSQL); `label` names it in the log. Leaves the store open.
 */
export async function writeScaleLedger(store: Storage, versions: number, label: string, log: (s: string) => void = console.error): Promise<void> {
  const db = label;
  const importer = await Importer.open(store, 4);
  const started = performance.now();
  const rand = prng(versions);
  const senders = Array.from({ length: SENDERS }, (_, i) => scaleAccount(i));
  const handles = Array.from({ length: TABLE_HANDLES }, (_, i) => scaleHandle(i));
  const sequence = new Array<bigint>(SENDERS).fill(0n);
  const moduleCounts = Array.from({ length: MODULE_ACCOUNTS }, () => 1 + Math.floor(rand() * rand() * 40));
  const moduleRevisions = moduleCounts.map((n) => new Array<number>(n).fill(0));
  let version = 0n;
  let height = 0n;
  let ts = 1_700_000_000_000_000n;
  const hash = (kind: string, v: bigint) => "0x" + createHash("sha256").update(`scale/${kind}/${v}`).digest("hex");
  const envelope = (kind: string, v: bigint, gasUsed = "0"): Json => ({
    version: v.toString(),
    hash: hash(kind, v),
    state_change_hash: "",
    event_root_hash: "",
    state_checkpoint_hash: null,
    gas_used: gasUsed,
    success: true,
    vm_status: "Executed successfully",
    accumulator_root_hash: "",
  });

  const genesis = JSON.parse(readFileSync(`${FIXTURES}genesis_transaction.json`, "utf8"))[0];
  await importer.push(genesis);
  version = 1n;
  height = 1n;

  /** One block of user transactions made by `make` (called with each transaction's version). */
  const block = async (count: number, make: (v: bigint, n: number) => Json) => {
    ts += 1_000_000n;
    const meta = version++;
    await importer.push({
      ...envelope("block", meta),
      changes: [],
      id: hash("block-id", height),
      epoch: "1",
      round: height.toString(),
      events: [
        {
          guid: { creation_number: "3", account_address: "0x1" },
          sequence_number: height.toString(),
          type: "0x1::block::NewBlockEvent",
          data: { epoch: "1", height: height.toString(), round: height.toString(), time_microseconds: ts.toString() },
        },
      ],
      previous_block_votes_bitvec: [],
      proposer: senders[0],
      failed_proposer_indices: [],
      timestamp: ts.toString(),
      type: "block_metadata_transaction",
    });
    for (let n = 0; n < count; n++) await importer.push(make(version++, n));
    const end = version++;
    await importer.push({
      ...envelope("epilogue", end),
      state_checkpoint_hash: hash("checkpoint", end),
      changes: [],
      timestamp: ts.toString(),
      block_end_info: { block_gas_limit_reached: false, block_output_limit_reached: false, block_effective_block_gas_units: 0, block_approx_output_size: 0 },
      type: "block_epilogue_transaction",
    });
    height++;
  };
  const user = (v: bigint, sender: number, changes: Json[], payload: Json, orderless: boolean): Json => {
    const seq = sequence[sender]!;
    if (!orderless) sequence[sender] = seq + 1n;
    return {
      ...envelope("user", v, String(5 + Math.floor(rand() * 20))),
      changes,
      sender: senders[sender],
      sequence_number: orderless ? NO_SEQUENCE : seq.toString(),
      replay_protection_nonce: orderless ? String(Math.floor(rand() * 2 ** 48)) : null,
      max_gas_amount: "200000",
      gas_unit_price: MIN_GAS_PRICE.toString(),
      expiration_timestamp_secs: String(ts / 1_000_000n + 600n),
      payload,
      signature: { type: "ed25519_signature", public_key: "0x" + "00".repeat(32), signature: "0x" + "00".repeat(64) },
      events: [],
      timestamp: ts.toString(),
      type: "user_transaction",
    };
  };
  const tableWrite = (key: number, v: bigint): Json => ({
    type: "write_table_item",
    state_key_hash: "",
    handle: handles[key % TABLE_HANDLES],
    key: scaleKey(key),
    value: u64le(v),
    data: null,
  });
  const publish = (v: bigint, account: number, modules: number[]): Json => {
    const address = senders[account]!;
    const changes = modules.map((m) => ({
      type: "write_module",
      address,
      state_key_hash: "",
      data: { bytecode: moduleBytes(address, `module_${m}`, moduleRevisions[account]![m]!), abi: null },
    }));
    return user(v, account, changes, { type: "module_bundle_payload", modules: changes.map((c) => c.data) }, false);
  };
  const entry = (fn: string, args: string[]): Json => ({ type: "entry_function_payload", function: fn, type_arguments: [], arguments: args });

  // Up front: every module account publishes its modules, every table key is written once.
  for (let a = 0; a < MODULE_ACCOUNTS; a += 10) {
    await block(Math.min(10, MODULE_ACCOUNTS - a), (v, n) => {
      const account = a + n;
      return publish(v, account, Array.from({ length: moduleCounts[account]! }, (_, m) => m));
    });
  }
  for (let k = 0; k < TABLE_KEYS; k += 1_000) {
    await block(10, (v, n) => {
      const first = k + n * 100;
      const changes = Array.from({ length: 100 }, (_, j) => tableWrite(first + j, v));
      return user(v, 0, changes, entry("0x1::table_setup::write", []), false);
    });
  }
  // The history account's module, first version.
  let historyRevision = 0;
  const historyModule = () => {
    const code = moduleBytes(HISTORY_ACCOUNT, "history", historyRevision++);
    return { type: "write_module", address: HISTORY_ACCOUNT, state_key_hash: "", data: { bytecode: code, abi: null } };
  };
  const historyTxn = (v: bigint): Json => {
    const change = historyModule();
    // sent by an ordinary sender on the history account's behalf (a resource-account upgrade)
    return user(v, Math.floor(rand() * SENDERS), [change], { type: "module_bundle_payload", modules: [change.data] }, false);
  };
  await block(1, historyTxn);

  const averageBlock = 2 + (1 + MAX_TXNS_PER_BLOCK) / 2;
  const upgradeEvery = Math.max(1, Math.floor(versions / averageBlock / HISTORY_UPGRADES));
  let lastLog = performance.now();
  while (version < BigInt(versions)) {
    const upgrade = height % BigInt(upgradeEvery) === 0n && historyRevision <= HISTORY_UPGRADES;
    const count = 1 + Math.floor(rand() * MAX_TXNS_PER_BLOCK);
    await block(count, (v, n) => {
      if (upgrade && n === 0) return historyTxn(v);
      const sender = Math.floor(rand() * SENDERS);
      const orderless = rand() < 0.2;
      const r = rand();
      if (r < 0.45) {
        const key = Math.floor(rand() * TABLE_KEYS);
        const del = rand() < 0.05;
        const change = del
          ? { type: "delete_table_item", state_key_hash: "", handle: handles[key % TABLE_HANDLES], key: scaleKey(key), data: null }
          : tableWrite(key, v);
        return user(v, sender, [change], entry("0x1::registry::set", [String(key)]), orderless);
      }
      if (r < 0.46) {
        // a module account upgrades one of its modules
        const account = Math.floor(rand() * MODULE_ACCOUNTS);
        const m = Math.floor(rand() * moduleCounts[account]!);
        moduleRevisions[account]![m]!++;
        return publish(v, account, [m]);
      }
      return user(v, sender, [], entry("0x1::aptos_account::transfer", [senders[(sender + 1) % SENDERS]!, String(1 + Math.floor(rand() * 1000))]), orderless);
    });
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      const rate = Math.round(Number(version) / ((lastLog - started) / 1000));
      log(`  ${db}: version ${version} of ${versions}, ${rate} versions/s`);
    }
  }
  const stats = await importer.finish();
  const secs = (performance.now() - started) / 1000;
  log(`built ${db}: ${stats.committedTxns} versions in ${secs.toFixed(0)} s (${Math.round(stats.committedTxns / secs)} versions/s), ${historyRevision} versions of the history module`);
}
