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
];
