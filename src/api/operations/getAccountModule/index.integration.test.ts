/**
 * GET /v1/accounts/{address}/module/{module_name}: one module at each version, the same record
 * the modules page sends (JSON) or its bytecode (BCS); the reference's 404 and 400.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildModule } from "../../../move/builder.js";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr, deleteModule, writeModule } from "../../../../test/helpers/chain.js";
import { serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";

const APP = addr("cafe");
const v1 = buildModule({ address: APP, name: "shop", functions: [{ name: "buy", entry: true, params: ["&signer", "u64"] }] });
const v2 = buildModule({ address: APP, name: "shop", functions: [{ name: "buy", entry: true, params: ["&signer", "u64"] }, { name: "price", view: true, returns: ["u64"] }] });

const backend = sqliteBackend();
describe(`module (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis();
  const v: Record<string, bigint> = {};
  beforeAll(async () => {
    v.published = chain.nextUserVersion;
    chain.block([{ sender: APP, changes: [writeModule(APP, v1), writeModule(APP, "0xa11ceb0b030000", "broken")] }]);
    v.upgraded = chain.nextUserVersion;
    chain.block([{ sender: APP, seq: 1, changes: [writeModule(APP, v2)] }]);
    v.deleted = chain.nextUserVersion;
    chain.block([{ sender: APP, seq: 2, changes: [deleteModule(APP, "shop")] }]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const get = (path: string, accept = "application/json") => fetch(`${node.base}/accounts/${path}`, { headers: { accept } });

  it("answers at each version the record the modules page sends for the module", async () => {
    for (const at of [v.published!, v.upgraded!]) {
      const page = (await (await get(`${APP}/modules?ledger_version=${at}`)).json()) as Array<{ abi: { name: string } | null }>;
      for (const [i, name] of page.map((m, i) => [i, m.abi?.name ?? "broken"] as const)) {
        const res = await get(`${APP}/module/${name}?ledger_version=${at}`);
        expect(res.status).toBe(200);
        expect(res.headers.get("x-node-ledger-version")).toBe(String(chain.version - 1n));
        expect(JSON.parse(await res.text())).toEqual(page[i]);
      }
    }
    const upgraded = (await (await get(`0xcafe/module/shop?ledger_version=${v.upgraded}`)).json()) as { abi: { exposed_functions: Array<{ name: string }> } };
    expect(upgraded.abi.exposed_functions.map((f) => f.name)).toEqual(["buy", "price"]);
    expect(await (await get(`${APP}/module/broken`)).json()).toEqual({ bytecode: "0xa11ceb0b030000", abi: null });
  });

  it("answers BCS: the bytecode itself", async () => {
    const res = await get(`${APP}/module/shop?ledger_version=${v.published}`, "application/x-bcs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-bcs");
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(v1))).toBe(true);
  });

  it("answers 404 module_not_found before it is published and after it is deleted", async () => {
    for (const at of [v.published! - 1n, v.deleted!]) {
      const res = await get(`${APP}/module/shop?ledger_version=${at}`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ message: `Module not found by Address(0xcafe), Module name(shop) and Ledger version(${at})`, error_code: "module_not_found" });
    }
  });

  it("answers 400 for a module name that is not a Move identifier, before the version is resolved", async () => {
    expect((await get(`${APP}/module/1shop?ledger_version=99999999`)).status).toBe(400);
    for (const name of ["1shop", "sh-op", "_"]) {
      const res = await get(`${APP}/module/${name}`);
      expect(res.status, name).toBe(400);
      expect(await res.json()).toEqual({
        message: `failed to parse path \`module_name\`: failed to parse "string(IdentifierWrapper)": Invalid identifier '${name}'`,
        error_code: "web_framework_error",
      });
    }
  });
});
