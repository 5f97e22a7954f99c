/**
 * The plans of the statements as the reads run them (generic plans, as a connection's named
 * statement ends up with): what each reads, not how long it takes, on each PostgreSQL major of
 * `PG_MAJORS` (the planners differ).
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_MAJORS, postgresBackend } from "../../../test/helpers/postgres.js";
import { PostgresStore } from "./PostgresStore.js";
import { SQL } from "./sql.js";

for (const major of PG_MAJORS) describe(`on PostgreSQL ${major}`, () => {
  const backend = postgresBackend(major);
  let url: string;

  beforeAll(async () => {
    url = await backend.newDb();
    // the schema, as a writer creates it
    await (await PostgresStore.connect(url, { writer: "test" })).close();
  });

  afterAll(async () => {
    await backend.cleanup();
  });

  /** The nodes of a plan (EXPLAIN's JSON) that scan `relation`. */
  function scansOf(plan: { "Relation Name"?: string; Plans?: unknown[] }, relation: string): number {
    const own = plan["Relation Name"] === relation ? 1 : 0;
    return own + (plan.Plans ?? []).reduce<number>((n, p) => n + scansOf(p as typeof plan, relation), 0);
  }

  describe("modulesPage", () => {
    it("reads the ledger row once", async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query("SET plan_cache_mode = force_generic_plan");
        await c.query(`PREPARE modules_page(bytea, bytea, numeric, int, text, text[]) AS ${SQL.modulesPage}`);
        const explained = await c.query<{ "QUERY PLAN": [{ Plan: Parameters<typeof scansOf>[0] }] }>(
          "EXPLAIN (FORMAT JSON) EXECUTE modules_page('\\xab'::bytea, '\\x'::bytea, NULL, 26, 'record', '{}')",
        );
        const plan = explained.rows[0]!["QUERY PLAN"][0].Plan;
        expect(scansOf(plan, "modules")).toBeGreaterThan(0);
        expect(scansOf(plan, "ledger")).toBe(1);
      } finally {
        await c.end();
      }
    });
  });
});
