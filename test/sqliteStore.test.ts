/**
 * What the SQLite store does beyond the shared suite (`store.suite.ts`): its memory settings, and
 * pruning in bounded steps (tiny steps here, so that every boundary is crossed) with the space
 * given back to the file system.
 */
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { moduleStateKey } from "../src/ledger/stateKey.js";
import type { BlockWrite, PruneResult } from "../src/storage/contracts/writer.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { SQLITE_CACHE_SIZE_MIB, SQLITE_MMAP_SIZE_MIB, SqliteStore, type SqliteStoreOptions } from "../src/storage/sqlite/SqliteStore.js";
import { prng, testSeed } from "./helpers/seed.js";
import { summariesJsonPageOf, tableItem, modulesAt, summariesAt } from "./helpers/store.js";
import { memorySettings } from "../src/storage/sqlite/testing.js";
import { prepareStatements } from "../src/storage/sqlite/statements.js";

const SEED = testSeed(7_2026);
const U64_MAX = (1n << 64n) - 1n;
const dir = mkdtempSync(join(tmpdir(), "ledger-node-sqlite-"));
const opened: SqliteStore[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
  rmSync(dir, { recursive: true, force: true });
});
let n = 0;
const newPath = () => join(dir, `ledger-${n++}.db`);
const open = (path: string, opts: SqliteStoreOptions = {}) => {
  const s = new SqliteStore(path, opts);
  opened.push(s);
  return s;
};
const TINY_STEPS = { pruneBatch: { versions: 1, stateRows: 1, pages: 1 } };

const addr = (i: number): Uint8Array => {
  const a = new Uint8Array(32);
  a[31] = i;
  return a;
};
/** Two special addresses (printed short) and a full-length one. */
const SENDERS = [addr(1), addr(2), Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 0xa5) & 0xff)];
const HANDLE = addr(0x7);
const KEYS = [0, 1, 2, 3, 4, 5].map((i) => Uint8Array.from([i]));
const TYPE = "0x1::account::Account";
const NAMES = ["a", "b", "coin"];

/** A random history: blocks of 1–3 versions, user transactions, table items, resources and modules written and deleted. */
function history(seed: number, blocks: number, valueBytes = 8): BlockWrite[] {
  const random = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const value = (v: bigint) => (random() < 0.2 ? null : Buffer.alloc(valueBytes, Number(v % 251n)));
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
    const count = 1 + Math.floor(random() * 3);
    for (let i = 0; i < count; i++, version++) {
      const s = Math.floor(random() * SENDERS.length);
      // orderless transactions with random u64 nonces, half of them past i64
      const replayProtector =
        random() < 0.3 ? { type: "nonce" as const, value: BigInt.asUintN(64, (BigInt(Math.floor(random() * 2 ** 32)) << 32n) | BigInt(Math.floor(random() * 2 ** 32))) } : { type: "sequence_number" as const, value: sequence[s]!++ };
      const user = version === 0n || random() < 0.3 ? null : { sender: SENDERS[s]!, replayProtector, gasUnitPrice: 100n, gasUsed: 1n, success: true, contractAddress: null };
      w.transactions.push({ version, kind: version === 0n ? "genesis_transaction" : user ? "user_transaction" : "block_metadata_transaction", hash: Buffer.alloc(32, Number(version % 256n)), user });
      for (let k = 0; k < Math.floor(random() * 3); k++) w.tableItems.push({ version, handle: HANDLE, key: pick(KEYS), value: value(version) });
      if (random() < 0.5) w.resources.push({ version, address: pick(SENDERS), type: TYPE, json: random() < 0.2 ? null : `{"v":${version}}` });
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

async function filled(blocks: BlockWrite[], opts: SqliteStoreOptions = {}, path = newPath()): Promise<SqliteStore> {
  const s = open(path, opts);
  await s.initChain(4);
  await s.commitBlocks(blocks);
  return s;
}

/** Everything readable at `version`. */
async function readAt(s: Storage, version: bigint, oldest: bigint) {
  const hex = (b: Uint8Array | null) => (b ? Buffer.from(b).toString("hex") : null);
  return {
    items: await Promise.all(KEYS.map(async (k) => hex(await tableItem(s, HANDLE, k, version)))),
    resources: await Promise.all(SENDERS.map((a) => s.getResource(a, TYPE, version))),
    modules: await Promise.all(SENDERS.map(async (a) => (await modulesAt(s, a, version, null, 100)).map((m) => `${m.name}=${m.codeHash}`))),
    summaries: await Promise.all(
      SENDERS.map(async (a) => (await summariesAt(s, { sender: a, start: oldest, ledgerVersion: version, limit: 1000 })).map((r) => r.version)),
    ),
    block: (await s.getBlockByVersion(version))?.height ?? null,
  };
}

describe("SQLite store settings", () => {
  it("sizes the page cache and the memory map by default and as asked, for writers and readers", async () => {
    const path = newPath();
    const writer = open(path);
    expect(memorySettings(writer)).toEqual({ cacheBytes: SQLITE_CACHE_SIZE_MIB * 1024 * 1024, mmapBytes: SQLITE_MMAP_SIZE_MIB * 1024 * 1024 });
    const reader = open(path, { readonly: true, cacheSizeMiB: 2, mmapSizeMiB: 0 });
    expect(memorySettings(reader)).toEqual({ cacheBytes: 2 * 1024 * 1024, mmapBytes: 0 });
  });

  it("with walAutocheckpointPages keeps commits in the WAL until it holds that many pages; by default copies them into the file past SQLite's 1,000", async () => {
    // About 15 MB of 4 KB values: well past the default's 1,000 pages (4 MiB), short of 100,000.
    const blocks = history(SEED + 9, 2000, 4000);
    const fileSizes = async (opts: SqliteStoreOptions) => {
      const path = newPath();
      const s = await filled(blocks, opts, path);
      const sizes = { file: statSync(path).size, wal: statSync(`${path}-wal`).size };
      await s.close();
      return sizes;
    };
    const byDefault = await fileSizes({});
    const held = await fileSizes({ walAutocheckpointPages: 100_000 });
    expect(held.wal).toBeGreaterThan(8 * 1024 * 1024);
    expect(held.file).toBeLessThan(1024 * 1024);
    expect(byDefault.file).toBeGreaterThan(8 * 1024 * 1024);
  });
});

describe(`SQLite module pages (seed ${SEED})`, () => {
  it("lists each account's modules at a version as its history says, through deletions, from any start and at any limit, in both code forms", async () => {
    const blocks = history(SEED + 5, 200);
    const s = await filled(blocks);
    const last = blocks.at(-1)!.block.lastVersion;
    // the model: every write of each module, in version order
    const writes = blocks.flatMap((w) => w.modules);
    const modelAt = (owner: Uint8Array, version: bigint) => {
      const newest = new Map<string, (typeof writes)[number]>();
      for (const m of writes) if (Buffer.from(m.address).equals(Buffer.from(owner)) && m.version <= version) newest.set(m.name, m);
      return [...newest.values()].filter((m) => m.bytecode !== null).sort((a, b) => Buffer.compare(Buffer.from(a.stateKey), Buffer.from(b.stateKey)));
    };
    expect(writes.some((m) => m.bytecode === null)).toBe(true);
    const random = prng(SEED + 6);
    for (let i = 0; i < 300; i++) {
      const owner = SENDERS[i % SENDERS.length]!;
      const version = BigInt(Math.floor(random() * Number(last + 1n)));
      const model = modelAt(owner, version);
      const from = Math.floor(random() * (model.length + 1));
      const start = random() < 0.3 ? null : from < model.length ? model[from]!.stateKey : moduleStateKey(owner, "zzzz");
      const limit = 1 + Math.floor(random() * 4);
      const expected = model.filter((m) => start === null || Buffer.compare(Buffer.from(m.stateKey), Buffer.from(start)) >= 0).slice(0, limit);
      const label = `${i}: at ${version} from ${start ? Buffer.from(start).toString("hex") : "-"} limit ${limit}`;
      const page = (await s.readModules(owner, version, start, limit, () => true))!.value.rows;
      expect(page.map((m) => [m.name, Buffer.from(m.bytecode!).toString()]), label).toEqual(expected.map((m) => [m.name, Buffer.from(m.bytecode!).toString()]));
      const records = (await s.wire.readModules(owner, version, start, limit, () => true))!.value.rows;
      expect(records.map((m) => m.record), label).toEqual(page.map((m) => `{"bytecode":"0x${Buffer.from(m.bytecode!).toString("hex")}","abi":${m.abi}}`));
    }
  });

  it("reads one module without its code when the caller holds its record, and with its bytecode and ABI text otherwise", async () => {
    const blocks = history(SEED + 7, 200);
    const s = await filled(blocks);
    const last = blocks.at(-1)!.block.lastVersion;
    const written = blocks.flatMap((w) => w.modules).filter((m) => m.bytecode !== null);
    expect(written.length).toBeGreaterThan(3);
    for (const m of written) {
      const all = (await s.readModule(m.address, m.name, last))!.value!;
      const held = (await s.readModule(m.address, m.name, last, (hash) => hash !== all.codeHash))!.value!;
      const wanted = (await s.readModule(m.address, m.name, last, (hash) => hash === all.codeHash))!.value!;
      expect(held, m.name).toEqual({ stateKey: all.stateKey, name: all.name, codeHash: all.codeHash });
      expect(wanted, m.name).toEqual(all);
      expect(all.bytecode, m.name).toBeInstanceOf(Buffer);
      expect(all.abi, m.name).toBeTypeOf("string");
    }
  });
});

describe(`SQLite module records (seed ${SEED})`, () => {
  it("reads a listed module's record as one column: the record text the API sends, or the bytecode of a row without ABI text", async () => {
    const path = newPath();
    const blocks = history(SEED + 8, 120);
    await filled(blocks, {}, path);
    const last = blocks.at(-1)!.block.lastVersion;
    const file = new Database(path, { readonly: true });
    onTestFinished(() => {
      file.close();
    });
    const st = prepareStatements(file);
    const ids = file.prepare("SELECT id FROM code ORDER BY id").pluck().all() as number[];
    expect(ids.length).toBeGreaterThan(3);
    for (const id of ids) {
      const [bytecode, abi] = st.codeAndAbi.get(id)!;
      expect(st.codeRecord.get(id), `code ${id}`).toBe(`{"bytecode":"0x${bytecode.toString("hex")}","abi":${abi}}`);
    }
    expect(st.codeRecord.get(ids.at(-1)! + 1)).toBeUndefined();

    const writer = new Database(path);
    expect(writer.prepare("UPDATE code SET abi = NULL").run().changes).toBe(ids.length);
    writer.close();
    for (const id of ids) expect(st.codeRecord.get(id), `code ${id}`).toEqual(st.codeAndAbi.get(id)![0]);
    // the reads take such a row's bytecode, for the API to decode its ABI
    const s = open(path, { readonly: true });
    let listed = 0;
    for (const owner of SENDERS) {
      for (const m of (await s.wire.readModules(owner, last, null, 10, () => true))!.value.rows) {
        expect(m.record, m.name).toBeUndefined();
        expect(m.bytecode, m.name).toBeInstanceOf(Buffer);
        listed++;
      }
    }
    expect(listed).toBeGreaterThan(0);
  });
});

describe(`SQLite reads per event-loop turn (seed ${SEED})`, () => {
  it("answers a turn's reads from one snapshot, another connection's commit from the next turn on (a fresh ledger read at once), and holds no lock past the turn", async () => {
    const blocks = history(SEED + 3, 40);
    const path = newPath();
    const writer = await filled(blocks.slice(0, 20), {}, path);
    const reader = open(path, { readonly: true, readsPerTurn: true });
    // A connection of the test's own, to ask for a checkpoint that needs every reader gone from the WAL.
    const checkpointer = new Database(path);
    onTestFinished(() => void checkpointer.close());
    checkpointer.pragma("busy_timeout = 0");
    const truncated = () => (checkpointer.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number }>)[0]!.busy === 0;
    const first = blocks[19]!.block.lastVersion;
    const middle = blocks[29]!.block.lastVersion;
    const last = blocks.at(-1)!.block.lastVersion;
    const position = () => ({
      ledger: reader.immediate.getLedgerInfo()!.ledgerVersion,
      item: reader.immediate.readTableItem(HANDLE, KEYS[0]!, undefined)?.info.ledgerVersion,
      summaries: reader.immediate.readSummariesVersion(SENDERS[0]!, U64_MAX)?.info.ledgerVersion,
    });
    // The turn ends on setImmediate: held here, so that a commit can come between two reads of one turn.
    vi.useFakeTimers({ toFake: ["setImmediate"] });
    onTestFinished(() => void vi.useRealTimers());
    expect(position()).toEqual({ ledger: first, item: first, summaries: first });
    await writer.commitBlocks(blocks.slice(20, 30));
    // the same turn: its snapshot, whichever read, memoized or not, of one statement or several
    expect(position()).toEqual({ ledger: first, item: first, summaries: first });
    const page = (await reader.readSummaries({ sender: SENDERS[0]!, start: undefined, end: undefined, limit: 5 }))!;
    expect({ at: page.info.ledgerVersion, newest: page.value.newest! <= first }).toEqual({ at: first, newest: true });
    expect(truncated()).toBe(false);
    // a fresh ledger read ends the turn's snapshot, and the reads after it see the commit too
    expect(reader.immediate.getLedgerInfo(true)!.ledgerVersion).toBe(middle);
    expect(position()).toEqual({ ledger: middle, item: middle, summaries: middle });
    expect((await reader.readSummaries({ sender: SENDERS[0]!, start: undefined, end: undefined, limit: 5 }))!.info.ledgerVersion).toBe(middle);
    // the turn ends: no read lock is left for a checkpoint to wait on
    vi.runAllTimers();
    expect(truncated()).toBe(true);
    // and the next turn's reads, after another commit, take a new snapshot and hold it until that turn ends
    await writer.commitBlocks(blocks.slice(30));
    expect(position()).toEqual({ ledger: last, item: last, summaries: last });
    // (a page reads the ledger row once a turn: the last turn's row is not this one's)
    expect((await reader.readSummaries({ sender: SENDERS[0]!, start: undefined, end: undefined, limit: 5 }))!.info.ledgerVersion).toBe(last);
    expect(truncated()).toBe(false);
    vi.runAllTimers();
    expect(truncated()).toBe(true);
  });

  it("is off on a connection that writes: its commits are not held for a turn", async () => {
    const blocks = history(SEED + 4, 10);
    const path = newPath();
    const s = await filled(blocks, { readsPerTurn: true }, path);
    const other = new Database(path);
    onTestFinished(() => void other.close());
    other.pragma("busy_timeout = 0");
    vi.useFakeTimers({ toFake: ["setImmediate"] });
    onTestFinished(() => void vi.useRealTimers());
    expect(s.immediate.readTableItem(HANDLE, KEYS[0]!, 3n)).not.toBeNull();
    expect((other.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number }>)[0]!.busy).toBe(0);
  });
});

describe(`SQLite summaries JSON (seed ${SEED})`, () => {
  it("writes each page's JSON in its statement byte for byte as the API writes the rows, u64 nonces past i64 included", async () => {
    const blocks = history(SEED + 1, 150);
    const s = await filled(blocks);
    const last = blocks.at(-1)!.block.lastVersion;
    const nonces = blocks.flatMap((b) => b.transactions.map((t) => t.user?.replayProtector)).filter((p) => p?.type === "nonce");
    expect(nonces.some((p) => p!.value >= 1n << 63n)).toBe(true);
    expect(nonces.some((p) => p!.value < 1n << 63n)).toBe(true);
    const random = prng(SEED + 2);
    const bound = () => (random() < 0.1 ? undefined : random() < 0.05 ? U64_MAX : BigInt(Math.floor(random() * Number(last + 10n))));
    for (let i = 0; i < 400; i++) {
      const q = { sender: SENDERS[i % SENDERS.length]!, start: random() < 0.4 ? bound() : undefined, end: bound(), limit: Math.floor(random() * 30) };
      const typed = (await s.readSummaries(q))!;
      const expected = { info: typed.info, value: summariesJsonPageOf(typed.value) };
      expect(await s.wire.readSummaries(q), JSON.stringify(q, (_, v) => (typeof v === "bigint" ? String(v) : v))).toEqual(expected);
    }
  });
});

describe(`SQLite prune in bounded steps (seed ${SEED})`, () => {
  const blocks = history(SEED, 120);
  const last = blocks.at(-1)!.block.lastVersion;

  it("keeps every read at or above the oldest version exact and counts what it deleted as one whole prune does", async () => {
    const reference = await filled(blocks);
    const stepped = await filled(blocks, TINY_STEPS);
    const whole = await filled(blocks, { pruneBatch: { versions: 1e9, stateRows: 1e9, pages: 1e9 } });
    const random = prng(SEED);
    for (const height of [10, 11, 40, 41, 90, 119].map(BigInt)) {
      const target = { oldestVersion: blocks[Number(height)]!.block.firstVersion, oldestBlockHeight: height };
      const results: PruneResult[] = [await stepped.prune(target), await whole.prune(target)];
      expect(results[0]).toEqual(results[1]);
      expect(await stepped.getLedgerInfo()).toMatchObject({ oldestVersion: target.oldestVersion, oldestBlockHeight: height });
      for (let i = 0; i < 8; i++) {
        const at = target.oldestVersion + BigInt(Math.floor(random() * Number(last - target.oldestVersion + 1n)));
        expect(await readAt(stepped, at, target.oldestVersion), `at ${at}`).toEqual(await readAt(reference, at, target.oldestVersion));
      }
      expect(await stepped.getBlockByHeight(height - 1n)).toBeNull();
      expect(await stepped.getFingerprints(0n, target.oldestVersion - 1n)).toEqual([]);
    }
  });

  it("answers reads exactly between its steps: the oldest version only moves when a step commits", async () => {
    const reference = await filled(blocks);
    const stepped = await filled(blocks, TINY_STEPS);
    const target = { oldestVersion: blocks[100]!.block.firstVersion, oldestBlockHeight: 100n };
    let done = false;
    const pruning = stepped.prune(target).finally(() => (done = true));
    const random = prng(SEED + 1);
    const oldestSeen: bigint[] = [];
    while (!done) {
      // a macrotask turn: the prune continues between its steps (as the event loop lets it between requests)
      await new Promise((resolve) => setImmediate(resolve));
      const snap = (await stepped.readTableItem(HANDLE, KEYS[0]!, undefined))!;
      const oldest = snap.info.oldestVersion;
      oldestSeen.push(oldest);
      const at = oldest + BigInt(Math.floor(random() * Number(last - oldest + 1n)));
      expect(await readAt(stepped, at, oldest), `at ${at}, oldest ${oldest}`).toEqual(await readAt(reference, at, oldest));
    }
    await pruning;
    // the reads ran between steps, while the oldest version moved up block by block
    expect(new Set(oldestSeen).size).toBeGreaterThan(10);
    expect(oldestSeen).toEqual([...oldestSeen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it("waits its turn behind another process's write instead of failing on it (issue 31 §1)", async () => {
    const path = newPath();
    const s = await filled(blocks, {}, path);
    // Another process takes the write lock, writes, and commits a second later on its own: a
    // prune step started meanwhile read the ledger before that commit. As a deferred transaction
    // it then failed at its first write (SQLITE_BUSY, "database is locked") without waiting.
    const script = `
      const c = new (require("better-sqlite3"))(process.argv[1]);
      c.exec("BEGIN IMMEDIATE; CREATE TABLE other_tool (x); INSERT INTO other_tool VALUES (1)");
      process.stdout.write("writing\\n");
      setTimeout(() => { c.exec("COMMIT"); c.close(); }, 1000);`;
    const other = spawn(process.execPath, ["-e", script, path], { cwd: new URL("..", import.meta.url).pathname, stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise((resolve) => other.once("exit", resolve));
    await new Promise((resolve) => other.stdout!.once("data", resolve));
    const target = { oldestVersion: blocks[60]!.block.firstVersion, oldestBlockHeight: 60n };
    const result = await s.prune(target);
    expect(await exited).toBe(0);
    expect(result.blocksDeleted).toBe(60);
    expect(await s.getLedgerInfo(true)).toMatchObject({ oldestVersion: target.oldestVersion, oldestBlockHeight: 60n });
  });

  it("lets another connection read through its memory map while a prune shrinks the file under it", async () => {
    const big = history(SEED + 2, 120, 4000);
    const path = newPath();
    await (await filled(big, TINY_STEPS, path)).close(); // checkpointed: the pages are in the file
    const writer = open(path, TINY_STEPS);
    const reader = open(path, { readonly: true });
    const reference = await filled(big);
    const sizeBefore = statSync(path).size;
    // the reader maps the whole file before it shrinks
    await readAt(reader, last, 0n);
    let done = false;
    const pruning = writer.prune({ oldestVersion: big[110]!.block.firstVersion, oldestBlockHeight: 110n }).finally(() => (done = true));
    const random = prng(SEED + 3);
    while (!done) {
      await new Promise((resolve) => setImmediate(resolve));
      const oldest = (await reader.getLedgerInfo(true))!.oldestVersion;
      const at = oldest + BigInt(Math.floor(random() * Number(last - oldest + 1n)));
      expect(await readAt(reader, at, oldest), `at ${at}, oldest ${oldest}`).toEqual(await readAt(reference, at, oldest));
    }
    await pruning;
    await writer.close(); // its last checkpoint truncates the file under the reader's map
    expect(statSync(path).size).toBeLessThan(sizeBefore / 2);
    const oldest = big[110]!.block.firstVersion;
    expect(await readAt(reader, last, oldest)).toEqual(await readAt(reference, last, oldest));
  });

  it("keeps the WAL about one step long while another process reads without a pause (issue 35 target 6)", async () => {
    const big = history(SEED + 4, 120, 4000);
    const steps = { pruneBatch: { versions: 20, stateRows: 50, pages: 16 } };
    const target = { oldestVersion: big[100]!.block.firstVersion, oldestBlockHeight: 100n };
    const source = newPath();
    await (await filled(big, steps, source)).close(); // checkpointed: the WAL is empty
    const copyOfSource = () => {
      const path = newPath();
      copyFileSync(source, path);
      return path;
    };
    /** The WAL's size after the prune of a copy (its largest: the file keeps its length when the WAL restarts). */
    const walAfterPrune = async (path: string): Promise<number> => {
      const s = open(path, steps);
      await s.prune(target);
      const size = statSync(`${path}-wal`).size;
      await s.close();
      return size;
    };
    const alone = await walAfterPrune(copyOfSource());

    // Two connections of another process reading in turn, each opening its read transaction before
    // the other's ends: at every moment some reader holds a snapshot, as a busy node's reads do.
    const read = copyOfSource();
    const script = `
      const Database = require("better-sqlite3");
      const readers = [0, 1].map(() => new Database(process.argv[1], { readonly: true }));
      const blocks = readers.map((c) => c.prepare("SELECT count(*) FROM blocks").pluck());
      let current = 0;
      readers[0].exec("BEGIN");
      blocks[0].get();
      process.stdout.write("reading\\n");
      const next = () => {
        const other = 1 - current;
        readers[other].exec("BEGIN");
        blocks[other].get();
        readers[current].exec("COMMIT");
        current = other;
      };
      const timer = setInterval(next, 2);
      process.stdin.on("end", () => { clearInterval(timer); readers.forEach((c) => c.close()); });
      process.stdin.resume();`;
    const reader = spawn(process.execPath, ["-e", script, read], { cwd: new URL("..", import.meta.url).pathname, stdio: ["pipe", "pipe", "inherit"] });
    const exited = new Promise((resolve) => reader.once("exit", resolve));
    onTestFinished(() => void reader.kill());
    await new Promise((resolve) => reader.stdout!.once("data", resolve));
    const withReaders = await walAfterPrune(read);
    reader.stdin!.end();
    expect(await exited).toBe(0);
    // A checkpoint that stopped at the readers' snapshots let the WAL grow by every step.
    expect(withReaders).toBeLessThanOrEqual(alone * 3);
  });

  it("deletes unused code in steps too: a prune that drops much code keeps the WAL about one step long (issue 35 target 6)", async () => {
    // 40 modules, one of them upgraded each block, each version's code a kilobyte of its own
    const random = prng(SEED + 5);
    const owner = SENDERS[0]!;
    const upgrades: BlockWrite[] = Array.from({ length: 400 }, (_, h) => ({
      block: { height: BigInt(h), epoch: 0n, timestampUsec: BigInt(h) * 1000n, firstVersion: BigInt(h), lastVersion: BigInt(h), endInfo: null },
      transactions: [{ version: BigInt(h), kind: h === 0 ? "genesis_transaction" : "block_metadata_transaction", hash: Buffer.alloc(32, h % 256), user: null }],
      modules: [{ version: BigInt(h), address: owner, name: `m${h % 40}`, stateKey: moduleStateKey(owner, `m${h % 40}`), bytecode: Buffer.from(Array.from({ length: 1000 }, () => Math.floor(random() * 256))) }],
      tableItems: [],
      resources: [],
    }));
    const target = { oldestVersion: 390n, oldestBlockHeight: 390n };
    const walAfterPrune = async (stateRows: number): Promise<number> => {
      const path = newPath();
      await (await filled(upgrades, {}, path)).close(); // checkpointed: the WAL is empty
      const s = open(path, { pruneBatch: { versions: 5, stateRows, pages: 1 } });
      await s.prune(target);
      expect((await modulesAt(s, owner, 399n, null, 50)).map((m) => m.codeHash)).toEqual((await modulesAt(reference, owner, 399n, null, 50)).map((m) => m.codeHash));
      const size = statSync(`${path}-wal`).size;
      await s.close();
      return size;
    };
    const reference = await filled(upgrades);
    // 360 of the 400 code rows go: in one statement, their pages were all in one step's WAL
    const codeInOneStep = await walAfterPrune(1e9);
    expect(await walAfterPrune(10)).toBeLessThan(codeInOneStep / 3);
  });

  it("gives the pruned pages of a new file back to the file system, and prunes a file made without that too", async () => {
    const big = history(SEED, 120, 4000);
    const path = newPath();
    const s = await filled(big, TINY_STEPS, path);
    await s.close();
    const before = statSync(path).size;
    const again = open(path, TINY_STEPS);
    await again.prune({ oldestVersion: big[100]!.block.firstVersion, oldestBlockHeight: 100n });
    await again.close();
    expect(statSync(path).size).toBeLessThan(before / 2);

    // a file made before incremental vacuum (a table already there): pruned the same, pages kept for reuse
    const oldPath = newPath();
    const raw = new Database(oldPath);
    raw.exec("CREATE TABLE made_before (x)");
    raw.close();
    const old = await filled(big, {}, oldPath);
    expect(old.hasIncrementalVacuum()).toBe(false);
    const reference = await filled(big);
    expect(reference.hasIncrementalVacuum()).toBe(true);
    const target = { oldestVersion: big[60]!.block.firstVersion, oldestBlockHeight: 60n };
    expect(await old.prune(target)).toEqual(await reference.prune(target));
    expect(await readAt(old, last, target.oldestVersion)).toEqual(await readAt(reference, last, target.oldestVersion));

    // converted, it gives the pages of the next prune back, and reads the same
    expect(old.enableIncrementalVacuum()).toBe(true);
    expect(old.enableIncrementalVacuum()).toBe(false);
    expect(old.hasIncrementalVacuum()).toBe(true);
    const next = { oldestVersion: big[110]!.block.firstVersion, oldestBlockHeight: 110n };
    await old.close();
    const sizeBefore = statSync(oldPath).size;
    const reopened = open(oldPath);
    expect(await reopened.prune(next)).toEqual(await reference.prune(next));
    expect(await readAt(reopened, last, next.oldestVersion)).toEqual(await readAt(reference, last, next.oldestVersion));
    await reopened.close();
    expect(statSync(oldPath).size).toBeLessThan(sizeBefore);
  });
});
