/**
 * PostgreSQL backend: many stateless API processes over one database (node-postgres `Pool`).
 *
 * Same model as the SQLite store (`../sqlite/SqliteStore.ts`): versioned rows `(key…, version,
 * value)`, a read at V takes the newest row with version <= V, a NULL value is a deletion.
 *
 * - Every read method is ONE statement (a named prepared statement), so it sees one snapshot.
 *   A serving node answers the position reads at the newest version from a memo for a bounded
 *   lag (`memoLagMs`, `PositionMemo`) instead.
 * - `commitBlock` is ONE statement too (a chain of data-modifying CTEs): a block is visible all
 *   at once or not at all, in one round trip.
 * - `prune` runs in bounded steps, each its own transaction that leaves an exactly pruned ledger
 *   (pruners take turns under an advisory lock; see `prune`).
 * - u64 values are `numeric(20,0)` (domain `u64`): exact for the whole range, sent and read as
 *   decimal strings.
 * - Connection loss, timeouts and "server shutting down / starting up" throw
 *   `StorageUnavailableError` (503 at the API edge); the pool reconnects on the next call, so a
 *   server recovers by itself once the database is back. Nothing waits unboundedly: connecting,
 *   waiting for a pooled connection and every statement have time limits (`settings.ts`).
 *
 * The rules both backends share (row mappers, summaries window, prune plan) are in `../rules.ts`;
 * how the two schemas differ, and why, in `../README.md`.
 */
import pg from "pg";
import type { PoolClient, QueryResultRow } from "pg";
import { formatAddress, parseAddress } from "../../ledger/address.js";
import { codeHash } from "../../ledger/codeHash.js";
import { moduleAbiJson } from "../../move/abi.js";
import type { BlockInfo, LedgerInfo, ModuleEntry, TransactionSummary, UserTxnGas } from "../../ledger/types.js";
import type { BaseStateWrite, StateKeyRef } from "../followBase.js";
import type { BlockWrite, PruneResult, PruneTarget, StoredTxnFingerprint } from "../writer.js";
import type { Storage } from "../storage.js";
import type { Snapshot, ModulesPage, SummariesJsonPage, SummariesPage, SummaryQuery, WantsCode, WireReads } from "../reader.js";
import { StorageError, StorageUnavailableError, type StorageErrorKind } from "../errors.js";
import { packResourceValue, unpackResourceValue } from "../resourceValue.js";
import {
  NOTHING_PRUNED,
  summaryColumns,
  blockOf,
  checkChainId,
  fingerprintOf,
  LEDGER_COLUMNS,
  ledgerColumnList,
  ledgerInfoOf,
  moduleEntryOf,
  planPrune,
  STATE_TABLES,
  replayKindCode,
  snapshotValue,
  summaryOf,
  type ModuleCodeForm,
  storedAbiText,
  txnKindCode,
  userTxnGasOf,
  type BlockRow,
  type ColumnDecoder,
  type FingerprintRow,
  type LedgerTuple,
  type SnapshotTuple,
  type SummaryTuple,
  type UserTxnGasRow,
  memoKeys,
} from "../rules.js";
import { PositionMemo } from "./positionMemo.js";
import { MIGRATIONS } from "./schema.js";
import { parsePostgresUrl, redactUrl, type PostgresSettings, type PostgresStoreOptions } from "./settings.js";

export type { PostgresStoreOptions } from "./settings.js";

/** `PostgresStore.connect`'s options: the backend's settings, and the serving node's read memo. */
export interface PostgresConnectOptions extends PostgresStoreOptions {
  /**
   * How long the position reads may answer from the memo without asking (see `PositionMemo`):
   * 0 (the default) never; the node serves with 10 ms (`memoLagMs` in server.ts).
   */
  memoLagMs?: number;
}

const { Pool, DatabaseError } = pg;

/** Session advisory lock held while migrating ("ledgernd" in ASCII). */
const MIGRATION_LOCK = BigInt("0x6c65646765726e64").toString();
/** Transaction advisory lock held while pruning ("ledgerpr"). */
const PRUNE_LOCK = BigInt("0x6c65646765727072").toString();
/** A migration may run this long (ms): it may copy every table once. */
export const MIGRATION_STATEMENT_TIMEOUT_MS = 6 * 60 * 60_000;
/** A prune is maintenance, not a request: its statements may run this long (ms). */
export const PRUNE_STATEMENT_TIMEOUT_MS = 10 * 60_000;

/** Code hashes a step of `fillModuleAbi` reads and writes the ABI of. */
const ABI_FILL_BATCH = 256;

/**
 * What a migration computes in the program after its SQL, in the same transaction (the SQL cannot:
 * it needs the Move decoder), by the migration's number.
 */
const MIGRATION_FILLS: Partial<Record<number, (c: PoolClient) => Promise<void>>> = { 5: fillModuleAbi };

/**
 * Migration 5: the ABI text of every module row already stored, by code hash in batches (one
 * index walk over `modules_by_code` in hash order; every row of a hash gets the same text).
 */
async function fillModuleAbi(c: PoolClient): Promise<void> {
  let after = "";
  for (;;) {
    const batch = await c.query<{ code_hash: string; bytecode: Buffer }>({
      text: `SELECT DISTINCT ON (code_hash) code_hash, bytecode FROM modules
             WHERE code_hash > $1 AND bytecode IS NOT NULL ORDER BY code_hash LIMIT ${ABI_FILL_BATCH}`,
      values: [after],
      query_timeout: MIGRATION_STATEMENT_TIMEOUT_MS + 1_000,
    } as pg.QueryConfig);
    if (batch.rows.length === 0) return;
    await c.query({
      text: "UPDATE modules m SET abi = f.abi FROM unnest($1::text[], $2::text[]) AS f(code_hash, abi) WHERE m.code_hash = f.code_hash",
      values: [batch.rows.map((r) => r.code_hash), batch.rows.map((r) => moduleAbiJson(r.bytecode))],
      query_timeout: MIGRATION_STATEMENT_TIMEOUT_MS + 1_000,
    } as pg.QueryConfig);
    after = batch.rows.at(-1)!.code_hash;
  }
}

/** u64 columns (`numeric`) travel as decimal strings both ways. */
const u64Param = (v: bigint): string => v.toString();
const u64FromColumn = (v: string): bigint => BigInt(v);

/** Columns as node-postgres returns them: `numeric` a decimal string, `boolean` a boolean. */
const PG_COLUMNS: ColumnDecoder<string, boolean> = {
  u64: u64FromColumn,
  timestamp: u64FromColumn,
  flag: (v) => v,
};

const LEDGER_SELECT = `SELECT ${ledgerColumnList("l")}`;
const LEDGER_FROM = "FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL";

/**
 * The account $1's state keys from $2 by skip-scan (one index seek each); pulled lazily, so a
 * LIMIT downstream stops the walk.
 */
const ACCOUNT_KEYS = `WITH RECURSIVE account_keys(state_key) AS (
    (SELECT k.state_key FROM modules k WHERE k.address = $1 AND k.state_key >= $2 ORDER BY k.state_key LIMIT 1)
    UNION ALL
    SELECT (SELECT k.state_key FROM modules k WHERE k.address = $1 AND k.state_key > account_keys.state_key
            ORDER BY k.state_key LIMIT 1)
    FROM account_keys WHERE account_keys.state_key IS NOT NULL
  )`;

/** The newest row of module `account_keys.state_key` of $1 at or below `bound` (one seek). */
const NEWEST_MODULE_ROW = (bound: string, columns = "n.state_key, n.name, n.code_hash"): string =>
  `SELECT ${columns} FROM modules n
   WHERE n.address = $1 AND n.state_key = account_keys.state_key AND n.version <= ${bound}
   ORDER BY n.version DESC LIMIT 1`;

/** The id of the address given as bytes in `param` (NULL when it was never stored: matches no row). */
const ADDRESS_ID = (param: string): string => `(SELECT x.id FROM addresses x WHERE x.address = ${param})`;
/**
 * Rows of `alias` sent by the address in `param`. The planner cannot know the id before the
 * statement runs, and on a ledger of few senders it walks the primary key backward filtering by
 * sender: for an address never stored that walk would cross the whole table, so it is skipped
 * outright (a one-time filter) when the address has no id.
 */
const SENDER_IS = (param: string, alias = "t"): string => `${alias}.sender_id = ${ADDRESS_ID(param)} AND ${ADDRESS_ID(param)} IS NOT NULL`;
/** A summary's columns (see `summaryColumns`): the hash as hex text. */
const SUMMARY_COLUMNS = summaryColumns((column) => `encode(${column}, 'hex')`);
/** The id of the resource type named by `param` (NULL when it was never stored). */
const TYPE_ID = (param: string): string => `(SELECT y.id FROM resource_types y WHERE y.name = ${param})`;

/**
 * CTEs `interned` / `interned_type`: the id of one address / resource type given in `param`, stored
 * first when it is new (one row either way; see `commit` for why DO UPDATE).
 */
const INTERN_ADDRESS = (param: string): string =>
  `found AS (SELECT x.id FROM addresses x WHERE x.address = ${param}),
   added AS (INSERT INTO addresses (address) SELECT ${param} WHERE NOT EXISTS (SELECT 1 FROM found)
             ON CONFLICT (address) DO UPDATE SET address = excluded.address RETURNING id),
   interned AS (SELECT id FROM found UNION ALL SELECT id FROM added)`;
const INTERN_TYPE = (param: string): string =>
  `found_type AS (SELECT y.id FROM resource_types y WHERE y.name = ${param}),
   added_type AS (INSERT INTO resource_types (name) SELECT ${param} WHERE NOT EXISTS (SELECT 1 FROM found_type)
                  ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id),
   interned_type AS (SELECT id FROM found_type UNION ALL SELECT id FROM added_type)`;

/**
 * What a summaries page reads: the ledger row `l`, the newest version of sender $1 in `newestRange`
 * (`newest`), and at most $3 of its summaries in `pageRange` as `columns` (`s`, `order` from the bound).
 */
const SUMMARIES_FROM = (newestRange: string, pageRange: string, order: "ASC" | "DESC", columns: string): string =>
  `FROM ledger l
   LEFT JOIN LATERAL (SELECT t.version FROM transactions t WHERE ${SENDER_IS("$1")} AND ${newestRange}
                      ORDER BY t.version DESC LIMIT 1) newest ON true
   LEFT JOIN LATERAL (SELECT ${columns} FROM transactions t WHERE ${SENDER_IS("$1")} AND ${pageRange}
                      ORDER BY t.version ${order} LIMIT $3) s ON true
   WHERE l.id = 1 AND l.ledger_version IS NOT NULL`;
/** A summaries page statement (`SUMMARIES_FROM`): the ledger columns, the newest version, then a row per summary, ascending. */
const SUMMARIES_PAGE = (newestRange: string, pageRange: string, order: "ASC" | "DESC"): string =>
  `${LEDGER_SELECT}, newest.version AS newest, s.* ${SUMMARIES_FROM(newestRange, pageRange, order, SUMMARY_COLUMNS)}
   ORDER BY s.version ASC`;
/**
 * A summary row's version and its JSON text as the API writes it (`SummariesJsonPage.json`), the
 * formatted sender in $4.
 */
const SUMMARY_JSON_COLUMNS = `t.version,
  '{"sender":"' || $4::text || '","version":"' || t.version || '","transaction_hash":"0x' || encode(t.hash, 'hex') ||
  CASE t.replay_kind WHEN 0 THEN '","replay_protector":{"type":"nonce","nonce":"'
       ELSE '","replay_protector":{"type":"sequence_number","sequence_number":"' END || t.replay_value || '"}}' AS json`;

/**
 * A summaries page as one row (`SUMMARIES_FROM`): the ledger columns, the newest version, the
 * page's first version and its summaries' JSON (`SUMMARY_JSON_COLUMNS`) joined by commas in version
 * order, both NULL for an empty page. One row and one text column for the driver to parse, not a
 * row per summary (each with the ledger columns again).
 */
const SUMMARIES_JSON_PAGE = (newestRange: string, pageRange: string, order: "ASC" | "DESC"): string =>
  `${LEDGER_SELECT}, newest.version AS newest, min(s.version) AS first, string_agg(s.json, ',' ORDER BY s.version) AS json
   ${SUMMARIES_FROM(newestRange, pageRange, order, SUMMARY_JSON_COLUMNS)}
   GROUP BY l.id, newest.version`;

/**
 * The read statements. Named once; node-postgres prepares each on a connection at its first use
 * there (and again on a new connection after a reconnect). Exported for EXPLAIN in benchmarks.
 */
export const SQL = {
  chainId: "SELECT chain_id FROM ledger WHERE id = 1",
  initChain: "INSERT INTO ledger (id, chain_id) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
  ledger: `${LEDGER_SELECT} ${LEDGER_FROM}`,
  // The account's state keys from $2 by skip-scan (one index seek each), then each key's newest
  // row at or below $3 (one seek each): the cost follows the modules listed, not their history.
  // The recursive walk is pulled lazily, so LIMIT stops it.
  modules: `${ACCOUNT_KEYS}
            SELECT m.state_key, m.name, m.code_hash FROM account_keys
            CROSS JOIN LATERAL (${NEWEST_MODULE_ROW("$3::numeric")}) m
            WHERE m.code_hash IS NOT NULL
            LIMIT $4`,
  // The same page with the position and the account's newest module change, in one statement.
  // With each module its code in the form $5 names (NULL: none; `ModuleCodeForm`), read from the
  // row the page reads anyway: the "record" is the JSON `ModuleRecords.record` builds (bytecode
  // instead where the row has no ABI text, as migration 5 left rows it did not fill).
  modulesPage: `${ACCOUNT_KEYS},
                page AS (SELECT m.state_key, m.name, m.code_hash,
                                CASE WHEN $5::text = 'record' AND m.abi IS NOT NULL
                                     THEN '{"bytecode":"0x' || encode(m.bytecode, 'hex') || '","abi":' || m.abi || '}' END AS record,
                                CASE WHEN $5::text = 'bytecode' OR ($5::text = 'record' AND m.abi IS NULL) THEN m.bytecode END AS bytecode,
                                CASE WHEN $5::text = 'bytecode' THEN m.abi END AS abi
                         FROM ledger l CROSS JOIN account_keys
                         CROSS JOIN LATERAL (${NEWEST_MODULE_ROW("coalesce($3::numeric, l.ledger_version)", "n.state_key, n.name, n.code_hash, n.bytecode, n.abi")}) m
                         WHERE l.id = 1 AND m.code_hash IS NOT NULL
                         LIMIT $4)
                ${LEDGER_SELECT}, changed.version AS changed, page.*
                FROM ledger l
                LEFT JOIN LATERAL (SELECT m.version FROM modules m WHERE m.address = $1
                                     AND m.version <= coalesce($3::numeric, l.ledger_version) ORDER BY m.version DESC LIMIT 1) changed ON true
                LEFT JOIN page ON true
                WHERE l.id = 1 AND l.ledger_version IS NOT NULL
                ORDER BY page.state_key`,
  moduleCode: "SELECT bytecode FROM modules WHERE code_hash = $1 AND bytecode IS NOT NULL LIMIT 1",
  // The ledger row and the item in one statement, so one snapshot and one round trip.
  tableItemAt: `${LEDGER_SELECT},
                       (SELECT t.value FROM table_items t WHERE t.handle_id = ${ADDRESS_ID("$1")} AND t.key = $2
                          AND t.version <= coalesce($3::numeric, l.ledger_version) ORDER BY t.version DESC LIMIT 1) AS value
                ${LEDGER_FROM}`,
  modulesVersionAt: `${LEDGER_SELECT},
                            (SELECT m.version FROM modules m WHERE m.address = $1
                               AND m.version <= coalesce($2::numeric, l.ledger_version) ORDER BY m.version DESC LIMIT 1) AS value
                     ${LEDGER_FROM}`,
  summariesVersionAt: `${LEDGER_SELECT},
                              (SELECT t.version FROM transactions t WHERE ${SENDER_IS("$1")}
                                 AND t.version <= least(coalesce($2::numeric, l.ledger_version), l.ledger_version)
                               ORDER BY t.version DESC LIMIT 1) AS value
                       ${LEDGER_FROM}`,
  // A summaries page with the position and the newest version, in one statement (one snapshot):
  // one row per summary, or one row of nulls after the newest version for an empty page. The
  // newest version is a lateral join on the one ledger row, so it is sought once, not per row.
  summariesPageForward: SUMMARIES_PAGE("t.version <= l.ledger_version", "t.version >= $2::numeric AND t.version <= l.ledger_version", "ASC"),
  summariesPageBackward: SUMMARIES_PAGE(
    "t.version <= least(coalesce($2::numeric, l.ledger_version), l.ledger_version)",
    "t.version <= least(coalesce($2::numeric, l.ledger_version), l.ledger_version)",
    "DESC",
  ),
  summariesJsonForward: SUMMARIES_JSON_PAGE("t.version <= l.ledger_version", "t.version >= $2::numeric AND t.version <= l.ledger_version", "ASC"),
  summariesJsonBackward: SUMMARIES_JSON_PAGE(
    "t.version <= least(coalesce($2::numeric, l.ledger_version), l.ledger_version)",
    "t.version <= least(coalesce($2::numeric, l.ledger_version), l.ledger_version)",
    "DESC",
  ),
  resource: `SELECT value FROM resources WHERE address_id = ${ADDRESS_ID("$1")} AND type_id = ${TYPE_ID("$2")}
               AND version <= $3::numeric
             ORDER BY version DESC LIMIT 1`,
  summariesForward: `SELECT ${SUMMARY_COLUMNS} FROM transactions
                     WHERE ${SENDER_IS("$1", "transactions")} AND version >= $2::numeric AND version <= $3::numeric
                     ORDER BY version ASC LIMIT $4`,
  summariesBackward: `SELECT * FROM (SELECT ${SUMMARY_COLUMNS} FROM transactions
                                     WHERE ${SENDER_IS("$1", "transactions")} AND version <= $2::numeric ORDER BY version DESC LIMIT $3) s
                      ORDER BY version ASC`,
  blockByVersion: `SELECT * FROM (SELECT * FROM blocks WHERE first_version <= $1::numeric
                                  ORDER BY first_version DESC LIMIT 1) b
                   WHERE last_version >= $1::numeric`,
  blockByHeight: "SELECT * FROM blocks WHERE height = $1::numeric",
  blockAtTime: "SELECT * FROM blocks WHERE timestamp_usec >= $1::numeric ORDER BY height ASC LIMIT 1",
  // The contract as the importer gives it: 64 lowercase hex digits (gas.ts parses it as an address).
  userGas: `SELECT t.version, t.gas_unit_price, t.gas_used, encode(c.address, 'hex') AS contract FROM transactions t
            LEFT JOIN addresses c ON c.id = t.contract_id
            WHERE t.version >= $1::numeric AND t.version <= $2::numeric AND t.sender_id IS NOT NULL AND t.kind = ${txnKindCode("user_transaction")} ORDER BY t.version`,
  fingerprints: `SELECT version, kind, hash FROM transactions
                 WHERE version >= $1::numeric AND version <= $2::numeric ORDER BY version`,
  // The whole block in one statement: data-modifying CTEs run atomically, with one snapshot.
  // Addresses ($8: every address and table handle the block names, once each) and resource types
  // ($9) are interned here too: the ids of those stored already are looked up, the others
  // inserted (in the order given, so two ledgers fed the same blocks number them alike) and
  // their new ids returned; rows refer to them by their 1-based position in $8 / $9. No CTE sees
  // another's inserts, so the ids come from the two sides of a UNION ALL. Should another
  // transaction insert the same address meanwhile, ON CONFLICT DO UPDATE still returns its id
  // (a no-op update of the new row); DO NOTHING would return nothing, and consume no id either way
  // as only addresses not found are offered.
  commit: `
    WITH blk AS (
      INSERT INTO blocks (height, epoch, timestamp_usec, first_version, last_version,
                          gas_limit_reached, output_limit_reached)
      VALUES ($1::numeric, $2::numeric, $3::numeric, $4::numeric, $5::numeric, $6::boolean, $7::boolean)
    ), a_in AS (
      SELECT a.address, a.ord FROM unnest($8::bytea[]) WITH ORDINALITY AS a(address, ord)
    ), a_old AS (
      SELECT a_in.ord, x.id FROM a_in JOIN addresses x ON x.address = a_in.address
    ), a_new AS (
      INSERT INTO addresses (address)
      SELECT a_in.address FROM a_in WHERE NOT EXISTS (SELECT 1 FROM addresses x WHERE x.address = a_in.address) ORDER BY a_in.ord
      ON CONFLICT (address) DO UPDATE SET address = excluded.address
      RETURNING id, address
    ), a_ids AS (
      SELECT ord, id FROM a_old UNION ALL SELECT a_in.ord, a_new.id FROM a_new JOIN a_in ON a_in.address = a_new.address
    ), t_in AS (
      SELECT y.name, y.ord FROM unnest($9::text[]) WITH ORDINALITY AS y(name, ord)
    ), t_old AS (
      SELECT t_in.ord, y.id FROM t_in JOIN resource_types y ON y.name = t_in.name
    ), t_new AS (
      INSERT INTO resource_types (name)
      SELECT t_in.name FROM t_in WHERE NOT EXISTS (SELECT 1 FROM resource_types y WHERE y.name = t_in.name) ORDER BY t_in.ord
      ON CONFLICT (name) DO UPDATE SET name = excluded.name
      RETURNING id, name
    ), t_ids AS (
      SELECT ord, id FROM t_old UNION ALL SELECT t_in.ord, t_new.id FROM t_new JOIN t_in ON t_in.name = t_new.name
    ), txn AS (
      INSERT INTO transactions (version, sender_id, contract_id, kind, replay_kind, success, hash, replay_value,
                                gas_unit_price, gas_used)
      SELECT t.version, s.id, c.id, t.kind, t.replay_kind, t.success, t.hash, t.replay_value, t.gas_unit_price, t.gas_used
      FROM unnest($10::numeric[], $11::integer[], $12::integer[], $13::smallint[], $14::smallint[], $15::boolean[],
                  $16::bytea[], $17::numeric[], $18::numeric[], $19::numeric[])
           AS t(version, sender_ord, contract_ord, kind, replay_kind, success, hash, replay_value, gas_unit_price, gas_used)
      LEFT JOIN a_ids s ON s.ord = t.sender_ord
      LEFT JOIN a_ids c ON c.ord = t.contract_ord
    ), mods AS (
      INSERT INTO modules (address, state_key, version, name, bytecode, code_hash, abi)
      SELECT * FROM unnest($20::bytea[], $21::bytea[], $22::numeric[], $23::text[], $24::bytea[], $25::text[], $34::text[])
      ON CONFLICT (address, state_key, version)
      DO UPDATE SET name = excluded.name, bytecode = excluded.bytecode, code_hash = excluded.code_hash, abi = excluded.abi
    ), items AS (
      INSERT INTO table_items (handle_id, key, version, value)
      SELECT h.id, i.key, i.version, i.value
      FROM unnest($26::integer[], $27::bytea[], $28::numeric[], $29::bytea[]) AS i(handle_ord, key, version, value)
      JOIN a_ids h ON h.ord = i.handle_ord
      ON CONFLICT (handle_id, key, version) DO UPDATE SET value = excluded.value
    ), res AS (
      INSERT INTO resources (address_id, type_id, version, value)
      SELECT a.id, y.id, r.version, r.value
      FROM unnest($30::integer[], $31::integer[], $32::numeric[], $33::bytea[]) AS r(address_ord, type_ord, version, value)
      JOIN a_ids a ON a.ord = r.address_ord
      JOIN t_ids y ON y.ord = r.type_ord
      ON CONFLICT (address_id, type_id, version) DO UPDATE SET value = excluded.value
    )
    UPDATE ledger SET ledger_version = $5::numeric, timestamp_usec = $3::numeric, epoch = $2::numeric,
                      block_height = $1::numeric,
                      oldest_version = coalesce(oldest_version, $4::numeric),
                      oldest_block_height = coalesce(oldest_block_height, $1::numeric)
    WHERE id = 1`,
} as const;

type StatementName = keyof typeof SQL;

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

export class PostgresStore implements Storage {
  readonly kind = "postgres" as const;
  /** Every read is a round trip: no reads in the calling turn. */
  readonly immediate = null;
  private closed = false;
  private readonly memo: PositionMemo;

  private constructor(
    private readonly pool: pg.Pool,
    readonly settings: PostgresSettings,
    /** The URL without its password. */
    readonly url: string,
    memoLagMs: number,
  ) {
    this.memo = new PositionMemo(memoLagMs);
  }

  /**
   * Connects and brings the schema up to date (migrations under an advisory lock, so processes
   * starting together do not race). Settings: URL query parameters or `opts` (see `settings.ts`).
   */
  static async connect(url: string, opts: PostgresConnectOptions = {}): Promise<PostgresStore> {
    const { memoLagMs = 0, ...backend } = opts;
    const { connectionString, settings } = parsePostgresUrl(url, backend);
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
    const store = new PostgresStore(pool, settings, redactUrl(url), Math.max(0, memoLagMs));
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
      // Another process may be migrating (a copy of every table, for migration 4): wait for it as
      // long as a migration may run, then back to this connection's own statement timeout.
      await c.query(`SET statement_timeout = ${MIGRATION_STATEMENT_TIMEOUT_MS}`);
      await c.query({ text: "SELECT pg_advisory_lock($1::bigint)", values: [MIGRATION_LOCK], query_timeout: MIGRATION_STATEMENT_TIMEOUT_MS + 1_000 } as pg.QueryConfig);
      await c.query("RESET statement_timeout");
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
            // A migration copies tables (migration 4: the whole ledger, about a minute per million
            // versions on a small machine), far longer than a request's statement timeout.
            await c.query(`SET LOCAL statement_timeout = ${MIGRATION_STATEMENT_TIMEOUT_MS}`);
            await c.query({ text: sql, query_timeout: MIGRATION_STATEMENT_TIMEOUT_MS + 1_000 } as pg.QueryConfig);
            await MIGRATION_FILLS[version]?.(c);
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

  /** Runs one named statement on any pooled connection; rows by column name. */
  private async query<R extends QueryResultRow>(name: StatementName, values: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>({ name: `ln_${name}`, text: SQL[name], values })).rows;
    } catch (e) {
      throw storageError(e, name);
    }
  }

  /** `query`, rows as arrays in select-list order: the typed tuples rules.ts maps. */
  private async queryTuples<R extends unknown[]>(name: StatementName, values: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>({ name: `ln_${name}`, text: SQL[name], values, rowMode: "array" })).rows;
    } catch (e) {
      throw storageError(e, name);
    }
  }

  async getChainId(): Promise<number | null> {
    const rows = await this.query<{ chain_id: number }>("chainId", []);
    return rows[0] ? Number(rows[0].chain_id) : null;
  }

  async initChain(chainId: number): Promise<void> {
    try {
      await this.query("initChain", [chainId]);
    } finally {
      this.memo.clear();
    }
    checkChainId(await this.getChainId(), chainId);
  }

  async getLedgerInfo(fresh = false): Promise<LedgerInfo | null> {
    const held = fresh ? null : this.memo.ledger();
    if (held) return held;
    const asked = this.memo.asking();
    const row = (await this.queryTuples<LedgerTuple<string>>("ledger", []))[0];
    const info = row ? ledgerInfoOf(row, PG_COLUMNS) : null;
    if (info) this.memo.saw(info, asked);
    return info;
  }

  /**
   * A snapshot read through the memo: at the newest version (`key` given), the memoized answer
   * while it is trusted; any read's position renews or moves the memo's (`PositionMemo.saw`).
   */
  private async memoized<T>(key: string | null, read: () => Promise<Snapshot<T> | null>, valueBytes?: (v: T) => number): Promise<Snapshot<T> | null> {
    if (key !== null) {
      const held = this.memo.get<T>(key);
      if (held) return held;
    }
    const asked = this.memo.asking();
    const answer = await read();
    if (answer && this.memo.saw(answer.info, asked) && key !== null) this.memo.remember(key, answer, valueBytes?.(answer.value));
    return answer;
  }

  async readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Promise<Snapshot<Uint8Array | null> | null> {
    return this.memoized(
      memoKeys.tableItem(handle, key, version),
      async () => {
        const row = (await this.queryTuples<SnapshotTuple<string, Buffer>>("tableItemAt", [handle, key, optionalVersion(version)]))[0];
        return row ? { info: ledgerInfoOf(row, PG_COLUMNS), value: snapshotValue(row, (v) => v) } : null;
      },
      (v) => v?.length ?? 0,
    );
  }

  async readModules(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number, code?: WantsCode): Promise<Snapshot<ModulesPage> | null> {
    return this.memoized(null, () => this.modulesPage(address, version, start, limit, code, "bytecode"));
  }

  /** The API's JSON written by the page statements (`SQL.summariesJson…`, a module's record). */
  readonly wire: WireReads = {
    readSummaries: (q) => this.memoized(null, () => this.summariesJsonPage(q)),
    readModules: (address, version, start, limit, code) => this.memoized(null, () => this.modulesPage(address, version, start, limit, code, "record")),
  };

  /**
   * The page in one statement, with the code of every listed module when `code` is given (in
   * `form`), kept for the rows `code` says yes to. The code comes from the module rows the page
   * reads anyway, where a second statement for it cost a round trip: 0.70 of the 2.63 a request of
   * bench:scale's random modules row at 1M made before (bench/RESULTS.md). Rows whose record the
   * caller holds still carry theirs over the wire: about 1.3 KB a module, for one round trip less.
   */
  private async modulesPage(
    address: Uint8Array,
    version: bigint | undefined,
    start: Uint8Array | null,
    limit: number,
    code: WantsCode | undefined,
    form: ModuleCodeForm,
  ): Promise<Snapshot<ModulesPage> | null> {
    const values = [address, start ?? Buffer.alloc(0), optionalVersion(version), limit, code ? form : null];
    const rows = await this.queryTuples<ModulesPageTuple>("modulesPage", values);
    const first = rows[0];
    if (!first) return null;
    const modules: ModuleEntry[] = [];
    for (const r of rows) {
      const [stateKey, name, codeHash, record, bytecode, abi] = r.slice(LEDGER_COLUMNS.length + 1) as ModuleColumns;
      if (stateKey === null) continue;
      const m = moduleEntryOf({ state_key: stateKey, name, code_hash: codeHash });
      if (code?.(m.codeHash)) {
        if (record !== null) m.record = record;
        if (bytecode !== null) m.bytecode = bytecode;
        if (abi !== null) m.abi = abi;
      }
      modules.push(m);
    }
    const changed = first[LEDGER_COLUMNS.length];
    return { info: ledgerInfoOf(first, PG_COLUMNS), value: { changed: changed === null ? null : u64FromColumn(changed), rows: modules } };
  }

  async getModuleCode(codeHash: string): Promise<Uint8Array | null> {
    const rows = await this.query<{ bytecode: Buffer }>("moduleCode", [codeHash]);
    return rows[0]?.bytecode ?? null;
  }

  async readModulesVersion(address: Uint8Array, version: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    return this.memoized(memoKeys.modulesVersion(address, version), async () => {
      const row = (await this.queryTuples<SnapshotTuple<string, string>>("modulesVersionAt", [address, optionalVersion(version)]))[0];
      return row ? versionSnapshot(row) : null;
    });
  }

  async readSummariesVersion(sender: Uint8Array, end: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    return this.memoized(memoKeys.summariesVersion(sender, end), async () => {
      const row = (await this.queryTuples<SnapshotTuple<string, string>>("summariesVersionAt", [sender, optionalVersion(end)]))[0];
      return row ? versionSnapshot(row) : null;
    });
  }

  async getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null> {
    const value = (await this.query<{ value: Buffer | null }>("resource", [address, type, u64Param(version)]))[0]?.value ?? null;
    return value === null ? null : unpackResourceValue(address, value);
  }

  async readSummaries(q: SummaryQuery): Promise<Snapshot<SummariesPage> | null> {
    return this.memoized(null, () => this.summariesPage(q));
  }

  private async summariesPage(q: SummaryQuery): Promise<Snapshot<SummariesPage> | null> {
    // The window rules run on the snapshot's own ledger version, which the statement reads itself:
    // `summaryRange` with an unbounded ledger version gives the same direction and bounds.
    if (q.limit <= 0) {
      const row = (await this.queryTuples<SnapshotTuple<string, string>>("summariesVersionAt", [q.sender, optionalVersion(q.start === undefined ? q.end : undefined)]))[0];
      return row ? { info: ledgerInfoOf(row, PG_COLUMNS), value: { newest: snapshotValue(row, u64FromColumn), rows: [] } } : null;
    }
    const rows =
      q.start !== undefined
        ? await this.queryTuples<SummariesPageTuple>("summariesPageForward", [q.sender, u64Param(q.start), q.limit])
        : await this.queryTuples<SummariesPageTuple>("summariesPageBackward", [q.sender, optionalVersion(q.end), q.limit]);
    const first = rows[0];
    if (!first) return null;
    const sender = Buffer.from(q.sender);
    const summaries: TransactionSummary[] = [];
    for (const r of rows) {
      const summary = r.slice(LEDGER_COLUMNS.length + 1) as SummaryTuple<string> | [null, null, null, null];
      if (summary[0] !== null) summaries.push(summaryOf(sender, summary, PG_COLUMNS));
    }
    const newest = first[LEDGER_COLUMNS.length];
    return { info: ledgerInfoOf(first, PG_COLUMNS), value: { newest: newest === null ? null : u64FromColumn(newest), rows: summaries } };
  }

  private async summariesJsonPage(q: SummaryQuery): Promise<Snapshot<SummariesJsonPage> | null> {
    if (q.limit <= 0) {
      const empty = await this.summariesPage(q);
      return empty && { info: empty.info, value: { newest: empty.value.newest, first: null, json: "[]" } };
    }
    const sender = formatAddress(q.sender);
    const rows =
      q.start !== undefined
        ? await this.queryTuples<SummariesJsonTuple>("summariesJsonForward", [q.sender, u64Param(q.start), q.limit, sender])
        : await this.queryTuples<SummariesJsonTuple>("summariesJsonBackward", [q.sender, optionalVersion(q.end), q.limit, sender]);
    const row = rows[0];
    if (!row) return null;
    const [newest, first, json] = row.slice(LEDGER_COLUMNS.length) as [string | null, string | null, string | null];
    return {
      info: ledgerInfoOf(row, PG_COLUMNS),
      value: { newest: newest === null ? null : u64FromColumn(newest), first: first === null ? null : u64FromColumn(first), json: `[${json ?? ""}]` },
    };
  }

  async getBlockByVersion(version: bigint): Promise<BlockInfo | null> {
    return this.block("blockByVersion", version);
  }

  async getBlockByHeight(height: bigint): Promise<BlockInfo | null> {
    return this.block("blockByHeight", height);
  }

  async getFirstBlockAtOrAfter(timestampUsec: bigint): Promise<BlockInfo | null> {
    return this.block("blockAtTime", timestampUsec);
  }

  private async block(name: "blockByVersion" | "blockByHeight" | "blockAtTime", param: bigint): Promise<BlockInfo | null> {
    const row = (await this.query<BlockRow<string, boolean>>(name, [u64Param(param)]))[0];
    return row ? blockOf(row, PG_COLUMNS) : null;
  }

  async getUserTxnGas(first: bigint, last: bigint): Promise<UserTxnGas[]> {
    const rows = await this.query<UserTxnGasRow<string>>("userGas", [u64Param(first), u64Param(last)]);
    return rows.map((row) => userTxnGasOf(row, PG_COLUMNS));
  }

  async getFingerprints(from: bigint, to: bigint): Promise<StoredTxnFingerprint[]> {
    const rows = await this.query<FingerprintRow<string>>("fingerprints", [u64Param(from), u64Param(to)]);
    return rows.map((row) => fingerprintOf(row, PG_COLUMNS));
  }

  /**
   * By PostgreSQL's SQLSTATE: XX001 and XX002 are a damaged table or index. An unreachable or
   * refusing server is a `StorageUnavailableError` already (`storageError`).
   */
  errorKind(e: unknown): StorageErrorKind | null {
    if (e instanceof StorageError) return e.kind;
    return e instanceof DatabaseError && (e.code === "XX001" || e.code === "XX002") ? "corrupt" : null;
  }

  /** A database server's files are its own: nothing for this process to check. */
  fileProblem(): null {
    return null;
  }

  followLag(): null {
    return null;
  }

  async commitBlock(w: BlockWrite): Promise<void> {
    try {
      await this.pool.query({ name: "ln_commit", text: SQL.commit, values: commitValues(w) });
    } catch (e) {
      throw commitError(e, [w]);
    } finally {
      this.memo.clear();
    }
  }

  /** Several consecutive blocks in one transaction (bulk import): all visible at once or none. */
  async commitBlocks(writes: BlockWrite[]): Promise<void> {
    if (writes.length === 0) return;
    try {
      await this.transaction("commitBlocks", async (c) => {
        // The next block's parameters (resource values packed: about 20 µs a version) are made
        // while the server runs the current block's statement, not between the two.
        let values = commitValues(writes[0]!);
        for (let i = 0; i < writes.length; i++) {
          const sent = c.query({ name: "ln_commit", text: SQL.commit, values });
          try {
            if (i + 1 < writes.length) values = commitValues(writes[i + 1]!);
          } catch (e) {
            await sent.catch(() => undefined); // settled before the rollback, never left unhandled
            throw e;
          }
          await sent;
        }
      });
    } catch (e) {
      throw commitError(e, writes);
    } finally {
      this.memo.clear();
    }
  }

  async getBaseRecord(what: string): Promise<bigint | null> {
    try {
      const r = await this.pool.query<{ version: string }>("SELECT version FROM follow_base WHERE what = $1", [what]);
      return r.rows[0] ? u64FromColumn(r.rows[0].version) : null;
    } catch (e) {
      throw storageError(e, "getBaseRecord");
    }
  }

  async writeBaseState(w: BaseStateWrite): Promise<void> {
    await this.transaction("writeBaseState", async (c) => {
      const recorded = await c.query("INSERT INTO follow_base (what, version) VALUES ($1, $2::numeric) ON CONFLICT (what) DO NOTHING RETURNING what", [
        w.what,
        u64Param(w.fetchedAt),
      ]);
      if (recorded.rowCount === 0) return;
      for (const m of w.modules) {
        await c.query(
          `INSERT INTO modules (address, state_key, version, name, bytecode, code_hash, abi) VALUES ($1, $2, $3::numeric, $4, $5, $6, $7)
           ON CONFLICT (address, state_key, version) DO NOTHING`,
          [m.address, m.stateKey, u64Param(m.version), m.name, m.bytecode, m.bytecode ? codeHash(m.bytecode) : null, storedAbiText(m)],
        );
      }
      for (const t of w.tableItems) {
        await c.query(
          `WITH ${INTERN_ADDRESS("$1::bytea")} INSERT INTO table_items (handle_id, key, version, value)
           SELECT id, $2, $3::numeric, $4 FROM interned ON CONFLICT DO NOTHING`,
          [t.handle, t.key, u64Param(t.version), t.value],
        );
      }
      for (const r of w.resources) {
        await c.query(
          `WITH ${INTERN_ADDRESS("$1::bytea")}, ${INTERN_TYPE("$2::text")}
           INSERT INTO resources (address_id, type_id, version, value)
           SELECT interned.id, interned_type.id, $3::numeric, $4 FROM interned, interned_type ON CONFLICT DO NOTHING`,
          [r.address, r.type, u64Param(r.version), r.json === null ? null : packResourceValue(r.address, r.json)],
        );
      }
    });
  }

  async newestStateVersion(key: StateKeyRef, upTo: bigint): Promise<bigint | null> {
    try {
      const r =
        key.kind === "table_item"
          ? await this.pool.query<{ v: string | null }>(`SELECT max(version) AS v FROM table_items WHERE handle_id = ${ADDRESS_ID("$1")} AND key = $2 AND version <= $3::numeric`, [
              key.handle,
              key.key,
              u64Param(upTo),
            ])
          : await this.pool.query<{ v: string | null }>(
              `SELECT max(version) AS v FROM resources WHERE address_id = ${ADDRESS_ID("$1")} AND type_id = ${TYPE_ID("$2")} AND version <= $3::numeric`,
              [
              key.address,
              key.type,
              u64Param(upTo),
            ]);
      const v = r.rows[0]?.v;
      return v === null || v === undefined ? null : u64FromColumn(v);
    } catch (e) {
      throw storageError(e, "newestStateVersion");
    }
  }

  /**
   * In bounded steps, each its own transaction, so that no transaction is large and every commit
   * leaves an exactly pruned ledger (as the SQLite store, `pruneBatch` there):
   * 1. the oldest version moves up a block boundary at a time, about `pruneStepVersions` past the
   *    previous step, deleting the transactions and blocks below it in the same commit;
   * 2. then the state tables are walked by version (their `version` indexes), from where the walk
   *    stopped before (`prune_progress.state_from`) up to the oldest version, a version range of
   *    about `pruneStepRows` rows per table a step: of the keys written in the range, the rows at
   *    or below its top that a newer row at or below the oldest version supersedes go, and so do
   *    the deletions in the range that are then the oldest row of their key. No read at or above
   *    the oldest version sees those rows, and the step records how far the walk got in the same
   *    commit, so a prune stopped at any point (crash, timeout, lost connection) leaves a correct
   *    ledger and the next one resumes the walk where it stopped.
   * Pruners take turns: the whole prune holds a session advisory lock on its one connection, and
   * a prune that finds another running returns at once, having done nothing. Readers are never
   * blocked (MVCC). Each step updates the ledger row, which every block commit also updates, in
   * its last statement, so a commit waits at most for the end of one step.
   */
  async prune(target: PruneTarget): Promise<PruneResult> {
    let c: PoolClient;
    try {
      c = await this.pool.connect();
    } catch (e) {
      throw storageError(e, "prune");
    }
    let broken: Error | undefined;
    // A connection lost between two statements (server restart, a terminated backend) says so on
    // the client; the pool listens only while it is idle, and an unheard 'error' would end the process.
    const lost = (e: Error) => {
      broken = e;
    };
    c.on("error", lost);
    try {
      const locked = await pruneQuery(c, "SELECT pg_try_advisory_lock($1::bigint) AS ok", [PRUNE_LOCK]);
      if (!locked.rows[0]?.ok) return { ...NOTHING_PRUNED }; // another process is pruning right now
      try {
        const total = { ...NOTHING_PRUNED };
        for (;;) {
          const step = await this.pruneStep(c, () => this.moveOldest(c, target));
          total.transactionsDeleted += step.transactionsDeleted;
          total.blocksDeleted += step.blocksDeleted;
          if (step.done) break;
        }
        for (;;) {
          const step = await this.pruneStep(c, () => this.walkState(c));
          total.stateRowsDeleted += step.deleted;
          if (step.done) break;
        }
        return total;
      } finally {
        await c.query("SELECT pg_advisory_unlock($1::bigint)", [PRUNE_LOCK]).catch((e: Error) => (broken = e));
      }
    } catch (e) {
      broken ??= isUnavailableError(e) && !(e instanceof DatabaseError && e.code === "57014") ? (e as Error) : undefined;
      throw storageError(e, "prune");
    } finally {
      c.off("error", lost);
      c.release(broken);
      this.memo.clear();
    }
  }

  /** One prune step in a transaction of its own on the prune's connection. */
  private async pruneStep<T>(c: PoolClient, f: () => Promise<T>): Promise<T> {
    await c.query("BEGIN");
    try {
      await c.query(`SET LOCAL statement_timeout = ${PRUNE_STATEMENT_TIMEOUT_MS}`);
      const r = await f();
      await c.query("COMMIT");
      return r;
    } catch (e) {
      await c.query("ROLLBACK").catch(() => undefined);
      throw e;
    }
  }

  /** Step 1 of `prune`: the oldest version up one bounded step toward `target`. */
  private async moveOldest(c: PoolClient, target: PruneTarget): Promise<{ transactionsDeleted: number; blocksDeleted: number; done: boolean }> {
    const row = (await pruneQuery(c, "SELECT oldest_version FROM ledger WHERE id = 1 AND ledger_version IS NOT NULL")).rows[0];
    const plan = planPrune(row ? u64FromColumn(row.oldest_version as string) : null, target);
    if (!plan) return { transactionsDeleted: 0, blocksDeleted: 0, done: true };
    const next = (
      await pruneQuery(c, "SELECT height, first_version FROM blocks WHERE first_version >= $1::numeric ORDER BY first_version LIMIT 1", [
        u64Param(plan.previousOldestVersion + BigInt(this.settings.pruneStepVersions)),
      ])
    ).rows[0] as { height: string; first_version: string } | undefined;
    const step =
      next && u64FromColumn(next.first_version) < plan.oldestVersion
        ? { oldestVersion: u64FromColumn(next.first_version), oldestBlockHeight: u64FromColumn(next.height) }
        : plan;
    // The state walk starts where the ledger started when no prune ever ran (rows below the first
    // block's version are a follower's base state: at most one per key).
    await pruneQuery(c, "INSERT INTO prune_progress (id, state_from) VALUES (1, $1::numeric) ON CONFLICT (id) DO NOTHING", [
      u64Param(plan.previousOldestVersion),
    ]);
    const transactionsDeleted = (await pruneQuery(c, "DELETE FROM transactions WHERE version < $1::numeric", [u64Param(step.oldestVersion)])).rowCount ?? 0;
    const blocksDeleted = (await pruneQuery(c, "DELETE FROM blocks WHERE height < $1::numeric", [u64Param(step.oldestBlockHeight)])).rowCount ?? 0;
    await pruneQuery(c, "UPDATE ledger SET oldest_version = $1::numeric, oldest_block_height = $2::numeric WHERE id = 1", [
      u64Param(step.oldestVersion),
      u64Param(step.oldestBlockHeight),
    ]);
    return { transactionsDeleted, blocksDeleted, done: step === plan };
  }

  /**
   * Step 2 of `prune`: the state rows of one version range [state_from, top], top chosen so that
   * no table has much more than `pruneStepRows` rows in it (a version holding more is taken
   * whole), and at most the oldest version. Invariant kept: every key has at most one row below
   * `state_from`, and it is the key's newest at or below the oldest version when the walk passed it.
   */
  private async walkState(c: PoolClient): Promise<{ deleted: number; done: boolean }> {
    const row = (
      await pruneQuery(c, "SELECT l.oldest_version, p.state_from FROM ledger l JOIN prune_progress p ON p.id = 1 WHERE l.id = 1 AND l.oldest_version IS NOT NULL")
    ).rows[0] as { oldest_version: string; state_from: string } | undefined;
    if (!row) return { deleted: 0, done: true };
    const oldest = u64FromColumn(row.oldest_version);
    const from = u64FromColumn(row.state_from);
    if (from > oldest) return { deleted: 0, done: true };
    let top = oldest;
    for (const { table } of STATE_TABLES) {
      const far = (
        await pruneQuery(c, `SELECT version FROM ${table} WHERE version >= $1::numeric AND version <= $2::numeric ORDER BY version OFFSET $3 LIMIT 1`, [
          u64Param(from),
          u64Param(oldest),
          this.settings.pruneStepRows,
        ])
      ).rows[0] as { version: string } | undefined;
      if (far) {
        const v = u64FromColumn(far.version);
        const end = v > from ? v - 1n : from;
        if (end < top) top = end;
      }
    }
    let deleted = 0;
    for (const { table, keys, value } of STATE_TABLES) {
      const cols = keys.join(", ");
      const sameKey = (a: string, b: string) => keys.map((k) => `${a}.${k} = ${b}.${k}`).join(" AND ");
      // Per key written in the range (one seek each, materialized so that it is not re-run per row):
      // its newest row at or below the oldest version and its one row below the range, if any.
      // Superseded: the key's rows in the range older than that newest one, and the row below.
      const superseded = await pruneQuery(
        c,
        `WITH k AS MATERIALIZED (
           SELECT w.*, (SELECT max(n.version) FROM ${table} n WHERE ${sameKey("n", "w")} AND n.version <= $3::numeric) AS newest,
                       (SELECT max(b.version) FROM ${table} b WHERE ${sameKey("b", "w")} AND b.version < $1::numeric) AS below
           FROM (SELECT DISTINCT ${cols} FROM ${table} WHERE version >= $1::numeric AND version <= $2::numeric) w
         ), in_range AS (
           DELETE FROM ${table} s USING k
           WHERE ${sameKey("s", "k")} AND s.version >= $1::numeric AND s.version <= $2::numeric AND s.version < k.newest
           RETURNING 1
         ), below AS (
           DELETE FROM ${table} s USING k
           WHERE ${sameKey("s", "k")} AND s.version = k.below AND k.below < k.newest
           RETURNING 1
         )
         SELECT (SELECT count(*) FROM in_range) + (SELECT count(*) FROM below) AS n`,
        [u64Param(from), u64Param(top), u64Param(oldest)],
      );
      deleted += Number(superseded.rows[0]?.n ?? 0);
      deleted +=
        (
          await pruneQuery(c, `DELETE FROM ${table} WHERE version >= $1::numeric AND version <= $2::numeric AND ${value} IS NULL`, [
            u64Param(from),
            u64Param(top),
          ])
        ).rowCount ?? 0;
    }
    await pruneQuery(c, "UPDATE prune_progress SET state_from = $1::numeric WHERE id = 1", [u64Param(top + 1n)]);
    return { deleted, done: top >= oldest };
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

/**
 * Numbers the distinct addresses (or type names) a block names, from 1 in order of first use: the
 * positions the `commit` statement's rows refer to.
 */
class Interned<K> {
  readonly values: K[] = [];
  private readonly index = new Map<string, number>();
  constructor(private readonly keyOf: (v: K) => string) {}
  ord(v: K): number {
    const k = this.keyOf(v);
    let i = this.index.get(k);
    if (i === undefined) {
      i = this.values.push(v);
      this.index.set(k, i);
    }
    return i;
  }
}

const hexOf = (a: Uint8Array): string => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString("hex");

/**
 * A user transaction's contract address as 32 bytes. The importer gives 64 hex digits; any form
 * `parseAddress` takes is accepted, and it is read back as 64 lowercase hex digits.
 */
function contractBytes(text: string): Uint8Array {
  const bytes = parseAddress(text);
  if (!bytes) throw new Error(`contract address ${JSON.stringify(text.slice(0, 100))} is not an address`);
  return bytes;
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
  const addresses = new Interned<Uint8Array>(hexOf);
  const types = new Interned<string>((t) => t);
  const senderOrds = txns.map((t) => (t.user ? addresses.ord(t.user.sender) : null));
  const contractOrds = txns.map((t) => (t.user?.contractAddress != null ? addresses.ord(contractBytes(t.user.contractAddress)) : null));
  const handleOrds = items.map((t) => addresses.ord(t.handle));
  const ownerOrds = resources.map((r) => addresses.ord(r.address));
  const typeOrds = resources.map((r) => types.ord(r.type));
  return [
    u64Param(b.height),
    u64Param(b.epoch),
    u64Param(b.timestampUsec),
    u64Param(b.firstVersion),
    u64Param(b.lastVersion),
    b.endInfo ? b.endInfo.blockGasLimitReached : null,
    b.endInfo ? b.endInfo.blockOutputLimitReached : null,
    addresses.values,
    types.values,
    txns.map((t) => u64Param(t.version)),
    senderOrds,
    contractOrds,
    txns.map((t) => txnKindCode(t.kind)),
    txns.map((t) => (t.user ? replayKindCode(t.user.replayProtector) : null)),
    txns.map((t) => (t.user ? t.user.success : null)),
    txns.map((t) => t.hash),
    txns.map((t) => (t.user ? u64Param(t.user.replayProtector.value) : null)),
    txns.map((t) => (t.user ? u64Param(t.user.gasUnitPrice) : null)),
    txns.map((t) => (t.user ? u64Param(t.user.gasUsed) : null)),
    modules.map((m) => m.address),
    modules.map((m) => m.stateKey),
    modules.map((m) => u64Param(m.version)),
    modules.map((m) => m.name),
    modules.map((m) => m.bytecode),
    modules.map((m) => (m.bytecode ? codeHash(m.bytecode) : null)),
    handleOrds,
    items.map((t) => t.key),
    items.map((t) => u64Param(t.version)),
    items.map((t) => t.value),
    ownerOrds,
    typeOrds,
    resources.map((r) => u64Param(r.version)),
    resources.map((r) => (r.json === null ? null : packResourceValue(r.address, r.json))),
    modules.map((m) => storedAbiText(m)),
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

/** A statement of a prune: it may run up to PRUNE_STATEMENT_TIMEOUT_MS (the step's SET LOCAL). */
function pruneQuery(c: PoolClient, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  return c.query({ text, values, query_timeout: PRUNE_STATEMENT_TIMEOUT_MS + 1_000 } as pg.QueryConfig);
}

/** A row of a summaries page statement: the ledger columns, the newest version, a summary (all null for none). */
type SummariesPageTuple = [...LedgerTuple<string>, newest: string | null, ...(SummaryTuple<string> | [null, null, null, null])];

/** A row of the summaries JSON statements: the ledger columns, the newest version, a summary's version and JSON (both null for none). */
type SummariesJsonTuple = [...LedgerTuple<string>, newest: string | null, first: string | null, json: string | null];

/** `readModules`' `code` for a page read with the position: every row's code. */

/** A module of the module page statement: state key, name, code hash, then its code (`modulesPage`). */
type ModuleColumns = [Buffer, string, string, record: string | null, bytecode: Buffer | null, abi: string | null] | [null, null, null, null, null, null];

/** A row of the module page statement: the ledger columns, the changed version, a module (all null for none). */
type ModulesPageTuple = [...LedgerTuple<string>, changed: string | null, ...ModuleColumns];

/** A snapshot read whose value is a version (null: none at or below the bound). */
function versionSnapshot(row: SnapshotTuple<string, string>): Snapshot<bigint | null> {
  return { info: ledgerInfoOf(row, PG_COLUMNS), value: snapshotValue(row, u64FromColumn) };
}

/** A version bound of a snapshot read: undefined reads at the snapshot's own ledger version. */
function optionalVersion(v: bigint | undefined): string | null {
  return v === undefined ? null : u64Param(v);
}
