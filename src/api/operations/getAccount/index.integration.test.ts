/**
 * GET /v1/accounts/{address}: an account's sequence number and authentication key at each
 * version, the stateless default where the chain's feature says so, the reference's 404 and 400s.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr, writeResource } from "../../../../test/helpers/chain.js";
import { serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";

const ALICE = addr("a11ce");
const account = (seq: number) => ({ authentication_key: ALICE, sequence_number: String(seq), guid_creation_num: "0" });
/** `0x1::features::Features` with flag `DEFAULT_ACCOUNT_RESOURCE` (91) on: bit 3 of byte 11. */
const FEATURES_STATELESS = { features: `0x${"00".repeat(11)}08` };

const backend = sqliteBackend();
describe(`account (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis([writeResource(ALICE, "0x1::account::Account", account(0))]);
  const v: Record<string, bigint> = {};
  beforeAll(async () => {
    v.sent = chain.nextUserVersion;
    chain.block([{ sender: ALICE, changes: [writeResource(ALICE, "0x1::account::Account", account(1))] }]);
    v.stateless = chain.nextUserVersion;
    chain.block([{ sender: ALICE, seq: 1, changes: [writeResource("0x1", "0x1::features::Features", FEATURES_STATELESS)] }]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const get = (path: string, accept = "application/json") => fetch(`${node.base}/accounts/${path}`, { headers: { accept } });

  it("answers the sequence number and authentication key of each version, in any spelling of the address", async () => {
    const at0 = await get(`${ALICE}?ledger_version=0`);
    expect(at0.status).toBe(200);
    expect(await at0.text()).toBe(`{"sequence_number":"0","authentication_key":"${ALICE}"}`);
    expect(at0.headers.get("x-node-ledger-version")).toBe(String(chain.version - 1n));
    expect(await (await get(`0xa11ce?ledger_version=${v.sent}`)).json()).toEqual({ sequence_number: "1", authentication_key: ALICE });
    expect(await (await get(ALICE.slice(2))).json()).toEqual({ sequence_number: "1", authentication_key: ALICE });
  });

  it("answers 404 account_not_found for an address without an account, until the stateless feature is on", async () => {
    const before = await get(`0xb0b?ledger_version=${v.stateless! - 1n}`);
    expect(before.status).toBe(404);
    expect(await before.json()).toEqual({ message: `Account not found by Address(0xb0b) and Ledger version(${v.stateless! - 1n})`, error_code: "account_not_found" });
    expect(before.headers.get("x-node-ledger-version")).toBe(String(chain.version - 1n));
    const after = await get(`0xb0b?ledger_version=${v.stateless}`);
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual({ sequence_number: "0", authentication_key: addr("b0b") });
  });

  it("refuses BCS with 406 bcs_not_supported, and bad input with the reference's 4xx", async () => {
    const bcs = await get(ALICE, "application/x-bcs");
    expect(bcs.status).toBe(406);
    expect(((await bcs.json()) as { error_code: string }).error_code).toBe("bcs_not_supported");
    const bad = await get("0xnothex");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toBe(
      "failed to parse path `address`: failed to parse \"string(Address)\": Invalid account address: Hex characters are invalid: Invalid character 'n' at position 58",
    );
    const future = await get(`${ALICE}?ledger_version=99999999`);
    expect(future.status).toBe(404);
    expect(((await future.json()) as { error_code: string }).error_code).toBe("version_not_found");
  });
});
