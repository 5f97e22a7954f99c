/**
 * What an upstream may send that the follower must take in its stride (issue 31 §3), through the
 * built CLI over real HTTP and real databases: transactions, changes and modules of kinds this
 * reader does not know (stored generically, counted, served as the upstream serves them, on SQLite
 * and PostgreSQL); pages capped below 100 (synced at any concurrency without asking a version
 * twice); answers past the size bound (a gzip bomb, a huge plain page: cut, retried, recovered).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "./helpers/postgres.js";
import { CLI, requireBuiltCli, runCli } from "./helpers/cli.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";
import { FIXTURES } from "./helpers/fixtures.js";
import { dumpTables, type TableDump } from "./helpers/ledgerTables.js";
import { startTestNode } from "./helpers/node.js";

type Json = Record<string, unknown>;

/** Table by table; `follow_base` is the follower's own record (an import has none). */
function expectSameTables(a: TableDump, b: TableDump): void {
  for (const d of [a, b]) delete d.follow_base;
  expect(Object.keys(a)).toEqual(Object.keys(b));
  for (const t of Object.keys(a)) {
    const [x, y] = [a[t]!, b[t]!];
    const i = x.findIndex((r, j) => r !== y[j]);
    expect({ table: t, rows: x.length, first: i < 0 ? null : x[i] }).toEqual({ table: t, rows: y.length, first: i < 0 ? null : y[i] });
  }
}

const dir = mkdtempSync(join(tmpdir(), "ledger-node-kinds-"));
let n = 0;
const newDb = () => join(dir, `k${n++}.db`);

const follow = (up: FakeUpstream, db: string, ...extra: string[]) =>
  runCli(["follow", "--upstream", up.base, "--db", db, "--exit-at-head", "--max-rps", "2000", "--poll", "50", "--from", "genesis", ...extra]);

function importOf(up: FakeUpstream, db: string): string {
  const file = join(dir, `import-${n++}.ndjson`);
  writeFileSync(file, `${up.txns.join("\n")}\n`);
  const r = spawnSync(process.execPath, [CLI, "import", "--db", db, file], { encoding: "utf8", timeout: 300_000 });
  expect(r.status, r.stderr).toBe(0);
  rmSync(file);
  return `${r.stdout}${r.stderr}`;
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("kinds of data this reader does not know", () => {
  // 0x1::guid as the node serves it, its bytecode version raised past what the decoder knows.
  const fixture = JSON.parse(readFileSync(`${FIXTURES}modules/0x1_guid_bytecode_v9.json`, "utf8")) as { bytecode: string; abi: Json };
  const newerBytecode = `0x${fixture.bytecode.slice(2, 10)}7f${fixture.bytecode.slice(12)}`;
  let up: FakeUpstream;
  /** The versions edited: a user-like transaction of a new type, a new type without a sender. */
  let userLike: { version: string; sender: string } | null = null;
  let systemLike: string | null = null;

  beforeAll(async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: 0 });
    await up.extend(30, (block, i) => {
      const users = block.filter((t) => t.type === "user_transaction");
      if (i < 5 || userLike !== null || users.length < 2) return;
      const [a, b] = [users[0]!, users[users.length - 1]!];
      // A user-like transaction of a new type in the middle of a block, carrying a change of a
      // new type and a module the decoder cannot read.
      a.type = "quantum_user_transaction";
      (a.changes as Json[]).push(
        { type: "write_quantum_state", address: "0x1", state_key_hash: `0x${"ab".repeat(32)}`, data: { q: "1" } },
        { type: "write_module", address: "0x1", state_key_hash: `0x${"cd".repeat(32)}`, data: { bytecode: newerBytecode, abi: fixture.abi } },
      );
      userLike = { version: a.version as string, sender: a.sender as string };
      // A transaction of a new type without a sender.
      b.type = "quantum_system_transaction";
      delete b.sender;
      systemLike = b.version as string;
    });
    // Edited into the first block after the fifth with two user transactions.
    expect(userLike).not.toBeNull();
    expect(systemLike).not.toBeNull();
  }, 300_000);
  afterAll(async () => {
    await up?.close();
  });

  it("import and follow store them on SQLite and PostgreSQL, go on to the head, and count them", async () => {
    const imported = newDb();
    const out = importOf(up, imported);
    expect(out).toContain("of kinds unknown here (stored generically or skipped): ");
    expect(out).toContain("1 transaction:quantum_user_transaction");
    expect(out).toContain("1 change:write_quantum_state");
    expect(out).toContain("1 module:undecodable_bytecode");

    const db = newDb();
    const r = await follow(up, db, "--concurrency", "4", "--quiet");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`version ${userLike!.version}: a transaction of type quantum_user_transaction, unknown here`);
    expect(r.stderr).toContain(`version ${systemLike}: a transaction of type quantum_system_transaction, unknown here`);
    expect(r.stderr).toContain("a change of type write_quantum_state, unknown here: skipped");
    expectSameTables(await dumpTables(db), await dumpTables(imported));

    const backend = postgresBackend();
    try {
      const [synced, ref] = [await backend.newDb(), await backend.newDb()];
      importOf(up, ref);
      const p = await follow(up, synced, "--concurrency", "4", "--quiet");
      expect(p.code, p.stderr).toBe(0);
      expectSameTables(await dumpTables(synced), await dumpTables(ref));
      await expectServedAsUpstream(synced);
    } finally {
      await backend.cleanup();
    }
    await expectServedAsUpstream(db);
  }, 300_000);

  /** The replica's summaries of the sender and modules of 0x1 are the upstream's, byte for byte. */
  async function expectServedAsUpstream(db: string): Promise<void> {
    const node = await startTestNode(db, { prune: false });
    try {
      for (const path of [`/accounts/${userLike!.sender}/transaction_summaries?limit=100`, "/accounts/0x1/modules?limit=9999"]) {
        const [mine, theirs] = await Promise.all([fetch(`${node.base}${path}`), fetch(`${up.base}${path}`)]);
        expect(mine.status).toBe(200);
        expect(theirs.status).toBe(200);
        expect(await mine.text()).toBe(await theirs.text());
      }
      const summaries = (await (await fetch(`${node.base}/accounts/${userLike!.sender}/transaction_summaries?limit=100`)).json()) as Json[];
      expect(summaries.map((s) => s.version)).toContain(userLike!.version);
      const modules = await (await fetch(`${node.base}/accounts/0x1/modules?limit=9999`)).text();
      // The upstream's ABI, as it printed it, with the bytecode it could not decode here.
      expect(modules).toContain(`{"bytecode":"${newerBytecode}","abi":${JSON.stringify(fixture.abi)}}`);
    } finally {
      await node.close();
    }
  }
});

describe("an upstream that caps its pages, or answers past the size bound", () => {
  let up: FakeUpstream;
  let imported: string;
  beforeAll(async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: 150 });
    imported = newDb();
    importOf(up, imported);
  }, 300_000);
  afterAll(async () => {
    await up?.close();
  });

  for (const concurrency of [1, 4]) {
    it(`pages capped at 25, --concurrency ${concurrency}: synced to the head, equal to the import, about versions/25 requests`, async () => {
      const db = newDb();
      up.faults.pageCap = 25;
      const before = up.count("/v1/transactions");
      try {
        const r = await follow(up, db, "--concurrency", String(concurrency), "--quiet");
        expect(r.code, r.stderr).toBe(0);
      } finally {
        up.heal();
      }
      const requests = up.count("/v1/transactions") - before;
      const versions = Number(up.ledgerVersion) + 1;
      // Every request brings 25 new versions, but the one at the head and the first ones asked
      // before the cap was seen.
      expect(requests).toBeGreaterThanOrEqual(Math.ceil(versions / 25));
      expect(requests).toBeLessThanOrEqual(Math.ceil(versions / 25) + concurrency + 1);
      expectSameTables(await dumpTables(db), await dumpTables(imported));
    }, 120_000);
  }

  for (const kind of ["gzip", "plain"] as const) {
    it(`a ${kind === "gzip" ? "gzip bomb (1 GiB inflated)" : "plain page of 256 MiB"} is cut at 32 MiB, retried, and the sync completes`, async () => {
      const db = newDb();
      up.faults.oversized = { kind, bytes: kind === "gzip" ? 1 << 30 : 256 << 20, times: 2 };
      up.oversizedBytesSent = 0;
      try {
        const r = await follow(up, db, "--concurrency", "1");
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toMatch(/retrying in \d+ ms .*: answer larger than 33554432 bytes/);
      } finally {
        up.heal();
      }
      // Both answers were cut well before their end: the follower never read them whole.
      const whole = kind === "gzip" ? 2 * 1_000_000 : 2 * (256 << 20);
      expect(up.oversizedBytesSent).toBeLessThan(whole / 2);
      expectSameTables(await dumpTables(db), await dumpTables(imported));
    }, 120_000);
  }
});
