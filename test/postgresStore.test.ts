/**
 * What the PostgreSQL store does beyond the shared suite (`store.suite.ts`): migration 4 (interned
 * addresses and resource types, packed resource values) converts a database made before it and
 * every read answers as before; and pruning in bounded steps (tiny steps here, so that every
 * boundary is crossed) ends with exactly the rows one whole prune leaves, answers exactly between
 * its steps, and resumes after being cut off mid-way. The migrations and the plans are tested on
 * each PostgreSQL major of `PG_MAJORS`, the rest on `DEFAULT_PG_MAJOR`; each describe names its major.
 */
import { spawn } from "node:child_process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appModuleBytecode, frameworkModules } from "../src/ingest/devnet/modules.js";
import { codeHash } from "../src/ledger/codeHash.js";
import { moduleAbiJson } from "../src/move/abi.js";
import { moduleStateKey } from "../src/ledger/stateKey.js";
import type { BlockWrite, PruneResult } from "../src/storage/contracts/writer.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { PostgresStore, type PostgresConnectOptions, type PostgresStoreOptions } from "../src/storage/postgres/PostgresStore.js";
import { MIGRATIONS } from "../src/storage/postgres/schema.js";
import { commitValues } from "../src/storage/postgres/commit.js";
import { SQL } from "../src/storage/postgres/sql.js";
import { prepareBlock } from "../src/storage/common/prepareBlock.js";
import { poolOf } from "../src/storage/postgres/testing.js";
import type { Backend } from "./helpers/backends.js";
import { DEFAULT_PG_MAJOR, PG_MAJORS, type PgMajor, postgresBackend } from "./helpers/postgres.js";
import { dumpTables } from "./helpers/ledgerTables.js";
import { genesisModules } from "./helpers/moveFixtures.js";
import { prng, testSeed } from "./helpers/seed.js";
import { tableItem, modulesAt, summariesAt } from "./helpers/store.js";

const SEED = testSeed(17_2026);
/** The built command line and store (`npm run build`), for the processes the tests kill. */
const CLI = new URL("../dist/cli.js", import.meta.url).pathname;
const OPEN_STORE = new URL("../dist/storage/open.js", import.meta.url).href;
const backends = new Map(PG_MAJORS.map((major) => [major, postgresBackend(major)]));
/** The backend of the major whose tests run now (`describeOn` sets it for its tests). */
let backend: Backend;
const opened: Storage[] = [];
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined);
  for (const b of backends.values()) await b.cleanup();
});

/** `describe(title, body)` once for each of `majors`, the title naming the major, its tests on that major's backend. */
function describeOn(majors: readonly PgMajor[], title: string, body: () => void): void {
  for (const major of majors) {
    describe(`${title} on PostgreSQL ${major}`, () => {
      beforeAll(() => {
        backend = backends.get(major)!;
      });
      body();
    });
  }
}
const open = async (url: string, opts: PostgresConnectOptions = {}): Promise<PostgresStore> => {
  const s = await PostgresStore.connect(url, opts);
  opened.push(s);
  return s;
};
const TINY_STEPS: PostgresStoreOptions = { pruneStepVersions: 1, pruneStepRows: 1 };
const WHOLE: PostgresStoreOptions = { pruneStepVersions: 1e9, pruneStepRows: 1e9 };

const addr = (i: number): Uint8Array => {
  const a = new Uint8Array(32);
  a[0] = 0xa0;
  a[31] = i;
  return a;
};
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const SENDERS = [addr(1), addr(2), addr(3), addr(4)];
/** A table handle may also be an account's address (both are AccountAddress): one id for both. */
const HANDLES = [addr(0x70), addr(2)];
const KEYS = [0, 1, 2, 3, 4, 5].map((i) => Uint8Array.from([i, 0xee]));
const TYPES = ["0x1::account::Account", "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>", "0x1::object::ObjectCore"];
const NAMES = ["a", "b", "coin"];
const CONTRACTS = [hex(addr(0x99)), hex(addr(1)), null];

const accountJson = (owner: Uint8Array, seq: bigint) =>
  `{"authentication_key":"0x${hex(owner)}","sequence_number":"${seq}","guid_creation_num":"0"}`;

/** A random history: blocks of 1–4 versions, user transactions, table items, resources and modules written and deleted. */
function history(seed: number, blocks: number): BlockWrite[] {
  const random = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const out: BlockWrite[] = [];
  let version = 0n;
  const sequence = SENDERS.map(() => 0n);
  for (let height = 0n; height < BigInt(blocks); height++) {
    const w: BlockWrite = {
      block: { height, epoch: 0n, timestampUsec: height * 1000n, firstVersion: version, lastVersion: version, endInfo: null },
      transactions: [],
      modules: [],
      tableItems: [],
      resources: [],
    };
    const count = 1 + Math.floor(random() * 4);
    for (let i = 0; i < count; i++, version++) {
      const s = Math.floor(random() * SENDERS.length);
      const user =
        version === 0n || random() < 0.3
          ? null
          : {
              sender: SENDERS[s]!,
              replayProtector: random() < 0.2 ? { type: "nonce" as const, value: BigInt(Math.floor(random() * 1e9)) } : { type: "sequence_number" as const, value: sequence[s]!++ },
              gasUnitPrice: 100n + BigInt(Math.floor(random() * 50)),
              gasUsed: BigInt(Math.floor(random() * 1000)),
              success: random() < 0.9,
              contractAddress: pick(CONTRACTS),
            };
      w.transactions.push({ version, kind: version === 0n ? "genesis_transaction" : user ? "user_transaction" : "block_metadata_transaction", hash: Buffer.alloc(32, Number(version % 256n)), user });
      for (let k = 0; k < Math.floor(random() * 3); k++) {
        w.tableItems.push({ version, handle: pick(HANDLES), key: pick(KEYS), value: random() < 0.2 ? null : Buffer.alloc(1 + Math.floor(random() * 40), Number(version % 251n)) });
      }
      for (let k = 0; k < Math.floor(random() * 3); k++) {
        const owner = pick(SENDERS);
        const type = pick(TYPES);
        const json = random() < 0.15 ? null : type === TYPES[0] ? accountJson(owner, version) : JSON.stringify({ v: `${version}`, s: "ünï ✓" });
        w.resources.push({ version, address: owner, type, json });
      }
      if (random() < 0.3) {
        const owner = pick(SENDERS);
        const name = pick(NAMES);
        w.modules.push({ version, address: owner, name, stateKey: moduleStateKey(owner, name), bytecode: random() < 0.2 ? null : Buffer.from(`code ${version}`) });
      }
    }
    w.block.lastVersion = version - 1n;
    out.push(w);
  }
  return out;
}

/**
 * Versions a partition of `transactions` holds in the tests that prune across partitions: a few
 * blocks each, so that a prune drops some.
 */
const SMALL_SPAN = 16;

/**
 * A new ledger of `blocks`; with `span`, its transactions partitioned every `span` versions (the
 * database's span set before its first commit creates a partition: below the least
 * `partition_versions`, 1,024, which keeps a deployment from making thousands of partitions).
 */
async function filled(blocks: BlockWrite[], opts: PostgresStoreOptions = {}, span: number | null = null): Promise<PostgresStore> {
  const s = await open(await backend.newDb(), opts);
  if (span !== null) await poolOf(s).query("UPDATE transaction_partitions SET versions = $1", [span]);
  await s.initChain(4);
  // A few blocks per commit, and single ones: both commit paths.
  for (let i = 0; i < blocks.length; i += 5) {
    if (i % 10 === 0) await s.commitBlocks(blocks.slice(i, i + 5));
    else for (const b of blocks.slice(i, i + 5)) await s.commitBlock(b);
  }
  return s;
}

/** Everything readable at `version` through the store's reads (ranges from `oldest`). */
async function readRaw(s: Storage, version: bigint, oldest: bigint) {
  const h = (b: Uint8Array | null) => (b ? hex(b) : null);
  return {
    items: await Promise.all(HANDLES.flatMap((handle) => KEYS.map(async (k) => h(await tableItem(s, handle, k, version))))),
    resources: await Promise.all(SENDERS.flatMap((a) => TYPES.map((t) => s.getResource(a, t, version)))),
    modules: await Promise.all(SENDERS.map(async (a) => (await modulesAt(s, a, version, null, 100)).map((m) => `${m.name}=${m.codeHash}`))),
    moduleAbis: await Promise.all(SENDERS.map(async (a) => (await s.readModules(a, version, null, 100, () => true))?.value.rows.map((m) => `${m.name}=${m.abi}`) ?? [])),
    modulesVersion: await Promise.all(SENDERS.map(async (a) => (await s.readModulesVersion(a, version))?.value ?? null)),
    summaries: await Promise.all(SENDERS.map((a) => summariesAt(s, { sender: a, start: oldest, ledgerVersion: version, limit: 1000 }))),
    summariesBack: await Promise.all(SENDERS.map(async (a) => (await s.readSummaries({ sender: a, end: version, limit: 7 }))?.value.rows ?? [])),
    summariesVersion: await Promise.all(SENDERS.map(async (a) => (await s.readSummariesVersion(a, version))?.value ?? null)),
    newest: await Promise.all(
      [...HANDLES.flatMap((handle) => KEYS.map((key) => ({ kind: "table_item" as const, handle, key }))), ...SENDERS.flatMap((address) => TYPES.map((type) => ({ kind: "resource" as const, address, type })))].map(
        (key) => s.newestStateVersion(key, version),
      ),
    ),
    gas: await s.getUserTxnGas(oldest, version),
    fingerprints: await s.getFingerprints(oldest, version),
    block: (await s.getBlockByVersion(version))?.height ?? null,
  };
}

/**
 * `raw` as far as it concerns versions at or above `oldest`: a version below it only says "before
 * the oldest version" (which one a pruned ledger still holds is not an answer), and rows below it
 * are left out.
 */
function judged(raw: Awaited<ReturnType<typeof readRaw>>, oldest: bigint) {
  // A pruned ledger may hold an older row or none (a deletion at or below the oldest version hides nothing, and goes): the same answer.
  const kept = (v: bigint | null) => (v === null || v < oldest ? "none at or above oldest" : v);
  const from = <T extends { version: bigint }>(xs: T[]) => xs.filter((x) => x.version >= oldest);
  return {
    ...raw,
    modulesVersion: raw.modulesVersion.map(kept),
    summaries: raw.summaries.map(from),
    summariesBack: raw.summariesBack.map(from),
    summariesVersion: raw.summariesVersion.map(kept),
    newest: raw.newest.map(kept),
    gas: from(raw.gas),
    fingerprints: from(raw.fingerprints),
  };
}

async function readAt(s: Storage, version: bigint, oldest: bigint) {
  return judged(await readRaw(s, version, oldest), oldest);
}

/** The rows of the ledger's tables except what records when and how far a prune got, and the partitions' span. */
async function rows(s: PostgresStore): Promise<Record<string, string[]>> {
  const all = await dumpTables(poolOf(s).options.connectionString as string);
  delete all.prune_progress;
  // How the transactions are laid out (their partitions' span), not what the ledger holds.
  delete all.transaction_partitions;
  return all;
}

/**
 * The `commit` statement and parameters of the store before migration 4 (address bytes and
 * resource JSON text in every row): a database made by that release, for the migration test.
 */
const COMMIT_BEFORE_4 = `
    WITH blk AS (
      INSERT INTO blocks (height, epoch, timestamp_usec, first_version, last_version, gas_limit_reached, output_limit_reached)
      VALUES ($1::numeric, $2::numeric, $3::numeric, $4::numeric, $5::numeric, $6::boolean, $7::boolean)
    ), txn AS (
      INSERT INTO transactions (version, kind, hash, sender, replay_kind, replay_value, gas_unit_price, gas_used, success, contract)
      SELECT * FROM unnest($8::numeric[], $9::smallint[], $10::bytea[], $11::bytea[], $12::smallint[],
                           $13::numeric[], $14::numeric[], $15::numeric[], $16::boolean[], $17::text[])
    ), mods AS (
      INSERT INTO modules (address, state_key, version, name, bytecode, code_hash)
      SELECT * FROM unnest($18::bytea[], $19::bytea[], $20::numeric[], $21::text[], $22::bytea[], $23::text[])
      ON CONFLICT (address, state_key, version) DO UPDATE SET name = excluded.name, bytecode = excluded.bytecode, code_hash = excluded.code_hash
    ), items AS (
      INSERT INTO table_items (handle, key, version, value)
      SELECT * FROM unnest($24::bytea[], $25::bytea[], $26::numeric[], $27::bytea[])
      ON CONFLICT (handle, key, version) DO UPDATE SET value = excluded.value
    ), res AS (
      INSERT INTO resources (address, type, version, value)
      SELECT * FROM unnest($28::bytea[], $29::text[], $30::numeric[], $31::text[])
      ON CONFLICT (address, type, version) DO UPDATE SET value = excluded.value
    )
    UPDATE ledger SET ledger_version = $5::numeric, timestamp_usec = $3::numeric, epoch = $2::numeric, block_height = $1::numeric,
                      oldest_version = coalesce(oldest_version, $4::numeric), oldest_block_height = coalesce(oldest_block_height, $1::numeric)
    WHERE id = 1`;

function lastOfEach<T>(ws: T[], key: (w: T) => string): T[] {
  const last = new Map<string, T>();
  for (const w of ws) {
    const k = key(w);
    last.delete(k);
    last.set(k, w);
  }
  return [...last.values()];
}

function valuesBefore4(w: BlockWrite): unknown[] {
  const t = w.transactions;
  const s = (v: bigint) => v.toString();
  const mods = lastOfEach(w.modules, (m) => `${hex(m.address)}/${hex(m.stateKey)}/${m.version}`);
  const items = lastOfEach(w.tableItems, (i) => `${hex(i.handle)}/${hex(i.key)}/${i.version}`);
  const res = lastOfEach(w.resources, (r) => `${hex(r.address)}/${r.type}/${r.version}`);
  const kinds = ["genesis_transaction", "block_metadata_transaction", "user_transaction", "state_checkpoint_transaction", "block_epilogue_transaction", "validator_transaction"];
  return [
    s(w.block.height), s(w.block.epoch), s(w.block.timestampUsec), s(w.block.firstVersion), s(w.block.lastVersion), null, null,
    t.map((x) => s(x.version)), t.map((x) => kinds.indexOf(x.kind)), t.map((x) => x.hash), t.map((x) => x.user?.sender ?? null),
    t.map((x) => (x.user ? (x.user.replayProtector.type === "nonce" ? 0 : 1) : null)), t.map((x) => (x.user ? s(x.user.replayProtector.value) : null)),
    t.map((x) => (x.user ? s(x.user.gasUnitPrice) : null)), t.map((x) => (x.user ? s(x.user.gasUsed) : null)), t.map((x) => x.user?.success ?? null),
    t.map((x) => x.user?.contractAddress ?? null),
    mods.map((m) => m.address), mods.map((m) => m.stateKey), mods.map((m) => s(m.version)), mods.map((m) => m.name), mods.map((m) => m.bytecode),
    mods.map((m) => (m.bytecode ? codeHash(m.bytecode) : null)),
    items.map((i) => i.handle), items.map((i) => i.key), items.map((i) => s(i.version)), items.map((i) => i.value),
    res.map((r) => r.address), res.map((r) => r.type), res.map((r) => s(r.version)), res.map((r) => r.json),
  ];
}

/** The migrations before `version + 1` applied to an empty database as that release did, and its ledger row. */
async function migratedTo(c: pg.Client, version: number): Promise<void> {
  await c.query("CREATE TABLE schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
  for (const [i, sql] of MIGRATIONS.slice(0, version).entries()) {
    await c.query(sql);
    await c.query("INSERT INTO schema_version (version) VALUES ($1)", [i + 1]);
  }
  await c.query("INSERT INTO ledger (id, chain_id) VALUES (1, 4)");
}

/** A database with only the migrations before 4, filled by that release's commit statement, and pruned once by its prune. */
async function databaseBefore4(blocks: BlockWrite[], prunedTo: { oldestVersion: bigint; oldestBlockHeight: bigint }): Promise<string> {
  const url = await backend.newDb();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await migratedTo(c, 3);
    for (const w of blocks) await c.query(COMMIT_BEFORE_4, valuesBefore4(w));
    // That release's prune (one transaction), so the migrated database starts pruned as it would be.
    const upTo = prunedTo.oldestVersion.toString();
    await c.query("BEGIN");
    await c.query("DELETE FROM transactions WHERE version < $1::numeric", [upTo]);
    await c.query("DELETE FROM blocks WHERE height < $1::numeric", [prunedTo.oldestBlockHeight.toString()]);
    for (const [table, cols, value] of [["modules", "address, state_key", "code_hash"], ["table_items", "handle, key", "value"], ["resources", "address, type", "value"]] as const) {
      const sameKey = cols.split(", ").map((k) => `s.${k} = c.${k}`).join(" AND ");
      await c.query(
        `WITH c AS (SELECT ${cols}, max(version) AS newest FROM ${table} WHERE version >= 0 AND version <= $1::numeric GROUP BY ${cols})
         DELETE FROM ${table} s USING c WHERE ${sameKey} AND s.version < c.newest`,
        [upTo],
      );
      await c.query(`DELETE FROM ${table} WHERE version <= $1::numeric AND ${value} IS NULL`, [upTo]);
    }
    await c.query("UPDATE ledger SET oldest_version = $1::numeric, oldest_block_height = $2::numeric WHERE id = 1", [upTo, prunedTo.oldestBlockHeight.toString()]);
    await c.query("COMMIT");
  } finally {
    await c.end();
  }
  return url;
}

describeOn(PG_MAJORS, `PostgreSQL migration 4: interned addresses and types, packed resource values (seed ${SEED})`, () => {
  it("converts a database made before it, filled and pruned, so that every read answers as before, and keeps converting nothing twice", async () => {
    const blocks = history(SEED, 80);
    const last = blocks.at(-1)!.block.lastVersion;
    const first = { oldestVersion: blocks[20]!.block.firstVersion, oldestBlockHeight: 20n };
    const reference = await filled(blocks);
    await reference.prune(first);
    const url = await databaseBefore4(blocks, first);
    const migrated = await open(url);
    const random = prng(SEED);
    const check = async (oldest: bigint) => {
      expect(await migrated.getLedgerInfo()).toEqual(await reference.getLedgerInfo());
      for (let i = 0; i < 12; i++) {
        const at = oldest + BigInt(Math.floor(random() * Number(last - oldest + 1n)));
        expect(await readAt(migrated, at, oldest), `at ${at}`).toEqual(await readAt(reference, at, oldest));
      }
      expect(await readAt(migrated, last, oldest)).toEqual(await readAt(reference, last, oldest));
    };
    await check(first.oldestVersion);
    // Old resource text reads exactly, and the rows written after the migration are packed.
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const formats = await c.query<{ f: number; n: string }>("SELECT get_byte(value, 0) AS f, count(*) AS n FROM resources WHERE value IS NOT NULL GROUP BY 1 ORDER BY 1");
      expect(formats.rows.map((r) => r.f)).toEqual([0]);
      expect((await c.query("SELECT version FROM schema_version ORDER BY version")).rows.map((r) => r.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    } finally {
      await c.end();
    }
    // Both go on the same way: more blocks, and prunes in steps from where the old prune stopped.
    const more = history(SEED + 1, 120).slice(80);
    for (const w of more) {
      const shifted = shift(w, last + 1n - more[0]!.block.firstVersion);
      await reference.commitBlock(shifted);
      await migrated.commitBlock(shifted);
    }
    const next = { oldestVersion: blocks[60]!.block.firstVersion, oldestBlockHeight: 60n };
    expect(await migrated.prune(next)).toEqual(await reference.prune(next));
    await check(next.oldestVersion);
    await migrated.close();
    // Connecting again runs no migration again.
    const again = await open(url);
    expect(await readAt(again, last, next.oldestVersion)).toEqual(await readAt(reference, last, next.oldestVersion));
  });
});

describeOn(PG_MAJORS, "PostgreSQL migration 5: the ABI text of every module row, stored beside its bytecode", () => {
  it("fills it for a database of schema 4, in batches of code hashes, so that module pages read as those of a database written today", async () => {
    // More code hashes than one batch of the fill (256): real modules and bytes that do not decode.
    const codes = [...genesisModules().map((m) => m.bytecode), ...frameworkModules(), appModuleBytecode(4), ...Array.from({ length: 300 }, (_, i) => Buffer.from(`code ${i}`))];
    const [a, b] = [SENDERS[0]!, SENDERS[1]!];
    const names = Array.from({ length: 40 }, (_, i) => `m${i}`);
    // One module write per version for each of two accounts (the same code: several rows per hash), some deletions.
    const blocks: BlockWrite[] = codes.map((code, i) => {
      const v = BigInt(i);
      const name = names[i % names.length]!;
      const bytecode = i % 50 === 49 ? null : code;
      return {
        block: { height: v, epoch: 0n, timestampUsec: v, firstVersion: v, lastVersion: v, endInfo: null },
        transactions: [{ version: v, kind: i === 0 ? "genesis_transaction" : "block_metadata_transaction", hash: Buffer.alloc(32, i % 256), user: null }],
        modules: [a, b].map((address) => ({ version: v, address, name, stateKey: moduleStateKey(address, name), bytecode })),
        tableItems: [],
        resources: [],
      };
    });
    const reference = await filled(blocks);
    const url = await backend.newDb();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query("CREATE TABLE schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
      for (const [i, sql] of MIGRATIONS.slice(0, 4).entries()) {
        await c.query(sql);
        await c.query("INSERT INTO schema_version (version) VALUES ($1)", [i + 1]);
      }
      const last = BigInt(blocks.length - 1).toString();
      await c.query("INSERT INTO ledger VALUES (1, 4, $1::numeric, $1::numeric, 0, $1::numeric, 0, 0)", [last]);
      // The module rows as schema 4's commit wrote them: no ABI.
      for (const m of blocks.flatMap((w) => w.modules)) {
        await c.query("INSERT INTO modules (address, state_key, version, name, bytecode, code_hash) VALUES ($1, $2, $3::numeric, $4, $5, $6)", [
          m.address,
          m.stateKey,
          m.version.toString(),
          m.name,
          m.bytecode,
          m.bytecode ? codeHash(m.bytecode) : null,
        ]);
      }
      const migrated = await open(url);
      expect((await c.query("SELECT count(*)::int AS n FROM modules WHERE bytecode IS NOT NULL AND abi IS NULL")).rows[0].n).toBe(0);
      expect((await c.query("SELECT count(*)::int AS n FROM modules WHERE bytecode IS NULL AND abi IS NOT NULL")).rows[0].n).toBe(0);
      expect((await c.query("SELECT max(version) AS v FROM schema_version")).rows[0].v).toBe(MIGRATIONS.length);
      for (let v = 0n; v < BigInt(blocks.length); v += 23n) {
        for (const address of [a, b]) {
          const page = async (s: Storage) => (await s.readModules(address, v, null, 100, () => true))!.value;
          const got = await page(migrated);
          for (const m of got.rows) expect(m.abi, `${m.name} at ${v}`).toBe(moduleAbiJson(m.bytecode!));
          expect(got, `at ${v}`).toEqual(await page(reference));
        }
      }
    } finally {
      await c.end();
    }
  });
});

/** `w` moved up by `by` versions and 80 heights (to continue a history after its 80 blocks). */
function shift(w: BlockWrite, by: bigint): BlockWrite {
  return {
    block: { ...w.block, firstVersion: w.block.firstVersion + by, lastVersion: w.block.lastVersion + by },
    transactions: w.transactions.map((t) => ({ ...t, version: t.version + by })),
    modules: w.modules.map((m) => ({ ...m, version: m.version + by })),
    tableItems: w.tableItems.map((i) => ({ ...i, version: i.version + by })),
    resources: w.resources.map((r) => ({ ...r, version: r.version + by })),
  };
}

/** The tests below prune ledgers a version and a row at a time: thousands of statements, beyond the default limit on a busy machine. */
const PRUNE_TEST_MS = 180_000;

for (const { partitions, span } of [
  { partitions: "one partition", span: null },
  { partitions: `partitions of ${SMALL_SPAN} versions, dropped as the oldest version passes them`, span: SMALL_SPAN },
]) describeOn([DEFAULT_PG_MAJOR], `PostgreSQL prune in bounded steps, transactions in ${partitions} (seed ${SEED})`, () => {
  const blocks = history(SEED, 150);
  const last = blocks.at(-1)!.block.lastVersion;

  it("leaves exactly the rows one whole prune leaves, counts the same, and keeps every read at or above the oldest version exact", async () => {
    const reference = await filled(blocks);
    const stepped = await filled(blocks, TINY_STEPS, span);
    const whole = await filled(blocks, WHOLE);
    const random = prng(SEED);
    for (const height of [10, 11, 40, 41, 90, 149].map(BigInt)) {
      const target = { oldestVersion: blocks[Number(height)]!.block.firstVersion, oldestBlockHeight: height };
      const results: PruneResult[] = [await stepped.prune(target), await whole.prune(target)];
      expect(results[0]).toEqual(results[1]);
      expect(await rows(stepped)).toEqual(await rows(whole));
      expect(await stepped.getLedgerInfo()).toMatchObject({ oldestVersion: target.oldestVersion, oldestBlockHeight: height });
      for (let i = 0; i < 6; i++) {
        const at = target.oldestVersion + BigInt(Math.floor(random() * Number(last - target.oldestVersion + 1n)));
        expect(await readAt(stepped, at, target.oldestVersion), `at ${at}`).toEqual(await readAt(reference, at, target.oldestVersion));
      }
      expect(await stepped.getBlockByHeight(height - 1n)).toBeNull();
      expect(await stepped.getFingerprints(0n, target.oldestVersion - 1n)).toEqual([]);
    }
    // After the last prune every key keeps at most one row at or below the oldest version, and no deletion.
    const c = new pg.Client({ connectionString: poolOf(stepped).options.connectionString as string });
    await c.connect();
    try {
      const oldest = blocks[149]!.block.firstVersion.toString();
      for (const [table, keys, value] of [["table_items", "handle_id, key", "value"], ["resources", "address_id, type_id", "value"], ["modules", "address, state_key", "code_hash"]]) {
        const r = await c.query(`SELECT count(*)::int AS n FROM (SELECT ${keys} FROM ${table} WHERE version <= $1::numeric GROUP BY ${keys} HAVING count(*) > 1 OR bool_or(${value} IS NULL)) x`, [oldest]);
        expect(r.rows[0].n, table).toBe(0);
      }
    } finally {
      await c.end();
    }
  }, PRUNE_TEST_MS);

  it("answers reads exactly between its steps: the oldest version only moves when a step commits, and readers are never held up", async () => {
    const reference = await filled(blocks);
    const stepped = await filled(blocks, TINY_STEPS, span);
    const reader = await open(poolOf(stepped).options.connectionString as string);
    // The reader's connections opened before the prune starts, so the loop below times only reads.
    await reader.readTableItem(HANDLES[0]!, KEYS[0]!, undefined);
    const target = { oldestVersion: blocks[120]!.block.firstVersion, oldestBlockHeight: 120n };
    let done = false;
    const pruning = stepped.prune(target).finally(() => (done = true));
    const random = prng(SEED + 1);
    const oldestSeen: bigint[] = [];
    while (!done) {
      const snap = (await reader.readTableItem(HANDLES[0]!, KEYS[0]!, undefined))!;
      const oldest = snap.info.oldestVersion;
      oldestSeen.push(oldest);
      const at = oldest + BigInt(Math.floor(random() * Number(last - oldest + 1n)));
      const raw = await readRaw(reader, at, oldest);
      // The reads without a position of their own may see later steps: judged from the oldest version after them.
      const after = (await reader.getLedgerInfo())!.oldestVersion;
      if (at < after) continue;
      expect(judged(raw, after), `at ${at}, oldest ${oldest} then ${after}`).toEqual(await readAt(reference, at, after));
    }
    await pruning;
    // Seen mid-way: a step across partitions moves the oldest version a whole partition, so there are fewer of them.
    expect(new Set(oldestSeen).size).toBeGreaterThan(span === null ? 3 : 1);
    expect(oldestSeen).toEqual([...oldestSeen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  }, PRUNE_TEST_MS);

  it("cut off mid-way (its connection killed), leaves a correct ledger, and the next prune finishes as a whole prune would", async () => {
    const reference = await filled(blocks);
    const whole = await filled(blocks, WHOLE);
    const stepped = await filled(blocks, TINY_STEPS, span);
    const url = poolOf(stepped).options.connectionString as string;
    const target = { oldestVersion: blocks[130]!.block.firstVersion, oldestBlockHeight: 130n };
    await whole.prune(target);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const position = async () => {
      const r = (await admin.query<{ oldest: string; from: string | null }>("SELECT l.oldest_version AS oldest, p.state_from AS from FROM ledger l LEFT JOIN prune_progress p ON p.id = 1")).rows[0]!;
      return { oldest: BigInt(r.oldest), from: r.from === null ? null : BigInt(r.from) };
    };
    try {
      const outcomes: string[] = [];
      for (const phase of ["move", "walk"] as const) {
        let done = false;
        const pruning = stepped
          .prune(target)
          .then(() => "finished", (e: Error) => `failed: ${e.message}`)
          .finally(() => {
            done = true;
          });
        const start = await position();
        while (!done) {
          await new Promise((resolve) => setTimeout(resolve, 2));
          const p = await position();
          const inPhase =
            phase === "move"
              ? p.oldest > start.oldest && p.oldest < target.oldestVersion
              : p.oldest === target.oldestVersion && p.from !== null && start.from !== null && p.from > start.from && p.from <= p.oldest;
          if (!inPhase) continue;
          // The prune's one connection holds the advisory lock: end it, as a crash or a network cut would.
          await admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
          );
          break;
        }
        outcomes.push(`${phase}: ${await pruning}`);
        const oldest = (await stepped.getLedgerInfo())!.oldestVersion;
        expect(await readAt(stepped, last, oldest)).toEqual(await readAt(reference, last, oldest));
        expect(await readAt(stepped, oldest, oldest)).toEqual(await readAt(reference, oldest, oldest));
        expect(await stepped.getFingerprints(0n, oldest - 1n)).toEqual([]);
      }
      // Each was cut off in its phase (a step is a few ms; the whole walk takes hundreds of them).
      expect(outcomes.every((o) => o.includes("failed")), outcomes.join("; ")).toBe(true);
      expect(await stepped.prune(target)).toMatchObject({ transactionsDeleted: 0, blocksDeleted: 0 });
      expect(await rows(stepped)).toEqual(await rows(whole));
    } finally {
      await admin.end();
    }
  }, PRUNE_TEST_MS);
});

/** The numbers of the partitions of `table` (`transactions`, or the history partitioned alike), ascending. */
async function partitionsOf(s: PostgresStore, table: "transactions" | "transaction_history" = "transactions"): Promise<bigint[]> {
  const r = await poolOf(s).query<{ name: string }>(
    "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass",
    [table],
  );
  return r.rows.map((x) => BigInt(x.name.slice(table.length + 1))).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `ws` with each transaction's JSON text, so that each version has history kept. */
const withTexts = (ws: BlockWrite[]): BlockWrite[] =>
  ws.map((w) => ({ ...w, transactions: w.transactions.map((t) => ({ ...t, json: JSON.stringify({ version: String(t.version), type: t.kind }) })) }));

/** Bytes the transactions take on disk: the table, its partitions and their indexes. */
async function transactionsBytes(s: PostgresStore): Promise<number> {
  const r = await poolOf(s).query<{ n: string }>("SELECT sum(pg_total_relation_size(relid)) AS n FROM pg_partition_tree('transactions')");
  return Number(r.rows[0]!.n);
}

describeOn([DEFAULT_PG_MAJOR], `PostgreSQL transactions in version partitions: a prune drops those below the oldest version (seed ${SEED})`, () => {
  const blocks = withTexts(history(SEED + 5, 150));
  const textOf = (v: bigint) => JSON.stringify({ version: String(v), type: blocks.flatMap((w) => w.transactions).find((t) => t.version === v)!.kind });

  it("drops every partition wholly below the oldest version and deletes rows only in the one holding it: the rows and counts of a prune that deletes them all, and the files shrink", async () => {
    const whole = await filled(blocks, WHOLE);
    const stepped = await filled(blocks, TINY_STEPS, SMALL_SPAN);
    const last = blocks.at(-1)!.block.lastVersion;
    expect(await partitionsOf(stepped)).toEqual(Array.from({ length: Number(last / BigInt(SMALL_SPAN)) + 1 }, (_, i) => BigInt(i)));
    // The history is partitioned alike, and goes with the transactions.
    expect(await partitionsOf(stepped, "transaction_history")).toEqual(await partitionsOf(stepped));
    let bytes = await transactionsBytes(stepped);
    for (const height of [3, 40, 41, 100, 149].map(BigInt)) {
      const target = { oldestVersion: blocks[Number(height)]!.block.firstVersion, oldestBlockHeight: height };
      const before = await partitionsOf(stepped);
      expect(await stepped.prune(target)).toEqual(await whole.prune(target));
      expect(await rows(stepped)).toEqual(await rows(whole));
      const holding = target.oldestVersion / BigInt(SMALL_SPAN);
      expect(await partitionsOf(stepped)).toEqual(before.filter((n) => n >= holding));
      expect(await partitionsOf(stepped, "transaction_history")).toEqual(await partitionsOf(stepped));
      expect((await stepped.readTransactions(target.oldestVersion - 1n, 3))!.value.texts).toEqual([]);
      expect((await stepped.readTransactions(target.oldestVersion, 1))!.value.texts.map((t) => Buffer.from(t).toString())).toEqual([textOf(target.oldestVersion)]);
      const now = await transactionsBytes(stepped);
      if (before[0]! < holding) expect(now, `at height ${height}`).toBeLessThan(bytes);
      bytes = now;
    }
    // The ledger goes on: blocks past the last partition get new ones.
    const more = withTexts(history(SEED + 6, 30).map((w) => shift(w, last + 1n)));
    await stepped.commitBlocks(more.slice(0, 10));
    for (const w of more.slice(10)) await stepped.commitBlock(w);
    const top = more.at(-1)!.block.lastVersion;
    expect((await partitionsOf(stepped)).at(-1)).toBe(top / BigInt(SMALL_SPAN));
    expect(await partitionsOf(stepped, "transaction_history")).toEqual(await partitionsOf(stepped));
    expect((await stepped.readTransactions(last + 1n, 1000))!.value.texts.length).toBe(Number(top - last));
    expect((await stepped.getFingerprints(last + 1n, top)).length).toBe(Number(top - last));
  });

  it("a prune's process killed (SIGKILL) while it drops a partition leaves the ledger of its last step, which reopens and prunes on exactly", async () => {
    const whole = await filled(blocks, WHOLE);
    const stepped = await filled(blocks, {}, SMALL_SPAN);
    const url = poolOf(stepped).options.connectionString as string;
    const target = { oldestVersion: blocks[120]!.block.firstVersion, oldestBlockHeight: 120n };
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      // A reader of the transactions holds the prune's DROP: the process is killed while it waits there.
      await holder.query("BEGIN");
      await holder.query("SELECT count(*) FROM transactions");
      const before = { info: await stepped.getLedgerInfo(), partitions: await partitionsOf(stepped) };
      const child = spawn(process.execPath, [CLI, "prune", "--db", url, "--window", String(lastVersionOf(blocks) - target.oldestVersion + 1n)], { stdio: "ignore" });
      const exited = new Promise((resolve) => child.once("exit", resolve));
      for (;;) {
        const waiting = await poolOf(stepped).query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DROP TABLE%'");
        if (waiting.rowCount === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      child.kill("SIGKILL");
      await exited;
      await holder.query("COMMIT");
      // Its step never committed: the ledger is the one before it, partitions and all.
      expect(await stepped.getLedgerInfo(true)).toEqual(before.info);
      expect(await partitionsOf(stepped)).toEqual(before.partitions);
    } finally {
      await holder.end();
    }
    await stepped.close();
    const reopened = await open(url);
    expect(await reopened.prune(target)).toEqual(await whole.prune(target));
    expect(await rows(reopened)).toEqual(await rows(whole));
    expect((await partitionsOf(reopened))[0]).toBe(target.oldestVersion / BigInt(SMALL_SPAN));
  });
});

/** The newest version of `ws`. */
const lastVersionOf = (ws: BlockWrite[]): bigint => ws.at(-1)!.block.lastVersion;

/**
 * The `commit` statement of the store from migration 4 to migration 8: today's without the history
 * it writes since migration 9, taking the parameters of today's `commitValues` up to $34.
 */
const HISTORY_CTE = `    ), hist AS (
      INSERT INTO transaction_history (first_version, last_version, body)
      SELECT * FROM unnest($35::numeric[], $36::numeric[], $37::bytea[])
    )`;
/** The events it writes since migration 11 ($38 to $42), after the history. */
const EVENTS_CTE = /\n {4}\), evs AS \([\s\S]*?JOIN a_ids a ON a\.ord = e\.account_ord\n/;
/** The notice it now sends names a version (`$43`) the old parameters lack: an empty one instead. */
const COMMIT_BEFORE_9 = SQL.commit.replace(EVENTS_CTE, "\n").replace(HISTORY_CTE, "    )").replace("$43::text", "''");
if (!EVENTS_CTE.test(SQL.commit)) throw new Error("the commit statement no longer has the events CTE this test removes");
if (COMMIT_BEFORE_9 === SQL.commit) throw new Error("the commit statement no longer has the history CTE this test removes");
if (!SQL.commit.includes("$43::text")) throw new Error("the commit statement no longer notifies with $43, which this test empties");
const valuesBefore9 = (w: BlockWrite): unknown[] => commitValues(prepareBlock(w)).slice(0, 34);

/** A database at schema 6 (the migrations before 7), filled by the `commit` statement that release used too. */
async function databaseAt6(blocks: BlockWrite[]): Promise<string> {
  const url = await backend.newDb();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await migratedTo(c, 6);
    for (const w of blocks) await c.query(COMMIT_BEFORE_9, valuesBefore9(w));
  } finally {
    await c.end();
  }
  return url;
}

describeOn(PG_MAJORS, `PostgreSQL migration 7: the transactions of a ledger written before it, into version partitions (seed ${SEED})`, () => {
  const blocks = history(SEED + 7, 120);

  it("partitions them in one transaction: every row and read as a ledger written today, and the prunes after it the same", async () => {
    const reference = await filled(blocks);
    const migrated = await open(await databaseAt6(blocks));
    expect(await partitionsOf(migrated)).toEqual([0n]);
    expect(await rows(migrated)).toEqual(await rows(reference));
    const at = lastVersionOf(blocks);
    expect(await readAt(migrated, at, 0n)).toEqual(await readAt(reference, at, 0n));
    const target = { oldestVersion: blocks[70]!.block.firstVersion, oldestBlockHeight: 70n };
    expect(await migrated.prune(target)).toEqual(await reference.prune(target));
    expect(await rows(migrated)).toEqual(await rows(reference));
    expect(await readAt(migrated, at, target.oldestVersion)).toEqual(await readAt(reference, at, target.oldestVersion));
  });

  it("its process killed (SIGKILL) mid-way leaves the ledger at schema 6, which the next start migrates exactly", async () => {
    const reference = await filled(blocks);
    const url = await databaseAt6(blocks);
    const holder = new pg.Client({ connectionString: url });
    const watcher = new pg.Client({ connectionString: url });
    await holder.connect();
    await watcher.connect();
    try {
      // A reader of the transactions holds the migration at its first statement on them; the process is killed there.
      await holder.query("BEGIN");
      await holder.query("SELECT count(*) FROM transactions");
      const child = spawn(process.execPath, ["--input-type=module", "-e", `const { openStore } = await import(${JSON.stringify(OPEN_STORE)}); await openStore(${JSON.stringify(url)});`], {
        stdio: "ignore",
      });
      const exited = new Promise((resolve) => child.once("exit", resolve));
      for (;;) {
        const waiting = await watcher.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%transaction_partitions%'");
        if (waiting.rowCount === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      child.kill("SIGKILL");
      await exited;
      await holder.query("COMMIT");
      const state = await holder.query<{ v: number; t: string | null; kind: string }>(
        "SELECT (SELECT max(version) FROM schema_version) AS v, to_regclass('transaction_partitions')::text AS t, (SELECT relkind::text FROM pg_class WHERE relname = 'transactions') AS kind",
      );
      expect(state.rows[0]).toEqual({ v: 6, t: null, kind: "r" });
    } finally {
      await holder.end();
      await watcher.end();
    }
    const migrated = await open(url);
    expect(await partitionsOf(migrated)).toEqual([0n]);
    expect(await rows(migrated)).toEqual(await rows(reference));
  });
});

/** The span `transaction_partitions` records, and each partition's bounds as PostgreSQL gives them. */
async function spanAndBounds(s: PostgresStore): Promise<{ span: string; bounds: string[] }> {
  const pool = poolOf(s);
  const span = (await pool.query<{ versions: string }>("SELECT versions FROM transaction_partitions")).rows[0]!.versions;
  const r = await pool.query<{ bound: string }>(
    `SELECT pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'transactions'::regclass ORDER BY c.relname`,
  );
  return { span, bounds: r.rows.map((x) => x.bound) };
}

describeOn(PG_MAJORS, `PostgreSQL partition_versions: the span the transactions are partitioned by, set when they are (seed ${SEED})`, () => {
  const blocks = history(SEED + 8, 40);

  it("a new database takes 33,554,432 versions a partition, or the URL's partition_versions (or the option), and its writer partitions by it", async () => {
    const plain = await open(await backend.newDb());
    expect((await spanAndBounds(plain)).span).toBe("33554432");
    const set = await open(`${await backend.newDb()}?partition_versions=1024`);
    await set.initChain(4);
    // Past the first partitions: the writer creates the ones its versions need, 1,024 versions each.
    const long = history(SEED + 9, 1000);
    for (let i = 0; i < long.length; i += 100) await set.commitBlocks(long.slice(i, i + 100));
    const partitions = Number(lastVersionOf(long) / 1024n) + 1;
    expect(partitions).toBeGreaterThanOrEqual(2);
    expect(await spanAndBounds(set)).toEqual({
      span: "1024",
      bounds: Array.from({ length: partitions }, (_, n) => `FOR VALUES FROM ('${n * 1024}') TO ('${(n + 1) * 1024}')`),
    });
    const byOption = await open(await backend.newDb(), { partitionVersions: 4096 });
    expect((await spanAndBounds(byOption)).span).toBe("4096");
  });

  it("migration 7 partitions a ledger written before it by partition_versions, or by the default", async () => {
    const set = await open(`${await databaseAt6(blocks)}?partition_versions=2048`);
    expect(await spanAndBounds(set)).toEqual({ span: "2048", bounds: ["FOR VALUES FROM ('0') TO ('2048')"] });
    const plain = await open(await databaseAt6(blocks));
    expect(await spanAndBounds(plain)).toEqual({ span: "33554432", bounds: ["FOR VALUES FROM ('0') TO ('33554432')"] });
  });

  it("a database partitioned already keeps its span: opened without the setting or with the same it serves on, with another it is refused by name", async () => {
    const url = await backend.newDb();
    const first = await open(`${url}?partition_versions=1024`);
    await first.close();
    const again = await open(url);
    expect((await spanAndBounds(again)).span).toBe("1024");
    await expect(PostgresStore.connect(`${url}?partition_versions=1024`).then((s) => s.close())).resolves.toBeUndefined();
    await expect(PostgresStore.connect(`${url}?partition_versions=2048`)).rejects.toThrow(
      "partition_versions=2048 differs from the span this database's transactions are partitioned by (1024 versions a partition)",
    );
    await expect(PostgresStore.connect(url, { partitionVersions: 33_554_432 })).rejects.toThrow("partition_versions=33554432 differs");
    expect((await spanAndBounds(again)).span).toBe("1024");
  });

  it("refuses a value that is not an integer from 1,024 to 10^12, naming it, before connecting", async () => {
    const url = await backend.newDb();
    for (const bad of ["abc", "0", "-4096", "1023", "4096.5", "1e6", "", "1000000000001"]) {
      await expect(PostgresStore.connect(`${url}?partition_versions=${encodeURIComponent(bad)}`)).rejects.toThrow(
        `invalid partition_versions=${JSON.stringify(bad)} in the PostgreSQL URL: give an integer from 1024 to 1000000000000`,
      );
    }
    for (const bad of [16, 0, 4096.5, 1e13]) {
      await expect(PostgresStore.connect(url, { partitionVersions: bad })).rejects.toThrow(`invalid PostgreSQL option partitionVersions: ${bad}`);
    }
    // Nothing was created by the refused connections.
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const made = await c.query("SELECT to_regclass('schema_version')::text AS t").finally(() => c.end());
    expect(made.rows[0]).toEqual({ t: null });
  });
});

describeOn([DEFAULT_PG_MAJOR], `PostgreSQL read memo of a serving node (memoLagMs, seed ${SEED})`, () => {
  const blocks = history(SEED + 2, 40);
  const urlOf = (s: PostgresStore) => poolOf(s).options.connectionString as string;
  /** Every position read at the newest version, as the API's request wrapper makes them. */
  const latest = async (s: Storage) => ({
    ledger: await s.getLedgerInfo(),
    items: await Promise.all(HANDLES.flatMap((h) => KEYS.map((k) => s.readTableItem(h, k, undefined)))),
    modules: await Promise.all(SENDERS.map((a) => s.readModulesVersion(a, undefined))),
    summaries: await Promise.all(SENDERS.map((a) => s.readSummariesVersion(a, undefined))),
  });

  it("answers at the position it last saw while trusted, moves with any read that sees a later one, and sees its own commits at once", async () => {
    const writer = await filled(blocks.slice(0, 20));
    const reader = await open(urlOf(writer), { memoLagMs: 600_000 });
    const at20 = await latest(reader);
    for (const b of blocks.slice(20, 30)) await writer.commitBlock(b);
    const at30 = await latest(writer);
    // The blocks changed what the newest-version reads answer: the memo must be what hides it.
    expect(at30).not.toEqual(at20);
    expect(at30.ledger!.ledgerVersion).toBe(blocks[29]!.block.lastVersion);
    expect(await latest(reader)).toEqual(at20);

    // A read that goes to the database (a fresh ledger read, a read at an explicit version) and
    // sees the later position drops the memo's answers.
    expect(await reader.getLedgerInfo(true)).toEqual(at30.ledger);
    expect(await latest(reader)).toEqual(at30);
    for (const b of blocks.slice(30, 35)) await writer.commitBlock(b);
    const at35 = await latest(writer);
    const moved = await reader.readTableItem(HANDLES[0]!, KEYS[0]!, blocks[2]!.block.lastVersion);
    expect(moved!.info).toEqual(at35.ledger);
    expect(await latest(reader)).toEqual(at35);

    // Its own commits, one block or several: seen at once, whatever the lag.
    await reader.commitBlock(blocks[35]!);
    expect(await latest(reader)).toEqual(await latest(writer));
    expect((await reader.getLedgerInfo())!.ledgerVersion).toBe(blocks[35]!.block.lastVersion);
    await reader.commitBlocks(blocks.slice(36));
    expect(await latest(reader)).toEqual(await latest(writer));
    expect((await reader.getLedgerInfo())!.ledgerVersion).toBe(blocks.at(-1)!.block.lastVersion);
  });

  it("asks the database again once the lag has passed, and never with memoLagMs 0 (the default)", async () => {
    const writer = await filled(blocks.slice(0, 20));
    const lagging = await open(urlOf(writer), { memoLagMs: 200 });
    const unmemoized = await open(urlOf(writer));
    await latest(lagging);
    await latest(unmemoized);
    for (const b of blocks.slice(20, 25)) await writer.commitBlock(b);
    const now = await latest(writer);
    expect(await latest(unmemoized)).toEqual(now);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await latest(lagging)).toEqual(now);
  });
});

describeOn(PG_MAJORS, `PostgreSQL summaries JSON pages: what one statement reads (seed ${SEED})`, () => {
  /** The plan nodes of `text` run with `values`, flattened. */
  async function planNodes(s: PostgresStore, text: string, values: unknown[]): Promise<Array<Record<string, unknown>>> {
    const { rows } = await poolOf(s).query<{ "QUERY PLAN": Array<{ Plan: Record<string, unknown> }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
    const nodes: Array<Record<string, unknown>> = [];
    const walk = (n: Record<string, unknown>) => {
      nodes.push(n);
      for (const c of (n.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(c);
    };
    walk(rows[0]!["QUERY PLAN"][0]!.Plan);
    return nodes;
  }
  /** Plan nodes reading `table` or one of its partitions (`<table>_<n>`), whatever their access path. */
  const reads = (nodes: Array<Record<string, unknown>>, table: string) =>
    nodes.filter((n) => n["Relation Name"] === table || new RegExp(`^${table}_\\d+$`).test(String(n["Relation Name"]))).length;
  /** Aggregates over sorted groups (a GROUP BY's), as against one plain aggregate. */
  const grouped = (nodes: Array<Record<string, unknown>>) => nodes.filter((n) => n["Node Type"] === "Aggregate" && n.Strategy !== "Plain").length;

  it("looks the sender up once, reads a backward page in one pass over the sender's rows, and aggregates without grouping", async () => {
    const s = await filled(history(SEED + 3, 30));
    // Statistics made now, so that the plans do not depend on when autovacuum last ran.
    await poolOf(s).query("ANALYZE");
    const sender = `0x${hex(SENDERS[0]!)}`;
    const backward = await planNodes(s, SQL.summariesJsonBackward, [SENDERS[0], null, 26, sender]);
    expect(reads(backward, "addresses")).toBe(1);
    expect(reads(backward, "transactions")).toBe(1);
    expect(grouped(backward)).toBe(0);
    // Forward: the newest version is outside the page's range, so a second pass reads it.
    const forward = await planNodes(s, SQL.summariesJsonForward, [SENDERS[0], "0", 26, sender]);
    expect(reads(forward, "addresses")).toBe(1);
    expect(reads(forward, "transactions")).toBe(2);
    expect(grouped(forward)).toBe(0);
  });
});
