/**
 * GET /v1/accounts/{address}/transaction_summaries: the window rules of docs/decisions.md §10, both replay
 * kinds, BCS. On SQLite: the store's summary reads are pinned on every backend by the store
 * suite, the parity test and the prune races; the last suite pins PostgreSQL's pages (its
 * position read brings the page) against SQLite's over HTTP.
 */
import { bcs } from "@mysten/bcs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr } from "../../../../test/helpers/chain.js";
import { serveChain, serveOnEveryBackend, stopNode, type TestNode } from "../../../../test/helpers/node.js";
import { PostgresStore } from "../../../storage/postgres/PostgresStore.js";
import { statementsSent } from "../../../storage/postgres/testing.js";

/** Statements the PostgreSQL node's reads have sent so far. */
function statementsOf(node: TestNode): number {
  if (!(node.store instanceof PostgresStore)) throw new Error(`${node.db} is not served from PostgreSQL`);
  return statementsSent(node.store);
}

const ALICE = addr("a11ce");
const BOB = addr("b0b");
type Summary = { sender: string; version: string; transaction_hash: string; replay_protector: Record<string, string> };

const backend = sqliteBackend();
describe(`transaction_summaries (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis();
  const aliceVersions: bigint[] = [];
  beforeAll(async () => {
    let seq = 0;
    for (let b = 0; b < 30; b++) {
      const start = chain.nextUserVersion;
      const users = [
        { sender: ALICE, seq: seq++ },
        { sender: BOB, seq: b },
        { sender: ALICE, nonce: 1000 + b },
      ];
      aliceVersions.push(start, start + 2n);
      chain.block(users);
    }
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const get = async (q: string, who = ALICE) => {
    const res = await fetch(`${node.base}/accounts/${who}/transaction_summaries${q}`);
    return { res, body: (await res.json()) as Summary[] };
  };
  const versions = (s: Summary[]) => s.map((x) => BigInt(x.version));

  it("returns the latest 100 by default, ascending, only the sender's, both replay kinds tagged", async () => {
    const { res, body } = await get("");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-node-ledger-version")).toBe(String(chain.version - 1n));
    expect(versions(body)).toEqual(aliceVersions.slice(-100));
    expect(body.every((s) => s.sender === "0xa11ce")).toBe(true);
    expect(body[0]!.replay_protector).toEqual({ type: "sequence_number", sequence_number: "0" });
    expect(body[1]!.replay_protector).toEqual({ type: "nonce", nonce: "1000" });
    expect(body[0]!.transaction_hash).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("pages forward from start_version (end_version ignored) and back from end_version", async () => {
    const start = aliceVersions[10]!;
    expect(versions((await get(`?start_version=${start}&limit=5&end_version=1`)).body)).toEqual(aliceVersions.slice(10, 15));
    expect(versions((await get(`?start_version=${start + 1n}&limit=2`)).body)).toEqual(aliceVersions.slice(11, 13));
    const end = aliceVersions[20]!;
    expect(versions((await get(`?end_version=${end}&limit=4`)).body)).toEqual(aliceVersions.slice(17, 21));
    expect(versions((await get(`?end_version=${end - 1n}&limit=4`)).body)).toEqual(aliceVersions.slice(16, 20));
    expect(versions((await get(`?limit=3`)).body)).toEqual(aliceVersions.slice(-3));
  });

  it("clamps large limits to 100, answers [] for limit=0, beyond the ledger, and unknown accounts", async () => {
    expect((await get("?limit=65535")).body).toHaveLength(Math.min(100, aliceVersions.length));
    expect((await get("?limit=0")).body).toEqual([]);
    expect((await get(`?start_version=${chain.version + 10n}`)).body).toEqual([]);
    // u64::MAX bounds (found by the property test: once a 500 on SQLite's signed integers).
    expect((await get("?start_version=18446744073709551615")).body).toEqual([]);
    expect(versions((await get("?end_version=18446744073709551615&limit=1")).body)).toEqual(aliceVersions.slice(-1));
    expect((await get("", addr("dead"))).body).toEqual([]);
  });

  it("encodes BCS as vector<IndexedTransactionSummary::V1>", async () => {
    const json = (await get("?limit=2")).body;
    const res = await fetch(`${node.base}/accounts/${ALICE}/transaction_summaries?limit=2`, { headers: { accept: "application/x-bcs" } });
    expect(res.headers.get("content-type")).toBe("application/x-bcs");
    const layout = bcs.vector(
      bcs.enum("IndexedTransactionSummary", {
        V1: bcs.struct("V1", {
          sender: bcs.fixedArray(32, bcs.u8()),
          version: bcs.u64(),
          transaction_hash: bcs.byteVector(),
          replay_protector: bcs.enum("ReplayProtector", { Nonce: bcs.u64(), SequenceNumber: bcs.u64() }),
        }),
      }),
    );
    const decoded = layout.parse(new Uint8Array(await res.arrayBuffer()));
    expect(decoded).toHaveLength(2);
    decoded.forEach((d, i) => {
      const v1 = d.V1!;
      // BCS carries all 32 bytes; JSON prints them with leading zeros stripped.
      expect("0x" + Buffer.from(v1.sender).toString("hex")).toBe(ALICE);
      expect(json[i]!.sender).toBe("0xa11ce");
      expect(v1.version).toBe(json[i]!.version);
      expect("0x" + Buffer.from(v1.transaction_hash).toString("hex")).toBe(json[i]!.transaction_hash);
      const rp = json[i]!.replay_protector;
      expect(v1.replay_protector).toEqual(rp.type === "nonce" ? { Nonce: rp.nonce, $kind: "Nonce" } : { SequenceNumber: rp.sequence_number, $kind: "SequenceNumber" });
    });
    for (const [accept, type] of [
      ["application/json;q=0.1, application/x-bcs", "application/x-bcs"],
      ["application/x-bcs;q=0, application/json;q=0.2", "application/json; charset=utf-8"],
      ["application/x-bcs;q=0", "application/json; charset=utf-8"],
    ]) {
      const r = await fetch(`${node.base}/accounts/${ALICE}/transaction_summaries?limit=2`, { headers: { accept: accept! } });
      expect(r.headers.get("content-type"), accept).toBe(type);
      await r.arrayBuffer();
    }
    const empty = await fetch(`${node.base}/accounts/${addr("dead")}/transaction_summaries`, { headers: { accept: "application/x-bcs" } });
    expect(Buffer.from(await empty.arrayBuffer())).toEqual(Buffer.from([0]));
  });
});

/**
 * On PostgreSQL the position read of a page may bring the page itself (`readSummariesVersion`'s
 * `page`), and the handler then sends that: every page and error must be SQLite's.
 */
describe("transaction_summaries on PostgreSQL, page by page as on SQLite", () => {
  let served: Awaited<ReturnType<typeof serveOnEveryBackend>> | undefined;
  const chain = new ChainBuilder().genesis();
  beforeAll(async () => {
    for (let b = 0; b < 8; b++) chain.block([{ sender: ALICE, seq: b }, { sender: BOB, nonce: 500 + b }, { sender: ALICE, nonce: 900 + b }]);
    served = await serveOnEveryBackend(chain);
  });
  afterAll(() => served?.stop());

  const answer = async (node: TestNode, who: string, query: string, accept: string) => {
    const res = await fetch(`${node.base}/accounts/${who}/transaction_summaries${query}`, { headers: { accept } });
    return { status: res.status, ledger: res.headers.get("x-node-ledger-version"), body: Buffer.from(await res.arrayBuffer()).toString("hex") };
  };

  it("answers every window in both formats as SQLite, each asked twice (a miss, then a page the cache may keep)", async () => {
    const [sqlite, postgres] = served!.nodes as [TestNode, TestNode];
    const latest = BigInt((await (await fetch(`${sqlite.base}/`)).json()).ledger_version);
    const queries = ["", "?limit=1", "?limit=0", "?limit=3", "?start_version=0&limit=4", "?start_version=9", `?end_version=${latest - 4n}&limit=2`, `?end_version=${latest + 100n}&limit=2`];
    let compared = 0;
    for (const accept of ["application/json", "application/x-bcs"])
      for (const who of [ALICE, BOB, addr("dead")])
        for (const query of queries) {
          const expected = await answer(sqlite, who, query, accept);
          expect(expected.status, query).toBe(200);
          for (let i = 0; i < 2; i++) expect(await answer(postgres, who, query, accept), `${who} ${query} ${accept} (${i})`).toEqual(expected);
          compared++;
        }
    expect(compared).toBe(48);
  });

  it("reads a settled page it has not seen with its position in one round trip, however old its memo of the position", async () => {
    const [sqlite, postgres] = served!.nodes as [TestNode, TestNode];
    const latest = BigInt((await (await fetch(`${sqlite.base}/`)).json()).ledger_version);
    // committed end_versions, and one past the newest (not settled: its page may still grow)
    for (const query of [`?end_version=${latest - 5n}&limit=3`, `?end_version=${latest - 1n}&limit=3`, `?end_version=${latest + 7n}&limit=3`]) {
      const expected = await answer(sqlite, ALICE, query, "application/json");
      // the node trusts the position its last read saw for 10 ms: past that, the position alone was a round trip
      await sleep(40);
      const before = statementsOf(postgres);
      expect(await answer(postgres, ALICE, query, "application/json"), query).toEqual(expected);
      expect(statementsOf(postgres) - before, query).toBe(1);
    }
  });

  it("refuses what SQLite refuses, with the same error", async () => {
    const [sqlite, postgres] = served!.nodes as [TestNode, TestNode];
    for (const query of ["?limit=x", "?start_version=-1", "?end_version=99999999999999999999999"]) {
      const expected = await answer(sqlite, ALICE, query, "application/json");
      expect(expected.status, query).toBeGreaterThanOrEqual(400);
      expect(await answer(postgres, ALICE, query, "application/json"), query).toEqual(expected);
    }
  });
});
