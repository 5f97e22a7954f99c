/**
 * The plans of the statements as the reads run them (generic plans, as a connection's named
 * statement ends up with): what each reads, not how long it takes, on each PostgreSQL major of
 * `PG_MAJORS` (the planners differ).
 */
import { createHash } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_MAJORS, postgresBackend } from "../../../test/helpers/postgres.js";
import type { BlockWrite, UserTxnWrite } from "../contracts/writer.js";
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
    /** A sender of a transaction in every block (sequence numbers 0 to 2,999), and one of each block's orderless ones too. */
    const BUSY = Buffer.alloc(32, 0xb5);
    /** The senders of one transaction in every 100 blocks each. */
    const senderOf = (i: number) => Buffer.alloc(32, i % 100);
    const userTxn = (sender: Buffer, replayProtector: UserTxnWrite["replayProtector"]): UserTxnWrite => ({
      sender,
      replayProtector,
      gasUnitPrice: 100n,
      gasUsed: 1n,
      success: true,
      contractAddress: null,
    });
    let db: string;

    beforeAll(async () => {
      // Enough versions in enough partitions that a walk of the versions would cost the planner more than a seek.
      db = await backend.newDb();
      const s = await PostgresStore.connect(`${db}?partition_versions=1024`, { writer: "test" });
      await s.initChain(4);
      const blocks: BlockWrite[] = Array.from({ length: 3000 }, (_, i) => {
        const first = BigInt(i) * 5n;
        const users = [
          null,
          userTxn(BUSY, { type: "sequence_number", value: BigInt(i) }),
          userTxn(senderOf(i), { type: "sequence_number", value: BigInt(Math.floor(i / 100)) }),
          userTxn(BUSY, { type: "nonce", value: BigInt(i) }),
          null,
        ];
        const transactions = [0n, 1n, 2n, 3n, 4n].map((k) => ({
          version: first + k,
          kind: "user_transaction" as const,
          hash: hashOf(first + k),
          user: users[Number(k)]!,
          json: JSON.stringify({ version: String(first + k) }),
          // BUSY's handle (creation number 2) emits an event in every block, the other senders' one in every 100.
          ...(k === 1n ? { events: [{ account: BUSY, creationNumber: 2n, sequenceNumber: BigInt(i), index: 0 }] } : {}),
          ...(k === 2n ? { events: [{ account: senderOf(i), creationNumber: 2n, sequenceNumber: BigInt(Math.floor(i / 100)), index: 0 }] } : {}),
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
      const c = new pg.Client({ connectionString: db });
      await c.connect();
      const r = await c
        .query<{ name: string }>("SELECT inhrelid::regclass::text AS name FROM pg_inherits WHERE inhparent = 'transactions_by_hash'::regclass")
        .finally(() => c.end());
      const indexes = new Set(r.rows.map((row) => row.name));
      for (const n of scans) expect(indexes.has(String(n["Index Name"])), String(n["Index Name"])).toBe(true);
    });

    /** The partitions' indexes of `transactions_by_sequence`. */
    async function sequenceIndexes(): Promise<Set<string>> {
      const c = new pg.Client({ connectionString: db });
      await c.connect();
      const r = await c
        .query<{ name: string }>("SELECT inhrelid::regclass::text AS name FROM pg_inherits WHERE inhparent = 'transactions_by_sequence'::regclass")
        .finally(() => c.end());
      return new Set(r.rows.map((row) => row.name));
    }

    for (const [mode, statement, types, args, page] of [
      ["from a sequence number", SQL.accountTransactionsFrom, "bytea, numeric, int", `'\\x${BUSY.toString("hex")}', 1000, 25`, [1000, 1024]],
      ["the newest", SQL.accountTransactionsNewest, "bytea, int", `'\\x${BUSY.toString("hex")}', 25`, [2975, 2999]],
    ] as const) {
      it(`pages a sender's transactions ${mode} by the sequence index, not by a walk of its rows, and the ledger row once`, async () => {
        const plan = await genericPlan(db, statement, types, args);
        const indexes = await sequenceIndexes();
        expect(indexes.size).toBeGreaterThan(1);
        const run = scanNodes(plan, "transactions").filter((n) => Number(n["Actual Loops"]) > 0);
        expect(run.length).toBeGreaterThan(0);
        for (const n of run) expect(indexes.has(String(n["Index Name"])), `${String(n["Relation Name"])} by ${String(n["Index Name"])}`).toBe(true);
        // The page's 25 rows and at most one more a partition (the merge's first look in each), of the sender's 3,000.
        const read = run.reduce((sum, n) => sum + Number(n["Actual Rows"]) * Number(n["Actual Loops"]), 0);
        expect(read).toBeLessThanOrEqual(25 + run.length);
        // Each row's chunk: one seek in the partition holding it.
        const chunks = scanNodes(plan, "transaction_history").filter((n) => Number(n["Actual Loops"]) > 0);
        expect(chunks.reduce((sum, n) => sum + Number(n["Actual Rows"]) * Number(n["Actual Loops"]), 0)).toBe(25);
        expect(scansOf(plan, "ledger")).toBe(1);

        const s = await PostgresStore.connect(db, { writer: "test" });
        try {
          const snap = await s.readAccountTransactions({ sender: BUSY, start: mode === "the newest" ? undefined : 1000n, limit: 25 });
          const versions = Array.from({ length: page[1] - page[0] + 1 }, (_, i) => BigInt(page[0] + i) * 5n + 1n);
          expect(snap?.value.versions).toEqual(versions);
          expect(snap?.value.firstSequence).toBe(BigInt(page[0]));
          expect(snap?.value.texts.map((t) => (t === null ? null : Buffer.from(t).toString()))).toEqual(versions.map((v) => JSON.stringify({ version: String(v) })));
        } finally {
          await s.close();
        }
      });
    }

    for (const [mode, statement, types, args, page] of [
      ["from a sequence number", SQL.eventsFrom, "bytea, numeric, numeric, int", `'\\x${BUSY.toString("hex")}', 2, 1000, 25`, [1000, 1024]],
      ["the newest", SQL.eventsNewest, "bytea, numeric, int", `'\\x${BUSY.toString("hex")}', 2, 25`, [2975, 2999]],
    ] as const) {
      it(`pages a handle's events ${mode} by the handle index, not by a walk of its rows, and the ledger row once`, async () => {
        const plan = await genericPlan(db, statement, types, args);
        const run = scanNodes(plan, "events").filter((n) => Number(n["Actual Loops"]) > 0);
        expect(run.length).toBeGreaterThan(0);
        for (const n of run) expect(String(n["Index Name"]), String(n["Relation Name"])).toMatch(/^events_\d+_account_id_creation_number_sequence_number/);
        const read = run.reduce((sum, n) => sum + Number(n["Actual Rows"]) * Number(n["Actual Loops"]), 0);
        expect(read).toBeLessThanOrEqual(25 + run.length);
        expect(scansOf(plan, "ledger")).toBe(1);

        const s = await PostgresStore.connect(db, { writer: "test" });
        try {
          const snap = await s.readEvents({ account: BUSY, creationNumber: 2n, start: mode === "the newest" ? undefined : 1000n, limit: 25 });
          const versions = Array.from({ length: page[1] - page[0] + 1 }, (_, i) => BigInt(page[0] + i) * 5n + 1n);
          expect(snap?.value.events.map((e) => e.version)).toEqual(versions);
          expect(snap?.value.events[0]?.sequenceNumber).toBe(BigInt(page[0]));
          expect(snap?.value.texts.map((t) => (t === null ? null : Buffer.from(t).toString()))).toEqual(versions.map((v) => JSON.stringify({ version: String(v) })));
        } finally {
          await s.close();
        }
      });
    }

    it("reads the chunks of a range in the one partition holding it, and the ledger row once", async () => {
      const plan = await genericPlan(db, SQL.transactionsFrom, "numeric, numeric", "12345, 25");
      const run = scanNodes(plan, "transaction_history").filter((n) => Number(n["Actual Loops"]) > 0);
      expect(run.length).toBeGreaterThan(0);
      // Versions 12,345 to 12,369: partition 12 of 1,024 versions each.
      for (const n of run) expect(n["Relation Name"]).toBe("transaction_history_12");
      expect(scansOf(plan, "ledger")).toBe(1);
    });
  });

  it("sends a chunk's body once for the rows of a page it holds, and decodes each row's text from it", async () => {
    const db = await backend.newDb();
    const s = await PostgresStore.connect(db, { writer: "test" });
    try {
      await s.initChain(4);
      const sender = Buffer.alloc(32, 0x5e);
      const user = (value: bigint): UserTxnWrite => ({ sender, replayProtector: { type: "sequence_number", value }, gasUnitPrice: 1n, gasUsed: 1n, success: true, contractAddress: null });
      const text = (v: bigint) => JSON.stringify({ version: String(v) });
      // Block 0: versions 0 to 5, the sender's sequence numbers 0 to 4 in 1 to 5, all in one chunk
      // but version 3 (no text kept: it ends the chunk, and 4 and 5 start another); block 1: version 6, sequence number 5.
      const transactions = [0n, 1n, 2n, 3n, 4n, 5n].map((v) => ({
        version: v,
        kind: v === 0n ? ("block_metadata_transaction" as const) : ("user_transaction" as const),
        hash: createHash("sha256").update(`txn ${v}`).digest(),
        user: v === 0n ? null : user(v - 1n),
        ...(v === 3n ? {} : { json: text(v) }),
      }));
      await s.commitBlocks([
        { block: { height: 0n, epoch: 0n, timestampUsec: 0n, firstVersion: 0n, lastVersion: 5n, endInfo: null }, transactions, modules: [], tableItems: [], resources: [] },
        {
          block: { height: 1n, epoch: 0n, timestampUsec: 1n, firstVersion: 6n, lastVersion: 6n, endInfo: null },
          transactions: [{ version: 6n, kind: "user_transaction", hash: createHash("sha256").update("txn 6").digest(), user: user(5n), json: text(6n) }],
          modules: [],
          tableItems: [],
          resources: [],
        },
      ]);
      const c = new pg.Client({ connectionString: db });
      await c.connect();
      const rows = await c
        .query<{ version: string; first_version: string | null; body: Buffer | null }>({ text: SQL.accountTransactionsFrom, values: [sender, "0", 10] })
        .finally(() => c.end());
      expect(rows.rows.map((r) => [r.version, r.first_version, r.body !== null])).toEqual([
        ["1", "0", true],
        ["2", "0", false],
        ["3", null, false],
        ["4", "4", true],
        ["5", "4", false],
        ["6", "6", true],
      ]);
      const textsOf = (texts: Array<Uint8Array | null> | undefined) => texts?.map((t) => (t === null ? null : Buffer.from(t).toString()));
      const from = await s.readAccountTransactions({ sender, start: 1n, limit: 10 });
      expect(from?.value.versions).toEqual([2n, 3n, 4n, 5n, 6n]);
      expect(from?.value.firstSequence).toBe(1n);
      expect(textsOf(from?.value.texts)).toEqual([text(2n), null, text(4n), text(5n), text(6n)]);
      const newest = await s.readAccountTransactions({ sender, limit: 4 });
      expect(newest?.value.versions).toEqual([3n, 4n, 5n, 6n]);
      expect(newest?.value.firstSequence).toBe(2n);
      expect(textsOf(newest?.value.texts)).toEqual([null, text(4n), text(5n), text(6n)]);
      // A start above i64 (and above u64): an empty page, with the position.
      for (const start of [1n << 63n, 1n << 64n]) expect((await s.readAccountTransactions({ sender, start, limit: 10 }))?.value).toEqual({ versions: [], firstSequence: null, texts: [] });
      expect((await s.readAccountTransactions({ sender, start: 0n, limit: 0 }))?.value).toEqual({ versions: [], firstSequence: null, texts: [] });
    } finally {
      await s.close();
    }
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
