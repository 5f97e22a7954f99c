/**
 * Versioned migrations of the PostgreSQL schema, applied in order by `PostgresStore.connect`
 * under an advisory lock (`schema_version` records each one applied). Append; never edit a
 * released entry.
 *
 * Same tables and meaning as the SQLite schema (`../sqlite/schema.ts`); where the two differ and
 * why (u64 as `numeric`, version indexes for pruning, "C" collation): `../README.md`.
 */
import { PARTITION_VERSIONS_SETTING } from "./partitions.js";

/**
 * SQL that gives `table` (partitioned by version) a partition for each of `transactions`'s, with the
 * same bounds, so that a table added later covers the versions already committed.
 */
function partitionsLikeTransactions(table: string): string {
  return `  DO $$
  DECLARE
    span numeric := (SELECT versions FROM transaction_partitions);
    n numeric;
  BEGIN
    FOR n IN SELECT substring(c.relname from '^transactions_([0-9]+)$')::numeric FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             WHERE i.inhparent = 'transactions'::regclass AND c.relname ~ '^transactions_[0-9]+$' LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF ${table} FOR VALUES FROM (%s) TO (%s)', '${table}_' || n, n * span, (n + 1) * span);
    END LOOP;
  END $$;`;
}

export const MIGRATIONS: readonly string[] = [
  `
  CREATE DOMAIN u64 AS numeric(20, 0) CHECK (VALUE >= 0 AND VALUE <= 18446744073709551615);
  CREATE TABLE ledger (
    id smallint PRIMARY KEY CHECK (id = 1),
    chain_id integer NOT NULL,
    ledger_version u64,
    timestamp_usec u64,
    epoch u64,
    block_height u64,
    oldest_version u64,
    oldest_block_height u64
  );
  CREATE TABLE blocks (
    height u64 PRIMARY KEY,
    epoch u64 NOT NULL,
    timestamp_usec u64 NOT NULL,
    first_version u64 NOT NULL UNIQUE,
    last_version u64 NOT NULL,
    gas_limit_reached boolean,
    output_limit_reached boolean
  );
  CREATE INDEX blocks_by_time ON blocks (timestamp_usec);
  CREATE TABLE transactions (
    version u64 PRIMARY KEY,
    kind smallint NOT NULL,
    hash bytea NOT NULL,
    sender bytea,
    replay_kind smallint,
    replay_value u64,
    gas_unit_price u64,
    gas_used u64,
    success boolean,
    contract text COLLATE "C"
  );
  CREATE INDEX transactions_by_sender ON transactions (sender, version) WHERE sender IS NOT NULL;
  CREATE TABLE modules (
    address bytea NOT NULL,
    state_key bytea NOT NULL,
    version u64 NOT NULL,
    name text COLLATE "C" NOT NULL,
    bytecode bytea,
    code_hash text,
    PRIMARY KEY (address, state_key, version)
  );
  CREATE INDEX modules_by_version ON modules (version);
  -- Bytecode by content hash: pages list hashes; the API reads code only on an ABI-cache miss.
  CREATE INDEX modules_by_code ON modules (code_hash) WHERE code_hash IS NOT NULL;
  CREATE TABLE table_items (
    handle bytea NOT NULL,
    key bytea NOT NULL,
    version u64 NOT NULL,
    value bytea,
    PRIMARY KEY (handle, key, version)
  );
  CREATE INDEX table_items_by_version ON table_items (version);
  CREATE TABLE resources (
    address bytea NOT NULL,
    type text COLLATE "C" NOT NULL,
    version u64 NOT NULL,
    value text,
    PRIMARY KEY (address, type, version)
  );
  CREATE INDEX resources_by_version ON resources (version);
  `,
  `
  -- The newest module write of an account at or below a version, in one seek (the API's page
  -- cache key for module pages).
  CREATE INDEX modules_by_address_version ON modules (address, version);
  `,
  `
  -- What a follower that started at a chain's head fetched from its upstream (issue 16), and the
  -- upstream version it read it at; the fetched rows themselves live in the state tables.
  CREATE TABLE follow_base (
    what text COLLATE "C" PRIMARY KEY,
    version u64 NOT NULL
  );
  `,
  `
  -- Smaller storage (issue 17 item 5), the same logical design as the SQLite schema: every 32-byte
  -- account address and table handle (aptos-core's TableHandle is an AccountAddress) and every
  -- resource type is stored once and referred to by an integer id; resource values are the
  -- stored form of resourceValue.ts (bytea). The old tables are copied whole into the new ones in
  -- this one transaction, so a database is either all old or all new.
  CREATE TABLE addresses (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    address bytea NOT NULL UNIQUE CHECK (length(address) = 32)
  );
  CREATE TABLE resource_types (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text COLLATE "C" NOT NULL UNIQUE
  );
  INSERT INTO addresses (address)
  SELECT a FROM (
    SELECT sender AS a, min(version) AS first FROM transactions WHERE sender IS NOT NULL GROUP BY sender
    UNION ALL
    SELECT decode(lpad(regexp_replace(lower(contract), '^0x', ''), 64, '0'), 'hex'), min(version)
    FROM transactions WHERE contract IS NOT NULL GROUP BY contract
    UNION ALL
    SELECT handle, min(version) FROM table_items GROUP BY handle
    UNION ALL
    SELECT address, min(version) FROM resources GROUP BY address
  ) u GROUP BY a ORDER BY min(first), a;
  INSERT INTO resource_types (name)
  SELECT type FROM resources GROUP BY type ORDER BY min(version), type;

  ALTER TABLE transactions RENAME TO transactions_v3;
  ALTER INDEX transactions_by_sender RENAME TO transactions_v3_by_sender;
  ALTER INDEX transactions_pkey RENAME TO transactions_v3_pkey;
  -- Fixed-width columns first: no alignment padding between them.
  CREATE TABLE transactions (
    version u64 PRIMARY KEY,
    sender_id integer,
    contract_id integer,
    kind smallint NOT NULL,
    replay_kind smallint,
    success boolean,
    hash bytea NOT NULL,
    replay_value u64,
    gas_unit_price u64,
    gas_used u64
  );
  INSERT INTO transactions (version, sender_id, contract_id, kind, replay_kind, success, hash, replay_value, gas_unit_price, gas_used)
  SELECT t.version, s.id, c.id, t.kind, t.replay_kind, t.success, t.hash, t.replay_value, t.gas_unit_price, t.gas_used
  FROM transactions_v3 t
  LEFT JOIN addresses s ON s.address = t.sender
  LEFT JOIN addresses c ON c.address = decode(lpad(regexp_replace(lower(t.contract), '^0x', ''), 64, '0'), 'hex')
  ORDER BY t.version;
  DROP TABLE transactions_v3;
  CREATE INDEX transactions_by_sender ON transactions (sender_id, version) WHERE sender_id IS NOT NULL;

  ALTER TABLE table_items RENAME TO table_items_v3;
  ALTER INDEX table_items_pkey RENAME TO table_items_v3_pkey;
  ALTER INDEX table_items_by_version RENAME TO table_items_v3_by_version;
  CREATE TABLE table_items (
    handle_id integer NOT NULL,
    key bytea NOT NULL,
    version u64 NOT NULL,
    value bytea,
    PRIMARY KEY (handle_id, key, version)
  );
  INSERT INTO table_items (handle_id, key, version, value)
  SELECT h.id, t.key, t.version, t.value FROM table_items_v3 t JOIN addresses h ON h.address = t.handle
  ORDER BY h.id, t.key, t.version;
  DROP TABLE table_items_v3;
  CREATE INDEX table_items_by_version ON table_items (version);

  ALTER TABLE resources RENAME TO resources_v3;
  ALTER INDEX resources_pkey RENAME TO resources_v3_pkey;
  ALTER INDEX resources_by_version RENAME TO resources_v3_by_version;
  CREATE TABLE resources (
    address_id integer NOT NULL,
    type_id integer NOT NULL,
    version u64 NOT NULL,
    value bytea,
    PRIMARY KEY (address_id, type_id, version)
  );
  -- A value written before this migration keeps its JSON text in the RAW form of resourceValue.ts
  -- (format byte 0, then the UTF-8 bytes): exact, and one read path for every row.
  INSERT INTO resources (address_id, type_id, version, value)
  SELECT a.id, ty.id, r.version, CASE WHEN r.value IS NULL THEN NULL ELSE '\\x00'::bytea || convert_to(r.value, 'UTF8') END
  FROM resources_v3 r JOIN addresses a ON a.address = r.address JOIN resource_types ty ON ty.name = r.type
  ORDER BY a.id, ty.id, r.version;
  DROP TABLE resources_v3;
  CREATE INDEX resources_by_version ON resources (version);

  -- Where the state walk of a prune in steps has reached (see PostgresStore.prune): every state
  -- row below state_from was visited at an oldest version at least as high as that row.
  CREATE TABLE prune_progress (
    id smallint PRIMARY KEY CHECK (id = 1),
    state_from u64 NOT NULL
  );
  INSERT INTO prune_progress (id, state_from) SELECT 1, oldest_version FROM ledger WHERE oldest_version IS NOT NULL;
  `,
  `
  -- Each module's ABI as the JSON text the API sends for it (moduleAbiJson, src/move/abi.ts; the
  -- text null when the bytecode does not decode), computed once when its code is written, so a
  -- read sends it instead of decoding the bytecode. The rows already stored get it in the same
  -- transaction, from the program (MIGRATION_FILLS in migrations.ts): SQL cannot decode Move.
  ALTER TABLE modules ADD COLUMN abi text;
  `,
  `
  -- A sender's summaries page read from the index alone (an index-only scan) instead of one heap
  -- page a row, for about 40 bytes a version more index (bench/RESULTS.md). Rows on pages not
  -- yet marked all-visible are still checked in the heap, until
  -- autovacuum (on by default, and triggered by inserts) has passed over them.
  CREATE INDEX transactions_by_sender_summary ON transactions (sender_id, version)
    INCLUDE (replay_kind, replay_value, hash) WHERE sender_id IS NOT NULL;
  DROP INDEX transactions_by_sender;
  ALTER INDEX transactions_by_sender_summary RENAME TO transactions_by_sender;
  `,
  `
  -- The transactions table in version ranges of a fixed span (partitions.ts): a prune drops the ranges
  -- wholly below the oldest version, giving their files back, instead of deleting row by row.
  -- The rows stored are copied into the partitions in this one transaction, then indexed.
  CREATE TABLE transaction_partitions (
    id smallint PRIMARY KEY CHECK (id = 1),
    versions u64 NOT NULL CHECK (versions > 0)
  );
  -- The span: the setting partition_versions, or its default (set for this transaction by migrations.ts).
  INSERT INTO transaction_partitions (id, versions) VALUES (1, current_setting('${PARTITION_VERSIONS_SETTING}')::numeric);
  ALTER TABLE transactions RENAME TO transactions_v6;
  ALTER INDEX transactions_pkey RENAME TO transactions_v6_pkey;
  ALTER INDEX transactions_by_sender RENAME TO transactions_v6_by_sender;
  -- The same columns (LIKE copies their types and NOT NULLs, not the indexes: they are made after the copy).
  CREATE TABLE transactions (LIKE transactions_v6) PARTITION BY RANGE (version);
  DO $$
  DECLARE
    span numeric := (SELECT versions FROM transaction_partitions);
    n numeric;
  BEGIN
    FOR n IN SELECT generate_series(floor(min(version) / span), floor(max(version) / span)) FROM transactions_v6 LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF transactions FOR VALUES FROM (%s) TO (%s)', 'transactions_' || n, n * span, (n + 1) * span);
    END LOOP;
  END $$;
  INSERT INTO transactions SELECT * FROM transactions_v6 ORDER BY version;
  DROP TABLE transactions_v6;
  ALTER TABLE transactions ADD PRIMARY KEY (version);
  CREATE INDEX transactions_by_sender ON transactions (sender_id, version)
    INCLUDE (replay_kind, replay_value, hash) WHERE sender_id IS NOT NULL;
  ANALYZE transactions;
  `,
  `
  -- Base records named by a digest of what they name (baseRecordName, src/storage/replica/baseRecords.ts):
  -- the kind, then the SHA-256 of the name the record had, which was its canonical text. The
  -- first-synced record has no kind and keeps its name.
  UPDATE follow_base SET what = split_part(what, ':', 1) || ':' || encode(sha256(convert_to(what, 'UTF8')), 'hex') WHERE strpos(what, ':') > 0;
  `,
  `
  -- The history (docs/decisions.md §20): every committed transaction's REST JSON text, in chunks
  -- of consecutive versions of one block, each packed whole (history.ts); a version no chunk
  -- covers has no history kept (a ledger written before this migration keeps none for what it
  -- holds). Partitioned by a chunk's first version with the transactions' span (partitions.ts),
  -- a partition for each of theirs: a prune drops both together instead of deleting rows.
  CREATE TABLE transaction_history (
    first_version u64 PRIMARY KEY,
    last_version u64 NOT NULL,
    body bytea NOT NULL
  ) PARTITION BY RANGE (first_version);
  -- Packed already: stored out of line as it is, not compressed again.
  ALTER TABLE transaction_history ALTER COLUMN body SET STORAGE EXTERNAL;
${partitionsLikeTransactions("transaction_history")}
  -- By hash, as the reference keeps it (TransactionByHashSchema): on the hash's first 8 bytes, which
  -- find it as well (the read compares the whole hash) for a smaller entry a commit writes. With
  -- the version, so that the first version of a hash is the first entry the index gives for it (an
  -- index on the hash alone leaves the planner walking the primary key in version order instead).
  CREATE INDEX transactions_by_hash ON transactions ((substring(hash from 1 for 8)), version);
  `,
  `
  -- A sender's sequence-number transactions by sequence number (replay kind 1; 0 is a nonce), one
  -- index range a partition to a page however long the sender's history (the reference keeps the
  -- same index, OrderedTransactionByAccountSchema). With the version, so that a page is read from
  -- the index alone. Made on the parent, so every partition has it, those made later too.
  CREATE INDEX transactions_by_sequence ON transactions (sender_id, replay_value) INCLUDE (version) WHERE replay_kind = 1;
  `,
  `
  -- The events of event handles (docs/decisions.md §22): where each is, its transaction's version
  -- and its place in the transaction's events, found by its handle's GUID (the account's address
  -- id and the creation number) and sequence number (the reference keeps the same index,
  -- EventByKeySchema), read from the index alone. Partitioned by version with the transactions'
  -- span (partitions.ts), a partition for each of theirs: a prune drops them together. A ledger
  -- written before this migration has no events indexed for what it holds.
  CREATE TABLE events (
    version u64 NOT NULL,
    event_index integer NOT NULL,
    account_id integer NOT NULL,
    creation_number u64 NOT NULL,
    sequence_number u64 NOT NULL,
    PRIMARY KEY (version, event_index)
  ) PARTITION BY RANGE (version);
  CREATE INDEX events_by_handle ON events (account_id, creation_number, sequence_number) INCLUDE (version, event_index);
${partitionsLikeTransactions("events")}
  `,
];
