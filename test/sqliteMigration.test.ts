/**
 * The SQLite schema's migration 4 (issue 17 item 5: interned addresses and resource types, the
 * summaries index without copies, packed resource values): a file written with the schema before
 * it, by the SQL that schema's store ran, migrates on open and then answers every read as a file
 * written by the store of today from the same blocks. Also: interned ids survive a failed commit.
 */
import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appModuleBytecode, frameworkModules } from "../src/ingest/devnet/modules.js";
import { codeHash } from "../src/ledger/codeHash.js";
import { moduleStateKey } from "../src/ledger/stateKey.js";
import type { BaseStateKey } from "../src/storage/contracts/errors.js";
import { FIRST_SYNCED_RECORD } from "../src/storage/contracts/followBase.js";
import { baseRecordName } from "../src/storage/replica/baseRecords.js";
import type { BlockWrite, UserTxnWrite } from "../src/storage/contracts/writer.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { replayKindCode, txnKindCode } from "../src/storage/common/storedCodes.js";
import { moduleAbiJson } from "../src/move/abi.js";
import { MIGRATIONS } from "../src/storage/sqlite/schema.js";
import { PACK_ON_THREAD_MIN } from "../src/storage/sqlite/resourcePacker.js";
import { SqliteStore } from "../src/storage/sqlite/SqliteStore.js";
import { prng, testSeed } from "./helpers/seed.js";
import { tableItem, modulesAt, summariesAt } from "./helpers/store.js";

const SEED = testSeed(17_5);
const dir = mkdtempSync(join(tmpdir(), "ledger-node-migration-"));
const opened: SqliteStore[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
  rmSync(dir, { recursive: true, force: true });
});
let n = 0;
const newPath = () => join(dir, `ledger-${n++}.db`);
const open = (path: string) => {
  const s = new SqliteStore(path);
  opened.push(s);
  return s;
};

const addr = (hi: number, lo: number): Uint8Array => {
  const a = new Uint8Array(32);
  a[0] = hi;
  a[31] = lo;
  return a;
};
const SENDERS = [1, 2, 3, 4].map((i) => addr(0xa0, i));
const HANDLES = [addr(0, 7), addr(0x7a, 0xb1)];
const KEYS = [0, 1, 2, 3].map((i) => Uint8Array.from([i, 0xff]));
const TYPES = ["0x1::account::Account", "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>", "0xa0::thing::Thing"];
/** Contracts as the importer gives them (64 hex digits, stored by id) and as a caller may (stored as text). */
const CONTRACTS = [null, Buffer.from(addr(0xc0, 1)).toString("hex"), "0x1", "0xc0ffee"];
const NAMES = ["a", "coin"];
/** Module code: the devnet builder's (decodes to an ABI) and bytes that do not decode. */
const CODES: Uint8Array[] = [...frameworkModules().slice(0, 4), appModuleBytecode(0), appModuleBytecode(2), ...[0, 1, 2].map((i) => Buffer.from(`code ${i}`))];
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** An account resource as the devnet writes it: what the packing's dictionary is made for. */
const accountJson = (owner: Uint8Array, sequence: bigint) =>
  JSON.stringify({
    authentication_key: `0x${hex(owner)}`,
    coin_register_events: { counter: "0", guid: { id: { addr: `0x${hex(owner)}`, creation_num: "0" } } },
    guid_creation_num: "2",
    key_rotation_events: { counter: "0", guid: { id: { addr: `0x${hex(owner)}`, creation_num: "1" } } },
    rotation_capability_offer: { for: { vec: [] } },
    sequence_number: String(sequence),
    signer_capability_offer: { for: { vec: [] } },
  });

/** A random history over every kind of row a block writes. */
function history(seed: number, blocks: number): BlockWrite[] {
  const random = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const out: BlockWrite[] = [];
  let version = 0n;
  const sequence = SENDERS.map(() => 0n);
  for (let height = 0n; height < BigInt(blocks); height++) {
    const endInfo = random() < 0.5 ? null : { blockGasLimitReached: random() < 0.5, blockOutputLimitReached: random() < 0.5 };
    const w: BlockWrite = {
      block: { height, epoch: height / 10n, timestampUsec: height * 1000n, firstVersion: version, lastVersion: version, endInfo },
      transactions: [],
      modules: [],
      tableItems: [],
      resources: [],
    };
    const count = 1 + Math.floor(random() * 4);
    for (let i = 0; i < count; i++, version++) {
      const s = Math.floor(random() * SENDERS.length);
      let user: UserTxnWrite | null = null;
      if (version > 0n && random() < 0.7) {
        const nonce = random() < 0.2;
        user = {
          sender: SENDERS[s]!,
          replayProtector: nonce ? { type: "nonce", value: BigInt(Math.floor(random() * 2 ** 40)) * 4099n } : { type: "sequence_number", value: sequence[s]!++ },
          gasUnitPrice: pick([100n, 150n, 2n ** 64n - 1n]),
          gasUsed: BigInt(Math.floor(random() * 1000)),
          success: random() < 0.9,
          contractAddress: pick(CONTRACTS),
        };
        w.resources.push({ version, address: SENDERS[s]!, type: TYPES[0]!, json: accountJson(SENDERS[s]!, sequence[s]!) });
      }
      const kind = version === 0n ? "genesis_transaction" : user ? "user_transaction" : "block_metadata_transaction";
      const hash = Buffer.alloc(32);
      hash.writeBigUInt64BE(version * 7919n + 1n, 24);
      w.transactions.push({ version, kind, hash, user });
      for (let k = 0; k < Math.floor(random() * 3); k++) {
        w.tableItems.push({ version, handle: pick(HANDLES), key: pick(KEYS), value: random() < 0.2 ? null : Buffer.from(`item ${version}`) });
      }
      if (random() < 0.4) {
        const json = random() < 0.2 ? null : random() < 0.5 ? `{"value":"${version}","frozen":false}` : `{"n":${version},"s":"${"é".repeat(Number(version % 5n))}"}`;
        w.resources.push({ version, address: pick(SENDERS), type: pick(TYPES.slice(1)), json });
      }
      if (random() < 0.2) {
        const owner = pick(SENDERS);
        const name = pick(NAMES);
        w.modules.push({ version, address: owner, name, stateKey: moduleStateKey(owner, name), bytecode: random() < 0.2 ? null : CODES[Number(version % 9n)]! });
      }
    }
    // A resource written twice in a version: the later one stands (INSERT OR REPLACE).
    const last = w.resources.at(-1);
    if (last && random() < 0.1) w.resources.push({ ...last, json: `{"again":${version}}` });
    w.block.lastVersion = version - 1n;
    out.push(w);
  }
  return out;
}

/**
 * A file with the schema before migration 4 holding `blocks`, written by the statements the store
 * of that schema ran (migrations 1–3, then its commit's inserts).
 */
function writeSchema3File(path: string, blocks: BlockWrite[], base: { what: string; version: bigint } | null): void {
  const db = new Database(path);
  try {
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE schema_version (version INTEGER NOT NULL)");
    for (const [i, sql] of MIGRATIONS.slice(0, 3).entries()) {
      db.exec(sql);
      db.prepare("INSERT INTO schema_version (version) VALUES (?)").run(i + 1);
    }
    const top = (v: bigint) => BigInt.asIntN(64, v ^ (1n << 63n));
    const i64 = (v: bigint) => BigInt.asIntN(64, v);
    const block = db.prepare("INSERT INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?)");
    const txn = db.prepare(
      "INSERT INTO transactions (version, kind, hash, sender, replay_kind, replay_value, gas_unit_price, gas_used, success, contract) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const summary = db.prepare("INSERT INTO account_transactions (sender, version, hash, replay_kind, replay_value) VALUES (?, ?, ?, ?, ?)");
    const mod = db.prepare("INSERT OR REPLACE INTO modules (address, state_key, version, name, code_hash) VALUES (?, ?, ?, ?, ?)");
    const code = db.prepare("INSERT OR IGNORE INTO code (code_hash, bytecode) VALUES (?, ?)");
    const item = db.prepare("INSERT OR REPLACE INTO table_items (handle, key, version, value) VALUES (?, ?, ?, ?)");
    const resource = db.prepare("INSERT OR REPLACE INTO resources (address, type, version, value) VALUES (?, ?, ?, ?)");
    db.transaction(() => {
      db.prepare("INSERT INTO ledger (id, chain_id) VALUES (1, 4)").run();
      for (const w of blocks) {
        const b = w.block;
        const flag = (on: boolean | undefined) => (on === undefined ? null : on ? 1 : 0);
        block.run(b.height, b.epoch, top(b.timestampUsec), b.firstVersion, b.lastVersion, flag(b.endInfo?.blockGasLimitReached), flag(b.endInfo?.blockOutputLimitReached));
        for (const t of w.transactions) {
          const u = t.user;
          txn.run(t.version, txnKindCode(t.kind), t.hash, u?.sender ?? null, u ? replayKindCode(u.replayProtector) : null, u ? i64(u.replayProtector.value) : null,
            u ? i64(u.gasUnitPrice) : null, u ? i64(u.gasUsed) : null, u ? flag(u.success) : null, u?.contractAddress ?? null);
          if (u) summary.run(u.sender, t.version, t.hash, replayKindCode(u.replayProtector), i64(u.replayProtector.value));
        }
        for (const m of w.modules) {
          const h = m.bytecode ? codeHash(m.bytecode) : null;
          if (m.bytecode) code.run(h, m.bytecode);
          mod.run(m.address, m.stateKey, m.version, m.name, h);
        }
        for (const t of w.tableItems) item.run(t.handle, t.key, t.version, t.value);
        for (const r of w.resources) resource.run(r.address, r.type, r.version, r.json);
        db.prepare(
          `UPDATE ledger SET ledger_version = ?, timestamp_usec = ?, epoch = ?, block_height = ?,
             oldest_version = coalesce(oldest_version, ?), oldest_block_height = coalesce(oldest_block_height, ?) WHERE id = 1`,
        ).run(b.lastVersion, top(b.timestampUsec), b.epoch, b.height, b.firstVersion, b.height);
      }
      if (base) db.prepare("INSERT INTO follow_base (what, version) VALUES (?, ?)").run(base.what, base.version);
    })();
  } finally {
    db.close();
  }
}

/** Every read of the store interface at `version`, as plain data. */
async function readAt(s: Storage, version: bigint) {
  const info = (await s.getLedgerInfo(true))!;
  const h = (b: Uint8Array | null) => (b ? hex(b) : null);
  const out: Record<string, unknown> = {};
  for (const handle of [...HANDLES, addr(9, 9)]) {
    for (const key of KEYS) out[`item ${hex(handle)} ${hex(key)}`] = h(await tableItem(s, handle, key, version));
  }
  for (const a of [...SENDERS, addr(9, 9)]) {
    for (const type of TYPES) out[`resource ${hex(a)} ${type}`] = await s.getResource(a, type, version);
    out[`modules ${hex(a)}`] = await modulesAt(s, a, version, null, 100);
    out[`modules with code ${hex(a)}`] = (await s.readModules(a, version, null, 100, () => true))?.value.rows;
    out[`modules version ${hex(a)}`] = (await s.readModulesVersion(a, version))?.value;
    out[`summaries ${hex(a)}`] = await summariesAt(s, { sender: a, start: info.oldestVersion, ledgerVersion: version, limit: 1000 });
    out[`summaries back ${hex(a)}`] = await summariesAt(s, { sender: a, end: version, ledgerVersion: info.ledgerVersion, limit: 3 });
    out[`summaries version ${hex(a)}`] = (await s.readSummariesVersion(a, version))?.value;
    out[`newest resource ${hex(a)}`] = await s.newestStateVersion({ kind: "resource", address: a, type: TYPES[0]! }, version);
  }
  out.newestItem = await s.newestStateVersion({ kind: "table_item", handle: HANDLES[1]!, key: KEYS[1]! }, version);
  out.block = await s.getBlockByVersion(version);
  out.gas = await s.getUserTxnGas(0n, version);
  out.fingerprints = await s.getFingerprints(0n, version);
  return out;
}

describe(`SQLite migration 4: interned addresses and types, packed resources (seed ${SEED})`, () => {
  const blocks = history(SEED, 150);
  const last = blocks.at(-1)!.block.lastVersion;

  it("migrates a file of the schema before and then answers every read as a file written by today's store, pruned or not", async () => {
    const oldPath = newPath();
    writeSchema3File(oldPath, blocks, { what: "account:a0", version: 3n });
    const migrated = open(oldPath);
    const fresh = open(newPath());
    await fresh.initChain(4);
    await fresh.commitBlocks(blocks);
    await fresh.writeBaseState({ what: "account:a0", fetchedAt: 3n, modules: [], tableItems: [], resources: [] });

    const query = (sql: string) => {
      const db = new Database(oldPath, { readonly: true });
      try {
        return db.prepare(sql).pluck().all();
      } finally {
        db.close();
      }
    };
    expect(query("SELECT name FROM pragma_table_info('resources')")).toEqual(["address_id", "type_id", "version", "value"]);
    expect(query("SELECT name FROM pragma_table_info('account_transactions')")).toEqual(["sender_id", "version", "hash", "replay_kind", "replay_value"]);
    // Every resource value was packed on the way (blobs), none left as text.
    expect(query("SELECT DISTINCT typeof(value) FROM resources ORDER BY 1")).toEqual(["blob", "null"]);
    expect(await migrated.getLedgerInfo(true)).toEqual(await fresh.getLedgerInfo(true));
    // (migration 7 named it by the digest of its old name)
    expect(await migrated.getBaseRecord(`account:${createHash("sha256").update("account:a0").digest("hex")}`)).toBe(3n);
    for (let v = 0n; v <= last; v += 3n) expect(await readAt(migrated, v), `at ${v}`).toEqual(await readAt(fresh, v));

    // It goes on as a ledger of today: new blocks with new addresses, then a prune.
    let first = last + 1n;
    const more = history(SEED + 1, 40)
      .slice(1)
      .map((w, i) => {
        const moved = shift(w, first, BigInt(blocks.length + i));
        first = moved.block.lastVersion + 1n;
        return moved;
      });
    for (const s of [migrated, fresh]) await s.commitBlocks(more);
    const newest = more.at(-1)!.block.lastVersion;
    const target = { oldestVersion: blocks[60]!.block.firstVersion, oldestBlockHeight: 60n };
    expect(await migrated.prune(target)).toEqual(await fresh.prune(target));
    for (let v = target.oldestVersion; v <= newest; v += 3n) expect(await readAt(migrated, v), `at ${v}`).toEqual(await readAt(fresh, v));
    // About 20 s on a quiet machine (every read at a third of the versions, twice over).
  }, 180_000);

  it("stores the same packed values whether a commit packs them on the packing thread or inline", async () => {
    const many = history(SEED + 2, 400);
    const resources = many.reduce((n, w) => n + w.resources.filter((r) => r.json !== null).length, 0);
    expect(resources).toBeGreaterThanOrEqual(PACK_ON_THREAD_MIN);
    const [threaded, inline] = [open(newPath()), open(newPath())];
    for (const s of [threaded, inline]) await s.initChain(4);
    await threaded.commitBlocks(many);
    for (const w of many) await inline.commitBlock(w);
    const values = (s: SqliteStore) => {
      const db = new Database(s.path, { readonly: true });
      try {
        return db.prepare("SELECT address_id, type_id, version, hex(value) FROM resources ORDER BY 1, 2, 3").raw().all();
      } finally {
        db.close();
      }
    };
    expect(values(threaded)).toEqual(values(inline));
    const at = many.at(-1)!.block.lastVersion;
    for (const a of SENDERS) for (const type of TYPES) expect(await threaded.getResource(a, type, at)).toBe(await inline.getResource(a, type, at));
  });

  it("forgets the ids a failed commit interned: a later address takes the id, the first one gets its own", async () => {
    const s = open(newPath());
    await s.initChain(4);
    await s.commitBlocks(blocks.slice(0, 5));
    const x = addr(0xee, 1);
    const y = addr(0xee, 2);
    const next = blocks[5]!;
    const withSender = (w: BlockWrite, sender: Uint8Array, type: string): BlockWrite => ({
      ...w,
      transactions: w.transactions.map((t, i) => (i === 0 ? t : { ...t, kind: "user_transaction", user: { sender, replayProtector: { type: "nonce", value: 1n }, gasUnitPrice: 1n, gasUsed: 1n, success: true, contractAddress: null } })),
      resources: [{ version: w.block.firstVersion, address: sender, type, json: '{"x":1}' }],
      tableItems: [{ version: w.block.firstVersion, handle: sender, key: KEYS[0]!, value: Buffer.from("x") }],
    });
    const withX = withSender({ ...next, transactions: [...next.transactions, next.transactions[0]!] }, x, "0xee::x::X");
    // The repeated version fails the batch after x and its type were interned: all of it rolls back.
    await expect(s.commitBlocks([withX])).rejects.toThrow(/UNIQUE/);
    await s.commitBlocks([withSender(next, y, "0xee::y::Y")]);
    const after = shift(blocks[6]!, blocks[5]!.block.lastVersion + 1n, 6n);
    await s.commitBlocks([withSender(after, x, "0xee::x::X")]);
    const at = after.block.lastVersion;
    expect(await s.getResource(x, "0xee::x::X", at)).toBe('{"x":1}');
    expect(await s.getResource(y, "0xee::y::Y", at)).toBe('{"x":1}');
    expect(await s.getResource(x, "0xee::y::Y", at)).toBeNull();
    expect(hex((await tableItem(s, x, KEYS[0]!, at))!)).toBe(hex(Buffer.from("x")));
    const sent = async (a: Uint8Array) => (await summariesAt(s, { sender: a, start: 0n, ledgerVersion: at, limit: 100 })).map((r) => r.version);
    expect(await sent(x)).toEqual(after.transactions.slice(1).map((t) => t.version));
    expect(await sent(y)).toEqual(next.transactions.slice(1).map((t) => t.version));
  });
});

describe("SQLite migrations 5 and 6: the ABI text of every module's code, stored beside it; module keys and code ids", () => {
  /** A file of schema 4 holding `blocks`' modules, written by that schema's statements. */
  function writeSchema4File(path: string, blocks: BlockWrite[]): void {
    const db = new Database(path);
    try {
      db.pragma("journal_mode = WAL");
      // Migration 4 names it; it packs nothing in an empty file.
      db.function("pack_resource_value", (_owner: unknown, _json: unknown) => null);
      db.exec("CREATE TABLE schema_version (version INTEGER NOT NULL)");
      for (const [i, sql] of MIGRATIONS.slice(0, 4).entries()) {
        db.exec(sql);
        db.prepare("INSERT INTO schema_version (version) VALUES (?)").run(i + 1);
      }
      const mod = db.prepare("INSERT OR REPLACE INTO modules (address, state_key, version, name, code_hash) VALUES (?, ?, ?, ?, ?)");
      const code = db.prepare("INSERT OR IGNORE INTO code (code_hash, bytecode) VALUES (?, ?)");
      db.transaction(() => {
        const last = blocks.at(-1)!.block;
        db.prepare("INSERT INTO ledger VALUES (1, 4, ?, 0, 0, ?, 0, 0)").run(last.lastVersion, last.height);
        for (const m of blocks.flatMap((w) => w.modules)) {
          const h = m.bytecode ? codeHash(m.bytecode) : null;
          if (m.bytecode) code.run(h, m.bytecode);
          mod.run(m.address, m.stateKey, m.version, m.name, h);
        }
      })();
    } finally {
      db.close();
    }
  }

  it("fills the ABI of the code a file of schema 4 holds: its module pages then read as those of a file written today", async () => {
    const owner = SENDERS[0]!;
    const names = ["a", "b", "coin", "zz"];
    const blocks: BlockWrite[] = CODES.map((_, v) => ({
      block: { height: BigInt(v), epoch: 0n, timestampUsec: 0n, firstVersion: BigInt(v), lastVersion: BigInt(v), endInfo: null },
      transactions: [{ version: BigInt(v), kind: v === 0 ? "genesis_transaction" : "block_metadata_transaction", hash: Buffer.alloc(32, v), user: null }],
      // every version rewrites one of the names: pages differ from version to version
      modules: [{ version: BigInt(v), address: owner, name: names[v % names.length]!, stateKey: moduleStateKey(owner, names[v % names.length]!), bytecode: v === 6 ? null : CODES[v]! }],
      tableItems: [],
      resources: [],
    }));
    const oldPath = newPath();
    writeSchema4File(oldPath, blocks);
    const migrated = open(oldPath);
    const fresh = open(newPath());
    await fresh.initChain(4);
    await fresh.commitBlocks(blocks);
    const db = new Database(oldPath, { readonly: true });
    try {
      expect(db.prepare("SELECT name FROM pragma_table_info('code')").pluck().all()).toEqual(["id", "code_hash", "bytecode", "abi"]);
      expect(db.prepare("SELECT count(*) FROM code WHERE abi IS NULL").pluck().get()).toBe(0);
      expect(db.prepare("SELECT max(version) FROM schema_version").pluck().get()).toBe(MIGRATIONS.length);
    } finally {
      db.close();
    }
    for (let v = 0n; v < BigInt(blocks.length); v++) {
      const page = async (s: SqliteStore) => (await s.readModules(owner, v, null, 100, () => true))!.value;
      const rows = (await page(migrated)).rows;
      expect(rows.length).toBeGreaterThan(0);
      for (const m of rows) expect(m.abi, `${m.name} at ${v}`).toBe(moduleAbiJson(m.bytecode!));
      expect(await page(migrated), `at ${v}`).toEqual(await page(fresh));
      // migration 6: the keys and code ids it filled give the same pages, records included
      const records = async (s: SqliteStore) => (await s.wire.readModules(owner, v, null, 100, () => true))!.value;
      expect(await records(migrated), `records at ${v}`).toEqual(await records(fresh));
    }
  });
});

describe("SQLite migration 7: base records named by a digest of what they name", () => {
  it("renames every record a file of schema 6 holds to baseRecordName's digest; the first-synced record keeps its name", async () => {
    const path = newPath();
    const bigKey = new Uint8Array(3000).fill(0xab);
    const keys: Array<[BaseStateKey, string]> = [
      [{ kind: "modules", address: addr(0, 1) }, `modules:0x${hex(addr(0, 1))}`],
      [{ kind: "resources", address: addr(0xa0, 2) }, `resources:0x${hex(addr(0xa0, 2))}`],
      [{ kind: "table_item", handle: HANDLES[1]!, key: bigKey }, `table_item:0x${hex(HANDLES[1]!)}:0x${hex(bigKey)}`],
      [{ kind: "resource", address: addr(0xa0, 3), type: TYPES[1]! }, `resource:0x${hex(addr(0xa0, 3))}:${TYPES[1]}`],
    ];
    const db = new Database(path);
    try {
      db.pragma("journal_mode = WAL");
      db.function("pack_resource_value", (_owner: unknown, _json: unknown) => null);
      db.function("module_abi_json", (_bytecode: unknown) => null);
      db.exec("CREATE TABLE schema_version (version INTEGER NOT NULL)");
      for (const [i, sql] of MIGRATIONS.slice(0, 6).entries()) {
        db.exec(sql);
        db.prepare("INSERT INTO schema_version (version) VALUES (?)").run(i + 1);
      }
      const insert = db.prepare("INSERT INTO follow_base (what, version) VALUES (?, ?)");
      insert.run(FIRST_SYNCED_RECORD, 100);
      for (const [i, [, old]] of keys.entries()) insert.run(old, 90 + i);
    } finally {
      db.close();
    }
    const migrated = open(path);
    expect(await migrated.getBaseRecord(FIRST_SYNCED_RECORD)).toBe(100n);
    for (const [i, [key, old]] of keys.entries()) {
      const name = baseRecordName(key);
      expect(name).toMatch(new RegExp(`^${key.kind}:[0-9a-f]{64}$`));
      expect(await migrated.getBaseRecord(name), name).toBe(BigInt(90 + i));
      expect(await migrated.getBaseRecord(old)).toBeNull();
    }
  });
});

describe("SQLite: a read-only open of a file an older version wrote", () => {
  it("says the schema is older and how to migrate it, and reads once a writer has opened it", async () => {
    const path = newPath();
    writeSchema3File(path, history(SEED + 3, 5), null);
    expect(() => new SqliteStore(path, { readonly: true })).toThrow(
      /its schema is version 3 and this build reads version \d+: a read-only open does not migrate; open it once with a writer \(serve without --no-prune, or an import\) to migrate it$/,
    );
    await open(path).close();
    const reader = new SqliteStore(path, { readonly: true });
    opened.push(reader);
    expect((await reader.getLedgerInfo())?.blockHeight).toBe(4n);
  });
});

/** Block `w` moved to start at `first` with height `height` (its rows keep their order). */
function shift(w: BlockWrite, first: bigint, height: bigint): BlockWrite {
  const d = first - w.block.firstVersion;
  return {
    block: { ...w.block, height, timestampUsec: height * 1000n, firstVersion: first, lastVersion: w.block.lastVersion + d },
    transactions: w.transactions.map((t) => ({ ...t, version: t.version + d, hash: Buffer.alloc(32, Number((t.version + d) % 256n)) })),
    modules: w.modules.map((m) => ({ ...m, version: m.version + d })),
    tableItems: w.tableItems.map((t) => ({ ...t, version: t.version + d })),
    resources: w.resources.map((r) => ({ ...r, version: r.version + d })),
  };
}

describe("SQLite migration 10: the events of event handles", () => {
  it("adds the events index to a file of schema 9: its versions have none indexed, the blocks committed after are indexed and read", async () => {
    const path = newPath();
    const alice = Buffer.alloc(32, 0xa1);
    const blockAt = (height: bigint, version: bigint, sequenceNumber: bigint): BlockWrite => ({
      block: { height, epoch: 1n, timestampUsec: height * 1000n, firstVersion: version, lastVersion: version, endInfo: null },
      transactions: [
        {
          version,
          kind: height === 0n ? "genesis_transaction" : "block_metadata_transaction",
          hash: Buffer.alloc(32, Number(version)),
          user: null,
          json: JSON.stringify({ version: String(version), events: [{ guid: { creation_number: "2", account_address: "0x1" } }] }),
          events: [{ account: alice, creationNumber: 2n, sequenceNumber, index: 0 }],
        },
      ],
      modules: [],
      tableItems: [],
      resources: [],
    });
    const before = open(path);
    await before.initChain(4);
    await before.commitBlock(blockAt(0n, 0n, 0n));
    await before.close();
    // Back to schema 9: the file as the previous version of the store left it.
    const db = new Database(path);
    try {
      db.exec("DROP TABLE events");
      db.prepare("DELETE FROM schema_version WHERE version = ?").run(MIGRATIONS.length);
    } finally {
      db.close();
    }
    const migrated = open(path);
    expect((await migrated.readEvents({ account: alice, creationNumber: 2n, start: 0n, limit: 10 }))?.value.events).toEqual([]);
    await migrated.commitBlock(blockAt(1n, 1n, 1n));
    const page = await migrated.readEvents({ account: alice, creationNumber: 2n, limit: 10 });
    expect(page?.value.events).toEqual([{ sequenceNumber: 1n, version: 1n, index: 0 }]);
    expect(page?.value.texts.map((t) => Buffer.from(t!).toString())).toEqual([blockAt(1n, 1n, 1n).transactions[0]!.json]);
  });
});
