/**
 * The SQL of the PostgreSQL store: the read statements and the block commit, named once
 * (`SQL`); node-postgres prepares each on a connection at its first use there (and again on a new
 * connection after a reconnect). Exported for EXPLAIN in benchmarks.
 */
import { ledgerColumnList, summaryColumns } from "../common/rows.js";
import { txnKindCode } from "../common/storedCodes.js";

/** The channel each block's commit notifies (`commitSignal.ts` listens on it). */
export const COMMIT_CHANNEL = "ledger_node_commits";

export const LEDGER_SELECT = `SELECT ${ledgerColumnList("l")}`;
export const LEDGER_FROM = "FROM ledger l WHERE l.id = 1 AND l.ledger_version IS NOT NULL";

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
export const ADDRESS_ID = (param: string): string => `(SELECT x.id FROM addresses x WHERE x.address = ${param})`;
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
export const TYPE_ID = (param: string): string => `(SELECT y.id FROM resource_types y WHERE y.name = ${param})`;

/**
 * CTEs `interned` / `interned_type`: the id of one address / resource type given in `param`, stored
 * first when it is new (one row either way; see `SQL.commit` for why DO UPDATE).
 */
export const INTERN_ADDRESS = (param: string): string =>
  `found AS (SELECT x.id FROM addresses x WHERE x.address = ${param}),
   added AS (INSERT INTO addresses (address) SELECT ${param} WHERE NOT EXISTS (SELECT 1 FROM found)
             ON CONFLICT (address) DO UPDATE SET address = excluded.address RETURNING id),
   interned AS (SELECT id FROM found UNION ALL SELECT id FROM added)`;
export const INTERN_TYPE = (param: string): string =>
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
 * The sender $1's id as `sender.id`, looked up once for the statement (NULL for an address never
 * stored); `SENT_BY_SENDER` then skips the sender's rows outright, by a one-time filter, as `SENDER_IS` does.
 */
const SENDER_ID = "LEFT JOIN LATERAL (SELECT x.id FROM addresses x WHERE x.address = $1) sender ON true";
const SENT_BY_SENDER = "t.sender_id = sender.id AND sender.id IS NOT NULL";

/** The history chunk holding `<alias>.version` as a lateral join `h` (first_version, body; nulls: none). */
const CHUNK_OF = (alias: string): string =>
  `LEFT JOIN LATERAL (SELECT c.first_version, c.body
                        FROM (SELECT h.first_version, h.last_version, h.body FROM transaction_history h
                              WHERE h.first_version <= ${alias}.version ORDER BY h.first_version DESC LIMIT 1) c
                        WHERE c.last_version >= ${alias}.version) h ON true`;

/**
 * A summaries page as one row: the ledger columns, the newest version of sender $1 in
 * `newestRange`, the page's first version and its summaries' JSON (`SUMMARY_JSON_COLUMNS`, at most
 * $3 in `pageRange`) joined by commas in version order, both NULL for an empty page. One row and
 * one text column for the driver to parse, not a row per summary (each with the ledger columns
 * again). The page is aggregated in its own lateral subquery (one aggregate over its rows, no sort
 * of the joined rows for a GROUP BY). `newestRange` null: the range is the page's own, read
 * backward, so the newest version is the page's last (a second index descent saved).
 */
const SUMMARIES_JSON_PAGE = (newestRange: string | null, pageRange: string, order: "ASC" | "DESC"): string =>
  `${LEDGER_SELECT}, ${newestRange === null ? "page.last" : "newest.version"} AS newest, page.first, page.json
   FROM ledger l
   ${SENDER_ID}
   ${
     newestRange === null
       ? ""
       : `LEFT JOIN LATERAL (SELECT t.version FROM transactions t WHERE ${SENT_BY_SENDER} AND ${newestRange}
                             ORDER BY t.version DESC LIMIT 1) newest ON true`
   }
   CROSS JOIN LATERAL (SELECT min(s.version) AS first, max(s.version) AS last, string_agg(s.json, ',' ORDER BY s.version) AS json
                       FROM (SELECT ${SUMMARY_JSON_COLUMNS} FROM transactions t WHERE ${SENT_BY_SENDER} AND ${pageRange}
                             ORDER BY t.version ${order} LIMIT $3) s) page
   WHERE l.id = 1 AND l.ledger_version IS NOT NULL`;

/**
 * A page of sender $1's sequence-number transactions (replay kind 1; nonce ones are not in it) at
 * or below the ledger version, `range` on the sequence number, at most `limit` read in `order`
 * (the index `transactions_by_sequence`, from the index alone): the ledger columns, then a row per
 * transaction ascending by sequence number (its version and sequence number, and the history
 * chunk holding its version: first version and body, nulls when none covers it), or one row of
 * nulls for an empty page. A chunk's body is sent once, with the first row it holds (the page's
 * rows are ascending by version too, so the others follow it): later rows of the same chunk carry
 * its first version only.
 */
const ACCOUNT_TRANSACTIONS = (range: string, order: "ASC" | "DESC", limit: string): string =>
  `${LEDGER_SELECT}, p.version, p.replay_value, p.first_version, p.body
   FROM ledger l
   ${SENDER_ID}
   LEFT JOIN LATERAL (
     SELECT s.version, s.replay_value, h.first_version,
            CASE WHEN h.first_version IS DISTINCT FROM lag(h.first_version) OVER (ORDER BY s.replay_value) THEN h.body END AS body
     FROM (SELECT t.version, t.replay_value FROM transactions t
           WHERE ${SENT_BY_SENDER} AND t.replay_kind = 1${range} AND t.version <= l.ledger_version
           ORDER BY t.replay_value ${order} LIMIT ${limit}) s
     ${CHUNK_OF("s")}) p ON true
   WHERE l.id = 1 AND l.ledger_version IS NOT NULL
   ORDER BY p.replay_value`;

/**
 * A page of the events of handle ($1 address, $2 creation number) at or below the ledger version,
 * `range` on the sequence number, at most `limit` read in `order` (the index `events_by_handle`,
 * from the index alone): the ledger columns, then a row per event ascending by sequence number
 * (its version, its index in the transaction's events, its sequence number, and the history chunk
 * holding its version as in `ACCOUNT_TRANSACTIONS`, a body sent once with the first row it holds),
 * or one row of nulls for an empty page.
 */
const HANDLE_EVENTS = (range: string, order: "ASC" | "DESC", limit: string): string =>
  `${LEDGER_SELECT}, p.version, p.event_index, p.sequence_number, p.first_version, p.body
   FROM ledger l
   ${SENDER_ID}
   LEFT JOIN LATERAL (
     SELECT s.version, s.event_index, s.sequence_number, h.first_version,
            CASE WHEN h.first_version IS DISTINCT FROM lag(h.first_version) OVER (ORDER BY s.sequence_number) THEN h.body END AS body
     FROM (SELECT e.version, e.event_index, e.sequence_number FROM events e
           WHERE e.account_id = sender.id AND sender.id IS NOT NULL AND e.creation_number = $2::numeric${range} AND e.version <= l.ledger_version
           ORDER BY e.sequence_number ${order} LIMIT ${limit}) s
     ${CHUNK_OF("s")}) p ON true
   WHERE l.id = 1 AND l.ledger_version IS NOT NULL
   ORDER BY p.sequence_number`;

/**
 * The read statements. Named once; node-postgres prepares each on a connection at its first use
 * there (and again on a new connection after a reconnect). Exported for EXPLAIN in benchmarks.
 */
export const SQL = {
  chainId: "SELECT chain_id FROM ledger WHERE id = 1",
  // A hot standby's replay lag (s): none while it has replayed all it received, else the age of
  // the newest transaction it replayed.
  replayLag: `SELECT CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
    ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END::float8 AS s`,
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
  // instead where the row has no ABI text, as migration 5 left rows it did not fill). No code for
  // the modules whose hash is in $6 (`ListedCode`: the caller holds their records). The page is a
  // lateral join on the one ledger row, so that row is read once (bench/results/archive.md).
  modulesPage: `${ACCOUNT_KEYS}
                ${LEDGER_SELECT}, changed.version AS changed, page.*
                FROM ledger l
                LEFT JOIN LATERAL (SELECT m.version FROM modules m WHERE m.address = $1
                                     AND m.version <= coalesce($3::numeric, l.ledger_version) ORDER BY m.version DESC LIMIT 1) changed ON true
                LEFT JOIN LATERAL (SELECT m.state_key, m.name, m.code_hash,
                                CASE WHEN $5::text = 'record' AND m.abi IS NOT NULL AND m.code_hash <> ALL($6::text[])
                                     THEN '{"bytecode":"0x' || encode(m.bytecode, 'hex') || '","abi":' || m.abi || '}' END AS record,
                                CASE WHEN ($5::text = 'bytecode' OR ($5::text = 'record' AND m.abi IS NULL)) AND m.code_hash <> ALL($6::text[])
                                     THEN m.bytecode END AS bytecode,
                                CASE WHEN $5::text = 'bytecode' AND m.code_hash <> ALL($6::text[]) THEN m.abi END AS abi
                         FROM account_keys
                         CROSS JOIN LATERAL (${NEWEST_MODULE_ROW("coalesce($3::numeric, l.ledger_version)", "n.state_key, n.name, n.code_hash, n.bytecode, n.abi")}) m
                         WHERE m.code_hash IS NOT NULL
                         LIMIT $4) page ON true
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
  summariesJsonBackward: SUMMARIES_JSON_PAGE(null, "t.version <= least(coalesce($2::numeric, l.ledger_version), l.ledger_version)", "DESC"),
  // The ledger row and a resource's value at the version, in one statement (one snapshot).
  resourceAt: `${LEDGER_SELECT},
                      (SELECT r.value FROM resources r WHERE r.address_id = ${ADDRESS_ID("$1")} AND r.type_id = ${TYPE_ID("$2")}
                         AND r.version <= coalesce($3::numeric, l.ledger_version) ORDER BY r.version DESC LIMIT 1) AS value
               ${LEDGER_FROM}`,
  // The ledger row with each resource type of account $1 (a skip-scan of the primary key: one seek
  // a type, however many versions it has) and its newest row at or below the version, deletions
  // included: one row per type, or one row of nulls for an account without resources.
  accountResources: `WITH RECURSIVE acct AS (SELECT x.id FROM addresses x WHERE x.address = $1),
                       types(id) AS (
                         (SELECT r.type_id FROM resources r WHERE r.address_id = (SELECT id FROM acct) ORDER BY r.type_id LIMIT 1)
                         UNION ALL
                         SELECT (SELECT r.type_id FROM resources r WHERE r.address_id = (SELECT id FROM acct) AND r.type_id > types.id
                                 ORDER BY r.type_id LIMIT 1)
                         FROM types WHERE types.id IS NOT NULL)
                     ${LEDGER_SELECT}, n.name, n.version, n.value
                     FROM ledger l
                     LEFT JOIN LATERAL (
                       SELECT y.name, newest.version, newest.value FROM types
                       JOIN resource_types y ON y.id = types.id
                       CROSS JOIN LATERAL (SELECT r.version, r.value FROM resources r
                                           WHERE r.address_id = (SELECT id FROM acct) AND r.type_id = types.id
                                             AND r.version <= coalesce($2::numeric, l.ledger_version)
                                           ORDER BY r.version DESC LIMIT 1) newest) n ON true
                     WHERE l.id = 1 AND l.ledger_version IS NOT NULL`,
  // The ledger row with a module's newest row at or below the version (NULL code hash: deleted).
  moduleAt: `${LEDGER_SELECT}, m.code_hash, m.bytecode, m.abi
             FROM ledger l
             LEFT JOIN LATERAL (SELECT n.code_hash, n.bytecode, n.abi FROM modules n
                                WHERE n.address = $1 AND n.state_key = $2 AND n.version <= coalesce($3::numeric, l.ledger_version)
                                ORDER BY n.version DESC LIMIT 1) m ON true
             WHERE l.id = 1 AND l.ledger_version IS NOT NULL`,
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
  // The ledger row with the history chunks holding versions $1 to $1 + $2 - 1 (at most the ledger
  // version), in order: from the newest starting at or below $1 (none: from $1) to the last
  // starting at or below the end. One row of nulls when none.
  transactionsFrom: `${LEDGER_SELECT}, h.first_version, h.body
                     FROM ledger l
                     LEFT JOIN LATERAL (SELECT h.first_version, h.body FROM transaction_history h
                                        WHERE $2::numeric > 0 AND $1::numeric <= l.ledger_version
                                          AND h.first_version >= coalesce((SELECT max(b.first_version) FROM transaction_history b
                                                                           WHERE b.first_version <= $1::numeric), $1::numeric)
                                          AND h.first_version <= least($1::numeric + $2::numeric - 1, l.ledger_version)
                                        ORDER BY h.first_version) h ON true
                     WHERE l.id = 1 AND l.ledger_version IS NOT NULL
                     ORDER BY h.first_version`,
  // The ledger row with the first version of hash $1 at or below the ledger version, and the
  // history chunk holding it (nulls: none).
  transactionByHash: `${LEDGER_SELECT}, t.version, h.first_version, h.body
                      FROM ledger l
                      LEFT JOIN LATERAL (SELECT t.version FROM transactions t WHERE substring(t.hash from 1 for 8) = substring($1::bytea from 1 for 8) AND t.hash = $1
                                           AND t.version <= l.ledger_version
                                         ORDER BY t.version LIMIT 1) t ON true
                      ${CHUNK_OF("t")}
                      WHERE l.id = 1 AND l.ledger_version IS NOT NULL`,
  // A page of sender $1's sequence-number transactions with the position (`ACCOUNT_TRANSACTIONS`):
  // from sequence number $2 on, at most $3; or the $2 newest.
  accountTransactionsFrom: ACCOUNT_TRANSACTIONS(" AND t.replay_value >= $2::numeric", "ASC", "$3"),
  accountTransactionsNewest: ACCOUNT_TRANSACTIONS("", "DESC", "$2"),
  // A page of a handle's events with the position (`HANDLE_EVENTS`): from sequence number $3 on,
  // at most $4; or the $3 newest.
  eventsFrom: HANDLE_EVENTS(" AND e.sequence_number >= $3::numeric", "ASC", "$4"),
  eventsNewest: HANDLE_EVENTS("", "DESC", "$3"),
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
    ), hist AS (
      INSERT INTO transaction_history (first_version, last_version, body)
      SELECT * FROM unnest($35::numeric[], $36::numeric[], $37::bytea[])
    ), evs AS (
      INSERT INTO events (version, event_index, account_id, creation_number, sequence_number)
      SELECT e.version, e.event_index, a.id, e.creation_number, e.sequence_number
      FROM unnest($38::numeric[], $39::integer[], $40::integer[], $41::numeric[], $42::numeric[])
           AS e(version, event_index, account_ord, creation_number, sequence_number)
      JOIN a_ids a ON a.ord = e.account_ord
    ), told AS (
      -- Delivered to the listening sessions when the transaction commits (commitSignal.ts): $43, the
      -- transaction's last version, the same for each of its blocks, so told once however many it holds.
      SELECT pg_notify('${COMMIT_CHANNEL}', $43::text)
    )
    UPDATE ledger SET ledger_version = $5::numeric, timestamp_usec = $3::numeric, epoch = $2::numeric,
                      block_height = $1::numeric,
                      oldest_version = coalesce(oldest_version, $4::numeric),
                      oldest_block_height = coalesce(oldest_block_height, $1::numeric)
    FROM told
    WHERE id = 1`,
} as const;

export type StatementName = keyof typeof SQL;
