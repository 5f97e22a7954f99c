/**
 * The plans of the statements as the reads run them (generic plans, as a connection's named
 * statement ends up with): what each reads, not how long it takes, on each PostgreSQL major of
 * `PG_MAJORS` (the planners differ).
 */
import { createHash } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_MAJORS, postgresBackend } from "../../../test/helpers/postgres.js";
import type { BlockWrite } from "../contracts/writer.js";
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

  /** The plan of `statement` prepared with `types` and run (EXPLAIN ANALYZE) as a generic plan with the literal `args`, on `db`. */
  async function genericPlan(db: string, statement: string, types: string, args: string): Promise<Parameters<typeof scansOf>[0]> {
    const c = new pg.Client({ connectionString: db });
    await c.connect();
    try {
      await c.query("SET plan_cache_mode = force_generic_plan");
      await c.query(`PREPARE s(${types}) AS ${statement}`);
      const explained = await c.query<{ "QUERY PLAN": [{ Plan: Parameters<typeof scansOf>[0] }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE s(${args})`);
      return explained.rows[0]!["QUERY PLAN"][0].Plan;
    } finally {
      await c.end();
    }
  }

  /** The plan nodes scanning `relation` or one of its partitions. */
  function scanNodes(plan: Record<string, unknown>, relation: string): Array<Record<string, unknown>> {
    const own = plan["Relation Name"] === relation || new RegExp(`^${relation}_\\d+$`).test(String(plan["Relation Name"])) ? [plan] : [];
    return [...own, ...((plan.Plans as Array<Record<string, unknown>> | undefined) ?? []).flatMap((p) => scanNodes(p, relation))];
  }

  describe("the history reads", () => {
    const hashOf = (v: bigint) => createHash("sha256").update(`txn ${v}`).digest();
    let db: string;

    beforeAll(async () => {
      // Enough versions in enough partitions that a walk of the versions would cost the planner more than a seek.
      db = await backend.newDb();
      const s = await PostgresStore.connect(`${db}?partition_versions=1024`, { writer: "test" });
      await s.initChain(4);
      const blocks: BlockWrite[] = Array.from({ length: 3000 }, (_, i) => {
        const first = BigInt(i) * 5n;
        const transactions = [0n, 1n, 2n, 3n, 4n].map((k) => ({
          version: first + k,
          kind: "user_transaction" as const,
          hash: hashOf(first + k),
          user: null,
          json: JSON.stringify({ version: String(first + k) }),
        }));
        return { block: { height: BigInt(i), epoch: 0n, timestampUsec: BigInt(i), firstVersion: first, lastVersion: first + 4n, endInfo: null }, transactions, modules: [], tableItems: [], resources: [] };
      });
      for (let i = 0; i < blocks.length; i += 500) await s.commitBlocks(blocks.slice(i, i + 500));
      await s.close();
      const c = new pg.Client({ connectionString: db });
      await c.connect();
      await c.query("ANALYZE").finally(() => c.end());
    });

    it("finds a hash by the hash index, not by a walk of the versions", async () => {
      const plan = await genericPlan(db, SQL.transactionByHash, "bytea", `'\\x${hashOf(12_345n).toString("hex")}'`);
      const scans = scanNodes(plan, "transactions");
      expect(scans.length).toBeGreaterThan(0);
      for (const n of scans) expect(String(n["Index Name"])).toMatch(/hash/);
    });

    it("reads the chunks of a range in the one partition holding it, and the ledger row once", async () => {
      const plan = await genericPlan(db, SQL.transactionsFrom, "numeric, numeric", "12345, 25");
      const run = scanNodes(plan, "transaction_history").filter((n) => Number(n["Actual Loops"]) > 0);
      expect(run.length).toBeGreaterThan(0);
      // Versions 12,345 to 12,369: partition 12 of 1,024 versions each.
      for (const n of run) expect(n["Relation Name"]).toBe("transaction_history_12");
      expect(scansOf(plan, "ledger")).toBe(1);
    });
  });

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
