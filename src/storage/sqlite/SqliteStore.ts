/**
 * The embedded default backend: one SQLite file in WAL mode (better-sqlite3).
 *
 * State is kept as versioned rows `(key…, version, value)`; a read at V takes the newest row with
 * version <= V, and a NULL value is a deletion. u64 values are stored as SQLite INTEGER through
 * `BigInt.asIntN(64)` and read back with `asUintN`, so the full u64 range round-trips.
 */
import Database from "better-sqlite3";
import type { Database as Db, Statement } from "better-sqlite3";
import { mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import type {
  BlockInfo,
  LedgerInfo,
  ModuleEntry,
  TransactionSummary,
  UserTxnGas,
} from "../../ledger/types.js";
import type {
  BlockWrite,
  LedgerStore,
  PruneResult,
  PruneTarget,
  Snapshot,
  StoredTxnFingerprint,
  SummaryQuery,
  TxnKind,
} from "../LedgerStore.js";
import { StorageUnavailableError } from "../LedgerStore.js";
import { TXN_KINDS, codeHash } from "../common.js";
import { MIGRATIONS } from "./schema.js";

const i64 = (v: bigint): bigint => BigInt.asIntN(64, v);
const I64_MAX = (1n << 63n) - 1n;
/** Versions are stored as SQLite INTEGER; a query bound past i64 can only mean "beyond everything". */
const ver = (v: bigint): bigint => (v > I64_MAX ? I64_MAX : v);
/**
 * Timestamps are searched by range, so they are stored order-preserving: the top bit flipped maps
 * u64 order onto SQLite's signed order (0 -> i64 min, u64 max -> i64 max).
 */
const TOP = 1n << 63n;
const tsIn = (v: bigint): bigint => BigInt.asIntN(64, v ^ TOP);
const tsOut = (x: bigint): bigint => BigInt.asUintN(64, x) ^ TOP;
const u64 = (v: bigint | number): bigint => BigInt.asUintN(64, BigInt(v));

type Row = Record<string, unknown>;

/** Bounds of the read memo (see `SqliteStore.memo`): all of it, and one entry (key and value), in bytes. */
const MEMO_BYTES = 8 * 1024 * 1024;
const MEMO_ENTRY_BYTES = 4 * 1024;
/** Bytes as a string key (one char per byte); request parameters arrive as Buffers already. */
const bin = (b: Uint8Array): string => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)).toString("latin1");

/** The ledger row's columns as snapshot reads select them, in `infoFromRow`'s order (alias `l`). */
const LEDGER_COLS =
  "l.chain_id, l.ledger_version, l.timestamp_usec, l.epoch, l.block_height, l.oldest_version, l.oldest_block_height";

export interface SqliteStoreOptions {
  readonly?: boolean;
  /**
   * How long, in milliseconds, a memoized answer is served without asking SQLite whether another
   * connection has committed since (`PRAGMA data_version`, about 2.3 µs of a point read's 24, the
   * largest single cost of one: it takes and drops a WAL read lock). 0, the default, asks on every
   * read. The node serves with 1: a block committed by another process (an import, a prune, the
   * devnet of a `--workers` node) is then answered from the next millisecond on. Reads that miss
   * the memo, and `getLedgerInfo(true)`, always ask first.
   */
  memoLagMs?: number;
  /** How long a statement waits for another connection's lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
}

export class SqliteStore implements LedgerStore {
  readonly kind = "sqlite" as const;
  private readonly db: Db;
  private readonly s: Record<string, Statement>;
  private readonly commitTx: (w: BlockWrite) => void;
  private readonly commitManyTx: (ws: BlockWrite[]) => void;
  private readonly pruneTx: (t: PruneTarget) => PruneResult;
  /**
   * Results of the hot-path reads (ledger info, snapshot reads), kept while the database is
   * unchanged: `PRAGMA data_version` moves when another connection or process commits, and this
   * connection's own commits and prunes clear the memo. While nothing changed, the same statement
   * would give the same answer; the PRAGMA costs less than the statement and its WAL read lock.
   */
  private readonly memo = new Map<string, unknown>();
  private memoBytes = 0;
  private memoDataVersion = -1;
  private readonly memoLagMs: number;
  /** Until when (performance.now()) the memo is served without asking; see `memoLagMs`. */
  private memoTrustedUntil = -Infinity;
  /** The last LedgerInfo built from a snapshot read (see `infoFromRow`). */
  private lastRowInfo: LedgerInfo | null = null;
  /** Device and inode of the file as opened: a path that no longer leads to them was deleted or replaced. */
  private readonly fileId: { dev: number; ino: number } | null;

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
      // A reader does not set the mode: the writer did, and it is stored in the file. Asking a
      // read-only connection to set it fails on a file this process cannot write.
      if (!opts.readonly) this.db.pragma("journal_mode = WAL");
      // FULL: a committed block survives power loss, not only a crash of the process.
      this.db.pragma("synchronous = FULL");
      if (!opts.readonly) this.migrate();
    } catch (e) {
      this.db.close();
      // A reader of a WAL database creates PATH-wal and PATH-shm when they are missing.
      const hint = opts.readonly ? ` (reading needs ${path}-wal and ${path}-shm: they must exist or the directory must be writable)` : "";
      throw new StorageUnavailableError(`cannot ${opts.readonly ? "read" : "write"} SQLite database ${path}: ${(e as Error).message}${hint}`, { cause: e });
    }
    this.fileId = path === ":memory:" ? null : fileIdOf(path);
    this.memoLagMs = opts.memoLagMs ?? 0;
    this.s = this.prepare();
    this.commitTx = this.db.transaction((w: BlockWrite) => this.commitInTx(w));
    this.commitManyTx = this.db.transaction((ws: BlockWrite[]) => {
      for (const w of ws) this.commitInTx(w);
    });
    this.pruneTx = this.db.transaction((t: PruneTarget) => this.pruneInTx(t));
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

  private prepare(): Record<string, Statement> {
    const raw = (sql: string): Statement => this.db.prepare(sql).safeIntegers(true).raw(true);
    const p = (sql: string, safe = true): Statement => {
      const st = this.db.prepare(sql);
      return st.reader && safe ? st.safeIntegers(true) : st;
    };
    return {
      chainId: p("SELECT chain_id FROM ledger WHERE id = 1", false),
      dataVersion: this.db.prepare("PRAGMA data_version").pluck(),
      initChain: p("INSERT INTO ledger (id, chain_id) VALUES (1, ?) ON CONFLICT (id) DO NOTHING"),
      ledger: raw(`SELECT ${LEDGER_COLS} FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL`),
      modules: p(
        `SELECT m.state_key, m.name, m.code_hash FROM modules m
         WHERE m.address = ? AND m.state_key >= ? AND m.version <= ?
           AND m.version = (SELECT max(version) FROM modules m2
                             WHERE m2.address = m.address AND m2.state_key = m.state_key AND m2.version <= ?)
           AND m.code_hash IS NOT NULL
         ORDER BY m.state_key LIMIT ?`,
      ),
      code: p("SELECT bytecode FROM code WHERE code_hash = ?"),
      // The ledger row and the item in one statement: one snapshot, one read lock (WAL read marks
      // are taken and dropped per statement, with a few system calls each).
      tableItemAt: raw(
        `SELECT ${LEDGER_COLS},
                (SELECT t.value FROM table_items t WHERE t.handle = ? AND t.key = ?
                   AND t.version <= coalesce(?, l.ledger_version) ORDER BY t.version DESC LIMIT 1)
         FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL`,
      ),
      modulesVersionAt: raw(
        `SELECT ${LEDGER_COLS},
                (SELECT m.version FROM modules m WHERE m.address = ? AND m.version <= coalesce(?, l.ledger_version)
                 ORDER BY m.version DESC LIMIT 1)
         FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL`,
      ),
      summariesVersionAt: raw(
        `SELECT ${LEDGER_COLS},
                (SELECT a.version FROM account_transactions a
                 WHERE a.sender = ? AND a.version <= min(coalesce(?, l.ledger_version), l.ledger_version)
                 ORDER BY a.version DESC LIMIT 1)
         FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL`,
      ),
      resource: p(
        `SELECT value FROM resources WHERE address = ? AND type = ? AND version <= ?
         ORDER BY version DESC LIMIT 1`,
      ),
      summariesFwd: raw(
        `SELECT version, hash, replay_kind, replay_value FROM account_transactions
         WHERE sender = ? AND version >= ? AND version <= ? ORDER BY version ASC LIMIT ?`,
      ),
      summariesBack: raw(
        `SELECT version, hash, replay_kind, replay_value FROM account_transactions
         WHERE sender = ? AND version <= ? ORDER BY version DESC LIMIT ?`,
      ),
      blockByVersion: p(
        `SELECT * FROM blocks WHERE first_version <= ? ORDER BY first_version DESC LIMIT 1`,
      ),
      blockByHeight: p("SELECT * FROM blocks WHERE height = ?"),
      blockAtTime: p("SELECT * FROM blocks WHERE timestamp_usec >= ? ORDER BY height ASC LIMIT 1"),
      userGas: p(
        `SELECT version, gas_unit_price, gas_used, contract FROM transactions
         WHERE version >= ? AND version <= ? AND sender IS NOT NULL ORDER BY version`,
      ),
      fingerprints: p("SELECT version, kind, hash FROM transactions WHERE version >= ? AND version <= ? ORDER BY version"),
      insBlock: p(
        `INSERT INTO blocks (height, epoch, timestamp_usec, first_version, last_version,
                             gas_limit_reached, output_limit_reached)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      insTxn: p(
        `INSERT INTO transactions (version, kind, hash, sender, replay_kind, replay_value,
                                   gas_unit_price, gas_used, success, contract)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insModule: p(`INSERT OR REPLACE INTO modules (address, state_key, version, name, code_hash) VALUES (?, ?, ?, ?, ?)`),
      insCode: p(`INSERT OR IGNORE INTO code (code_hash, bytecode) VALUES (?, ?)`),
      insAccountTxn: p(
        `INSERT INTO account_transactions (sender, version, hash, replay_kind, replay_value) VALUES (?, ?, ?, ?, ?)`,
      ),
      insTableItem: p(`INSERT OR REPLACE INTO table_items (handle, key, version, value) VALUES (?, ?, ?, ?)`),
      insResource: p(`INSERT OR REPLACE INTO resources (address, type, version, value) VALUES (?, ?, ?, ?)`),
      setLedger: p(
        `UPDATE ledger SET ledger_version = ?, timestamp_usec = ?, epoch = ?, block_height = ?,
                oldest_version = coalesce(oldest_version, ?), oldest_block_height = coalesce(oldest_block_height, ?)
         WHERE id = 1`,
      ),
      setOldest: p("UPDATE ledger SET oldest_version = ?, oldest_block_height = ? WHERE id = 1"),
    };
  }

  async getChainId(): Promise<number | null> {
    const row = this.s.chainId!.get() as { chain_id: number } | undefined;
    return row ? row.chain_id : null;
  }

  async initChain(chainId: number): Promise<void> {
    this.s.initChain!.run(chainId);
    this.clearMemo();
    const stored = await this.getChainId();
    if (stored !== chainId) {
      throw new Error(`this ledger has chain id ${stored}, not ${chainId}`);
    }
  }

  getLedgerInfo(fresh = false): LedgerInfo | null {
    return this.memoized("ledger", () => this.readLedgerInfo(), undefined, fresh);
  }

  /**
   * `read()`'s result, from the memo when the database has not changed since it was read. A new
   * result is kept unless its entry (key, about 64 bytes of overhead, and `bytesOf` its value)
   * passes MEMO_ENTRY_BYTES; the memo starts over when it would pass MEMO_BYTES. Within
   * `memoLagMs` of the last check, a key the memo holds is answered without checking.
   */
  private memoized<T>(key: string, read: () => T, bytesOf: (v: T) => number = () => 0, fresh = false): T {
    if (this.memoLagMs > 0) {
      const now = performance.now();
      if (!fresh && now < this.memoTrustedUntil) {
        const hit = this.memo.get(key);
        if (hit !== undefined || this.memo.has(key)) return hit as T;
      }
      this.memoTrustedUntil = now + this.memoLagMs;
    }
    const dataVersion = this.s.dataVersion!.get() as number;
    if (dataVersion !== this.memoDataVersion) {
      this.clearMemo();
      this.memoDataVersion = dataVersion;
    } else if (this.memo.has(key)) {
      return this.memo.get(key) as T;
    }
    const value = read();
    const bytes = key.length + 64 + bytesOf(value);
    if (bytes > MEMO_ENTRY_BYTES) return value;
    if (this.memoBytes + bytes > MEMO_BYTES) this.clearMemo();
    this.memo.set(key, value);
    this.memoBytes += bytes;
    return value;
  }

  private clearMemo(): void {
    this.memo.clear();
    this.memoBytes = 0;
  }

  private readLedgerInfo(): LedgerInfo | null {
    const r = this.s.ledger!.get() as unknown[] | undefined;
    return r ? this.infoFromRow(r) : null;
  }

  async getModules(address: Uint8Array, version: bigint, start: Uint8Array | null, limit: number): Promise<ModuleEntry[]> {
    const rows = this.s.modules!.all(address, start ?? Buffer.alloc(0), ver(version), ver(version), limit) as Row[];
    return rows.map((r) => ({ stateKey: r.state_key as Buffer, name: r.name as string, codeHash: r.code_hash as string }));
  }

  async getModuleCode(codeHash: string): Promise<Uint8Array | null> {
    const r = this.s.code!.get(codeHash) as { bytecode: Buffer } | undefined;
    return r?.bytecode ?? null;
  }

  readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Snapshot<Uint8Array | null> | null {
    const read = (): Snapshot<Uint8Array | null> | null => {
      const r = this.s.tableItemAt!.get(handle, key, version === undefined ? null : ver(version)) as unknown[] | undefined;
      return r ? this.snapshotOf(r) : null;
    };
    // A large key or value is read every time (see MEMO_ENTRY_BYTES).
    if (key.length > MEMO_ENTRY_BYTES) return read();
    return this.memoized(`t${version ?? ""}|${bin(handle)}|${bin(key)}`, read, (snap) => snap?.value?.length ?? 0);
  }

  readModulesVersion(address: Uint8Array, version: bigint | undefined): Snapshot<bigint | null> | null {
    return this.memoized(`m${version ?? ""}|${bin(address)}`, () => {
      const r = this.s.modulesVersionAt!.get(address, version === undefined ? null : ver(version)) as unknown[] | undefined;
      return r ? this.snapshotOf(r) : null;
    });
  }

  readSummariesVersion(sender: Uint8Array, end: bigint | undefined): Snapshot<bigint | null> | null {
    return this.memoized(`s${end ?? ""}|${bin(sender)}`, () => {
      const r = this.s.summariesVersionAt!.get(sender, end === undefined ? null : ver(end)) as unknown[] | undefined;
      return r ? this.snapshotOf(r) : null;
    });
  }

  /** A snapshot read's row: the `LEDGER_COLS` columns, then the value (null: none). */
  private snapshotOf<T>(r: unknown[]): Snapshot<T | null> {
    return { info: this.infoFromRow(r), value: (r[7] as T | null) ?? null };
  }

  /**
   * LedgerInfo from the `LEDGER_COLS` columns of a snapshot read. The object is reused while the
   * ledger has not moved (version and oldest version fix every other field), so per-ledger work
   * downstream, such as the header values, is done once per block.
   */
  private infoFromRow(r: unknown[]): LedgerInfo {
    const last = this.lastRowInfo;
    if (last && last.ledgerVersion === r[1] && last.oldestVersion === r[5]) return last;
    const info: LedgerInfo = {
      chainId: Number(r[0]),
      ledgerVersion: r[1] as bigint,
      oldestVersion: r[5] as bigint,
      timestampUsec: tsOut(r[2] as bigint),
      epoch: r[3] as bigint,
      blockHeight: r[4] as bigint,
      oldestBlockHeight: r[6] as bigint,
    };
    this.lastRowInfo = info;
    return info;
  }

  async getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null> {
    const r = this.s.resource!.get(address, type, ver(version)) as { value: string | null } | undefined;
    return r?.value ?? null;
  }

  async getTransactionSummaries(q: SummaryQuery): Promise<TransactionSummary[]> {
    if (q.limit <= 0) return [];
    let rows: SummaryRow[];
    if (q.start !== undefined) {
      rows = this.s.summariesFwd!.all(q.sender, ver(q.start), ver(q.ledgerVersion), q.limit) as SummaryRow[];
    } else {
      const end = q.end !== undefined && q.end < q.ledgerVersion ? q.end : q.ledgerVersion;
      rows = (this.s.summariesBack!.all(q.sender, ver(end), q.limit) as SummaryRow[]).reverse();
    }
    const sender = Buffer.from(q.sender);
    return rows.map((r) => toSummary(sender, r));
  }

  async getBlockByVersion(version: bigint): Promise<BlockInfo | null> {
    const r = this.s.blockByVersion!.get(ver(version)) as Row | undefined;
    if (!r) return null;
    const b = toBlock(r);
    return b.lastVersion >= version ? b : null;
  }

  async getBlockByHeight(height: bigint): Promise<BlockInfo | null> {
    const r = this.s.blockByHeight!.get(ver(height)) as Row | undefined;
    return r ? toBlock(r) : null;
  }

  async getFirstBlockAtOrAfter(timestampUsec: bigint): Promise<BlockInfo | null> {
    const r = this.s.blockAtTime!.get(tsIn(timestampUsec < 0n ? 0n : timestampUsec)) as Row | undefined;
    return r ? toBlock(r) : null;
  }

  async getUserTxnGas(first: bigint, last: bigint): Promise<UserTxnGas[]> {
    return (this.s.userGas!.all(ver(first), ver(last)) as Row[]).map((r) => ({
      version: r.version as bigint,
      gasUnitPrice: u64(r.gas_unit_price as bigint),
      gasUsed: u64(r.gas_used as bigint),
      contractAddress: (r.contract as string | null) ?? null,
    }));
  }

  async getFingerprints(from: bigint, to: bigint): Promise<StoredTxnFingerprint[]> {
    return (this.s.fingerprints!.all(ver(from), ver(to)) as Row[]).map((r) => ({
      version: r.version as bigint,
      kind: TXN_KINDS[Number(r.kind)] as TxnKind,
      hash: r.hash as Buffer,
    }));
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
      this.clearMemo();
    }
  }

  /**
   * Test and operator seam: while on, every write fails as on a read-only database file
   * (`PRAGMA query_only`; SQLITE_READONLY). As root, chmod does not stop writes through an open
   * descriptor, so the tests make a read-only database this way.
   */
  setQueryOnly(on: boolean): void {
    this.db.pragma(`query_only = ${on ? 1 : 0}`);
  }

  /**
   * Test seam for a full disk where no size-limited file system can be mounted: while on, the
   * file cannot grow past its size now (`PRAGMA max_page_count`; SQLITE_FULL, as on a full disk).
   */
  setSizeLimit(on: boolean): void {
    const pages = on ? Number(this.db.pragma("page_count", { simple: true })) : 0xfffffffe;
    this.db.pragma(`max_page_count = ${pages}`);
  }

  async commitBlock(write: BlockWrite): Promise<void> {
    return this.write(() => this.commitTx(write));
  }

  async commitBlocks(writes: BlockWrite[]): Promise<void> {
    return this.write(() => this.commitManyTx(writes));
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

  private commitInTx(w: BlockWrite): void {
    const s = this.s;
    const b = w.block;
    s.insBlock!.run(
      b.height,
      b.epoch,
      tsIn(b.timestampUsec),
      b.firstVersion,
      b.lastVersion,
      b.endInfo ? (b.endInfo.blockGasLimitReached ? 1 : 0) : null,
      b.endInfo ? (b.endInfo.blockOutputLimitReached ? 1 : 0) : null,
    );
    for (const t of w.transactions) {
      const u = t.user;
      s.insTxn!.run(
        t.version,
        TXN_KINDS.indexOf(t.kind),
        t.hash,
        u ? u.sender : null,
        u ? (u.replayProtector.type === "nonce" ? 0 : 1) : null,
        u ? i64(u.replayProtector.value) : null,
        u ? i64(u.gasUnitPrice) : null,
        u ? i64(u.gasUsed) : null,
        u ? (u.success ? 1 : 0) : null,
        u ? u.contractAddress : null,
      );
      if (u) {
        s.insAccountTxn!.run(u.sender, t.version, t.hash, u.replayProtector.type === "nonce" ? 0 : 1, i64(u.replayProtector.value));
      }
    }
    for (const m of w.modules) {
      const hash = m.bytecode ? codeHash(m.bytecode) : null;
      if (m.bytecode) s.insCode!.run(hash, m.bytecode);
      s.insModule!.run(m.address, m.stateKey, m.version, m.name, hash);
    }
    for (const t of w.tableItems) s.insTableItem!.run(t.handle, t.key, t.version, t.value);
    for (const r of w.resources) s.insResource!.run(r.address, r.type, r.version, r.json);
    s.setLedger!.run(b.lastVersion, tsIn(b.timestampUsec), b.epoch, b.height, b.firstVersion, b.height);
  }

  async prune(target: PruneTarget): Promise<PruneResult> {
    return this.write(() => this.pruneTx(target));
  }

  private pruneInTx(t: PruneTarget): PruneResult {
    const info = this.readLedgerInfo();
    if (!info || t.oldestVersion <= info.oldestVersion) {
      return { transactionsDeleted: 0, stateRowsDeleted: 0, blocksDeleted: 0 };
    }
    // The new oldest version first: from this commit on, readers answer 410 below it.
    this.s.setOldest!.run(t.oldestVersion, t.oldestBlockHeight);
    const O = t.oldestVersion;
    const run = (sql: string, ...args: unknown[]): number => this.db.prepare(sql).run(...args).changes;
    const transactionsDeleted = run("DELETE FROM transactions WHERE version < ?", O);
    run("DELETE FROM account_transactions WHERE version < ?", O);
    const blocksDeleted = run("DELETE FROM blocks WHERE height < ?", t.oldestBlockHeight);
    let stateRowsDeleted = 0;
    for (const [table, keyCols] of [
      ["modules", ["address", "state_key"]],
      ["table_items", ["handle", "key"]],
      ["resources", ["address", "type"]],
    ] as const) {
      const same = keyCols.map((c) => `n.${c} = ${table}.${c}`).join(" AND ");
      // Superseded: a newer row of the same key exists at or below the new oldest version.
      stateRowsDeleted += run(
        `DELETE FROM ${table} WHERE version < ? AND EXISTS (
           SELECT 1 FROM ${table} n WHERE ${same} AND n.version > ${table}.version AND n.version <= ?)`,
        O,
        O,
      );
      // A deletion that is now the oldest row of its key hides nothing any more.
      const valueCol = table === "modules" ? "code_hash" : "value";
      stateRowsDeleted += run(`DELETE FROM ${table} WHERE version <= ? AND ${valueCol} IS NULL`, O);
    }
    // Code no kept module version refers to any more (not state rows: not counted).
    run("DELETE FROM code WHERE code_hash NOT IN (SELECT code_hash FROM modules WHERE code_hash IS NOT NULL)");
    return { transactionsDeleted, stateRowsDeleted, blocksDeleted };
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

function fileIdOf(path: string): { dev: number; ino: number } | null {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

function toBlock(r: Row): BlockInfo {
  const gas = r.gas_limit_reached as bigint | null;
  const out = r.output_limit_reached as bigint | null;
  return {
    height: r.height as bigint,
    epoch: r.epoch as bigint,
    timestampUsec: tsOut(r.timestamp_usec as bigint),
    firstVersion: r.first_version as bigint,
    lastVersion: r.last_version as bigint,
    endInfo: gas === null || out === null ? null : { blockGasLimitReached: gas === 1n, blockOutputLimitReached: out === 1n },
  };
}

/** `[version, hash, replay_kind, replay_value]`, read as arrays (cheaper than row objects). */
type SummaryRow = [bigint, Buffer, bigint, bigint];

function toSummary(sender: Uint8Array, [version, hash, kind, replay]: SummaryRow): TransactionSummary {
  const value = u64(replay);
  return {
    sender,
    version,
    hash,
    replayProtector: kind === 0n ? { type: "nonce", value } : { type: "sequence_number", value },
  };
}
