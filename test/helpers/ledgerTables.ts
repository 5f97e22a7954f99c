/**
 * Every table of a ledger database, rows in a fixed order, for tests that compare two ledgers
 * whole (a sync against an import of the same transactions). The history is compared by what it
 * holds, each version's text: where its chunks are cut depends on how the transactions arrived
 * (an import's batches, a follower's pages), not on the ledger.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { unpackTexts } from "../../src/storage/common/history.js";
import { isPostgresUrl } from "../../src/storage/open.js";

const HISTORY = "transaction_history";

/** The history's rows as `version text`, one a version. */
function historyTexts(rows: unknown[][]): string[] {
  return rows.flatMap(([first, , body]) => unpackTexts(body as Buffer).map((t, i) => `${BigInt(first as bigint | string) + BigInt(i)} ${t.toString("utf8")}`)).sort();
}

export type TableDump = Record<string, string[]>;

export async function dumpTables(db: string): Promise<TableDump> {
  return isPostgresUrl(db) ? dumpPostgres(db) : dumpSqlite(db);
}

function dumpSqlite(path: string): TableDump {
  const d = new Database(path, { readonly: true });
  try {
    const out: TableDump = {};
    const tables = d.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
    for (const { name } of tables) {
      const rows = d.prepare(`SELECT * FROM "${name}"`).raw().all() as unknown[][];
      if (name === HISTORY) {
        out[name] = historyTexts(rows);
        continue;
      }
      out[name] = rows.map((r) => JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? String(v) : Buffer.isBuffer(v) ? v.toString("hex") : v))).sort();
    }
    return out;
  } finally {
    d.close();
  }
}

async function dumpPostgres(url: string): Promise<TableDump> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const out: TableDump = {};
    // A partitioned table's rows are read through it, not again through each partition.
    const tables = await c.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
         AND table_name::text NOT IN (SELECT relname FROM pg_class WHERE relispartition) ORDER BY 1`,
    );
    for (const { table_name } of tables.rows as { table_name: string }[]) {
      // When each migration was applied differs between two databases; which ones were must not.
      const columns = table_name === "schema_version" ? "version" : "*";
      const rows = await c.query({ text: `SELECT ${columns} FROM "${table_name}"`, rowMode: "array" });
      if (table_name === HISTORY) {
        out[table_name] = historyTexts(rows.rows as unknown[][]);
        continue;
      }
      out[table_name] = (rows.rows as unknown[][]).map((r) => JSON.stringify(r, (_k, v) => (Buffer.isBuffer(v) ? v.toString("hex") : v))).sort();
    }
    return out;
  } finally {
    await c.end();
  }
}
