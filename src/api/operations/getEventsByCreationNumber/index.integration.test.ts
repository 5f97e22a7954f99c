/**
 * GET /v1/accounts/{address}/events/{creation_number} over real HTTP on SQLite: the events of a
 * handle as the recorded transactions hold them (the genesis's in the older `key` form, a block's
 * in the `guid` form), module events never; pages by sequence number, the latest page, the
 * reference's limits, and 410 once the events asked for are pruned.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr } from "../../../../test/helpers/chain.js";
import { recordedLedger, versioned } from "../../../../test/helpers/events.js";
import { pruneServed, serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";

const backend = sqliteBackend();

type Json = Record<string, unknown>;

describe(`events by creation number, of the recorded transactions (${backend.name})`, () => {
  let node: TestNode;
  const { chain, txns } = recordedLedger();
  const eventsOf = (v: number) => txns[v]!.events as Json[];
  beforeAll(async () => {
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const get = (path: string) => fetch(`${node.base}/accounts/${path}`);

  it("serves the block events of 0x1 (creation number 3): the genesis's in the key form, version 1's in the guid form", async () => {
    const genesisBlockEvent = eventsOf(0).find((e) => e.type === "0x1::block::NewBlockEvent")!;
    const res = await get("0x1/events/3");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-node-ledger-version")).toBe("3");
    expect(await res.text()).toBe(`[${versioned("0", genesisBlockEvent)},${versioned("1", eventsOf(1)[0]!)}]`);
    expect(await (await get("0x1/events/3?start=1")).text()).toBe(`[${versioned("1", eventsOf(1)[0]!)}]`);
    expect(await (await get("0x1/events/3?limit=1")).text()).toBe(`[${versioned("1", eventsOf(1)[0]!)}]`);
    expect(await (await get("0x1/events/3?start=2")).text()).toBe("[]");
  });

  it("serves every handle event of the genesis by its key, and finds the address however it is spelled", async () => {
    for (const e of eventsOf(0)) {
      const key = Buffer.from((e.key as string).slice(2), "hex");
      const creation = key.readBigUInt64LE(0);
      const address = `0x${key.subarray(8).toString("hex")}`;
      const page = JSON.parse(await (await get(`${address}/events/${creation}?start=0&limit=1`)).text()) as Json[];
      expect(JSON.stringify(page[0])).toBe(versioned("0", e));
    }
    const deposit = eventsOf(0)[1]!;
    expect(await (await get("0xa550c18/events/2")).text()).toBe(`[${versioned("0", deposit)}]`);
  });

  it("never lists module events (creation number 0 at 0x0), and answers [] for a handle without events", async () => {
    expect(eventsOf(2)[0]!.type).toBe("0x1::transaction_fee::FeeStatement");
    expect(await (await get("0x0/events/0")).text()).toBe("[]");
    expect(await (await get(`${addr("dead")}/events/7`)).text()).toBe("[]");
  });
});

describe(`events by creation number, paged and pruned (${backend.name})`, () => {
  let node: TestNode;
  const ALICE = addr("a11ce");
  const chain = new ChainBuilder().genesis();
  /** Alice's deposit events (creation number 2) by sequence number, as the node must print them. */
  const deposits: string[] = [];
  beforeAll(async () => {
    for (let seq = 0; seq < 40; seq++) {
      chain.block([{ sender: ALICE, seq }]);
      const user = chain.txns[chain.txns.length - 2]!;
      const events = [
        { guid: { creation_number: "2", account_address: "0xa11ce" }, sequence_number: String(seq), type: "0x1::coin::DepositEvent", data: { amount: String(seq) } },
        { guid: { creation_number: "0", account_address: "0x0" }, sequence_number: "0", type: "0x1::transaction_fee::FeeStatement", data: { total_charge_gas_units: "1" } },
      ];
      user.events = events;
      deposits.push(versioned(user.version as string, events[0]!));
    }
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const get = (q: string, creation = "2") => fetch(`${node.base}/accounts/${ALICE}/events/${creation}${q}`);

  it("pages by sequence number from start, and gives the latest 25 without it; a limit past 100 is clamped", async () => {
    expect(await (await get("?start=3&limit=4")).text()).toBe(`[${deposits.slice(3, 7).join(",")}]`);
    expect(await (await get("")).text()).toBe(`[${deposits.slice(15).join(",")}]`);
    expect(await (await get("?limit=2")).text()).toBe(`[${deposits.slice(38).join(",")}]`);
    expect(await (await get("?start=39&limit=10")).text()).toBe(`[${deposits[39]}]`);
    expect(await (await get("?start=40")).text()).toBe("[]");
    expect(await (await get("?start=0&limit=65535")).text()).toBe(`[${deposits.join(",")}]`);
    expect(await (await get("", "3")).text()).toBe("[]");
  });

  it("refuses limit 0, a start or creation number that is not a u64, a bad address and BCS, in the reference's words", async () => {
    const zero = await get("?limit=0");
    expect(zero.status).toBe(400);
    expect(await zero.json()).toEqual({ message: "Given limit value (0) must not be zero", error_code: "invalid_input" });
    const start = await get("?start=x");
    expect(start.status).toBe(400);
    expect(((await start.json()) as { message: string }).message).toBe(
      'failed to parse parameter `start`: failed to parse "string(U64)": Parsing u64 string "x" failed, caused by error: invalid digit found in string (occurred while parsing "optional<string(U64)>")',
    );
    const creation = await get("", "18446744073709551616");
    expect(creation.status).toBe(400);
    expect(((await creation.json()) as { message: string }).message).toBe(
      'failed to parse path `creation_number`: failed to parse "string(U64)": Parsing u64 string "18446744073709551616" failed, caused by error: number too large to fit in target type',
    );
    expect((await fetch(`${node.base}/accounts/xyz/events/2`)).status).toBe(400);
    const bcs = await fetch(`${node.base}/accounts/${ALICE}/events/2`, { headers: { accept: "application/x-bcs" } });
    expect(bcs.status).toBe(406);
    expect(((await bcs.json()) as { error_code: string }).error_code).toBe("bcs_not_supported");
  });

  it("answers 410 for events whose transactions are pruned, for a latest page reaching below them too, and serves those kept", async () => {
    await pruneServed(node, "40");
    const gone = await get("?start=0&limit=5");
    expect(gone.status).toBe(410);
    const body = (await gone.json()) as { error_code: string; message: string };
    expect(body.error_code).toBe("version_pruned");
    expect(body.message).toMatch(/^Events of the event handle of Address\(0xa11ce\) and creation number\(2\) from sequence number\(0\) have been pruned: the oldest version kept is \d+$/);
    expect((await get("")).status).toBe(410);
    const kept = JSON.parse(await (await get("?limit=5")).text()) as Array<{ sequence_number: string }>;
    expect(kept.map((e) => e.sequence_number)).toEqual(["35", "36", "37", "38", "39"]);
    const first = await (async () => {
      for (let s = 0; s < 40; s++) if ((await get(`?start=${s}&limit=1`)).status === 200) return s;
      return 40;
    })();
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(35);
    expect(await (await get(`?start=${first}&limit=100`)).text()).toBe(`[${deposits.slice(first).join(",")}]`);
  });
});

describe(`events by creation number past the page's byte budget (${backend.name})`, () => {
  it("ends a page once its transactions' texts would pass transactionsPageBytes, never before the first, a text counted once for its events", async () => {
    const ALICE = addr("a11ce");
    const chain = new ChainBuilder().genesis();
    const texts: string[] = [];
    const printed: string[] = [];
    for (let seq = 0; seq < 4; seq++) {
      chain.block([{ sender: ALICE, seq }]);
      const user = chain.txns[chain.txns.length - 2]!;
      // Two events of the handle in each transaction.
      const events = [0, 1].map((k) => ({
        guid: { creation_number: "5", account_address: "0xa11ce" },
        sequence_number: String(2 * seq + k),
        type: "0x1::coin::DepositEvent",
        data: { amount: String(k) },
      }));
      user.events = events;
      texts.push(JSON.stringify(user));
      for (const e of events) printed.push(versioned(user.version as string, e));
    }
    const budget = Buffer.byteLength(texts[0]!) + Buffer.byteLength(texts[1]!) + 1;
    const node = await serveChain(backend, chain, { api: { transactionsPageBytes: budget } });
    try {
      const get = async (q: string) => await (await fetch(`${node.base}/accounts/${ALICE}/events/5${q}`)).text();
      expect(await get("?start=0&limit=100")).toBe(`[${printed.slice(0, 4).join(",")}]`);
      expect(await get("?start=3&limit=100")).toBe(`[${printed.slice(3, 6).join(",")}]`);
      // The latest page: the first of it is held, so it is served, ending where the budget does.
      expect(await get("?limit=3")).toBe(`[${printed.slice(5, 8).join(",")}]`);
    } finally {
      await stopNode(node, backend);
    }
  });
});
