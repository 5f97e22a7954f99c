/**
 * The OpenAPI-generated client inside the legacy `aptos` package (1.8.5, pinned):
 * `Types.AptosGeneratedClient`, generated from the reference node's own spec. It is the one real
 * client with methods for `spec` and `get_raw_table_item`, so it checks that our paths,
 * parameters and media types are where the reference document says they are.
 */
import { Types } from "aptos";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../helpers/backends.js";
import type { TestNode } from "../helpers/node.js";
import { call, GENESIS_TABLE_ITEM, genesisModuleNames, hex, startGenesisNode } from "./helpers.js";

type Generated = InstanceType<typeof Types.AptosGeneratedClient>;

/** The generated client throws its own ApiError with `status` and the parsed `body`. */
async function failure(p: Promise<unknown>): Promise<{ status: number; body: any }> {
  try {
    await p;
  } catch (e) {
    const err = e as { status?: number; body?: unknown };
    if (typeof err.status === "number") return { status: err.status, body: err.body };
    throw e;
  }
  throw new Error("expected the call to fail");
}

const headersOf = (v: unknown): Record<string, string> => (v as { __headers: Record<string, string> }).__headers;
function withoutHeaders<T extends object>(v: T): Omit<T, "__headers"> {
  const { __headers: _, ...rest } = v as T & { __headers?: unknown };
  return rest;
}

const backend = sqliteBackend();
describe(`aptos@1.8.5 AptosGeneratedClient against the node (${backend.name})`, () => {
  let node: TestNode;
  let json: Generated;
  let bcs: Generated;

  beforeAll(async () => {
    node = await startGenesisNode(await backend.newDb(), { aptosHeaders: true });
    json = new Types.AptosGeneratedClient({ BASE: node.base });
    // The client switches to an ArrayBuffer response only when the *config* asks for BCS.
    bcs = new Types.AptosGeneratedClient({ BASE: node.base, HEADERS: { Accept: "application/x-bcs" } });
  });
  afterAll(async () => {
    await node?.close();
    await backend.cleanup();
  });

  it("general.spec() gets the explorer page", async () => {
    const page = await json.general.spec();
    expect(typeof page).toBe("string");
    expect(page).toMatch(/^<!doctype html>/i);
    expect(page).toContain("spec.json");
  });

  it("tables.getRawTableItem with Accept BCS returns the stored bytes (a Buffer under Node) with the headers attached", async () => {
    const value = (await bcs.tables.getRawTableItem(GENESIS_TABLE_ITEM.handle, { key: GENESIS_TABLE_ITEM.key })) as unknown;
    expect(value).toBeInstanceOf(Uint8Array);
    expect(hex(value as Uint8Array)).toBe(GENESIS_TABLE_ITEM.value);
    // The generated client hangs the response headers on the result as `__headers`.
    expect(headersOf(value)).toMatchObject({ "x-aptos-ledger-version": "0", "x-node-ledger-version": "0", "content-type": "application/x-bcs" });
    // With an explicit ledger version, and the handle without 0x.
    const at0 = (await bcs.tables.getRawTableItem(GENESIS_TABLE_ITEM.handle.slice(2), { key: GENESIS_TABLE_ITEM.key }, "0")) as unknown;
    expect(hex(at0 as Uint8Array)).toBe(GENESIS_TABLE_ITEM.value);
  });

  it("tables.getRawTableItem errors: its default Accept (JSON) is 403; a missing key is 404; a future version is 404", async () => {
    const jsonOnly = await failure(json.tables.getRawTableItem(GENESIS_TABLE_ITEM.handle, { key: GENESIS_TABLE_ITEM.key }));
    expect(jsonOnly.status).toBe(403);
    expect(jsonOnly.body).toMatchObject({ error_code: "api_disabled" });
    // Error bodies are JSON even when the client asked for BCS; it hands them back as bytes.
    const missing = await failure(bcs.tables.getRawTableItem(GENESIS_TABLE_ITEM.handle, { key: "0x00" }));
    expect(missing.status).toBe(404);
    expect(JSON.parse(Buffer.from(missing.body as Uint8Array).toString("utf8"))).toMatchObject({ error_code: "table_item_not_found" });
    const future = await failure(bcs.tables.getRawTableItem(GENESIS_TABLE_ITEM.handle, { key: GENESIS_TABLE_ITEM.key }, "7"));
    expect(future.status).toBe(404);
  });

  it("accounts.getAccountModules pages through 0x1 with the cursor from the result's __headers", async () => {
    const seen: string[] = [];
    let start: string | undefined;
    let pages = 0;
    do {
      const page = await json.accounts.getAccountModules("0x1", undefined, start, 25);
      seen.push(...page.map((m) => m.abi!.name));
      start = headersOf(page)["x-aptos-cursor"];
      expect(start).toBe(headersOf(page)["x-node-cursor"]);
      pages++;
    } while (start !== undefined);
    expect(pages).toBe(3);
    expect([...seen].sort()).toEqual([...genesisModuleNames("0x1")].sort());
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("the other generated methods that reach our node: modules, gas estimate, ledger info, health", async () => {
    const mods = await json.accounts.getAccountModules("0x1", undefined, undefined, 5);
    expect(mods.map((m) => m.abi!.name)).toEqual((await call(`${node.base}/accounts/0x1/modules?limit=5`)).json.map((m: any) => m.abi.name));
    expect(genesisModuleNames("0x1")).toEqual(expect.arrayContaining(mods.map((m) => m.abi!.name)));
    expect(withoutHeaders(await json.transactions.estimateGasPrice())).toEqual((await call(`${node.base}/estimate_gas_price`)).json);
    // GET {BASE}/ — the index with a trailing slash.
    const index = await json.general.getLedgerInfo();
    expect(withoutHeaders(index)).toEqual((await call(`${node.base}/`)).json);
    expect(index).toMatchObject({ chain_id: 4, ledger_version: "0", node_role: "full_node" });
    expect(headersOf(index)).toMatchObject({ "x-aptos-chain-id": "4" });
    expect(withoutHeaders(await json.general.healthy())).toEqual({ message: "aptos-node:ok" });
    // The fixture's genesis is dated 1970: never fresh.
    const stale = await failure(json.general.healthy(60));
    expect(stale.status).toBe(503);
    expect(stale.body).toMatchObject({ error_code: "health_check_failed" });
  });
});
