/**
 * PostgreSQL backend: many stateless API processes over one database (node-postgres `Pool`).
 *
 * Same model as the SQLite store (`../sqlite/SqliteStore.ts`): versioned rows `(key…, version,
 * value)`, a read at V takes the newest row with version <= V, a NULL value is a deletion.
 *
 * - Every read method is ONE statement (a named prepared statement), so it sees one snapshot.
 * - `commitBlock` is ONE statement too (a chain of data-modifying CTEs): a block is visible all
 *   at once or not at all, in one round trip.
 * - `prune` runs in one transaction that raises the oldest version and deletes what no read at
 *   or above it can see (pruners take turns under an advisory lock; see `prune`).
 * - u64 values are `numeric(20,0)` (domain `u64`): exact for the whole range, sent and read as
 *   decimal strings.
 * - Connection loss, timeouts and "server shutting down / starting up" throw
 *   `StorageUnavailableError` (503 at the API edge); the pool reconnects on the next call, so a
 *   server recovers by itself once the database is back. Nothing waits unboundedly: connecting,
 *   waiting for a pooled connection and every statement have time limits (`settings.ts`).
 */
import pg from "pg";
import type { PoolClient, QueryResultRow } from "pg";
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
import { parsePostgresUrl, redactUrl, type PostgresSettings, type PostgresStoreOptions } from "./settings.js";

export type { PostgresStoreOptions } from "./settings.js";

const { Pool, DatabaseError } = pg;

/** Session advisory lock held while migrating ("ledgernd" in ASCII). */
const MIGRATION_LOCK = BigInt("0x6c65646765726e64").toString();
/** Transaction advisory lock held while pruning ("ledgerpr"). */
const PRUNE_LOCK = BigInt("0x6c65646765727072").toString();
/** A prune is maintenance, not a request: its statements may run this long (ms). */
export const PRUNE_STATEMENT_TIMEOUT_MS = 10 * 60_000;

type Row = QueryResultRow;

const big = (v: unknown): bigint => BigInt(v as string);
const dec = (v: bigint): string => v.toString();

/** The ledger row's columns (alias `l`), as `ledgerInfo` reads them. */
const LEDGER_COLS = "l.chain_id, l.ledger_version, l.timestamp_usec, l.epoch, l.block_height, l.oldest_version, l.oldest_block_height";

/**
 * The read statements. Named once; node-postgres prepares each on a connection at its first use
 * there (and again on a new connection after a reconnect).
 */
const SQL = {
  chainId: "SELECT chain_id FROM ledger WHERE id = 1",
  initChain: "INSERT INTO ledger (id, chain_id) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
  ledger: `SELECT ${LEDGER_COLS} FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL`,
  // Newest row per state key at or below $3 that is not a deletion, in state-key order from $2.
  modules: `SELECT m.state_key, m.name, m.code_hash FROM modules m
            WHERE m.address = $1 AND m.state_key >= $2 AND m.version <= $3::numeric AND m.bytecode IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM modules n
                              WHERE n.address = m.address AND n.state_key = m.state_key
                                AND n.version > m.version AND n.version <= $3::numeric)
            ORDER BY m.state_key LIMIT $4`,
  moduleCode: "SELECT bytecode FROM modules WHERE code_hash = $1 AND bytecode IS NOT NULL LIMIT 1",
  // The ledger row and the item in one statement, so one snapshot and one round trip.
  tableItemAt: `SELECT ${LEDGER_COLS},
                       (SELECT t.value FROM table_items t WHERE t.handle = $1 AND t.key = $2
                          AND t.version <= coalesce($3::numeric, l.ledger_version) ORDER BY t.version DESC LIMIT 1) AS value
                FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL`,
  modulesVersionAt: `SELECT ${LEDGER_COLS},
                            (SELECT m.version FROM modules m WHERE m.address = $1
                               AND m.version <= coalesce($2::numeric, l.ledger_version) ORDER BY m.version DESC LIMIT 1) AS value
                     FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL`,
  summariesVersionAt: `SELECT ${LEDGER_COLS},
                              (SELECT t.version FROM transactions t WHERE t.sender = $1
                                 AND t.version <= least(coalesce($2::numeric, l.ledger_version), l.ledger_version)
                               ORDER BY t.version DESC LIMIT 1) AS value
                       FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL`,
  resource: `SELECT value FROM resources WHERE address = $1 AND type = $2 AND version <= $3::numeric
             ORDER BY version DESC LIMIT 1`,
  summariesFwd: `SELECT sender, version, hash, replay_kind, replay_value FROM transactions
                 WHERE sender = $1 AND version >= $2::numeric AND version <= $3::numeric
                 ORDER BY version ASC LIMIT $4`,
  summariesBack: `SELECT * FROM (SELECT sender, version, hash, replay_kind, replay_value FROM transactions
                                 WHERE sender = $1 AND version <= $2::numeric ORDER BY version DESC LIMIT $3) s
                  ORDER BY version ASC`,
  blockByVersion: `SELECT * FROM (SELECT * FROM blocks WHERE first_version <= $1::numeric
                                  ORDER BY first_version DESC LIMIT 1) b
                   WHERE last_version >= $1::numeric`,
  blockByHeight: "SELECT * FROM blocks WHERE height = $1::numeric",
  blockAtTime: "SELECT * FROM blocks WHERE timestamp_usec >= $1::numeric ORDER BY height ASC LIMIT 1",
  userGas: `SELECT version, gas_unit_price, gas_used, contract FROM transactions
            WHERE version >= $1::numeric AND version <= $2::numeric AND sender IS NOT NULL ORDER BY version`,
  fingerprints: `SELECT version, kind, hash FROM transactions
                 WHERE version >= $1::numeric AND version <= $2::numeric ORDER BY version`,
  // The whole block in one statement: data-modifying CTEs run atomically, with one snapshot.
  commit: `
    WITH blk AS (
      INSERT INTO blocks (height, epoch, timestamp_usec, first_version, last_version,
                          gas_limit_reached, output_limit_reached)
      VALUES ($1::numeric, $2::numeric, $3::numeric, $4::numeric, $5::numeric, $6::boolean, $7::boolean)
    ), txn AS (
      INSERT INTO transactions (version, kind, hash, sender, replay_kind, replay_value,
                                gas_unit_price, gas_used, success, contract)
      SELECT * FROM unnest($8::numeric[], $9::smallint[], $10::bytea[], $11::bytea[], $12::smallint[],
                           $13::numeric[], $14::numeric[], $15::numeric[], $16::boolean[], $17::text[])
    ), mods AS (
      INSERT INTO modules (address, state_key, version, name, bytecode, code_hash)
      SELECT * FROM unnest($18::bytea[], $19::bytea[], $20::numeric[], $21::text[], $22::bytea[], $23::text[])
      ON CONFLICT (address, state_key, version)
      DO UPDATE SET name = excluded.name, bytecode = excluded.bytecode, code_hash = excluded.code_hash
    ), items AS (
      INSERT INTO table_items (handle, key, version, value)
      SELECT * FROM unnest($24::bytea[], $25::bytea[], $26::numeric[], $27::bytea[])
      ON CONFLICT (handle, key, version) DO UPDATE SET value = excluded.value
    ), res AS (
      INSERT INTO resources (address, type, version, value)
      SELECT * FROM unnest($28::bytea[], $29::text[], $30::numeric[], $31::text[])
      ON CONFLICT (address, type, version) DO UPDATE SET value = excluded.value
    )
    UPDATE ledger SET ledger_version = $5::numeric, timestamp_usec = $3::numeric, epoch = $2::numeric,
                      block_height = $1::numeric,
                      oldest_version = coalesce(oldest_version, $4::numeric),
                      oldest_block_height = coalesce(oldest_block_height, $1::numeric)
    WHERE id = 1`,
} as const;

type StatementName = keyof typeof SQL;

/** State tables: key columns and the value column (NULL = deleted). */
const STATE_TABLES = [
  { table: "modules", keys: ["address", "state_key"], value: "bytecode" },
  { table: "table_items", keys: ["handle", "key"], value: "value" },
  { table: "resources", keys: ["address", "type"], value: "value" },
] as const;

/**
 * True when `e` means the database could not be used right now rather than that the statement
 * was wrong: anything that is not a server error (refused, reset, timed out, terminated), and the
 * server's connection (08), resource (53) and operator-intervention (57: shutdown, starting up,
 * statement timeout) classes.
 */
export function isUnavailableError(e: unknown): boolean {
  if (e instanceof StorageUnavailableError) return true;
  if (e instanceof DatabaseError) return /^(08|53|57)/.test(e.code ?? "");
  return e instanceof Error && !(e instanceof TypeError) && !(e instanceof RangeError);
}

function storageError(e: unknown, what: string): Error {
  if (e instanceof StorageUnavailableError) return e;
  if (isUnavailableError(e)) {
    return new StorageUnavailableError(`PostgreSQL is unavailable (${what}): ${(e as Error).message}`, { cause: e });
  }
  return e instanceof Error ? e : new Error(String(e));
}

export class PostgresStore implements LedgerStore {
  readonly kind = "postgres" as const;
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    readonly settings: PostgresSettings,
    /** The URL without its password. */
    readonly url: string,
  ) {}

  /**
   * Connects and brings the schema up to date (migrations under an advisory lock, so processes
   * starting together do not race). Settings: URL query parameters or `opts` (see `settings.ts`).
   */
  static async connect(url: string, opts: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const { connectionString, settings } = parsePostgresUrl(url, opts);
    const pool = new Pool({
      connectionString,
      max: settings.poolSize,
      connectionTimeoutMillis: settings.connectTimeoutMs,
      idleTimeoutMillis: settings.idleTimeoutMs,
      statement_timeout: settings.statementTimeoutMs,
      // Client-side bound for a server that accepts the statement and then goes silent.
      query_timeout: settings.statementTimeoutMs + 1_000,
      lock_timeout: settings.statementTimeoutMs,
      idle_in_transaction_session_timeout: Math.max(settings.statementTimeoutMs * 2, 10_000),
      keepAlive: true,
      fallback_application_name: "ledger-node",
    });
    // An idle pooled connection that the server closes (restart, failover) emits here; the pool
    // has already dropped it and the next query opens a new one. Without a listener the process
    // would crash.
    pool.on("error", () => undefined);
    const store = new PostgresStore(pool, settings, redactUrl(url));
    try {
      await store.migrate();
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw storageError(e, `opening ${store.url}`);
    }
    return store;
  }

  private async migrate(): Promise<void> {
    const c = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await c.query("SELECT pg_advisory_lock($1::bigint)", [MIGRATION_LOCK]);
      try {
        await c.query(
          "CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
        );
        const r = await c.query<{ v: number | null }>("SELECT max(version) AS v FROM schema_version");
        const current = r.rows[0]?.v ?? 0;
        if (current > MIGRATIONS.length) {
          throw new Error(
            `the database schema is version ${current}, newer than this program knows (${MIGRATIONS.length}): upgrade ledger-node`,
          );
        }
        for (const [i, sql] of MIGRATIONS.entries()) {
          const version = i + 1;
          if (version <= current) continue;
          await c.query("BEGIN");
          try {
            await c.query(sql);
            await c.query("INSERT INTO schema_version (version) VALUES ($1)", [version]);
            await c.query("COMMIT");
          } catch (e) {
            await c.query("ROLLBACK").catch(() => undefined);
            throw e;
          }
        }
      } finally {
        await c.query("SELECT pg_advisory_unlock($1::bigint)", [MIGRATION_LOCK]).catch((e: Error) => (broken = e));
      }
    } catch (e) {
      broken ??= isUnavailableError(e) ? (e as Error) : undefined;
      throw e;
    } finally {
      c.release(broken);
    }
  }

  /** Runs one named statement on any pooled connection. */
  private async q(name: StatementName, values: unknown[]): Promise<Row[]> {
    try {
      const r = await this.pool.query({ name: `ln_${name}`, text: SQL[name], values });
      return r.rows;
    } catch (e) {
      throw storageError(e, name);
    }
  }

  async getChainId(): Promise<number | null> {
    const rows = await this.q("chainId", []);
    return rows[0] ? Number(rows[0].chain_id) : null;
  }

  async initChain(chainId: number): Promise<void> {
    await this.q("initChain", [chainId]);
    const stored = await this.getChainId();
    if (stored !== chainId) {
      throw new Error(`this ledger has chain id ${stored}, not ${chainId}`);
    }
  }

  async getLedgerInfo(): Promise<LedgerInfo | null> {
    const r = (await this.q("ledger", []))[0];
    return r ? ledgerInfo(r) : null;
  }

  async readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Promise<Snapshot<Uint8Array | null> | null> {
    const r = (await this.q("tableItemAt", [handle, key, version === undefined ? null : dec(version)]))[0];
    if (!r) return null;
    return { info: ledgerInfo(r), value: (r.value as Buffer | null) ?? null };
  }

  async getModules(address: Uint8Array, version: bigint, start: Uint8Array | null, limit: number): Promise<ModuleEntry[]> {
    const rows = await this.q("modules", [address, start ?? Buffer.alloc(0), dec(version), limit]);
    return rows.map((r) => ({ stateKey: r.state_key as Buffer, name: r.name as string, codeHash: r.code_hash as string }));
  }

  async getModuleCode(codeHash: string): Promise<Uint8Array | null> {
    const rows = await this.q("moduleCode", [codeHash]);
    return (rows[0]?.bytecode as Buffer | undefined) ?? null;
  }

  async readModulesVersion(address: Uint8Array, version: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    const r = (await this.q("modulesVersionAt", [address, version === undefined ? null : dec(version)]))[0];
    return r ? versionSnapshot(r) : null;
  }

  async readSummariesVersion(sender: Uint8Array, end: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    const r = (await this.q("summariesVersionAt", [sender, end === undefined ? null : dec(end)]))[0];
    return r ? versionSnapshot(r) : null;
  }

  async getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null> {
    const r = (await this.q("resource", [address, type, dec(version)]))[0];
    return (r?.value as string | null | undefined) ?? null;
  }

  async getTransactionSummaries(q: SummaryQuery): Promise<TransactionSummary[]> {
    if (q.limit <= 0) return [];
    let rows: Row[];
    if (q.start !== undefined) {
      rows = await this.q("summariesFwd", [q.sender, dec(q.start), dec(q.ledgerVersion), q.limit]);
    } else {
      const end = q.end !== undefined && q.end < q.ledgerVersion ? q.end : q.ledgerVersion;
      rows = await this.q("summariesBack", [q.sender, dec(end), q.limit]);
    }
    return rows.map(toSummary);
  }

  async getBlockByVersion(version: bigint): Promise<BlockInfo | null> {
    const r = (await this.q("blockByVersion", [dec(version)]))[0];
    return r ? toBlock(r) : null;
  }

  async getBlockByHeight(height: bigint): Promise<BlockInfo | null> {
    const r = (await this.q("blockByHeight", [dec(height)]))[0];
    return r ? toBlock(r) : null;
  }

  async getFirstBlockAtOrAfter(timestampUsec: bigint): Promise<BlockInfo | null> {
    const r = (await this.q("blockAtTime", [dec(timestampUsec)]))[0];
    return r ? toBlock(r) : null;
  }

  async getUserTxnGas(first: bigint, last: bigint): Promise<UserTxnGas[]> {
    return (await this.q("userGas", [dec(first), dec(last)])).map((r) => ({
      version: big(r.version),
      gasUnitPrice: big(r.gas_unit_price),
      gasUsed: big(r.gas_used),
      contractAddress: (r.contract as string | null) ?? null,
    }));
  }

  async getFingerprints(from: bigint, to: bigint): Promise<StoredTxnFingerprint[]> {
    return (await this.q("fingerprints", [dec(from), dec(to)])).map((r) => ({
      version: big(r.version),
      kind: TXN_KINDS[Number(r.kind)] as TxnKind,
      hash: r.hash as Buffer,
    }));
  }

  async commitBlock(w: BlockWrite): Promise<void> {
    try {
      await this.pool.query({ name: "ln_commit", text: SQL.commit, values: commitValues(w) });
    } catch (e) {
      throw commitError(e, [w]);
    }
  }

  /** Several consecutive blocks in one transaction (bulk import): all visible at once or none. */
  async commitBlocks(writes: BlockWrite[]): Promise<void> {
    if (writes.length === 0) return;
    try {
      await this.transaction("commitBlocks", async (c) => {
        for (const w of writes) await c.query({ name: "ln_commit", text: SQL.commit, values: commitValues(w) });
      });
    } catch (e) {
      throw commitError(e, writes);
    }
  }

  /**
   * One transaction: pruners take turns (a second one finds nothing to do), the rows no read at or
   * above the new oldest version can see are deleted, and the oldest version is raised. Readers
   * see the raise and the deletions together at the commit, so the order inside does not matter
   * to them; raising it last keeps the ledger row — which every block commit also updates —
   * locked only for the final statement instead of the whole prune.
   */
  async prune(t: PruneTarget): Promise<PruneResult> {
    const none = { transactionsDeleted: 0, stateRowsDeleted: 0, blocksDeleted: 0 };
    return this.transaction("prune", async (c) => {
      const run = async (text: string, values: unknown[] = []) =>
        c.query({ text, values, query_timeout: PRUNE_STATEMENT_TIMEOUT_MS + 1_000 } as pg.QueryConfig);
      await run(`SET LOCAL statement_timeout = ${PRUNE_STATEMENT_TIMEOUT_MS}`);
      const locked = await run("SELECT pg_try_advisory_xact_lock($1::bigint) AS ok", [PRUNE_LOCK]);
      if (!locked.rows[0]?.ok) return none; // another process is pruning right now
      const row = (await run("SELECT oldest_version FROM ledger WHERE id = 1 AND ledger_version IS NOT NULL")).rows[0];
      if (!row || t.oldestVersion <= big(row.oldest_version)) return none;
      const prev = row.oldest_version as string;
      const O = dec(t.oldestVersion);
      const count = async (text: string, values: unknown[]) => (await run(text, values)).rowCount ?? 0;
      const transactionsDeleted = await count("DELETE FROM transactions WHERE version < $1::numeric", [O]);
      const blocksDeleted = await count("DELETE FROM blocks WHERE height < $1::numeric", [dec(t.oldestBlockHeight)]);
      let stateRowsDeleted = 0;
      // After every prune each key keeps at most one row at or below the oldest version, so only
      // keys written in [previous oldest, new oldest] can hold rows that became superseded: the
      // version index finds them without scanning whole tables.
      for (const { table, keys, value } of STATE_TABLES) {
        const cols = keys.join(", ");
        const same = keys.map((k) => `s.${k} = c.${k}`).join(" AND ");
        stateRowsDeleted += await count(
          `WITH c AS (SELECT ${cols}, max(version) AS newest FROM ${table}
                      WHERE version >= $1::numeric AND version <= $2::numeric GROUP BY ${cols})
           DELETE FROM ${table} s USING c WHERE ${same} AND s.version < c.newest`,
          [prev, O],
        );
        // A deletion that is now the oldest row of its key hides nothing any more.
        stateRowsDeleted += await count(
          `DELETE FROM ${table} WHERE version >= $1::numeric AND version <= $2::numeric AND ${value} IS NULL`,
          [prev, O],
        );
      }
      await run("UPDATE ledger SET oldest_version = $1::numeric, oldest_block_height = $2::numeric WHERE id = 1", [
        O,
        dec(t.oldestBlockHeight),
      ]);
      return { transactionsDeleted, stateRowsDeleted, blocksDeleted };
    });
  }

  /** Runs `f` in one transaction on one connection; a broken connection is discarded. */
  private async transaction<T>(what: string, f: (c: PoolClient) => Promise<T>): Promise<T> {
    let c: PoolClient;
    try {
      c = await this.pool.connect();
    } catch (e) {
      throw storageError(e, what);
    }
    try {
      await c.query("BEGIN");
      const r = await f(c);
      await c.query("COMMIT");
      c.release();
      return r;
    } catch (e) {
      let broken = isUnavailableError(e) && !(e instanceof DatabaseError && e.code === "57014");
      if (!broken) await c.query("ROLLBACK").catch(() => (broken = true));
      c.release(broken ? (e as Error) : undefined);
      throw storageError(e, what);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}

/** The parameters of the `commit` statement for one block. */
function commitValues(w: BlockWrite): unknown[] {
  const b = w.block;
  const txns = w.transactions;
  // A key written twice at one version: the last write wins (as SQLite's INSERT OR REPLACE).
  // ON CONFLICT cannot touch one row twice in a statement, so keep only the last here.
  const modules = lastWrites(w.modules, (m) => [m.address, m.stateKey, m.version]);
  const items = lastWrites(w.tableItems, (t) => [t.handle, t.key, t.version]);
  const resources = lastWrites(w.resources, (r) => [r.address, r.type, r.version]);
  return [
    dec(b.height),
    dec(b.epoch),
    dec(b.timestampUsec),
    dec(b.firstVersion),
    dec(b.lastVersion),
    b.endInfo ? b.endInfo.blockGasLimitReached : null,
    b.endInfo ? b.endInfo.blockOutputLimitReached : null,
    txns.map((t) => dec(t.version)),
    txns.map((t) => TXN_KINDS.indexOf(t.kind)),
    txns.map((t) => t.hash),
    txns.map((t) => t.user?.sender ?? null),
    txns.map((t) => (t.user ? (t.user.replayProtector.type === "nonce" ? 0 : 1) : null)),
    txns.map((t) => (t.user ? dec(t.user.replayProtector.value) : null)),
    txns.map((t) => (t.user ? dec(t.user.gasUnitPrice) : null)),
    txns.map((t) => (t.user ? dec(t.user.gasUsed) : null)),
    txns.map((t) => (t.user ? t.user.success : null)),
    txns.map((t) => t.user?.contractAddress ?? null),
    modules.map((m) => m.address),
    modules.map((m) => m.stateKey),
    modules.map((m) => dec(m.version)),
    modules.map((m) => m.name),
    modules.map((m) => m.bytecode),
    modules.map((m) => (m.bytecode ? codeHash(m.bytecode) : null)),
    items.map((t) => t.handle),
    items.map((t) => t.key),
    items.map((t) => dec(t.version)),
    items.map((t) => t.value),
    resources.map((r) => r.address),
    resources.map((r) => r.type),
    resources.map((r) => dec(r.version)),
    resources.map((r) => r.json),
  ];
}

function commitError(e: unknown, writes: BlockWrite[]): Error {
  const err = storageError(e, "commitBlock");
  if (err instanceof StorageUnavailableError) return err;
  const first = writes[0]!.block;
  const last = writes[writes.length - 1]!.block;
  const what = writes.length === 1 ? `block ${first.height}` : `blocks ${first.height}..${last.height}`;
  return new Error(`cannot commit ${what} (versions ${first.firstVersion}..${last.lastVersion}): ${err.message}`, { cause: e });
}

/** Keeps the last write of each key (order otherwise kept). */
function lastWrites<T>(writes: T[], key: (w: T) => [Uint8Array, Uint8Array | string, bigint]): T[] {
  if (writes.length < 2) return writes;
  const last = new Map<string, number>();
  writes.forEach((w, i) => {
    const [a, b, v] = key(w);
    last.set(`${Buffer.from(a).toString("hex")}/${typeof b === "string" ? "s" + b : Buffer.from(b).toString("hex")}/${v}`, i);
  });
  if (last.size === writes.length) return writes;
  const keep = new Set(last.values());
  return writes.filter((_, i) => keep.has(i));
}

function toBlock(r: Row): BlockInfo {
  const gas = r.gas_limit_reached as boolean | null;
  const out = r.output_limit_reached as boolean | null;
  return {
    height: big(r.height),
    epoch: big(r.epoch),
    timestampUsec: big(r.timestamp_usec),
    firstVersion: big(r.first_version),
    lastVersion: big(r.last_version),
    endInfo: gas === null || out === null ? null : { blockGasLimitReached: gas, blockOutputLimitReached: out },
  };
}

function toSummary(r: Row): TransactionSummary {
  const value = big(r.replay_value);
  return {
    sender: r.sender as Buffer,
    version: big(r.version),
    hash: r.hash as Buffer,
    replayProtector: Number(r.replay_kind) === 0 ? { type: "nonce", value } : { type: "sequence_number", value },
  };
}

/** The ledger row as LedgerInfo. */
function ledgerInfo(r: Row): LedgerInfo {
  return {
    chainId: Number(r.chain_id),
    ledgerVersion: big(r.ledger_version),
    oldestVersion: big(r.oldest_version),
    timestampUsec: big(r.timestamp_usec),
    epoch: big(r.epoch),
    blockHeight: big(r.block_height),
    oldestBlockHeight: big(r.oldest_block_height),
  };
}

/** A snapshot read of a version: the ledger row's columns, then `value` (null: none). */
function versionSnapshot(r: Row): Snapshot<bigint | null> {
  return { info: ledgerInfo(r), value: r.value === null ? null : big(r.value) };
}
