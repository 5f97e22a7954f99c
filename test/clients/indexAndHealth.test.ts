/**
 * GET /v1 (and /v1/) and GET /v1/-/healthy: not among the six operations of the interface, but
 * every Aptos SDK's getLedgerInfo/getChainId and every load balancer's health probe call them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../helpers/backends.js";
import { startTestNode, type TestNode } from "../helpers/node.js";
import { call, OPERATION_PATHS, startDevnetNode, startGenesisNode } from "./helpers.js";
import { LEDGER_HEADERS } from "../helpers/headers.js";


const backend = sqliteBackend();
describe(`GET /v1 and /v1/-/healthy (${backend.name})`, () => {
  /** The real genesis: ledger version 0, timestamp 0 (1970). */
  let genesis: TestNode;
  /** A devnet with fresh blocks, a git hash and the X-Aptos-* headers. */
  let devnet: TestNode;
  /** No block at all. */
  let empty: TestNode;

  beforeAll(async () => {
    genesis = await startGenesisNode(await backend.newDb());
    devnet = await startDevnetNode(await backend.newDb(), 3, { aptosHeaders: true, api: { gitHash: "0123abcd" } });
    empty = await startTestNode(await backend.newDb());
  });
  afterAll(async () => {
    await Promise.all([genesis, devnet, empty].map((n) => n?.close()));
    await backend.cleanup();
  });

  it("GET /v1 and /v1/ answer the reference IndexResponse, field for field and in order", async () => {
    for (const path of ["", "/"]) {
      const r = await call(`${genesis.base}${path}`);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toMatch(/^application\/json/);
      // The reference node's test golden, with our node_role (it serves reads; it never validates).
      expect(r.bytes.toString()).toBe(
        '{"chain_id":4,"epoch":"0","ledger_version":"0","oldest_ledger_version":"0","ledger_timestamp":"0",' +
          '"node_role":"full_node","oldest_block_height":"0","block_height":"0","git_hash":"","encryption_key":null}',
      );
      for (const h of LEDGER_HEADERS) expect(r.headers.get(h), h).not.toBeNull();
      expect(r.headers.get("x-aptos-ledger-version")).toBeNull();
    }
  });

  it("GET /v1 agrees with the ledger headers and /v1/info on a live chain", async () => {
    const r = await call(`${devnet.base}`);
    const h = (n: string) => r.headers.get(n);
    expect(r.json).toEqual({
      chain_id: Number(h("x-node-chain-id")),
      epoch: h("x-node-epoch"),
      ledger_version: h("x-node-ledger-version"),
      oldest_ledger_version: h("x-node-ledger-oldest-version"),
      ledger_timestamp: h("x-node-ledger-timestampusec"),
      node_role: "full_node",
      oldest_block_height: h("x-node-oldest-block-height"),
      block_height: h("x-node-block-height"),
      git_hash: "0123abcd",
      encryption_key: null,
    });
    expect(h("x-aptos-ledger-version")).toBe(h("x-node-ledger-version"));
    expect(r.json.block_height).toBe("3");
    const info = (await call(`${devnet.base}/info`)).json;
    expect(info).toMatchObject({ chain_id: r.json.chain_id, ledger_version: r.json.ledger_version, block_height: r.json.block_height });
  });

  it("GET /v1 on an empty ledger is 503; POST /v1 is 405", async () => {
    const r = await call(`${empty.base}`);
    expect(r.status).toBe(503);
    expect(r.json.error_code).toBe("internal_error");
    const post = await call(`${genesis.base}/`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(post.status).toBe(405);
    expect(post.json.error_code).toBe("web_framework_error");
  });

  it("/-/healthy without duration_secs is a liveness check: 200 even for a 1970 ledger", async () => {
    for (const n of [genesis, devnet]) {
      const r = await call(`${n.base}/-/healthy`);
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ message: "aptos-node:ok" });
      for (const h of LEDGER_HEADERS) expect(r.headers.get(h), h).not.toBeNull();
    }
    expect((await call(`${empty.base}/-/healthy`)).status).toBe(503);
  });

  it("/-/healthy?duration_secs=N is 200 when the newest block is at most N seconds old", async () => {
    const r = await call(`${devnet.base}/-/healthy?duration_secs=300`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ message: "aptos-node:ok" });
    expect(r.headers.get("x-aptos-ledger-version")).toBe(r.headers.get("x-node-ledger-version"));
    // 1970 is about 1.8e9 s ago: within the largest u32.
    expect((await call(`${genesis.base}/-/healthy?duration_secs=4294967295`)).status).toBe(200);
  });

  it("/-/healthy?duration_secs=N is 503 health_check_failed naming the age and N when the ledger is older", async () => {
    const before = Date.now() / 1000;
    const r = await call(`${genesis.base}/-/healthy?duration_secs=60`);
    const after = Date.now() / 1000;
    expect(r.status).toBe(503);
    expect(r.json.error_code).toBe("health_check_failed");
    const m = /timestamp is 0us, ([0-9]+\.[0-9]{3})s old, which is beyond the allowed skew \(60s\)/.exec(r.json.message);
    expect(m, r.json.message).not.toBeNull();
    // the age of a 1970 block, taken while the request ran (the message rounds to ms)
    expect(Number(m![1])).toBeGreaterThanOrEqual(Math.floor(before * 1000) / 1000);
    expect(Number(m![1])).toBeLessThanOrEqual(Math.ceil(after * 1000) / 1000);
    for (const h of LEDGER_HEADERS) expect(r.headers.get(h), h).not.toBeNull();
  });

  it("/-/healthy with a bad duration_secs is 400 naming the parameter, the value and the bound", async () => {
    for (const bad of ["abc", "-1", "1.5", "", "4294967296", "99999999999999999999"]) {
      const r = await call(`${devnet.base}/-/healthy?duration_secs=${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      expect(r.json).toEqual({
        message: `failed to parse parameter \`duration_secs\`: ${JSON.stringify(bad)} is not an integer from 0 to 4294967295`,
        error_code: "web_framework_error",
      });
    }
  });

  it("neither appears among the operations of the interface document", async () => {
    const spec = (await call(`${genesis.base}/spec.json`)).json;
    expect(Object.keys(spec.paths).sort()).toEqual(OPERATION_PATHS);
  });
});
