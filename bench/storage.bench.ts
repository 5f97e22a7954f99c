/**
 * Storage-level measurements (no HTTP), each printing a before/after table from one run:
 *
 *   node --import tsx bench/storage.bench.ts modules [--history 10,1000,10000] [--rounds 7] [--calls 400] [--pg]
 *
 * - `modules`: an account with 30 modules, one of them upgraded `--history` times, and two
 *   neighbour accounts; `getModules(account, random version, null, 26)` (the API's page of 25 plus
 *   one) through the store, against the statement the store ran before (kept here as
 *   `MODULES_BEFORE_SQLITE`, `MODULES_BEFORE_PG`), and `readModules` (the page with its position),
 *   alternated round by round on the same file. µs per call, median of rounds.
 *   With `--pg` the same on a throwaway PostgreSQL (test/helpers/postgres.ts).
 *
 *   node --import tsx bench/storage.bench.ts summaries --db bench/out/storage-1m.db --before DIR [--only NAME]
 *
 * - `summaries`: the store calls of a summaries request that misses the API's page cache (random
 *   sender, random end_version, limit 100), memo lag 1 ms as the node serves: `before` = the
 *   store built at `--before` (a checkout of the commit before, e.g. `git worktree add --detach
 *   ../wt-storage-before 1156570` with `npx tsc -p tsconfig.build.json` run there) doing
 *   position read, page read and fresh re-check; `split` = this store doing the same three calls;
 *   `one` = this store's `readSummaries`. `--only NAME` runs one variant (for `strace -c`).
 *   `summaries-pg [--versions 200000]`: `split` and `one` on a throwaway PostgreSQL holding a
 *   generated ledger (50 senders, a user transaction per version), with the round trips of each.
 *
 *   node --import tsx bench/storage.bench.ts prune --db bench/out/storage-1m.db [--before DIR] [--read-ms 2]
 *
 * - `prune`: prunes half of a copy of `--db` (converted once to incremental vacuum) in a child
 *   process, with the store built at `--before` and then with this one, while this process reads
 *   (random table items, summaries pages and module lists at random versions above the target,
 *   one read every `--read-ms`, on the event loop as the node does): the reads' p50/p99/max
 *   during the prune, the prune's time, the largest WAL seen and the file size after.
 *
 *   node --import tsx bench/storage.bench.ts prune-pg --url postgres://…/postgres --before DIR
 *        --before-db NAME --after-db NAME [--read-ms 2] [--rounds 1] [--one-step]
 *
 * - `prune-pg`: the same on PostgreSQL: `--before-db` and `--after-db` are databases on the server of
 *   `--url`, each a ledger imported by the importer of its side (`node DIR/dist/cli.js import --db
 *   postgres://…/NAME …`: the store at `--before` has the schema before migration 4). Each round
 *   copies each one (CREATE DATABASE … TEMPLATE) and prunes half of the copy in a child process with
 *   its own store while this process reads through a store of the same side (table items, summaries
 *   pages, module lists at random versions above the target); sides alternate round by round. The
 *   reads' p50/p99/max during the prune, the prune's time, and the block commits the ledger row
 *   let through meanwhile (an update of the ledger row, which every block commit makes, every 50 ms
 *   from a third connection: its longest wait).
 *   `--one-step` adds this store pruning in one step (step bounds past the ledger), on the after copy.
 *
 * Ledgers are built once into bench/out/ (gitignored) and reused; `--db` must be a copy (the
 * store may migrate it).
 */
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, rmSync, statSync } from "node:fs";
import { prng } from "../src/ingest/devnet/chain.js";
import { moduleStateKey } from "../src/ledger/stateKey.js";
import type { BlockWrite } from "../src/storage/contracts/writer.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { PostgresStore, SQL as POSTGRES_SQL } from "../src/storage/postgres/PostgresStore.js";
import { moduleEntryOf, type ModuleRow } from "../src/storage/shared/rows.js";
import { SqliteStore } from "../src/storage/sqlite/SqliteStore.js";
import { PgCluster } from "../test/helpers/postgres.js";
import { OUT, median } from "./common.js";
import { modulesAt, summariesAt } from "../test/helpers/store.js";

const argValue = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1]!;
};
const ROUNDS = Number(argValue("rounds", "7"));
const CALLS = Number(argValue("calls", "400"));


const address = (n: number): Uint8Array => {
  const a = new Uint8Array(32);
  a[31] = n;
  return a;
};
const ACCOUNT = address(0x42);
const NEIGHBOURS = [address(0x41), address(0x43)];
const PAGE = 26;

/** The SQLite module list before the skip-scan (every version of every module of the account). */
const MODULES_BEFORE_SQLITE = `SELECT m.state_key, m.name, m.code_hash FROM modules m
       WHERE m.address = ? AND m.state_key >= ? AND m.version <= ?
         AND m.version = (SELECT max(version) FROM modules m2
                           WHERE m2.address = m.address AND m2.state_key = m.state_key AND m2.version <= ?)
         AND m.code_hash IS NOT NULL
       ORDER BY m.state_key LIMIT ?`;
/** The PostgreSQL module list before the skip-scan. */
const MODULES_BEFORE_PG = `SELECT m.state_key, m.name, m.code_hash FROM modules m
            WHERE m.address = $1 AND m.state_key >= $2 AND m.version <= $3::numeric AND m.bytecode IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM modules n
                              WHERE n.address = m.address AND n.state_key = m.state_key
                                AND n.version > m.version AND n.version <= $3::numeric)
            ORDER BY m.state_key LIMIT $4`;

/**
 * Blocks of 100 versions: genesis writes 30 modules of ACCOUNT and 10 of each neighbour; then one
 * module write per version: ACCOUNT's `hot` module upgraded `history` times (every 97th write a
 * deletion), every 10th version a neighbour's module instead.
 */
function* moduleHistoryBlocks(history: number): Generator<BlockWrite[]> {
  const bytecode = (n: number) => Buffer.from(`module bytecode ${n}`);
  const write = (version: bigint, owner: Uint8Array, name: string, code: Uint8Array | null) => ({
    version,
    address: owner,
    name,
    stateKey: moduleStateKey(owner, name),
    bytecode: code,
  });
  let version = 0n;
  let height = 0n;
  let written = 0;
  let batch: BlockWrite[] = [];
  while (written < history || height === 0n) {
    const first = version;
    const block: BlockWrite = { block: { height, epoch: 0n, timestampUsec: height * 1000n, firstVersion: first, lastVersion: first, endInfo: null }, transactions: [], modules: [], tableItems: [], resources: [] };
    for (let i = 0; i < 100 && (written < history || height === 0n); i++, version++) {
      block.transactions.push({ version, kind: version === 0n ? "genesis_transaction" : "user_transaction", hash: new Uint8Array(32), user: null });
      if (version === 0n) {
        for (let m = 0; m < 30; m++) block.modules.push(write(version, ACCOUNT, `module_${m}`, bytecode(m)));
        for (const n of NEIGHBOURS) for (let m = 0; m < 10; m++) block.modules.push(write(version, n, `module_${m}`, bytecode(m)));
      } else if (version % 10n === 0n) {
        block.modules.push(write(version, NEIGHBOURS[Number(version % 20n === 0n)]!, "module_3", bytecode(Number(version))));
      } else {
        written++;
        block.modules.push(write(version, ACCOUNT, "hot", written % 97 === 0 ? null : bytecode(written)));
      }
    }
    block.block.lastVersion = version - 1n;
    batch.push(block);
    height++;
    if (batch.length === 50) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

async function fill(store: Storage, history: number): Promise<void> {
  if ((await store.getLedgerInfo(true)) !== null) return;
  await store.initChain(4);
  for (const blocks of moduleHistoryBlocks(history)) await store.commitBlocks!(blocks);
}

interface Variant {
  name: string;
  call: (version: bigint) => Promise<unknown> | unknown;
}

/** µs per call of each variant: rounds alternate the variants; each round asks the same `CALLS` random versions. */
async function sideBySide(variants: Variant[], lastVersion: bigint): Promise<Map<string, number>> {
  const random = prng(17);
  const versions = Array.from({ length: CALLS }, () => BigInt(Math.floor(random() * Number(lastVersion + 1n))));
  const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (const v of variants) for (const at of versions.slice(0, 20)) await v.call(at); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const v of order) {
      const t0 = process.hrtime.bigint();
      for (const at of versions) await v.call(at);
      times.get(v.name)!.push(Number(process.hrtime.bigint() - t0) / 1000 / versions.length);
    }
  }
  return new Map([...times].map(([k, xs]) => [k, median(xs)]));
}

async function modulesBench(): Promise<void> {
  const histories = argValue("history", "10,1000,10000").split(",").map(Number);
  const rows: string[] = [
    "| backend | module versions | before µs/call | after µs/call | after/before | readModules (page + position) µs/call |",
    "|---|---|---|---|---|---|",
  ];
  const report = (backend: string, history: number, r: Map<string, number>) => {
    const before = r.get("before")!;
    const after = r.get("after")!;
    rows.push(`| ${backend} | ${history} | ${before.toFixed(1)} | ${after.toFixed(1)} | ${(after / before).toFixed(2)} | ${r.get("readModules")!.toFixed(1)} |`);
    console.log(rows.at(-1));
  };
  for (const history of histories) {
    const path = `${OUT}storage-modules-${history}.db`;
    const fresh = !existsSync(path);
    const store = new SqliteStore(path);
    if (fresh) await fill(store, history);
    const last = (await store.getLedgerInfo(true))!.ledgerVersion;
    const raw = new Database(path, { readonly: true });
    const before = raw.prepare<[Uint8Array, Uint8Array, bigint, bigint, number], ModuleRow>(MODULES_BEFORE_SQLITE).safeIntegers(true);
    const empty = Buffer.alloc(0);
    const check = await modulesAt(store, ACCOUNT, last, null, PAGE);
    if (JSON.stringify(check) !== JSON.stringify(before.all(ACCOUNT, empty, last, last, PAGE).map(moduleEntryOf))) throw new Error("before and after differ");
    report(
      "sqlite",
      history,
      await sideBySide(
        [
          { name: "before", call: (v) => before.all(ACCOUNT, empty, v, v, PAGE).map(moduleEntryOf) },
          { name: "after", call: (v) => modulesAt(store, ACCOUNT, v, null, PAGE) },
          { name: "readModules", call: (v) => store.readModules(ACCOUNT, v, null, PAGE) },
        ],
        last,
      ),
    );
    raw.close();
    await store.close();
  }
  if (process.argv.includes("--pg")) {
    const cluster = await PgCluster.start();
    try {
      for (const history of histories) {
        const store = await PostgresStore.connect(await cluster.newDb());
        await fill(store, history);
        const last = (await store.getLedgerInfo())!.ledgerVersion;
        const pool = (store as unknown as { pool: import("pg").Pool }).pool;
        await pool.query("VACUUM ANALYZE");
        const plan = await pool.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${POSTGRES_SQL.modulesPage}`, [ACCOUNT, Buffer.alloc(0), last.toString(), PAGE]);
        console.log(plan.rows.map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"]).join("\n"));
        report(
          "postgres",
          history,
          await sideBySide(
            [
              { name: "before", call: (v) => pool.query({ name: "before", text: MODULES_BEFORE_PG, values: [ACCOUNT, Buffer.alloc(0), v.toString(), PAGE] }) },
              { name: "after", call: (v) => modulesAt(store, ACCOUNT, v, null, PAGE) },
              { name: "readModules", call: (v) => store.readModules(ACCOUNT, v, null, PAGE) },
            ],
            last,
          ),
        );
        await store.close();
      }
    } finally {
      await cluster.destroy();
    }
  }
  console.log(`\n${rows.join("\n")}`);
}

/** The store of the checkout at `--before` (its dist/ built), opened on `path`. */
async function beforeStore(path: string, opts: { memoLagMs: number }): Promise<Storage> {
  const dir = argValue("before", "");
  if (!dir) throw new Error("--before DIR: a checkout of the previous commit with dist/ built");
  const { SqliteStore: Before } = (await import(`${dir.startsWith("/") ? dir : `${process.cwd()}/${dir}`}/dist/storage/sqlite/SqliteStore.js`)) as {
    SqliteStore: new (p: string, o: { memoLagMs: number }) => Storage;
  };
  return new Before(path, opts);
}

async function summariesBench(): Promise<void> {
  const path = argValue("db", "");
  const only = argValue("only", "");
  const after = new SqliteStore(path, { memoLagMs: 1 });
  const before = only && only !== "before" ? after : await beforeStore(path, { memoLagMs: 1 });
  const info = (await after.getLedgerInfo(true))!;
  const random = prng(7);
  const accounts = await sendersOf(path);
  const limit = 100;
  /** The three store calls of a page-cache miss as the API makes them today. */
  const split = (s: Storage) => async (end: bigint) => {
    const sender = accounts[Math.floor(random() * accounts.length)]!;
    const at = (await s.readSummariesVersion(sender, end))!;
    await summariesAt(s, { sender, end, limit, ledgerVersion: at.info.ledgerVersion });
    await s.getLedgerInfo(true);
  };
  const variants: Variant[] = [
    { name: "before", call: split(before) },
    { name: "split", call: split(after) },
    {
      name: "one",
      call: async (end: bigint) => {
        const sender = accounts[Math.floor(random() * accounts.length)]!;
        await after.readSummaries({ sender, end, limit });
      },
    },
  ].filter((v) => !only || v.name === only);
  const r = await sideBySide(variants, info.ledgerVersion);
  console.log("| store calls of one summaries page-cache miss | µs/request |\n|---|---|");
  for (const [name, us] of r) console.log(`| ${name} | ${us.toFixed(1)} |`);
}

/** Blocks of 100 user transactions from 50 senders. */
function* summaryBlocks(versions: number): Generator<BlockWrite[]> {
  const senders = Array.from({ length: 50 }, (_, i) => address(0x80 + i));
  const sequence = senders.map(() => 0n);
  let batch: BlockWrite[] = [];
  for (let first = 0; first < versions; first += 100) {
    const block: BlockWrite = {
      block: { height: BigInt(first / 100), epoch: 0n, timestampUsec: BigInt(first), firstVersion: BigInt(first), lastVersion: BigInt(first + 99), endInfo: null },
      transactions: [],
      modules: [],
      tableItems: [],
      resources: [],
    };
    for (let v = first; v < first + 100; v++) {
      const s = (v * 7919) % senders.length;
      const user = { sender: senders[s]!, replayProtector: { type: "sequence_number" as const, value: sequence[s]!++ }, gasUnitPrice: 100n, gasUsed: 5n, success: true, contractAddress: null };
      block.transactions.push({ version: BigInt(v), kind: v === 0 ? "genesis_transaction" : "user_transaction", hash: Buffer.alloc(32, v % 256), user: v === 0 ? null : user });
    }
    batch.push(block);
    if (batch.length === 20) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

async function summariesPgBench(): Promise<void> {
  const versions = Number(argValue("versions", "200000"));
  const cluster = await PgCluster.start();
  try {
    const store = await PostgresStore.connect(await cluster.newDb());
    await store.initChain(4);
    for (const blocks of summaryBlocks(versions)) await store.commitBlocks(blocks);
    const pool = (store as unknown as { pool: import("pg").Pool }).pool;
    await pool.query("VACUUM ANALYZE");
    const accounts = Array.from({ length: 50 }, (_, i) => Buffer.from(address(0x80 + i)));
    const random = prng(7);
    const limit = 100;
    let queries = 0;
    const count = pool.query.bind(pool);
    (pool as unknown as { query: typeof pool.query }).query = ((...args: Parameters<typeof pool.query>) => {
      queries++;
      return count(...args);
    }) as typeof pool.query;
    const info = (await store.getLedgerInfo())!;
    const plan = await pool.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${POSTGRES_SQL.summariesPageBackward}`, [accounts[3], `${info.ledgerVersion / 2n}`, limit]);
    console.log(plan.rows.map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"]).join("\n"));
    const variants: Variant[] = [
      {
        name: "split",
        call: async (end) => {
          const sender = accounts[Math.floor(random() * accounts.length)]!;
          const at = (await store.readSummariesVersion(sender, end))!;
          await summariesAt(store, { sender, end, limit, ledgerVersion: at.info.ledgerVersion });
          await store.getLedgerInfo();
        },
      },
      { name: "one", call: async (end) => void (await store.readSummaries({ sender: accounts[Math.floor(random() * accounts.length)]!, end, limit })) },
    ];
    const trips = new Map<string, number>();
    for (const v of variants) {
      queries = 0;
      for (let i = 0; i < 100; i++) await v.call(BigInt(i * 1000));
      trips.set(v.name, queries / 100);
    }
    const r = await sideBySide(variants, info.ledgerVersion);
    console.log("| PostgreSQL: store calls of one summaries page-cache miss | µs/request | round trips |\n|---|---|---|");
    for (const [name, us] of r) console.log(`| ${name} | ${us.toFixed(1)} | ${trips.get(name)} |`);
    await store.close();
  } finally {
    await cluster.destroy();
  }
}

/** Distinct senders of the ledger at `path`. */
async function sendersOf(path: string): Promise<Buffer[]> {
  const db = new Database(path, { readonly: true });
  try {
    // since migration 4 (issue 17 item 5) addresses are stored once, in addresses, and referred to by id
    const interned = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'addresses'").get() !== undefined;
    const sql = interned
      ? "SELECT address AS sender FROM addresses WHERE id IN (SELECT DISTINCT sender_id FROM account_transactions)"
      : "SELECT DISTINCT sender FROM account_transactions";
    return db.prepare<[], { sender: Buffer }>(sql).all().map((r) => r.sender);
  } finally {
    db.close();
  }
}

/** Child of `prune`: prunes `--db` to `--oldest`/`--height` with the store at `--store` (a checkout with dist/, or "this"). */
async function pruneChild(): Promise<void> {
  const dir = argValue("store", "this");
  const path = argValue("db", "");
  const Store =
    dir === "this"
      ? SqliteStore
      : ((await import(`${dir}/dist/storage/sqlite/SqliteStore.js`)) as { SqliteStore: new (p: string) => Storage }).SqliteStore;
  const store = new Store(path);
  const t0 = performance.now();
  const result = await store.prune({ oldestVersion: BigInt(argValue("oldest", "0")), oldestBlockHeight: BigInt(argValue("height", "0")) });
  const seconds = (performance.now() - t0) / 1000;
  await store.close();
  process.stdout.write(`${JSON.stringify({ seconds, result: { ...result } })}\n`);
}

async function pruneBench(): Promise<void> {
  const source = argValue("db", "");
  const beforeDir = argValue("before", "");
  const readEveryMs = Number(argValue("read-ms", "2"));
  const converted = source.replace(/\.db$/, "-incremental.db");
  if (!existsSync(converted)) {
    // Existing files keep auto_vacuum NONE; the ledger is converted once so both stores prune the same file.
    copyFileSync(source, converted);
    const store = new SqliteStore(converted);
    store.enableIncrementalVacuum();
    await store.close();
  }
  const rows: string[] = ["| prune of half the ledger | prune s | reads | read p50 ms | read p99 ms | read max ms | largest WAL MiB | file MiB before → after |", "|---|---|---|---|---|---|---|---|"];
  // Without --before, this build alone. A --before build must read the schema this build's reader leaves the copy in.
  const builds: Array<[string, string]> = beforeDir ? [["before", beforeDir.startsWith("/") ? beforeDir : `${process.cwd()}/${beforeDir}`]] : [];
  builds.push(["after", "this"]);
  for (const [name, storeDir] of builds) {
    const path = `${OUT}storage-prune-${name}.db`;
    for (const suffix of ["-wal", "-shm"]) if (existsSync(path + suffix)) rmSync(path + suffix);
    copyFileSync(converted, path);
    const reader = new SqliteStore(path, { memoLagMs: 1 });
    const info = (await reader.getLedgerInfo(true))!;
    const middle = await reader.getBlockByVersion(info.ledgerVersion / 2n);
    const target = { oldestVersion: middle!.firstVersion, oldestBlockHeight: middle!.height };
    const accounts = await sendersOf(path);
    const tables = new Database(path, { readonly: true });
    const interned = tables.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'addresses'").get() !== undefined;
    const items = tables
      .prepare<[], { handle: Buffer; key: Buffer }>(
        interned ? "SELECT DISTINCT a.address AS handle, t.key FROM table_items t JOIN addresses a ON a.id = t.handle_id" : "SELECT DISTINCT handle, key FROM table_items",
      )
      .all();
    tables.close();
    const sizeBefore = statSync(path).size;
    const random = prng(5);
    const latencies: number[] = [];
    let walMax = 0;
    let finished = false;
    const child = spawn(process.execPath, ["--import", "tsx", new URL(import.meta.url).pathname, "prune-child", "--store", storeDir, "--db", path, "--oldest", `${target.oldestVersion}`, "--height", `${target.oldestBlockHeight}`], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    void exited.then(() => (finished = true));
    while (!finished) {
      await new Promise((resolve) => setTimeout(resolve, readEveryMs));
      const at = target.oldestVersion + BigInt(Math.floor(random() * Number(info.ledgerVersion - target.oldestVersion)));
      const kind = random();
      const t0 = performance.now();
      if (kind < 0.4) {
        const item = items[Math.floor(random() * items.length)]!;
        await reader.readTableItem(item.handle, item.key, at);
      } else if (kind < 0.8) {
        await reader.readSummaries({ sender: accounts[Math.floor(random() * accounts.length)]!, end: at, limit: 100 });
      } else {
        await modulesAt(reader, accounts[Math.floor(random() * accounts.length)]!, at, null, 26);
      }
      latencies.push(performance.now() - t0);
      if (existsSync(`${path}-wal`)) walMax = Math.max(walMax, statSync(`${path}-wal`).size);
    }
    await reader.close();
    const { seconds } = JSON.parse(out) as { seconds: number };
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(2);
    const mib = (b: number) => (b / 1024 / 1024).toFixed(0);
    rows.push(`| ${name} | ${seconds.toFixed(1)} | ${latencies.length} | ${pct(0.5)} | ${pct(0.99)} | ${latencies.at(-1)!.toFixed(1)} | ${mib(walMax)} | ${mib(sizeBefore)} → ${mib(statSync(path).size)} |`);
    console.log(rows.at(-1));
  }
  console.log(`\n${rows.join("\n")}`);
}

/** Child of `prune-pg`: prunes `--url` to `--oldest`/`--height` with the PostgreSQL store at `--store` ("this" or a checkout with dist/). */
async function prunePgChild(): Promise<void> {
  const dir = argValue("store", "this");
  const Store = dir === "this" ? PostgresStore : ((await import(`${dir}/dist/storage/postgres/PostgresStore.js`)) as { PostgresStore: typeof PostgresStore }).PostgresStore;
  const store = await Store.connect(argValue("url", ""));
  const t0 = performance.now();
  const result = await store.prune({ oldestVersion: BigInt(argValue("oldest", "0")), oldestBlockHeight: BigInt(argValue("height", "0")) });
  const seconds = (performance.now() - t0) / 1000;
  await store.close();
  process.stdout.write(`${JSON.stringify({ seconds, result: { ...result } })}\n`);
}

async function prunePgBench(): Promise<void> {
  const { default: pg } = await import("pg");
  const admin = argValue("url", "");
  const beforeDir = argValue("before", "");
  const readEveryMs = Number(argValue("read-ms", "2"));
  const rounds = Number(argValue("rounds", "1"));
  const dbUrl = (name: string) => admin.replace(/\/[^/?]*(\?|$)/, `/${name}$1`);
  const sides = [
    { name: "before", storeDir: beforeDir.startsWith("/") ? beforeDir : `${process.cwd()}/${beforeDir}`, template: argValue("before-db", "") },
    { name: "after", storeDir: "this", template: argValue("after-db", "") },
    // This store in one step (the bounds of a step past the whole ledger): the steps' own effect.
    ...(process.argv.includes("--one-step") ? [{ name: "after, one step", storeDir: "this", template: argValue("after-db", ""), params: "prune_step_versions=1000000000&prune_step_rows=1000000000" }] : []),
  ] as Array<{ name: string; storeDir: string; template: string; params?: string }>;
  const rows: string[] = ["| prune of half the ledger | prune s | state rows deleted | reads | read p50 ms | read p99 ms | read max ms | commits | commit max ms |", "|---|---|---|---|---|---|---|---|---|"];
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const copy = `prune_${side.name.replace(/\W+/g, "_")}_${process.pid}`;
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${copy}`);
      await c.query(`CREATE DATABASE ${copy} TEMPLATE ${side.template}`);
      await c.end();
      const url = dbUrl(copy);
      const Store = side.storeDir === "this" ? PostgresStore : ((await import(`${side.storeDir}/dist/storage/postgres/PostgresStore.js`)) as { PostgresStore: typeof PostgresStore }).PostgresStore;
      const reader = await Store.connect(url);
      const info = (await reader.getLedgerInfo())!;
      const middle = (await reader.getBlockByVersion(info.ledgerVersion / 2n))!;
      const target = { oldestVersion: middle.firstVersion, oldestBlockHeight: middle.height };
      const q = new pg.Client({ connectionString: url });
      await q.connect();
      await q.query("VACUUM ANALYZE");
      const after4 = (await q.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'addresses'")).rowCount === 1;
      const items = (
        await q.query<{ handle: Buffer; key: Buffer }>(
          after4 ? "SELECT a.address AS handle, t.key FROM table_items t JOIN addresses a ON a.id = t.handle_id GROUP BY 1, 2" : "SELECT handle, key FROM table_items GROUP BY 1, 2",
        )
      ).rows;
      const accounts = (
        await q.query<{ sender: Buffer }>(
          after4 ? "SELECT a.address AS sender FROM addresses a WHERE a.id IN (SELECT DISTINCT sender_id FROM transactions)" : "SELECT DISTINCT sender FROM transactions WHERE sender IS NOT NULL",
        )
      ).rows.map((r) => r.sender);
      const random = prng(5);
      const latencies: number[] = [];
      const commitWaits: number[] = [];
      let finished = false;
      const child = spawn(process.execPath, ["--import", "tsx", new URL(import.meta.url).pathname, "prune-pg-child", "--store", side.storeDir, "--url", side.params ? `${url}${url.includes("?") ? "&" : "?"}${side.params}` : url, "--oldest", `${target.oldestVersion}`, "--height", `${target.oldestBlockHeight}`], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      void exited.then(() => (finished = true));
      // A block commit's wait for the ledger row: an UPDATE of it from a third connection every 50 ms.
      const commits = (async () => {
        while (!finished) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          const t0 = performance.now();
          await q.query("UPDATE ledger SET epoch = epoch WHERE id = 1");
          commitWaits.push(performance.now() - t0);
        }
      })();
      while (!finished) {
        await new Promise((resolve) => setTimeout(resolve, readEveryMs));
        const at = target.oldestVersion + BigInt(Math.floor(random() * Number(info.ledgerVersion - target.oldestVersion)));
        const kind = random();
        const t0 = performance.now();
        if (kind < 0.4) {
          const item = items[Math.floor(random() * items.length)]!;
          await reader.readTableItem(item.handle, item.key, at);
        } else if (kind < 0.8) {
          await reader.readSummaries({ sender: accounts[Math.floor(random() * accounts.length)]!, end: at, limit: 100 });
        } else {
          await modulesAt(reader, accounts[Math.floor(random() * accounts.length)]!, at, null, 26);
        }
        latencies.push(performance.now() - t0);
      }
      await commits;
      await q.end();
      await reader.close();
      const { seconds, result } = JSON.parse(out) as { seconds: number; result: { stateRowsDeleted: number } };
      latencies.sort((a, b) => a - b);
      const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(2);
      rows.push(
        `| ${side.name} | ${seconds.toFixed(1)} | ${result.stateRowsDeleted} | ${latencies.length} | ${pct(0.5)} | ${pct(0.99)} | ${latencies.at(-1)!.toFixed(1)} | ${commitWaits.length} | ${Math.max(...commitWaits).toFixed(1)} |`,
      );
      console.log(rows.at(-1));
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${copy}`);
      await d.end();
    }
  }
  console.log(`\n${rows.join("\n")}`);
}

const scenario = process.argv[2];
if (scenario === "modules") await modulesBench();
else if (scenario === "summaries") await summariesBench();
else if (scenario === "summaries-pg") await summariesPgBench();
else if (scenario === "prune") await pruneBench();
else if (scenario === "prune-child") await pruneChild();
else if (scenario === "prune-pg") await prunePgBench();
else if (scenario === "prune-pg-child") await prunePgChild();
else {
  console.error("usage: node --import tsx bench/storage.bench.ts modules|summaries|prune [options]: see the head of this file");
  process.exit(2);
}
