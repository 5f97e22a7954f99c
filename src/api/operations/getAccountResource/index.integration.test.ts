/**
 * GET /v1/accounts/{address}/resource/{resource_type}: a resource at each version, found in any
 * spelling of its type, the reference's 404, the 400s of a type that is not a struct tag.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr, deleteResource, writeResource } from "../../../../test/helpers/chain.js";
import { serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";

const ALICE = addr("a11ce");
const COIN = "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>";
const store = (value: number) => ({ coin: { value: String(value) }, frozen: false, deposit_events: { counter: "0", guid: { id: { addr: ALICE, creation_num: "2" } } } });

const backend = sqliteBackend();
describe(`resource (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis([writeResource(ALICE, COIN, store(5))]);
  const v: Record<string, bigint> = {};
  beforeAll(async () => {
    v.paid = chain.nextUserVersion;
    chain.block([{ sender: ALICE, changes: [writeResource(ALICE, COIN, store(7))] }]);
    v.gone = chain.nextUserVersion;
    chain.block([{ sender: ALICE, seq: 1, changes: [deleteResource(ALICE, COIN)] }]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const get = (type: string, q = "", accept = "application/json") => fetch(`${node.base}/accounts/${ALICE}/resource/${encodeURIComponent(type)}${q}`, { headers: { accept } });

  it("answers the resource of each version as the reference writes it, in any spelling of its type", async () => {
    const at0 = await get(COIN, "?ledger_version=0");
    expect(at0.status).toBe(200);
    expect(await at0.text()).toBe(`{"type":"${COIN}","data":${JSON.stringify(store(5))}}`);
    const spellings = [COIN, `0x0001::coin::CoinStore<${addr("1")}::aptos_coin::AptosCoin>`, "0x1::coin::CoinStore< 0x1::aptos_coin::AptosCoin >".replace(" >", ">")];
    for (const t of spellings) expect(await (await get(t, `?ledger_version=${v.paid}`)).text(), t).toBe(`{"type":"${COIN}","data":${JSON.stringify(store(7))}}`);
  });

  it("answers 404 resource_not_found for a deleted or never written resource, with the ledger headers", async () => {
    const gone = await get(COIN, `?ledger_version=${v.gone}`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ message: `Resource not found by Address(0xa11ce), Struct tag(${COIN}) and Ledger version(${v.gone})`, error_code: "resource_not_found" });
    expect(gone.headers.get("x-node-ledger-version")).toBe(String(chain.version - 1n));
    expect((await get("0x1::account::Account")).status).toBe(404);
  });

  it("answers 400 for a type that is not a struct tag, never a lookup", async () => {
    for (const t of ["0x1::coin", "coin::CoinStore", "0x1::coin::CoinStore<T0>", "0x1::coin::CoinStore<", "u64", "0xzz::a::B"]) {
      const res = await get(t);
      expect(res.status, t).toBe(400);
      const body = (await res.json()) as { message: string; error_code: string };
      expect(body.error_code, t).toBe("web_framework_error");
      expect(body.message, t).toContain("failed to parse path `resource_type`");
      expect(body.message, t).toContain(JSON.stringify(t));
    }
    const invalid = await get("0x1::1coin::CoinStore");
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ message: "'resource_type' invalid: Invalid identifier '1coin'", error_code: "invalid_input" });
    // validated before the version is resolved, as the reference does: a 400, not the version's 404
    for (const t of ["0x1::coin", "0x1::1coin::CoinStore"]) expect((await get(t, "?ledger_version=99999999")).status, t).toBe(400);
  });

  it("refuses BCS with 406 bcs_not_supported: resource values are held as JSON", async () => {
    const res = await get(COIN, "", "application/x-bcs");
    expect(res.status).toBe(406);
    expect(((await res.json()) as { error_code: string }).error_code).toBe("bcs_not_supported");
  });
});
