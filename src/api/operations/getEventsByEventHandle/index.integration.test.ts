/**
 * GET /v1/accounts/{address}/events/{event_handle}/{field_name} over real HTTP on SQLite: the
 * handle a resource's field holds, read from the recorded genesis and block (the block resource's
 * `new_block_events` names 0x1's creation number 3), then its events as recorded; the reference's
 * 404s and 400s for a missing resource, a missing field, a field that is no event handle and bad
 * path values; 410 when the handle's counter says events are missing below the pruned window.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr, writeResource } from "../../../../test/helpers/chain.js";
import { pruneServed, serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";
import { recordedLedger, versioned } from "../../../../test/helpers/events.js";

const backend = sqliteBackend();
type Json = Record<string, unknown>;

describe(`events by event handle, of the recorded transactions (${backend.name})`, () => {
  let node: TestNode;
  const { chain, txns } = recordedLedger();
  beforeAll(async () => {
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const get = (path: string) => fetch(`${node.base}/accounts/${path}`);
  const error = async (res: Response) => ({ status: res.status, body: (await res.json()) as Json });

  it("finds the handle in the resource's field and serves its events as recorded, as by creation number", async () => {
    const block = (txns[0]!.events as Json[]).find((e) => e.type === "0x1::block::NewBlockEvent")!;
    const expected = `[${versioned("0", block)},${versioned("1", (txns[1]!.events as Json[])[0]!)}]`;
    const res = await get("0x1/events/0x1::block::BlockResource/new_block_events");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(expected);
    expect(await (await get("0x1/events/3")).text()).toBe(expected);
    expect(await (await get("0x1/events/0x1::block::BlockResource/new_block_events?start=1")).text()).toBe(`[${versioned("1", (txns[1]!.events as Json[])[0]!)}]`);
    // A generic struct tag, its handle without events.
    expect(await (await get("0x1/events/0x1::voting::VotingForum<0x1::governance_proposal::GovernanceProposal>/events")).status).toBe(400);
    expect(await (await get("0x1/events/0x1::aptos_governance::GovernanceEvents/vote_events")).text()).toBe("[]");
  });

  it("answers the reference's 404 for a resource or a field the account does not have", async () => {
    expect(await error(await get("0x1/events/0x1::nope::Nope/x"))).toEqual({
      status: 404,
      body: { message: "Resource not found by Address(0x1), Struct tag(0x1::nope::Nope) and Ledger version(3)", error_code: "resource_not_found" },
    });
    expect(await error(await get("0x1/events/0x1::block::BlockResource/nope"))).toEqual({
      status: 404,
      body: {
        message: "Struct Field not found by Address(0x1), Struct tag(0x1::block::BlockResource), Field name(nope) and Ledger version(3)",
        error_code: "struct_field_not_found",
      },
    });
  });

  it("answers 400 invalid_input for a field that is not an event handle, and for bad path values", async () => {
    expect(await error(await get("0x1/events/0x1::block::BlockResource/height"))).toEqual({
      status: 400,
      body: { message: "Deserialization error, field(height) type is not a EventHandle struct: unexpected end of input", error_code: "invalid_input" },
    });
    const tag = await error(await get("0x1/events/not_a_tag/x"));
    expect(tag.status).toBe(400);
    expect(tag.body.message).toMatch(/^failed to parse path `event_handle`: failed to parse "string\(MoveStructTag\)": invalid struct tag "not_a_tag"/);
    const field = await error(await get("0x1/events/0x1::block::BlockResource/1x"));
    expect(field).toEqual({
      status: 400,
      body: { message: `failed to parse path \`field_name\`: failed to parse "string(IdentifierWrapper)": Invalid identifier '1x'`, error_code: "web_framework_error" },
    });
    expect((await get("0x1/events/0x1::block::BlockResource/new_block_events?limit=0")).status).toBe(400);
  });
});

describe(`events by event handle, below a pruned window (${backend.name})`, () => {
  let node: TestNode;
  const ALICE = addr("a11ce");
  const STORE = "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>";
  const handle = (counter: number) => ({ counter: String(counter), guid: { id: { addr: "0xa11ce", creation_num: "2" } } });
  const chain = new ChainBuilder().genesis();
  beforeAll(async () => {
    // Two deposits early on; then blocks without any, so that a prune takes both.
    for (let seq = 0; seq < 20; seq++) {
      chain.block([{ sender: ALICE, seq, changes: seq < 2 ? [writeResource(ALICE, STORE, { coin: { value: "1" }, deposit_events: handle(seq + 1) })] : [] }]);
      if (seq < 2) {
        const user = chain.txns[chain.txns.length - 2]!;
        user.events = [{ guid: { creation_number: "2", account_address: "0xa11ce" }, sequence_number: String(seq), type: "0x1::coin::DepositEvent", data: { amount: "1" } }];
      }
    }
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  it("serves the handle's events, and once they are pruned answers 410 where the handle's counter passed the start, [] past it", async () => {
    const get = (q: string) => fetch(`${node.base}/accounts/${ALICE}/events/${STORE}/deposit_events${q}`);
    expect(((await (await get("")).json()) as unknown[]).length).toBe(2);
    await pruneServed(node, "20");
    expect((await get("")).status).toBe(410);
    expect((await get("?start=1")).status).toBe(410);
    expect(await (await get("?start=2")).text()).toBe("[]");
    // By creation number the handle's counter is not known: nothing held is [], as the reference answers.
    expect(await (await fetch(`${node.base}/accounts/${ALICE}/events/2?start=1`)).text()).toBe("[]");
  });
});
