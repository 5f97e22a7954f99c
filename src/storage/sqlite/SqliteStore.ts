/**
 * The embedded default backend: one SQLite file in WAL mode (better-sqlite3).
 *
 * State is kept as versioned rows `(key…, version, value)`; a read at V takes the newest row with
 * version <= V, and a NULL value is a deletion. u64 values are stored as SQLite INTEGER through
 * `BigInt.asIntN(64)` and read back with `asUintN`, so the full u64 range round-trips. The rules
 * both backends share (row mappers, summaries window, prune plan) are in `../rules.ts`; how the
 * two schemas differ, and why, in `../README.md`.
 */
import Database from "better-sqlite3";
import type { Database as Db, Statement } from "better-sqlite3";
import { LRUCache } from "lru-cache";
import { mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { formatAddress } from "../../ledger/address.js";
import { CODE_HASH_DIGITS, codeHash } from "../../ledger/codeHash.js";
import { moduleAbiJson } from "../../move/abi.js";
import type { BlockInfo, LedgerInfo, ModuleEntry, TransactionSummary, UserTxnGas } from "../../ledger/types.js";
import type { BaseStateWrite, StateKeyRef } from "../followBase.js";
import type { BlockWrite, PruneResult, PruneTarget, StoredTxnFingerprint } from "../writer.js";
import type { ImmediateReads, Snapshot, ModulesPage, SummariesJsonPage, SummariesPage, SummaryQuery, WantsCode, WireReads } from "../reader.js";
import type { Storage } from "../storage.js";
import { StorageCorruptError, StorageError, StorageUnavailableError, type StorageErrorKind } from "../errors.js";
import { packResourceValue, unpackResourceValue } from "../resourceValue.js";
import {
  NOTHING_PRUNED,
  blockOf,
  checkChainId,
  fingerprintOf,
  ledgerColumnList,
  ledgerInfoOf,
  planPrune,
  replayKindCode,
  snapshotValue,
  summaryColumns,
  summaryOf,
  summaryRange,
  type SummaryWindow,
  type ModuleCodeForm,
  storedAbiText,
  txnKindCode,
  userTxnGasOf,
  type BlockRow,
  type ColumnDecoder,
  type FingerprintRow,
  type LedgerTuple,
  STATE_TABLES,
  type StateTable,
  type SnapshotTuple,
  type SummaryTuple,
  type UserTxnGasRow,
  MEMO_BYTES,
  MEMO_ENTRY_BYTES,
  memoEntrySize,
  memoKeyOf,
  memoKeys,
} from "../rules.js";
import { ResourcePacker, type ResourceToPack } from "./resourcePacker.js";
import { MIGRATIONS } from "./schema.js";

/** A u64 as SQLite INTEGER (signed 64-bit) and back. */
const u64ToSql = (v: bigint): bigint => BigInt.asIntN(64, v);
const u64FromSql = (x: bigint): bigint => BigInt.asUintN(64, x);
const I64_MAX = (1n << 63n) - 1n;
/** Versions are stored as plain INTEGER; a query bound past i64 can only mean "beyond everything". */
const versionParam = (v: bigint): bigint => (v > I64_MAX ? I64_MAX : v);
/**
 * Timestamps are searched by range, so they are stored order-preserving: the top bit flipped maps
 * u64 order onto SQLite's signed order (0 -> i64 min, u64 max -> i64 max).
 */
const TOP_BIT = 1n << 63n;
const timestampToSql = (v: bigint): bigint => BigInt.asIntN(64, v ^ TOP_BIT);
const timestampFromSql = (x: bigint): bigint => BigInt.asUintN(64, x) ^ TOP_BIT;

/** Columns as better-sqlite3 returns them with safe integers on: every INTEGER a bigint. */
const SQLITE_COLUMNS: ColumnDecoder<bigint, bigint> = {
  u64: u64FromSql,
  timestamp: timestampFromSql,
  flag: (v) => v === 1n,
};

/** Interned ids a connection keeps in memory at most, per kind (addresses, resource types). */
const INTERNED_IDS_MAX = 1_000_000;

const LEDGER_SELECT = `SELECT ${ledgerColumnList("l")}`;
const LEDGER_FROM = "FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL";

type Version = bigint | null;
/**
 * A state key of a module page: the key, its module's name, and its code at the version (null:
 * none or deleted) as the code hash's 64 hex digits followed by the code's id (`codeOf`).
 */
type ModuleTuple = [Buffer, string, string | null];
const NO_KEY = Buffer.alloc(0);
const ZERO_BYTE = Buffer.alloc(1);

/** The id of an address (or table handle) bound as a parameter, as a scalar subquery (NULL: none stored). */
const ADDRESS_ID = "SELECT id FROM addresses WHERE address = ?";
/**
 * A u64 column (stored as i64, `u64ToSql`) as decimal text: a value past i64 reads negative, and
 * is printed as u div 10 and u mod 10 from h = u >> 1 (which fits): u div 10 = h div 5, and
 * u mod 10 = 2 (h mod 5) + (u & 1).
 */
const u64Text = (c: string) =>
  // (|| binds tighter than any arithmetic in SQLite: every operand in parentheses)
  `CASE WHEN ${c} >= 0 THEN ${c} ELSE (((${c} >> 1) & ${I64_MAX}) / 5) || ((2 * (((${c} >> 1) & ${I64_MAX}) % 5)) + (${c} & 1)) END`;
/**
 * A summary row as the API's JSON text (`SummariesJsonPage.json`), after a parameter with the
 * formatted sender: built in the statement, it costs no JavaScript object, bigint or hex string.
 */
const SUMMARY_JSON =
  `'{"sender":"' || ? || '","version":"' || version || '","transaction_hash":"0x' || lower(hex(hash)) ||
   CASE replay_kind WHEN 0 THEN '","replay_protector":{"type":"nonce","nonce":"'
        ELSE '","replay_protector":{"type":"sequence_number","sequence_number":"' END ||
   ${u64Text("replay_value")} || '"}}'`;
/** The id of a resource type bound as a parameter. */
const TYPE_ID = "SELECT id FROM resource_types WHERE name = ?";
/** A contract address stored by id: the form the importer gives, 64 lowercase hex digits. */
const CANONICAL_CONTRACT = /^[0-9a-f]{64}$/;
/**
 * A bound LIMIT or OFFSET. A bare `?` there makes SQLite (3.53, STAT4 build) read the bound value
 * while planning, so every new binding expires the statement and the next step parses and plans it
 * again: 18 against 7 µs for a page of 25 versions (bench/out, 2026-11-24), the malloc churn of the
 * re-prepare included. `+ 0` makes it an expression the planner does not read.
 */
const BOUND = "? + 0";
const SUMMARY_COLUMNS = summaryColumns((column) => `lower(hex(${column}))`);

/** Every statement the store runs more than once, prepared once. */
function prepareStatements(db: Db) {
  /** Reads by named column, every INTEGER a bigint. */
  const rows = <P extends unknown[], R>(sql: string): Statement<P, R> => db.prepare<P, R>(sql).safeIntegers(true);
  /**
   * Reads as row arrays, for the hot paths (no row object to build): the result type is the
   * typed tuple one rules.ts mapper reads.
   */
  const tuples = <P extends unknown[], R extends unknown[]>(sql: string): Statement<P, R> =>
    db.prepare<P, R>(sql).safeIntegers(true).raw(true);
  const writes = <P extends unknown[]>(sql: string): Statement<P> => db.prepare<P>(sql);
  return {
    chainId: rows<[], { chain_id: bigint }>("SELECT chain_id FROM ledger WHERE id = 1"),
    dataVersion: db.prepare<[], number>("PRAGMA data_version").pluck(),
    initChain: writes<[number]>("INSERT INTO ledger (id, chain_id) VALUES (1, ?) ON CONFLICT (id) DO NOTHING"),
    ledger: tuples<[], LedgerTuple<bigint>>(`${LEDGER_SELECT} ${LEDGER_FROM}`),
    // An account's module page (`SqliteStore.moduleList`): its state keys from a bound, in order,
    // each with the code of its newest row at or below the version (NULL: none there, or deleted),
    // as many as asked in one statement. The cost follows the modules listed, not how many versions
    // they have. On the 10M bench ledger the keys of a page of 10 modules took 37-41 µs of CPU this
    // way against 48-55 walking the modules table one key per statement (store level, 3 rounds).
    //
    // The newest row of a key is one seek: a scalar subquery that returns its code hash and id as
    // one text (the 64 hex digits, then the id), not max(version) and then the row by its whole key
    // (a second seek). A random page of about 10 modules: 28-34 against 34-43 µs of CPU at 1M
    // versions, 35-36 against 40-52 at 10M (store level, 5 alternated rounds of 3,000 pages each).
    moduleKeys: tuples<[bigint, Uint8Array, Uint8Array, number], ModuleTuple>(
      `SELECT k.state_key, k.name,
              (SELECT n.code_hash || coalesce(n.code_id, '') FROM modules n
               WHERE n.address = k.address AND n.state_key = k.state_key AND n.version <= ?
               ORDER BY n.version DESC LIMIT 1)
       FROM module_keys k
       WHERE k.address = ? AND k.state_key >= ? ORDER BY k.state_key LIMIT ${BOUND}`,
    ),
    code: rows<[string], { bytecode: Buffer }>("SELECT bytecode FROM code WHERE code_hash = ?"),
    // A listed module's bytecode with its ABI text (NULL: a row no migration filled).
    codeAndAbi: tuples<[number], [Buffer, string | null]>("SELECT bytecode, abi FROM code WHERE id = ?"),
    // A listed module's JSON record as the API sends it (`ModuleEntry.record`), or, for a row
    // without ABI text, its bytecode. Written here it cost 5.0 µs of CPU a module against 6.0-6.9
    // for the two columns, before the record is built from them (10M bench ledger, store level).
    codeRecord: tuples<[number], [string | null, Buffer | null]>(
      `SELECT CASE WHEN abi IS NOT NULL THEN '{"bytecode":"0x' || lower(hex(bytecode)) || '","abi":' || abi || '}' END,
              CASE WHEN abi IS NULL THEN bytecode END
       FROM code WHERE id = ?`,
    ),
    // The ledger row and the item in one statement: one snapshot, one read lock (WAL read marks
    // are taken and dropped per statement, with a few system calls each).
    tableItemAt: tuples<[Uint8Array, Uint8Array, Version], SnapshotTuple<bigint, Buffer>>(
      `${LEDGER_SELECT},
              (SELECT t.value FROM table_items t WHERE t.handle_id = (${ADDRESS_ID}) AND t.key = ?
                 AND t.version <= coalesce(?, l.ledger_version) ORDER BY t.version DESC LIMIT 1)
       ${LEDGER_FROM}`,
    ),
    modulesVersionAt: tuples<[Uint8Array, Version], SnapshotTuple<bigint, bigint>>(
      `${LEDGER_SELECT},
              (SELECT m.version FROM modules m WHERE m.address = ? AND m.version <= coalesce(?, l.ledger_version)
               ORDER BY m.version DESC LIMIT 1)
       ${LEDGER_FROM}`,
    ),
    summariesVersionAt: tuples<[Uint8Array, Version], SnapshotTuple<bigint, bigint>>(
      `${LEDGER_SELECT},
              (SELECT a.version FROM account_transactions a
               WHERE a.sender_id = (${ADDRESS_ID}) AND a.version <= min(coalesce(?, l.ledger_version), l.ledger_version)
               ORDER BY a.version DESC LIMIT 1)
       ${LEDGER_FROM}`,
    ),
    resource: rows<[Uint8Array, string, bigint], { value: Buffer | string | null }>(
      `SELECT value FROM resources WHERE address_id = (${ADDRESS_ID}) AND type_id = (${TYPE_ID}) AND version <= ?
       ORDER BY version DESC LIMIT 1`,
    ),
    // A page is one contiguous range of the sender's rows, each the summary itself: joining
    // transactions by version for hash and replay protector instead (a rowid seek a row, one page of
    // transactions each) cost a page of 25 180-203 µs against 76-82 at 10M versions
    // (bench/memory.bench.ts --store), for 37 bytes a user transaction.
    summariesForward: tuples<[Uint8Array, bigint, bigint, number], SummaryTuple<bigint>>(
      `SELECT ${SUMMARY_COLUMNS} FROM account_transactions
       WHERE sender_id = (${ADDRESS_ID}) AND version >= ? AND version <= ? ORDER BY version ASC LIMIT ${BOUND}`,
    ),
    summariesBackward: tuples<[Uint8Array, bigint, number], SummaryTuple<bigint>>(
      `SELECT ${SUMMARY_COLUMNS} FROM account_transactions
       WHERE sender_id = (${ADDRESS_ID}) AND version <= ? ORDER BY version DESC LIMIT ${BOUND}`,
    ),
    // The same pages, each row as its JSON text (the first parameter is the formatted sender).
    summariesJsonForward: db.prepare<[string, Uint8Array, bigint, bigint, number], string>(
      `SELECT ${SUMMARY_JSON} FROM account_transactions
       WHERE sender_id = (${ADDRESS_ID}) AND version >= ? AND version <= ? ORDER BY version ASC LIMIT ${BOUND}`,
    ).pluck(),
    summariesJsonBackward: db.prepare<[string, Uint8Array, bigint, number], string>(
      `SELECT ${SUMMARY_JSON} FROM account_transactions
       WHERE sender_id = (${ADDRESS_ID}) AND version <= ? ORDER BY version DESC LIMIT ${BOUND}`,
    ).pluck(),
    blockByVersion: rows<[bigint], BlockRow<bigint, bigint>>(
      "SELECT * FROM blocks WHERE first_version <= ? ORDER BY first_version DESC LIMIT 1",
    ),
    blockByHeight: rows<[bigint], BlockRow<bigint, bigint>>("SELECT * FROM blocks WHERE height = ?"),
    blockAtTime: rows<[bigint], BlockRow<bigint, bigint>>(
      "SELECT * FROM blocks WHERE timestamp_usec >= ? ORDER BY height ASC LIMIT 1",
    ),
    userGas: rows<[bigint, bigint], UserTxnGasRow<bigint>>(
      `SELECT t.version, t.gas_unit_price, t.gas_used, CASE WHEN t.contract_id IS NULL THEN t.contract ELSE lower(hex(c.address)) END AS contract
       FROM transactions t LEFT JOIN addresses c ON c.id = t.contract_id
       WHERE t.version >= ? AND t.version <= ? AND t.sender_id IS NOT NULL AND t.kind = ${txnKindCode("user_transaction")} ORDER BY t.version`,
    ),
    fingerprints: rows<[bigint, bigint], FingerprintRow<bigint>>(
      "SELECT version, kind, hash FROM transactions WHERE version >= ? AND version <= ? ORDER BY version",
    ),
    insertBlock: writes<[bigint, bigint, bigint, bigint, bigint, number | null, number | null]>(
      `INSERT INTO blocks (height, epoch, timestamp_usec, first_version, last_version,
                           gas_limit_reached, output_limit_reached)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertTxn: writes<
      [bigint, number, Uint8Array, number | null, number | null, bigint | null, bigint | null, bigint | null, number | null, number | null, string | null]
    >(
      `INSERT INTO transactions (version, kind, hash, sender_id, replay_kind, replay_value,
                                 gas_unit_price, gas_used, success, contract_id, contract)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertModule: writes<[Uint8Array, Uint8Array, bigint, string, string | null, number | null]>(
      "INSERT OR REPLACE INTO modules (address, state_key, version, name, code_hash, code_id) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    insertModuleKey: writes<[Uint8Array, Uint8Array, string]>("INSERT OR IGNORE INTO module_keys (address, state_key, name) VALUES (?, ?, ?)"),
    // Looked up before the ABI of a new row is computed: code is stored once per hash.
    codeId: db.prepare<[string], number>("SELECT id FROM code WHERE code_hash = ?").pluck(),
    insertCode: writes<[string, Uint8Array, string]>("INSERT INTO code (code_hash, bytecode, abi) VALUES (?, ?, ?)"),
    insertAccountTxn: writes<[number, bigint, Uint8Array, number, bigint]>(
      "INSERT INTO account_transactions (sender_id, version, hash, replay_kind, replay_value) VALUES (?, ?, ?, ?, ?)",
    ),
    insertTableItem: writes<[number, Uint8Array, bigint, Uint8Array | null]>(
      "INSERT OR REPLACE INTO table_items (handle_id, key, version, value) VALUES (?, ?, ?, ?)",
    ),
    insertResource: writes<[number, number, bigint, Uint8Array | null]>(
      "INSERT OR REPLACE INTO resources (address_id, type_id, version, value) VALUES (?, ?, ?, ?)",
    ),
    addressId: db.prepare<[Uint8Array], number>(ADDRESS_ID).pluck(),
    insertAddress: writes<[Uint8Array]>("INSERT INTO addresses (address) VALUES (?)"),
    typeId: db.prepare<[string], number>(TYPE_ID).pluck(),
    insertType: writes<[string]>("INSERT INTO resource_types (name) VALUES (?)"),
    setLedger: writes<[bigint, bigint, bigint, bigint, bigint, bigint]>(
      `UPDATE ledger SET ledger_version = ?, timestamp_usec = ?, epoch = ?, block_height = ?,
              oldest_version = coalesce(oldest_version, ?), oldest_block_height = coalesce(oldest_block_height, ?)
       WHERE id = 1`,
    ),
    setOldest: writes<[bigint, bigint]>("UPDATE ledger SET oldest_version = ?, oldest_block_height = ? WHERE id = 1"),
    firstBlockFrom: rows<[bigint], { height: bigint; first_version: bigint }>(
      "SELECT height, first_version FROM blocks WHERE first_version >= ? ORDER BY first_version LIMIT 1",
    ),
    // By the senders of the versions pruned: account_transactions has no index on version.
    pruneAccountTransactions: writes<[bigint, bigint]>(
      `DELETE FROM account_transactions WHERE (sender_id, version) IN (
         SELECT sender_id, version FROM transactions WHERE version >= ? AND version < ? AND sender_id IS NOT NULL)`,
    ),
    pruneTransactions: writes<[bigint]>("DELETE FROM transactions WHERE version < ?"),
    pruneBlocks: writes<[bigint]>("DELETE FROM blocks WHERE height < ?"),
    pruneCode: writes<[]>("DELETE FROM code WHERE code_hash NOT IN (SELECT code_hash FROM modules WHERE code_hash IS NOT NULL)"),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

/** What a follower reads and writes besides blocks (`Storage.writeBaseState`). */
function prepareFollowStatements(db: Db) {
  return {
    record: db.prepare<[string], { version: bigint }>("SELECT version FROM follow_base WHERE what = ?").safeIntegers(true),
    insertRecord: db.prepare<[string, bigint]>("INSERT OR IGNORE INTO follow_base (what, version) VALUES (?, ?)"),
    newestTableItem: db
      .prepare<[Uint8Array, Uint8Array, bigint], { v: bigint | null }>(
        `SELECT max(version) AS v FROM table_items WHERE handle_id = (${ADDRESS_ID}) AND key = ? AND version <= ?`,
      )
      .safeIntegers(true),
    newestResource: db
      .prepare<[Uint8Array, string, bigint], { v: bigint | null }>(
        `SELECT max(version) AS v FROM resources WHERE address_id = (${ADDRESS_ID}) AND type_id = (${TYPE_ID}) AND version <= ?`,
      )
      .safeIntegers(true),
  };
}

/** A file whose schema is older than this build's, opened read-only (`checkSchemaCurrent`). */
class OlderSchemaError extends Error {}

/** The file is not a SQLite database: SQLite refused its header (SQLITE_NOTADB) on the first read. */
export class NotADatabaseError extends StorageCorruptError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NotADatabaseError";
  }
}

export interface SqliteStoreOptions {
  readonly?: boolean;
  /**
   * How long, in milliseconds, a memoized answer is served without asking SQLite whether another
   * connection has committed since (`PRAGMA data_version`: the largest single cost of a point
   * read, since it takes and drops a WAL read lock). 0, the default, asks on every read. The node
   * serves with 1: a block committed by another process (an import, a prune, the devnet of a
   * `--workers` node) is then answered from the next millisecond on. Reads that miss the memo, and
   * `getLedgerInfo(true)`, always ask first.
   */
  memoLagMs?: number;
  /** How long a statement waits for another connection's lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * SQLite's page cache for this connection, in MiB (default 32): pages of the WAL and pages
   * written. Another connection's commit empties it, so it serves mostly a node that writes itself.
   */
  cacheSizeMiB?: number;
  /**
   * How much of the database file is read through a memory map, in MiB (default 256; 0: none). SQLite
   * maps the file's first bytes only, and the pages a read touched count in the process's RSS: the
   * bound keeps a node's memory the same whatever the ledger's size (issue 17 item 6).
   * Mapped pages are the operating system's file cache, shared and reclaimable: a read needs no
   * copy, and the page cache emptied by another connection's commit costs nothing to refill.
   */
  mmapSizeMiB?: number;
  /** Bounds of one prune transaction (default `DEFAULT_PRUNE_BATCH`). */
  pruneBatch?: Partial<PruneBatch>;
  /**
   * A read-only connection's reads in one event-loop turn share one read transaction, ended on
   * the next turn (`setImmediate`), instead of one each: a WAL read lock is a few system calls
   * (`fcntl` on the -shm file, `fstat`), paid once for the requests one turn serves. Their
   * snapshot is the turn's first read's, so another process's commit is seen from the next turn on
   * (as the memo lags by `memoLagMs`); `getLedgerInfo(true)` ends the turn's transaction first.
   * Ignored on a connection that writes: its commits must not wait for a turn to end.
   */
  readsPerTurn?: boolean;
}

/** Bounds of one prune transaction (`SqliteStoreOptions.pruneBatch`). */
export interface PruneBatch {
  /** Versions whose transactions, summaries and blocks one step removes (rounded up to a block). */
  versions: number;
  /** State rows one step visits, in key order. */
  stateRows: number;
  /** Free pages one step gives back to the file system (files with incremental vacuum). */
  pages: number;
}

export const DEFAULT_PRUNE_BATCH: Readonly<PruneBatch> = Object.freeze({ versions: 10_000, stateRows: 20_000, pages: 2_048 });

/** Defaults of `SqliteStoreOptions.cacheSizeMiB` and `mmapSizeMiB`. */
export const SQLITE_CACHE_SIZE_MIB = 32;
export const SQLITE_MMAP_SIZE_MIB = 256;

/** The connection of each store, for the test helpers in `testing.ts` (never for production code). */
export const connections = new WeakMap<SqliteStore, Db>();

export class SqliteStore implements Storage {
  readonly kind = "sqlite" as const;
  private readonly db: Db;
  private readonly statements: Statements;
  private readonly commitTx: (w: BlockWrite) => void;
  private readonly commitManyTx: (ws: BlockWrite[], packed: PackedValues) => void;
  private readonly packer = new ResourcePacker();
  private readonly pruneStepTx: (t: PruneTarget) => PruneStep;
  private readonly pruneStateTx: (table: StateTable, from: unknown[] | null) => { deleted: number; next: unknown[] | null };
  private readonly pruneBatch: PruneBatch;
  private readonly stateWalks = new Map<string, StateWalk>();
  /**
   * Runs reads in one read transaction: one WAL read lock (a few system calls each) for all of
   * them instead of one per statement, and one snapshot.
   */
  private readonly readTx: <T>(read: () => T) => T;
  /** `SqliteStoreOptions.readsPerTurn` on a read-only connection. */
  private readonly readsPerTurn: boolean;
  /** Whether this turn's read transaction is open (`readsPerTurn`). */
  private turnOpen = false;
  /**
   * The ledger row as this turn's snapshot has it, once a page read it (`readsPerTurn`; undefined:
   * not read in this turn). The snapshot does not move within a turn, so neither does the row.
   */
  private turnLedger: LedgerInfo | null | undefined = undefined;
  private readonly beginTurn: Statement;
  private readonly endTurn: Statement;
  /**
   * Results of the hot-path reads (ledger info, snapshot reads), kept while the database is
   * unchanged: `PRAGMA data_version` moves when another connection or process commits, and this
   * connection's own commits and prunes clear the memo. While nothing changed, the same statement
   * would give the same answer; the PRAGMA costs less than the statement and its WAL read lock.
   * Bounded in bytes (key, value and a fixed overhead per entry); an entry larger than
   * MEMO_ENTRY_BYTES is not kept. An empty ledger's null answers are not kept either.
   *
   * Only reads at the newest version are memoized: those are what many clients ask again and
   * again. A read at an explicit version is one statement without it (its own snapshot), because
   * random versions are rarely asked twice and each entry cost a key, an insert, an eviction and a
   * read transaction around the data-version check.
   */
  private readonly memo = new LRUCache<string, object>({ maxSize: MEMO_BYTES, maxEntrySize: MEMO_ENTRY_BYTES });
  private memoDataVersion = -1;
  private readonly memoLagMs: number;
  /** Until when (performance.now()) the memo is served without asking; see `memoLagMs`. */
  private memoTrustedUntil = -Infinity;
  /** Device and inode of the file as opened: a path that no longer leads to them was deleted or replaced. */
  private readonly fileId: { dev: number; ino: number } | null;
  /** Ids of addresses (by `memoKeyOf`) and resource types this connection has seen (`addressId`). */
  private readonly addressIds = new Map<string, number>();
  private readonly typeIds = new Map<string, number>();
  /** Ids inserted by the write transaction running now, forgotten if it fails (`interning`). */
  private readonly internedInTx: Array<[Map<string, number>, string]> = [];

  constructor(readonly path: string, opts: SqliteStoreOptions = {}) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    try {
      this.db = new Database(path, { readonly: opts.readonly ?? false });
    } catch (e) {
      throw new StorageUnavailableError(`cannot open SQLite database ${path}: ${(e as Error).message}`, { cause: e });
    }
    try {
      // The busy timeout first: setting WAL mode already waits for another process's lock.
      this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
      // A new file gives pruned pages back to the file system (`prune`); only possible before its
      // first table. (An existing file keeps reusing its free pages for new blocks.)
      if (!opts.readonly && Number(this.db.pragma("page_count", { simple: true })) === 0) {
        this.db.pragma(`auto_vacuum = ${AUTO_VACUUM_INCREMENTAL}`);
      }
      // A reader does not set the mode: the writer did, and it is stored in the file. Asking a
      // read-only connection to set it fails on a file this process cannot write.
      if (!opts.readonly) this.db.pragma("journal_mode = WAL");
      // FULL: a committed block survives power loss, not only a crash of the process.
      this.db.pragma("synchronous = FULL");
      // Negative: KiB. SQLite caps the map at its compile-time limit (2 GiB here).
      this.db.pragma(`cache_size = ${-Math.max(0, Math.floor((opts.cacheSizeMiB ?? SQLITE_CACHE_SIZE_MIB) * 1024))}`);
      this.db.pragma(`mmap_size = ${Math.max(0, Math.floor((opts.mmapSizeMiB ?? SQLITE_MMAP_SIZE_MIB) * 1024 * 1024))}`);
      if (opts.readonly) this.checkSchemaCurrent();
      if (!opts.readonly) {
        // Migration 4 packs the resource values it copies.
        this.db.function("pack_resource_value", { deterministic: true }, (owner: unknown, json: unknown) =>
          json === null ? null : packResourceValue(owner as Buffer, json as string),
        );
        // Migration 5 stores the ABI of the code already there.
        this.db.function("module_abi_json", { deterministic: true }, (bytecode: unknown) => moduleAbiJson(bytecode as Buffer));
        this.migrate();
      }
    } catch (e) {
      this.db.close();
      // The first statements above read the header; a file that is not SQLite fails there.
      if (e instanceof Database.SqliteError && e.code === "SQLITE_NOTADB") {
        throw new NotADatabaseError(`${path} is not a SQLite database: ${e.message}`, { cause: e });
      }
      // A reader of a WAL database creates PATH-wal and PATH-shm when they are missing.
      const hint = opts.readonly && !(e instanceof OlderSchemaError) ? ` (reading needs ${path}-wal and ${path}-shm: they must exist or the directory must be writable)` : "";
      throw new StorageUnavailableError(`cannot ${opts.readonly ? "read" : "write"} SQLite database ${path}: ${(e as Error).message}${hint}`, { cause: e });
    }
    connections.set(this, this.db);
    this.fileId = path === ":memory:" ? null : fileIdOf(path);
    this.memoLagMs = opts.memoLagMs ?? 0;
    this.statements = prepareStatements(this.db);
    this.commitTx = this.db.transaction((w: BlockWrite) => this.commitInTx(w));
    this.commitManyTx = this.db.transaction((ws: BlockWrite[], packed: PackedValues) => {
      for (const w of ws) this.commitInTx(w, packed);
    });
    // IMMEDIATE: a prune step reads, then writes. A deferred transaction whose snapshot another
    // process's commit made stale fails at its first write (SQLITE_BUSY) instead of waiting its turn.
    this.pruneStepTx = this.db.transaction((t: PruneTarget) => this.pruneStepInTx(t)).immediate;
    this.pruneBatch = { ...DEFAULT_PRUNE_BATCH, ...opts.pruneBatch };
    this.pruneStateTx = this.db.transaction((table: StateTable, from: unknown[] | null) => this.pruneStateInTx(table, from)).immediate;
    const readTx = this.db.transaction((read: () => unknown) => read());
    this.readsPerTurn = (opts.readsPerTurn ?? false) && (opts.readonly ?? false);
    this.beginTurn = this.db.prepare("BEGIN");
    this.endTurn = this.db.prepare("COMMIT");
    this.readTx = this.readsPerTurn
      ? <T>(read: () => T): T => {
          this.openTurn();
          return read();
        }
      : <T>(read: () => T): T => readTx(read) as T;
  }

  /** One statement's read: in this turn's read transaction with `readsPerTurn`, else on its own. */
  private inTurn<T>(read: () => T): T {
    if (this.readsPerTurn) this.openTurn();
    return read();
  }

  /** Opens this turn's read transaction (`readsPerTurn`) unless it is open; ended on the next turn. */
  private openTurn(): void {
    if (this.turnOpen) return;
    // (A transaction left open, if a COMMIT below ever failed, is adopted as this turn's.)
    if (!this.db.inTransaction) this.beginTurn.run();
    this.turnOpen = true;
    setImmediate(this.closeTurn);
  }

  /** Ends this turn's read transaction, if open. A failed read may have ended it already (SQLite rolls back on some errors). */
  private readonly closeTurn = (): void => {
    if (!this.turnOpen) return;
    this.turnOpen = false;
    this.turnLedger = undefined;
    if (!this.db.open || !this.db.inTransaction) return;
    try {
      this.endTurn.run();
    } catch {
      // Ending a read-only transaction commits nothing; whatever failed, the next read says so.
    }
  };

  /**
   * A reader does not migrate: a file an older version wrote must be opened by a writer first,
   * said plainly here rather than as the first statement that names a newer table.
   */
  private checkSchemaCurrent(): void {
    const hasTable = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").pluck().get() !== undefined;
    if (!hasTable) return; // a file no writer has created anything in: the reads say it is empty
    const current = Number(this.db.prepare("SELECT max(version) FROM schema_version").pluck().get() ?? 0);
    if (current < MIGRATIONS.length) {
      throw new OlderSchemaError(
        `its schema is version ${current} and this build reads version ${MIGRATIONS.length}: a read-only open does not migrate; ` +
          "open it once with a writer (serve without --no-prune, or an import) to migrate it",
      );
    }
  }

  private migrate(): void {
    this.db.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
    const row = this.db.prepare("SELECT max(version) AS v FROM schema_version").get() as { v: number | null };
    const current = row.v ?? 0;
    for (const [i, sql] of MIGRATIONS.entries()) {
      const version = i + 1;
      if (version <= current) continue;
      this.db.transaction(() => {
        this.db.exec(sql);
        this.db.prepare("INSERT INTO schema_version (version) VALUES (?)").run(version);
      })();
    }
  }

  async getChainId(): Promise<number | null> {
    const row = this.statements.chainId.get();
    return row ? Number(row.chain_id) : null;
  }

  async initChain(chainId: number): Promise<void> {
    this.statements.initChain.run(chainId);
    this.memo.clear();
    checkChainId(await this.getChainId(), chainId);
  }

  /** The snapshot reads in the calling turn: better-sqlite3 reads synchronously in process. */
  readonly immediate: ImmediateReads = {
    getLedgerInfo: (fresh = false) => this.memoized("ledger", () => this.readLedgerInfo(), undefined, fresh),
    readTableItem: (handle, key, version) => {
      const read = (): Snapshot<Uint8Array | null> | null => {
        const row = this.statements.tableItemAt.get(handle, key, version === undefined ? null : versionParam(version));
        return row ? { info: ledgerInfoOf(row, SQLITE_COLUMNS), value: snapshotValue(row, (v) => v) } : null;
      };
      const memoKey = memoKeys.tableItem(handle, key, version);
      return memoKey === null ? this.inTurn(read) : this.memoized(memoKey, read, (snap) => snap.value?.length ?? 0);
    },
    readModulesVersion: (address, version) => {
      const read = () => {
        const row = this.statements.modulesVersionAt.get(address, version === undefined ? null : versionParam(version));
        return row ? versionSnapshot(row) : null;
      };
      const memoKey = memoKeys.modulesVersion(address, version);
      return memoKey === null ? this.inTurn(read) : this.memoized(memoKey, read);
    },
    readSummariesVersion: (sender, end) => {
      const read = () => {
        const row = this.statements.summariesVersionAt.get(sender, end === undefined ? null : versionParam(end));
        return row ? versionSnapshot(row) : null;
      };
      const memoKey = memoKeys.summariesVersion(sender, end);
      return memoKey === null ? this.inTurn(read) : this.memoized(memoKey, read);
    },
  };

  async getLedgerInfo(fresh = false): Promise<LedgerInfo | null> {
    return this.immediate.getLedgerInfo(fresh);
  }

  /**
   * `read()`'s result, from the memo when the database has not changed since it was read. Within
   * `memoLagMs` of the last check, a key the memo holds is answered without checking. `valueBytes`
   * is what the value holds besides its fixed overhead (a table item's bytes).
   */
  private memoized<T extends object>(key: string, read: () => T | null, valueBytes?: (v: T) => number, fresh = false): T | null {
    if (this.memoLagMs > 0) {
      const now = performance.now();
      if (!fresh && now < this.memoTrustedUntil) {
        const hit = this.memo.get(key);
        if (hit !== undefined) return hit as T;
      }
      this.memoTrustedUntil = now + this.memoLagMs;
    }
    // A held key costs the version check alone; a key the memo does not hold is read with the
    // check in the same read transaction, so a miss takes one read lock, not two.
    if (this.readsPerTurn) {
      // A fresh read sees every commit so far: not this turn's snapshot, a new one.
      if (fresh) this.closeTurn();
      this.openTurn();
    }
    const held = this.memo.get(key);
    if (held !== undefined && this.statements.dataVersion.get() === this.memoDataVersion) return held as T;
    return this.readTx(() => {
      const dataVersion = this.statements.dataVersion.get()!;
      if (dataVersion !== this.memoDataVersion) {
        this.memo.clear();
        this.memoDataVersion = dataVersion;
      }
      return this.remember(key, read(), valueBytes);
    });
  }

  private remember<T extends object>(key: string, value: T | null, valueBytes?: (v: T) => number): T | null {
    if (value !== null) {
      const size = memoEntrySize(key, valueBytes ? valueBytes(value) : 0);
      this.memo.set(key, value, { size });
    }
    return value;
  }

  private readLedgerInfo(): LedgerInfo | null {
    const row = this.statements.ledger.get();
    return row ? ledgerInfoOf(row, SQLITE_COLUMNS) : null;
  }

  /**
   * The ledger row of the snapshot the calling read is in. Call inside a read transaction: with
   * `readsPerTurn` that is the turn's, and the row is read once a turn: read once a request, it was
   * 3.1% of a random summaries miss's CPU profile samples at 10M versions, and is 0.8% this way.
   */
  private snapshotLedgerInfo(): LedgerInfo | null {
    // (a read that failed may have ended the turn's transaction: each statement then has its own)
    if (!this.turnOpen || !this.db.inTransaction) return this.readLedgerInfo();
    if (this.turnLedger === undefined) this.turnLedger = this.readLedgerInfo();
    return this.turnLedger;
  }

  async readModules(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number, code?: WantsCode): Promise<Snapshot<ModulesPage> | null> {
    return this.modulesPage(address, version, start, limit, code, "bytecode");
  }

  /** `readModules`, the listed code in either form (see `moduleList`). */
  private modulesPage(
    address: Uint8Array,
    version: bigint | undefined,
    start: Uint8Array | null,
    limit: number,
    code: WantsCode | undefined,
    form: ModuleCodeForm,
  ): Snapshot<ModulesPage> | null {
    return this.readTx(() => {
      const row = this.statements.modulesVersionAt.get(address, version === undefined ? null : versionParam(version));
      if (!row) return null;
      const { info, value: changed } = versionSnapshot(row);
      const rows = this.moduleList(address, versionParam(version ?? info.ledgerVersion), start, limit, code, form);
      return { info, value: { changed, rows } };
    });
  }

  /**
   * Up to `limit` modules of `address` at `version` from state key `start`, in state-key order,
   * skipping keys without a module there (not yet written, or deleted): pages of keys
   * (`moduleKeys`) until `limit` modules are found or the keys end. The code of the rows `code`
   * says yes to is read by id: the JSON record when `form` is "record" and the ABI text is stored,
   * else the bytecode and ABI text. Call inside a read transaction: the page is several statements.
   */
  private moduleList(
    address: Uint8Array,
    version: bigint,
    start: Uint8Array | null,
    limit: number,
    code: WantsCode | undefined,
    form: ModuleCodeForm,
  ): ModuleEntry[] {
    const st = this.statements;
    const out: ModuleEntry[] = [];
    let from = start ?? NO_KEY;
    while (out.length < limit) {
      const wanted = limit - out.length;
      const rows = st.moduleKeys.all(version, address, from, wanted);
      for (const [stateKey, name, codeOf] of rows) {
        if (codeOf === null) continue;
        const codeHash = codeOf.slice(0, CODE_HASH_DIGITS);
        const entry: ModuleEntry = { stateKey, name, codeHash };
        // (an empty id, a row no migration gave one, reads no code here: the API reads it by hash)
        if (code?.(codeHash) && codeOf.length > CODE_HASH_DIGITS) this.readCode(entry, Number(codeOf.slice(CODE_HASH_DIGITS)), form);
        out.push(entry);
      }
      if (rows.length < wanted) break;
      // the next key after the last: the same bytes and a zero byte
      from = Buffer.concat([rows[rows.length - 1]![0], ZERO_BYTE]);
    }
    return out;
  }

  /** A listed module's code, by id, into `entry` (see `moduleList`). */
  private readCode(entry: ModuleEntry, id: number, form: ModuleCodeForm): void {
    if (form === "record") {
      const found = this.statements.codeRecord.get(id);
      if (found?.[0] != null) entry.record = found[0];
      else if (found?.[1]) entry.bytecode = found[1];
      return;
    }
    const found = this.statements.codeAndAbi.get(id);
    if (found) {
      entry.bytecode = found[0];
      if (found[1] !== null) entry.abi = found[1];
    }
  }

  async getModuleCode(codeHash: string): Promise<Uint8Array | null> {
    return this.statements.code.get(codeHash)?.bytecode ?? null;
  }

  async readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Promise<Snapshot<Uint8Array | null> | null> {
    return this.immediate.readTableItem(handle, key, version);
  }

  async readModulesVersion(address: Uint8Array, version: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    return this.immediate.readModulesVersion(address, version);
  }

  async readSummariesVersion(sender: Uint8Array, end: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    return this.immediate.readSummariesVersion(sender, end);
  }

  async getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null> {
    const value = this.statements.resource.get(address, type, versionParam(version))?.value ?? null;
    return value === null ? null : unpackResourceValue(address, value);
  }

  async readSummaries(q: SummaryQuery): Promise<Snapshot<SummariesPage> | null> {
    return this.readTx(() => {
      const page = this.summariesPage(q, (full) => this.summaryRows(full), (row) => row.version);
      return page && { info: page.info, value: { newest: page.newest, rows: page.rows } };
    });
  }

  /** The API's JSON written by the statements (`SUMMARY_JSON`, `codeRecord`): cheaper than rows and their encoding. */
  readonly wire: WireReads = {
    readSummaries: async (q) => this.summariesJsonPage(q),
    readModules: async (address, version, start, limit, code) => this.modulesPage(address, version, start, limit, code, "record"),
  };

  private summariesJsonPage(q: SummaryQuery): Snapshot<SummariesJsonPage> | null {
    return this.readTx(() => {
      const sender = formatAddress(q.sender);
      // each row starts `{"sender":"<sender>","version":"<digits>"`
      const at = 24 + sender.length;
      const versionOf = (row: string) => BigInt(row.slice(at, row.indexOf('"', at)));
      const page = this.summariesPage(q, (full) => this.summaryJsonRows(full, sender), versionOf);
      if (!page) return null;
      const { info, newest, rows } = page;
      return { info, value: { newest, first: rows.length > 0 ? versionOf(rows[0]!) : null, json: `[${rows.join(",")}]` } };
    });
  }

  /**
   * The reads of a summaries page (`readSummaries`), its rows in either form: the ledger row, the
   * page and its newest version. Call inside a read transaction.
   */
  private summariesPage<R>(q: SummaryQuery, read: (q: SummaryWindow) => R[], versionOf: (row: R) => bigint) {
    if (q.start === undefined && q.limit > 0) {
      // A backward page ends at the sender's newest row at or below the bound, so that row is
      // the page's last: the ledger row alone, and no second seek for it (the position read
      // before the page made the first), 11 µs of a 260 µs miss at 10M versions (CPU profile).
      const info = this.snapshotLedgerInfo();
      if (!info) return null;
      const rows = read({ ...q, ledgerVersion: info.ledgerVersion });
      return { info, newest: rows.length > 0 ? versionOf(rows[rows.length - 1]!) : null, rows };
    }
    const bound = q.start === undefined ? q.end : undefined;
    const row = this.statements.summariesVersionAt.get(q.sender, bound === undefined ? null : versionParam(bound));
    if (!row) return null;
    const { info, value: newest } = versionSnapshot(row);
    return { info, newest, rows: read({ ...q, ledgerVersion: info.ledgerVersion }) };
  }

  /** A page's rows as their JSON text (`SUMMARY_JSON`), ascending; `sender` formatted. */
  private summaryJsonRows(q: SummaryWindow, sender: string): string[] {
    const range = summaryRange(q);
    if (!range) return [];
    const st = this.statements;
    return range.direction === "forward"
      ? st.summariesJsonForward.all(sender, q.sender, versionParam(range.from), versionParam(range.to), range.limit)
      : st.summariesJsonBackward.all(sender, q.sender, versionParam(range.to), range.limit).reverse();
  }

  private summaryRows(q: SummaryWindow): TransactionSummary[] {
    const range = summaryRange(q);
    if (!range) return [];
    const rows =
      range.direction === "forward"
        ? this.statements.summariesForward.all(q.sender, versionParam(range.from), versionParam(range.to), range.limit)
        : this.statements.summariesBackward.all(q.sender, versionParam(range.to), range.limit).reverse();
    const sender = Buffer.from(q.sender);
    return rows.map((row) => summaryOf(sender, row, SQLITE_COLUMNS));
  }

  async getBlockByVersion(version: bigint): Promise<BlockInfo | null> {
    const row = this.statements.blockByVersion.get(versionParam(version));
    if (!row) return null;
    const block = blockOf(row, SQLITE_COLUMNS);
    return block.lastVersion >= version ? block : null;
  }

  async getBlockByHeight(height: bigint): Promise<BlockInfo | null> {
    const row = this.statements.blockByHeight.get(versionParam(height));
    return row ? blockOf(row, SQLITE_COLUMNS) : null;
  }

  async getFirstBlockAtOrAfter(timestampUsec: bigint): Promise<BlockInfo | null> {
    const row = this.statements.blockAtTime.get(timestampToSql(timestampUsec < 0n ? 0n : timestampUsec));
    return row ? blockOf(row, SQLITE_COLUMNS) : null;
  }

  async getUserTxnGas(first: bigint, last: bigint): Promise<UserTxnGas[]> {
    return this.statements.userGas.all(versionParam(first), versionParam(last)).map((row) => userTxnGasOf(row, SQLITE_COLUMNS));
  }

  async getFingerprints(from: bigint, to: bigint): Promise<StoredTxnFingerprint[]> {
    return this.statements.fingerprints.all(versionParam(from), versionParam(to)).map((row) => fingerprintOf(row, SQLITE_COLUMNS));
  }

  /**
   * By SQLite's result code: a damaged file is SQLITE_CORRUPT (extended codes included) or
   * SQLITE_NOTADB. Failures this store could not reach the file for are `StorageError`s already.
   */
  errorKind(e: unknown): StorageErrorKind | null {
    if (e instanceof StorageError) return e.kind;
    const code = (e as { code?: unknown } | null)?.code;
    return typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") ? "corrupt" : null;
  }

  followLag(): null {
    return null;
  }

  /**
   * Why the database file is not the one this connection writes, or null when it is: the path now
   * leads to no file or to another one (deleted, or replaced by a copy). Writing on would go into
   * an unlinked file that the next start never sees, so the writer checks before every commit.
   * One stat call: cheap enough for the health check too.
   */
  fileProblem(): string | null {
    if (!this.fileId) return null;
    const now = fileIdOf(this.path);
    if (!now) return `the database file ${this.path} was deleted while it was open`;
    if (now.dev !== this.fileId.dev || now.ino !== this.fileId.ino) {
      return `the database file ${this.path} was replaced by another file while it was open (inode ${this.fileId.ino} -> ${now.ino})`;
    }
    return null;
  }

  /**
   * Every write: refused when the file was deleted or replaced, its failure naming the file, and
   * the read memo cleared whatever happened.
   */
  private write<T>(f: () => T): T {
    const problem = this.fileProblem();
    if (problem) throw new StorageUnavailableError(`${problem}; not writing into it: restart the node to open the file there now`);
    try {
      return f();
    } catch (e) {
      throw this.writeError(e);
    } finally {
      this.memo.clear();
    }
  }

  /**
   * Converts a file made before incremental vacuum (auto_vacuum NONE) so that later prunes give
   * their free pages back to the file system; a no-op on a file that has it. Rewrites the whole
   * file (VACUUM): it holds the write lock throughout and needs free disk space for a second
   * copy in the WAL; readers go on meanwhile. For an operator's maintenance command, not for a
   * serving node's start.
   */
  enableIncrementalVacuum(): boolean {
    if (this.hasIncrementalVacuum()) return false;
    this.write(() => {
      this.db.pragma(`auto_vacuum = ${AUTO_VACUUM_INCREMENTAL}`);
      this.db.exec("VACUUM");
    });
    return true;
  }

  /** Whether later prunes give free pages back to the file system (see `enableIncrementalVacuum`). */
  hasIncrementalVacuum(): boolean {
    return Number(this.db.pragma("auto_vacuum", { simple: true })) === AUTO_VACUUM_INCREMENTAL;
  }

  async commitBlock(write: BlockWrite): Promise<void> {
    return this.write(() => this.interning(() => this.commitTx(write)));
  }

  /**
   * The resource values are packed first, on the packer's thread for a large batch (an import's:
   * the Importer parses on meanwhile), then the blocks are written in one transaction.
   */
  async commitBlocks(writes: BlockWrite[]): Promise<void> {
    const toPack: ResourceToPack[] = [];
    for (const w of writes) for (const r of w.resources) if (r.json !== null) toPack.push(r as ResourceToPack);
    const packed = new PackedValues(await this.packer.pack(toPack));
    return this.write(() => this.interning(() => this.commitManyTx(writes, packed)));
  }

  /**
   * A failed write names the file: "database is locked" or "database or disk is full" alone does
   * not say which database, in the log of a process that may open several. SQLite's code is kept.
   */
  private writeError(e: unknown): unknown {
    if (!(e instanceof Error) || e.message.includes(this.path)) return e;
    const wrapped = new Error(`writing SQLite database ${this.path} failed: ${e.message}`, { cause: e });
    (wrapped as Error & { code?: unknown }).code = (e as Error & { code?: unknown }).code;
    return wrapped;
  }

  private commitInTx(w: BlockWrite, packed: PackedValues | null = null): void {
    const st = this.statements;
    const b = w.block;
    const flag = (on: boolean): number => (on ? 1 : 0);
    st.insertBlock.run(
      b.height,
      b.epoch,
      timestampToSql(b.timestampUsec),
      b.firstVersion,
      b.lastVersion,
      b.endInfo ? flag(b.endInfo.blockGasLimitReached) : null,
      b.endInfo ? flag(b.endInfo.blockOutputLimitReached) : null,
    );
    for (const t of w.transactions) {
      const u = t.user;
      if (!u) {
        st.insertTxn.run(t.version, txnKindCode(t.kind), t.hash, null, null, null, null, null, null, null, null);
        continue;
      }
      const senderId = this.addressId(u.sender);
      const contract = u.contractAddress;
      const contractId = contract !== null && CANONICAL_CONTRACT.test(contract) ? this.addressId(Buffer.from(contract, "hex")) : null;
      st.insertTxn.run(
        t.version,
        txnKindCode(t.kind),
        t.hash,
        senderId,
        replayKindCode(u.replayProtector),
        u64ToSql(u.replayProtector.value),
        u64ToSql(u.gasUnitPrice),
        u64ToSql(u.gasUsed),
        flag(u.success),
        contractId,
        contractId === null ? contract : null,
      );
      st.insertAccountTxn.run(senderId, t.version, t.hash, replayKindCode(u.replayProtector), u64ToSql(u.replayProtector.value));
    }
    this.insertState(w, packed);
    st.setLedger.run(b.lastVersion, timestampToSql(b.timestampUsec), b.epoch, b.height, b.firstVersion, b.height);
  }

  /** The state rows of a block or of a follower's base state (inside the caller's transaction). */
  private insertState(w: Pick<BlockWrite, "modules" | "tableItems" | "resources">, packed: PackedValues | null = null): void {
    const st = this.statements;
    for (const m of w.modules) {
      const hash = m.bytecode ? codeHash(m.bytecode) : null;
      let id: number | null = null;
      if (m.bytecode) {
        // The ABI is computed once per new hash, here and not on reads.
        id = st.codeId.get(hash!) ?? Number(st.insertCode.run(hash!, m.bytecode, storedAbiText(m)!).lastInsertRowid);
      }
      st.insertModuleKey.run(m.address, m.stateKey, m.name);
      st.insertModule.run(m.address, m.stateKey, m.version, m.name, hash, id);
    }
    for (const t of w.tableItems) st.insertTableItem.run(this.addressId(t.handle), t.key, t.version, t.value);
    for (const r of w.resources) {
      const value = r.json === null ? null : packed ? packed.next() : packResourceValue(r.address, r.json);
      st.insertResource.run(this.addressId(r.address), this.typeId(r.type), r.version, value);
    }
  }

  /**
   * The id of an address or table handle, interned in `addresses` (inside the caller's write
   * transaction) when new. Ids are never deleted or reused once committed, so the map of this
   * connection stays right whatever other connections write; an id this connection inserted is
   * only known to be committed when its transaction is (see `interning`).
   */
  private addressId(address: Uint8Array): number {
    const key = memoKeyOf(address);
    const id = this.addressIds.get(key);
    if (id !== undefined) return id;
    return this.intern(this.addressIds, key, () => this.statements.addressId.get(address), () => this.statements.insertAddress.run(address));
  }

  /** The id of a resource type, interned in `resource_types` like `addressId`. */
  private typeId(type: string): number {
    const id = this.typeIds.get(type);
    if (id !== undefined) return id;
    return this.intern(this.typeIds, type, () => this.statements.typeId.get(type), () => this.statements.insertType.run(type));
  }

  private intern(ids: Map<string, number>, key: string, find: () => number | undefined, insert: () => { lastInsertRowid: number | bigint }): number {
    let id = find();
    if (id === undefined) {
      id = Number(insert().lastInsertRowid);
      this.internedInTx.push([ids, key]);
    }
    // A bound on memory for a chain of many accounts: the map is refilled from the table as needed.
    if (ids.size >= INTERNED_IDS_MAX) ids.clear();
    ids.set(key, id);
    return id;
  }

  /**
   * Runs a write transaction that may intern new ids: when it fails (rolled back, or its commit
   * failed), the ids it inserted are forgotten, since another row may get them later.
   */
  private interning<T>(tx: () => T): T {
    this.internedInTx.length = 0;
    try {
      return tx();
    } catch (e) {
      for (const [ids, key] of this.internedInTx) ids.delete(key);
      throw e;
    } finally {
      this.internedInTx.length = 0;
    }
  }

  /** The follower's statements, prepared at first use (a store that never follows never needs them). */
  private followStatements: ReturnType<typeof prepareFollowStatements> | null = null;

  private follow(): ReturnType<typeof prepareFollowStatements> {
    this.followStatements ??= prepareFollowStatements(this.db);
    return this.followStatements;
  }

  async getBaseRecord(what: string): Promise<bigint | null> {
    return this.follow().record.get(what)?.version ?? null;
  }

  async writeBaseState(w: BaseStateWrite): Promise<void> {
    const f = this.follow();
    this.write(() =>
      this.interning(() =>
        this.db.transaction(() => {
          if (f.insertRecord.run(w.what, w.fetchedAt).changes === 0) return;
          this.insertState(w);
        })(),
      ),
    );
  }

  async newestStateVersion(key: StateKeyRef, upTo: bigint): Promise<bigint | null> {
    const f = this.follow();
    const row =
      key.kind === "table_item"
        ? f.newestTableItem.get(key.handle, key.key, versionParam(upTo))
        : f.newestResource.get(key.address, key.type, versionParam(upTo));
    return row?.v ?? null;
  }

  /**
   * In bounded steps, each its own transaction, so that no commit is large, the WAL is
   * checkpointed between steps, and other writers and readers get their turn:
   * 1. the oldest version moves up a block boundary at a time, at most `pruneBatch.versions`
   *    past the previous step, deleting the transactions, summaries and blocks below it in the
   *    same commit: after every step the ledger is a pruned ledger, exact at and above its oldest
   *    version;
   * 2. then each state table is walked in key order, `pruneBatch.stateRows` rows a step, deleting
   *    rows superseded at or below the oldest version and deletions that are then the oldest row
   *    of their key. No read at or above the oldest version sees these rows, so deleting them in
   *    any step order changes no answer;
   * 3. code no module refers to any more goes, and free pages are returned to the file system
   *    (files created with incremental vacuum).
   * A prune stopped between steps leaves a correct ledger; the next one finishes the walk.
   */
  async prune(target: PruneTarget): Promise<PruneResult> {
    const total = { ...NOTHING_PRUNED };
    for (let first = true; ; first = false) {
      const step = this.write(() => this.pruneStepTx(target));
      if (first && !step.moved) return total;
      total.transactionsDeleted += step.result.transactionsDeleted;
      total.blocksDeleted += step.result.blocksDeleted;
      await this.betweenPruneSteps();
      if (step.done) break;
    }
    for (const table of STATE_TABLES) {
      let from: unknown[] | null = null;
      do {
        const batch = this.write(() => this.pruneStateTx(table, from));
        total.stateRowsDeleted += batch.deleted;
        from = batch.next;
        await this.betweenPruneSteps();
      } while (from !== null);
    }
    this.write(() => this.statements.pruneCode.run());
    if (this.hasIncrementalVacuum()) {
      while (Number(this.db.pragma("freelist_count", { simple: true })) > 0) {
        this.write(() => this.db.pragma(`incremental_vacuum(${this.pruneBatch.pages})`));
        await this.betweenPruneSteps();
      }
    }
    return total;
  }

  /** Lets the WAL's pages back into the database file and other work on this thread run. */
  private async betweenPruneSteps(): Promise<void> {
    this.db.pragma("wal_checkpoint(PASSIVE)");
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** One step of moving the oldest version up (see `prune`). */
  private pruneStepInTx(target: PruneTarget): PruneStep {
    const st = this.statements;
    const plan = planPrune(this.readLedgerInfo()?.oldestVersion ?? null, target);
    if (!plan) return { moved: false, done: true, result: { ...NOTHING_PRUNED } };
    const next = st.firstBlockFrom.get(plan.previousOldestVersion + BigInt(Math.max(1, this.pruneBatch.versions)));
    const step =
      next && next.first_version < plan.oldestVersion ? { oldestVersion: next.first_version, oldestBlockHeight: next.height } : plan;
    st.pruneAccountTransactions.run(plan.previousOldestVersion, step.oldestVersion);
    const transactionsDeleted = st.pruneTransactions.run(step.oldestVersion).changes;
    const blocksDeleted = st.pruneBlocks.run(step.oldestBlockHeight).changes;
    st.setOldest.run(step.oldestVersion, step.oldestBlockHeight);
    return { moved: true, done: step === plan, result: { transactionsDeleted, blocksDeleted, stateRowsDeleted: 0 } };
  }

  /**
   * One batch of the state walk: the keys from `from` (inclusive; null: the first) to the key of
   * the row `pruneBatch.stateRows` further on (exclusive; null: to the end), at the oldest version
   * stored now. Keys are never split: all rows of a key go in one batch.
   */
  private pruneStateInTx(table: StateTable, from: unknown[] | null): { deleted: number; next: unknown[] | null } {
    const oldest = this.readLedgerInfo()?.oldestVersion;
    if (oldest === undefined) return { deleted: 0, next: null };
    const walk = this.stateWalkOf(table);
    let next = (from ? walk.keyAfterRowsFrom.get(...from, this.pruneBatch.stateRows) : walk.keyAfterRows.get(this.pruneBatch.stateRows)) ?? null;
    // A key with more rows than a batch: its rows go whole, to the next key.
    if (next && from && next.every((c, i) => Buffer.isBuffer(c) ? c.equals(from[i] as Buffer) : c === from[i])) next = walk.nextKey.get(...from) ?? null;
    const bounds = [...(from ?? []), ...(next ?? [])];
    const sql = walk.ranges[(from ? 2 : 0) + (next ? 1 : 0)]!;
    const deleted = sql.superseded.run(...bounds, oldest, oldest).changes + sql.deletions.run(...bounds, oldest).changes;
    return { deleted, next };
  }

  /** The state walk's statements of one table, prepared at its first prune. */
  private stateWalkOf(table: StateTable): StateWalk {
    const prepared = this.stateWalks.get(table.table);
    if (prepared) return prepared;
    const { table: t, keys, value } = table;
    const cols = keys.join(", ");
    const marks = keys.map(() => "?").join(", ");
    const sameKey = keys.map((c) => `n.${c} = ${t}.${c}`).join(" AND ");
    const keyTuple = (sql: string) => this.db.prepare<unknown[], unknown[]>(sql).raw(true).safeIntegers(true);
    /** Deletions between a lower bound (inclusive) and an upper bound (exclusive) when given. */
    const range = (lower: boolean, upper: boolean) => {
      const where = [lower ? `(${cols}) >= (${marks})` : "", upper ? `(${cols}) < (${marks})` : ""].filter((c) => c).join(" AND ") || "1";
      return {
        superseded: this.db.prepare<unknown[]>(
          `DELETE FROM ${t} WHERE ${where} AND version < ? AND EXISTS (
             SELECT 1 FROM ${t} n WHERE ${sameKey} AND n.version > ${t}.version AND n.version <= ?)`,
        ),
        deletions: this.db.prepare<unknown[]>(`DELETE FROM ${t} WHERE ${where} AND version <= ? AND ${value} IS NULL`),
      };
    };
    const walk: StateWalk = {
      keyAfterRows: keyTuple(`SELECT ${cols} FROM ${t} ORDER BY ${cols}, version LIMIT 1 OFFSET ${BOUND}`),
      keyAfterRowsFrom: keyTuple(`SELECT ${cols} FROM ${t} WHERE (${cols}) >= (${marks}) ORDER BY ${cols}, version LIMIT 1 OFFSET ${BOUND}`),
      nextKey: keyTuple(`SELECT ${cols} FROM ${t} WHERE (${cols}) > (${marks}) ORDER BY ${cols}, version LIMIT 1`),
      ranges: [range(false, false), range(false, true), range(true, false), range(true, true)],
    };
    this.stateWalks.set(t, walk);
    return walk;
  }

  async close(): Promise<void> {
    await this.packer.close();
    this.closeTurn();
    if (this.db.open) this.db.close();
  }
}

/** Packed resource values of a commit, taken in the order of its non-null resource writes. */
class PackedValues {
  private at = 0;
  constructor(private readonly values: readonly Buffer[]) {}
  next(): Buffer {
    const v = this.values[this.at++];
    if (v === undefined) throw new Error("internal: fewer packed resource values than resource writes");
    return v;
  }
}

/** One step of moving the oldest version up: whether it moved, whether it reached the target. */
interface PruneStep {
  moved: boolean;
  done: boolean;
  result: PruneResult;
}

/** Statements of the prune's walk over one state table in key order. */
interface StateWalk {
  /** The key of the row N rows into the table / from a key on. */
  keyAfterRows: Statement<unknown[], unknown[]>;
  keyAfterRowsFrom: Statement<unknown[], unknown[]>;
  /** The first key after a key. */
  nextKey: Statement<unknown[], unknown[]>;
  /** Deletions in a key range, by [has lower bound * 2 + has upper bound]. */
  ranges: Array<{ superseded: Statement<unknown[]>; deletions: Statement<unknown[]> }>;
}

/** `PRAGMA auto_vacuum` of a file whose free pages `PRAGMA incremental_vacuum` gives back. */
const AUTO_VACUUM_INCREMENTAL = 2;

function fileIdOf(path: string): { dev: number; ino: number } | null {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

/** A snapshot read whose value is a version (null: none at or below the bound). */
function versionSnapshot(row: SnapshotTuple<bigint, bigint>): Snapshot<bigint | null> {
  return { info: ledgerInfoOf(row, SQLITE_COLUMNS), value: snapshotValue(row, u64FromSql) };
}
