/**
 * The SQL of the SQLite store: every statement it runs more than once, prepared once per
 * connection (`prepareStatements`), and the follower's, prepared at first use.
 */
import type { Database as Db, Statement } from "better-sqlite3";
import {
  ledgerColumnList,
  summaryColumns,
  type BlockRow,
  type FingerprintRow,
  type LedgerTuple,
  type SnapshotTuple,
  type SummaryTuple,
  type UserTxnGasRow,
} from "../common/rows.js";
import { txnKindCode } from "../common/storedCodes.js";
import { I64_MAX } from "./columns.js";

export const LEDGER_SELECT = `SELECT ${ledgerColumnList("l")}`;
export const LEDGER_FROM = "FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL";

export type Version = bigint | null;
/**
 * A state key of a module page: the key, its module's name, and its code at the version (null:
 * none or deleted) as the code hash's 64 hex digits followed by the code's id (`codeOf`).
 */
export type ModuleTuple = [Buffer, string, string | null];

/** The id of an address (or table handle) bound as a parameter, as a scalar subquery (NULL: none stored). */
export const ADDRESS_ID = "SELECT id FROM addresses WHERE address = ?";
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
export const TYPE_ID = "SELECT id FROM resource_types WHERE name = ?";
/**
 * A bound LIMIT or OFFSET. A bare `?` there makes SQLite (3.53, STAT4 build) read the bound value
 * while planning, so every new binding expires the statement and the next step parses and plans it
 * again. `+ 0` makes it an expression the planner does not read.
 */
export const BOUND = "? + 0";
const SUMMARY_COLUMNS = summaryColumns((column) => `lower(hex(${column}))`);

/** Every statement the store runs more than once, prepared once. */
export function prepareStatements(db: Db) {
  /** Reads by named column, every INTEGER a bigint. */
  const rows = <P extends unknown[], R>(sql: string): Statement<P, R> => db.prepare<P, R>(sql).safeIntegers(true);
  /**
   * Reads as row arrays, for the hot paths (no row object to build): the result type is the
   * typed tuple one `common/rows.ts` mapper reads.
   */
  const tuples = <P extends unknown[], R extends unknown[]>(sql: string): Statement<P, R> =>
    db.prepare<P, R>(sql).safeIntegers(true).raw(true);
  const writes = <P extends unknown[]>(sql: string): Statement<P> => db.prepare<P>(sql);
  return {
    chainId: rows<[], { chain_id: bigint }>("SELECT chain_id FROM ledger WHERE id = 1"),
    dataVersion: db.prepare<[], number>("PRAGMA data_version").pluck(),
    initChain: writes<[number]>("INSERT INTO ledger (id, chain_id) VALUES (1, ?) ON CONFLICT (id) DO NOTHING"),
    ledger: tuples<[], LedgerTuple<bigint>>(`${LEDGER_SELECT} ${LEDGER_FROM}`),
    // An account's module page (`SqliteReads.moduleList`): its state keys from a bound, in order,
    // each with the code of its newest row at or below the version (NULL: none there, or deleted),
    // as many as asked in one statement. The cost follows the modules listed, not how many versions
    // they have.
    //
    // The newest row of a key is one seek: a scalar subquery that returns its code hash and id as
    // one text (the 64 hex digits, then the id), not max(version) and then the row by its whole key
    // (a second seek).
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
    // A listed module's JSON record as the API sends it (`ModuleEntry.record`, text), or, for a row
    // without ABI text, its bytecode (a blob): written here, it costs less than the two columns and
    // the record built from them. One column, plucked: no row array is built for it.
    codeRecord: db.prepare<[number], string | Buffer>(
      `SELECT CASE WHEN abi IS NOT NULL THEN '{"bytecode":"0x' || lower(hex(bytecode)) || '","abi":' || abi || '}' ELSE bytecode END
       FROM code WHERE id = ?`,
    ).pluck(),
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
    // The ledger row and a resource's value at the version, in one statement (one snapshot).
    resourceAt: tuples<[Uint8Array, string, Version], SnapshotTuple<bigint, Buffer | string>>(
      `${LEDGER_SELECT},
              (SELECT r.value FROM resources r WHERE r.address_id = (${ADDRESS_ID}) AND r.type_id = (${TYPE_ID})
                 AND r.version <= coalesce(?, l.ledger_version) ORDER BY r.version DESC LIMIT 1)
       ${LEDGER_FROM}`,
    ),
    // Each resource type of an account (a skip-scan of the primary key: one seek a type, however
    // many versions it has) with its newest row at or below the version, deletions included.
    accountResources: tuples<[Uint8Array, bigint], [string, bigint, Buffer | string | null]>(
      `WITH RECURSIVE acct(id) AS (${ADDRESS_ID}),
         types(id) AS (
           SELECT (SELECT min(r.type_id) FROM resources r WHERE r.address_id = (SELECT id FROM acct))
           UNION ALL
           SELECT (SELECT min(r.type_id) FROM resources r WHERE r.address_id = (SELECT id FROM acct) AND r.type_id > types.id)
           FROM types WHERE types.id IS NOT NULL)
       SELECT y.name, n.version, n.value
       FROM types JOIN resource_types y ON y.id = types.id
       JOIN resources n ON n.address_id = (SELECT id FROM acct) AND n.type_id = types.id
         AND n.version = (SELECT max(m.version) FROM resources m
                          WHERE m.address_id = (SELECT id FROM acct) AND m.type_id = types.id AND m.version <= ?)`,
    ),
    // A module's newest row at or below the version (NULL code hash: deleted) and its code's id.
    moduleAt: tuples<[Uint8Array, Uint8Array, bigint], [string | null, number | null]>(
      `SELECT code_hash, code_id FROM modules WHERE address = ? AND state_key = ? AND version <= ?
       ORDER BY version DESC LIMIT 1`,
    ),
    // A page is one contiguous range of the sender's rows, each the summary itself: joining
    // transactions by version for hash and replay protector instead (a rowid seek a row, one page of
    // transactions each) cost a page more than twice the CPU, for 37 bytes a user transaction saved.
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
    insertHistory: writes<[bigint, bigint, Uint8Array]>("INSERT INTO transaction_history (first_version, last_version, body) VALUES (?, ?, ?)"),
    // The chunks holding versions [start, end], in order: from the one holding `start` (the newest
    // starting at or below it) to the last starting at or below `end`.
    historyFrom: tuples<[bigint, bigint], [bigint, Buffer]>(
      `SELECT first_version, body FROM transaction_history
       WHERE first_version >= coalesce((SELECT max(first_version) FROM transaction_history WHERE first_version <= ?), 0)
         AND first_version <= ? ORDER BY first_version`,
    ),
    // An account's sequence-number transactions from a sequence number on, and its newest ones
    // (the partial index account_sequence: replay kind 1 is a sequence number).
    sequencedFrom: tuples<[Uint8Array, bigint, number], [bigint, bigint]>(
      `SELECT version, replay_value FROM account_transactions
       WHERE sender_id = (${ADDRESS_ID}) AND replay_kind = 1 AND replay_value >= ? ORDER BY replay_value LIMIT ${BOUND}`,
    ),
    sequencedNewest: tuples<[Uint8Array, number], [bigint, bigint]>(
      `SELECT version, replay_value FROM account_transactions
       WHERE sender_id = (${ADDRESS_ID}) AND replay_kind = 1 ORDER BY replay_value DESC LIMIT ${BOUND}`,
    ),
    // A handle's events from a sequence number on, and its newest ones (events_by_handle).
    eventsFrom: tuples<[Uint8Array, bigint, bigint, number], [bigint, bigint, bigint]>(
      `SELECT version, event_index, sequence_number FROM events
       WHERE account_id = (${ADDRESS_ID}) AND creation_number = ? AND sequence_number >= ? ORDER BY sequence_number LIMIT ${BOUND}`,
    ),
    eventsNewest: tuples<[Uint8Array, bigint, number], [bigint, bigint, bigint]>(
      `SELECT version, event_index, sequence_number FROM events
       WHERE account_id = (${ADDRESS_ID}) AND creation_number = ? ORDER BY sequence_number DESC LIMIT ${BOUND}`,
    ),
    // The chunk holding a version: the newest starting at or below it.
    historyAt: tuples<[bigint], [bigint, Buffer]>(
      "SELECT first_version, body FROM transaction_history WHERE first_version <= ? ORDER BY first_version DESC LIMIT 1",
    ),
    // By the index on the hash's first 8 bytes (transactions_by_hash), then the whole hash.
    versionByHash: db
      .prepare<[Uint8Array, Uint8Array], bigint>("SELECT version FROM transactions WHERE substr(hash, 1, 8) = substr(?, 1, 8) AND hash = ? ORDER BY version LIMIT 1")
      .safeIntegers(true)
      .pluck(),
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
    insertEvent: writes<[bigint, number, number, bigint, bigint]>(
      "INSERT INTO events (version, event_index, account_id, creation_number, sequence_number) VALUES (?, ?, ?, ?, ?)",
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
    pruneEvents: writes<[bigint]>("DELETE FROM events WHERE version < ?"),
    // A chunk is within one block, and blocks are pruned whole: a chunk below the oldest version ends below it.
    pruneHistory: writes<[bigint]>("DELETE FROM transaction_history WHERE first_version < ?"),
    pruneBlocks: writes<[bigint]>("DELETE FROM blocks WHERE height < ?"),
    /** The id of the code row N rows on from an id (where the prune's next code step starts). */
    codeIdAfterRows: rows<[bigint, number], { id: bigint }>(`SELECT id FROM code WHERE id >= ? ORDER BY id LIMIT 1 OFFSET ${BOUND}`),
    /** Code no module refers to, with an id in a range (both ends included). */
    pruneCode: writes<[bigint, bigint]>(
      "DELETE FROM code WHERE id >= ? AND id <= ? AND code_hash NOT IN (SELECT code_hash FROM modules WHERE code_hash IS NOT NULL)",
    ),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;

/** What a follower reads and writes besides blocks (`Storage.writeBaseState`). */
export function prepareFollowStatements(db: Db) {
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


export type FollowStatements = ReturnType<typeof prepareFollowStatements>;
