/**
 * Versioned migrations of the SQLite schema, applied in order by the program itself
 * (`schema_version` records the last one applied). Append; never edit a released entry.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE ledger (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    chain_id INTEGER NOT NULL,
    ledger_version INTEGER,
    timestamp_usec INTEGER,
    epoch INTEGER,
    block_height INTEGER,
    oldest_version INTEGER,
    oldest_block_height INTEGER
  );
  CREATE TABLE blocks (
    height INTEGER PRIMARY KEY,
    epoch INTEGER NOT NULL,
    timestamp_usec INTEGER NOT NULL,
    first_version INTEGER NOT NULL UNIQUE,
    last_version INTEGER NOT NULL,
    gas_limit_reached INTEGER,
    output_limit_reached INTEGER
  );
  CREATE INDEX blocks_by_time ON blocks (timestamp_usec);
  CREATE TABLE transactions (
    version INTEGER PRIMARY KEY,
    kind INTEGER NOT NULL,
    hash BLOB NOT NULL,
    sender BLOB,
    replay_kind INTEGER,
    replay_value INTEGER,
    gas_unit_price INTEGER,
    gas_used INTEGER,
    success INTEGER,
    contract TEXT
  );
  -- Summaries by sender, clustered so a page of 100 is one contiguous range (the reference
  -- node keeps the same index, TransactionSummariesByAccountSchema).
  CREATE TABLE account_transactions (
    sender BLOB NOT NULL,
    version INTEGER NOT NULL,
    hash BLOB NOT NULL,
    replay_kind INTEGER NOT NULL,
    replay_value INTEGER NOT NULL,
    PRIMARY KEY (sender, version)
  ) WITHOUT ROWID;
  -- Versioned module slots; the bytecode itself is stored once per content hash in code.
  CREATE TABLE modules (
    address BLOB NOT NULL,
    state_key BLOB NOT NULL,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    code_hash TEXT,
    PRIMARY KEY (address, state_key, version)
  ) WITHOUT ROWID;
  CREATE TABLE code (
    code_hash TEXT PRIMARY KEY,
    bytecode BLOB NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE table_items (
    handle BLOB NOT NULL,
    key BLOB NOT NULL,
    version INTEGER NOT NULL,
    value BLOB,
    PRIMARY KEY (handle, key, version)
  ) WITHOUT ROWID;
  CREATE TABLE resources (
    address BLOB NOT NULL,
    type TEXT NOT NULL,
    version INTEGER NOT NULL,
    value TEXT,
    PRIMARY KEY (address, type, version)
  ) WITHOUT ROWID;
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
    what TEXT PRIMARY KEY,
    version INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  `
  -- Issue 17 item 5: fewer bytes per version. Every 32-byte account address and table handle is
  -- stored once, in addresses, and rows refer to it by id (never deleted: a connection keeps the
  -- ids it has seen); resource types likewise in resource_types. transactions keeps sender_id and
  -- contract_id (a contract that is not 64 lowercase hex digits stays as text in contract);
  -- account_transactions keeps each summary in its wire-ready form (hash and replay protector)
  -- clustered by (sender_id, version): a page is one contiguous range, where a join to transactions
  -- by version cost a page of 25 twice the CPU at 10M versions. Resource values are stored packed
  -- (resourceValue.ts); rows copied here are packed by pack_resource_value, which the store
  -- registers on its connection. Ids are handed out in address and type order, so each copy
  -- reads the old table in its key order and appends to the new one in the same order.
  CREATE TABLE addresses (
    id INTEGER PRIMARY KEY,
    address BLOB NOT NULL UNIQUE
  );
  CREATE TABLE resource_types (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
  );
  INSERT INTO addresses (address)
    SELECT address FROM (
      SELECT sender AS address FROM transactions WHERE sender IS NOT NULL
      UNION SELECT unhex(contract) FROM transactions
        WHERE length(contract) = 64 AND contract NOT GLOB '*[^0-9a-f]*'
      UNION SELECT handle FROM table_items
      UNION SELECT address FROM resources
    ) ORDER BY address;
  INSERT INTO resource_types (name) SELECT DISTINCT type FROM resources ORDER BY type;
  CREATE TABLE transactions_v4 (
    version INTEGER PRIMARY KEY,
    kind INTEGER NOT NULL,
    hash BLOB NOT NULL,
    sender_id INTEGER,
    replay_kind INTEGER,
    replay_value INTEGER,
    gas_unit_price INTEGER,
    gas_used INTEGER,
    success INTEGER,
    contract_id INTEGER,
    contract TEXT
  );
  INSERT INTO transactions_v4
    SELECT t.version, t.kind, t.hash, s.id, t.replay_kind, t.replay_value, t.gas_unit_price, t.gas_used, t.success,
           c.id, CASE WHEN c.id IS NULL THEN t.contract END
    FROM transactions t
    LEFT JOIN addresses s ON s.address = t.sender
    LEFT JOIN addresses c ON length(t.contract) = 64 AND t.contract NOT GLOB '*[^0-9a-f]*' AND c.address = unhex(t.contract)
    ORDER BY t.version;
  CREATE TABLE account_transactions_v4 (
    sender_id INTEGER NOT NULL,
    version INTEGER NOT NULL,
    hash BLOB NOT NULL,
    replay_kind INTEGER NOT NULL,
    replay_value INTEGER NOT NULL,
    PRIMARY KEY (sender_id, version)
  ) WITHOUT ROWID;
  INSERT INTO account_transactions_v4
    SELECT s.id, a.version, a.hash, a.replay_kind, a.replay_value FROM account_transactions a JOIN addresses s ON s.address = a.sender
    ORDER BY a.sender, a.version;
  CREATE TABLE table_items_v4 (
    handle_id INTEGER NOT NULL,
    key BLOB NOT NULL,
    version INTEGER NOT NULL,
    value BLOB,
    PRIMARY KEY (handle_id, key, version)
  ) WITHOUT ROWID;
  INSERT INTO table_items_v4
    SELECT h.id, t.key, t.version, t.value FROM table_items t JOIN addresses h ON h.address = t.handle
    ORDER BY t.handle, t.key, t.version;
  CREATE TABLE resources_v4 (
    address_id INTEGER NOT NULL,
    type_id INTEGER NOT NULL,
    version INTEGER NOT NULL,
    value BLOB,
    PRIMARY KEY (address_id, type_id, version)
  ) WITHOUT ROWID;
  INSERT INTO resources_v4
    SELECT a.id, y.id, r.version, pack_resource_value(r.address, r.value)
    FROM resources r JOIN addresses a ON a.address = r.address JOIN resource_types y ON y.name = r.type
    ORDER BY r.address, r.type, r.version;
  DROP TABLE transactions;
  DROP TABLE account_transactions;
  DROP TABLE table_items;
  DROP TABLE resources;
  ALTER TABLE transactions_v4 RENAME TO transactions;
  ALTER TABLE account_transactions_v4 RENAME TO account_transactions;
  ALTER TABLE table_items_v4 RENAME TO table_items;
  ALTER TABLE resources_v4 RENAME TO resources;
  `,
  `
  -- Each module's ABI as the JSON text the API sends for it (moduleAbiJson, src/move/abi.ts; the
  -- text null when the bytecode does not decode), computed once when its code is written, so a
  -- read sends it instead of decoding the bytecode. Code already stored gets it here, from
  -- module_abi_json, which the store registers on its connection.
  -- code becomes a rowid table: with the ABI a row is about 1 KB, and a WITHOUT ROWID table keeps
  -- whole rows in its interior pages too, four or so a page, which makes a seek cost about twice
  -- as much (bench/RESULTS.md).
  CREATE TABLE code_v5 (
    code_hash TEXT PRIMARY KEY,
    bytecode BLOB NOT NULL,
    abi TEXT
  );
  INSERT INTO code_v5 (code_hash, bytecode, abi) SELECT code_hash, bytecode, module_abi_json(bytecode) FROM code ORDER BY code_hash;
  DROP TABLE code;
  ALTER TABLE code_v5 RENAME TO code;
  `,
  `
  -- An account's module page at a version in fewer seeks (issue 17). Its state keys are one range
  -- of module_keys (one statement for the page, not one a key over every version in modules), and
  -- a listed module's code is read by its integer id (one seek, not the hash index and then the row).
  -- A key stays after pruning removed its rows: it then has no module at any kept version, as a
  -- deleted module, and is skipped the same way.
  CREATE TABLE module_keys (
    address BLOB NOT NULL,
    state_key BLOB NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (address, state_key)
  ) WITHOUT ROWID;
  INSERT INTO module_keys (address, state_key, name) SELECT address, state_key, min(name) FROM modules GROUP BY address, state_key;
  -- An explicit INTEGER PRIMARY KEY: VACUUM keeps it (it may renumber an implicit rowid).
  CREATE TABLE code_v6 (
    id INTEGER PRIMARY KEY,
    code_hash TEXT NOT NULL UNIQUE,
    bytecode BLOB NOT NULL,
    abi TEXT
  );
  INSERT INTO code_v6 (code_hash, bytecode, abi) SELECT code_hash, bytecode, abi FROM code ORDER BY code_hash;
  DROP TABLE code;
  ALTER TABLE code_v6 RENAME TO code;
  ALTER TABLE modules ADD COLUMN code_id INTEGER;
  UPDATE modules SET code_id = (SELECT c.id FROM code c WHERE c.code_hash = modules.code_hash) WHERE code_hash IS NOT NULL;
  `,
  `
  -- Base records named by a digest of what they name (baseRecordName, src/storage/replica/baseRecords.ts):
  -- the kind, then the SHA-256 of the name the record had, which was its canonical text. The
  -- first-synced record has no kind and keeps its name.
  UPDATE follow_base SET what = substr(what, 1, instr(what, ':')) || base_record_digest(what) WHERE instr(what, ':') > 0;
  `,
  `
  -- The history (docs/decisions.md §20): every committed transaction's REST JSON text, in chunks
  -- of consecutive versions of one block, each packed whole (history.ts); a version no chunk
  -- covers has no history kept (a ledger written before this migration keeps none for what it
  -- holds). By hash, as the reference keeps it (TransactionByHashSchema): on the hash's first 8
  -- bytes, which find it as well (the read compares the whole hash) for well under half the cost
  -- of an entry a commit writes (bench/RESULTS.md, "History").
  CREATE TABLE transaction_history (
    first_version INTEGER PRIMARY KEY,
    last_version INTEGER NOT NULL,
    body BLOB NOT NULL
  );
  CREATE INDEX transactions_by_hash ON transactions (substr(hash, 1, 8));
  `,
  `
  -- An account's sequence-number transactions by sequence number, one seek to a page however long
  -- the account's history (the reference keeps the same index, OrderedTransactionByAccountSchema).
  CREATE INDEX account_sequence ON account_transactions (sender_id, replay_value) WHERE replay_kind = 1;
  `,
  `
  -- The events of event handles (docs/decisions.md §22): where each is, its transaction's version
  -- and its place in the transaction's events, by version so that a prune deletes a range; found
  -- by its handle's GUID (the account's address id and the creation number) and sequence number
  -- (the reference keeps the same index, EventByKeySchema), read from the index alone. A ledger
  -- written before this migration has no events indexed for what it holds.
  CREATE TABLE events (
    version INTEGER NOT NULL,
    event_index INTEGER NOT NULL,
    account_id INTEGER NOT NULL,
    creation_number INTEGER NOT NULL,
    sequence_number INTEGER NOT NULL,
    PRIMARY KEY (version, event_index)
  ) WITHOUT ROWID;
  CREATE INDEX events_by_handle ON events (account_id, creation_number, sequence_number);
  `,
];
