/**
 * Bringing a PostgreSQL database to this build's schema (`schema.ts`): the migrations under a
 * session advisory lock, so that processes starting together do not race, each in one
 * transaction with what the program computes after its SQL (migration 5: ABI text).
 */
import type pg from "pg";
import type { PoolClient } from "pg";
import { moduleAbiJson } from "../../move/abi.js";
import { StandbyWriteError, StorageError } from "../contracts/errors.js";
import { isUnavailableError } from "./errors.js";
import { DEFAULT_TRANSACTION_PARTITION_VERSIONS, PARTITION_VERSIONS_SETTING, partitionSpan } from "./partitions.js";
import { MIGRATIONS } from "./schema.js";

/** Session advisory lock held while migrating ("ledgernd" in ASCII). */
const MIGRATION_LOCK = BigInt("0x6c65646765726e64").toString();
/** A migration may run this long (ms): it may copy every table once. */
export const MIGRATION_STATEMENT_TIMEOUT_MS = 6 * 60 * 60_000;

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


/**
 * Runs the migrations the database has not had (see the file comment). `partitionVersions` (the
 * setting `partition_versions`, null when not given) is the span migration 7 partitions the
 * transactions by; a database partitioned already keeps its span, and one given that differs
 * from it is refused rather than silently ignored.
 */
export async function migrate(pool: pg.Pool, partitionVersions: number | null): Promise<void> {
  const c = await pool.connect();
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
      if (current > MIGRATIONS.length) throw new Error(newerSchemaMessage(current));
      for (const [i, sql] of MIGRATIONS.entries()) {
        const version = i + 1;
        if (version <= current) continue;
        await c.query("BEGIN");
        try {
          // A migration copies tables (migration 4: the whole ledger, about a minute per million
          // versions on a small machine), far longer than a request's statement timeout.
          await c.query(`SET LOCAL statement_timeout = ${MIGRATION_STATEMENT_TIMEOUT_MS}`);
          await c.query("SELECT set_config($1, $2, true)", [PARTITION_VERSIONS_SETTING, String(partitionVersions ?? DEFAULT_TRANSACTION_PARTITION_VERSIONS)]);
          await c.query({ text: sql, query_timeout: MIGRATION_STATEMENT_TIMEOUT_MS + 1_000 } as pg.QueryConfig);
          await MIGRATION_FILLS[version]?.(c);
          await c.query("INSERT INTO schema_version (version) VALUES ($1)", [version]);
          await c.query("COMMIT");
        } catch (e) {
          await c.query("ROLLBACK").catch(() => undefined);
          throw e;
        }
      }
      if (partitionVersions !== null) await checkPartitionVersions(c, partitionVersions);
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

/**
 * Throws unless the database's transactions are partitioned by `partitionVersions` (the setting
 * given): after migrating, and on a hot standby, whose primary's span it has.
 */
export async function checkPartitionVersions(c: PoolClient | pg.Pool, partitionVersions: number): Promise<void> {
  const span = await partitionSpan(c);
  if (span !== BigInt(partitionVersions)) {
    throw new Error(
      `partition_versions=${partitionVersions} differs from the span this database's transactions are partitioned by (${span} versions a partition), ` +
        `which is fixed when the table is partitioned: remove the setting or give ${span}`,
    );
  }
}

function newerSchemaMessage(current: number): string {
  return `the database schema is version ${current}, newer than this program knows (${MIGRATIONS.length}): upgrade ledger-node`;
}

/**
 * Whether the database is a hot standby (in recovery): read-only, migrated and written only through
 * its primary.
 */
export async function inRecovery(db: pg.Pool | pg.ClientBase): Promise<boolean> {
  return (await db.query<{ r: boolean }>("SELECT pg_is_in_recovery() AS r")).rows[0]!.r;
}

/**
 * On a hot standby, which cannot migrate: throws unless the schema its primary wrote is this
 * build's. An older one (or none) needs a writer on the primary first; a newer one needs an upgrade.
 */
export async function checkStandbySchema(pool: pg.Pool, url: string): Promise<void> {
  // Two statements: a statement naming a table that does not exist fails when it is parsed.
  const present = (await pool.query<{ t: string | null }>("SELECT to_regclass('schema_version')::text AS t")).rows[0]?.t != null;
  const current = present ? ((await pool.query<{ v: number | null }>("SELECT max(version) AS v FROM schema_version")).rows[0]?.v ?? 0) : 0;
  if (current > MIGRATIONS.length) throw new StorageError("standby", newerSchemaMessage(current));
  if (current < MIGRATIONS.length) {
    throw new StandbyWriteError(
      `${url} is a hot standby (read-only) whose schema is ${current === 0 ? "not created yet" : `version ${current}`}, older than this program reads (${MIGRATIONS.length}): ` +
        "start a writer (serve --devnet, serve --follow, follow, import or prune) against the primary first, so that it migrates, then start this node again",
    );
  }
}
