/**
 * Versioned migrations of the PostgreSQL schema, applied in order by `PostgresStore.connect`
 * under an advisory lock (`schema_version` records each one applied). Append; never edit a
 * released entry.
 *
 * Same tables and meaning as the SQLite schema (`../sqlite/schema.ts`); where the two differ and
 * why (u64 as `numeric`, version indexes for pruning, "C" collation): `../README.md`.
 */
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
];
