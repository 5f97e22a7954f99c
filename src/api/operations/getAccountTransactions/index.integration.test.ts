/**
 * GET /v1/accounts/{address}/transactions over real HTTP on SQLite: the account's sequence-number
 * transactions by sequence number, byte for byte as imported, orderless ones left out; the latest
 * page without start; the reference's limits; 410 once the ones asked for are pruned.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr, writeResource } from "../../../../test/helpers/chain.js";
import { pruneServed, serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";

const backend = sqliteBackend();
const ALICE = addr("a11ce");
const BOB = addr("b0b");

describe(`account transactions (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis();
  /** Alice's transactions by sequence number, as imported. */
  const alice: string[] = [];
  beforeAll(async () => {
    for (let seq = 0; seq < 40; seq++) {
      chain.block([
        { sender: ALICE, seq, changes: [writeResource(ALICE, "0x1::account::Account", { sequence_number: String(seq + 1) })] },
        { sender: ALICE, nonce: 500 + seq },
        { sender: BOB, seq },
      ]);
      alice.push(JSON.stringify(chain.txns[chain.txns.length - 4]));
    }
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const get = (q: string, who = ALICE) => fetch(`${node.base}/accounts/${who}/transactions${q}`);

  it("pages by sequence number from start, and gives the latest 25 without it; orderless transactions are not listed", async () => {
    expect(await (await get("?start=3&limit=4")).text()).toBe(`[${alice.slice(3, 7).join(",")}]`);
    expect(await (await get("")).text()).toBe(`[${alice.slice(15).join(",")}]`);
    expect(await (await get("?limit=2")).text()).toBe(`[${alice.slice(38).join(",")}]`);
    expect(await (await get("?start=39&limit=10")).text()).toBe(`[${alice[39]}]`);
    expect(await (await get("?start=40")).text()).toBe("[]");
    expect(await (await get("", addr("dead"))).text()).toBe("[]");
    const page = JSON.parse(await (await get("?start=0&limit=100")).text()) as Array<{ sequence_number: string; replay_protection_nonce: string | null }>;
    expect(page.map((t) => t.sequence_number)).toEqual(Array.from({ length: 40 }, (_, i) => String(i)));
    expect(page.every((t) => t.replay_protection_nonce === null)).toBe(true);
  });

  it("refuses limit 0 and a bad start, and BCS, as /transactions does", async () => {
    const zero = await get("?limit=0");
    expect(zero.status).toBe(400);
    expect(await zero.json()).toEqual({ message: "Given limit value (0) must not be zero", error_code: "invalid_input" });
    expect((await get("?start=x")).status).toBe(400);
    expect((await fetch(`${node.base}/accounts/xyz/transactions`)).status).toBe(400);
    expect((await fetch(`${node.base}/accounts/${ALICE}/transactions`, { headers: { accept: "application/x-bcs" } })).status).toBe(406);
  });

  it("answers 410 for sequence numbers whose transactions are pruned, and serves those kept", async () => {
    await pruneServed(node, "40");
    const gone = await get("?start=0&limit=5");
    expect(gone.status).toBe(410);
    expect(((await gone.json()) as { error_code: string }).error_code).toBe("version_pruned");
    const kept = JSON.parse(await (await get("?limit=100")).text()) as Array<{ sequence_number: string }>;
    const first = Number(kept[0]!.sequence_number);
    expect(first).toBeGreaterThan(0);
    expect(await (await get(`?start=${first}&limit=100`)).text()).toBe(`[${alice.slice(first).join(",")}]`);
    expect((await get(`?start=${first - 1}`)).status).toBe(410);
  });
});
