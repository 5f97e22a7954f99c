/**
 * The official TypeScript SDK (`@aptos-labs/ts-sdk`, pinned) against a real node on a real port,
 * started with `aptosHeaders: true` (`--aptos-headers`), as its users would run it. Where the SDK
 * misbehaves, the test asserts what really happens, so that a fixed SDK shows up as a failure here
 * and the warnings of docs/differences.md can be revisited.
 */
import aptosClient, { bcsRequest } from "@aptos-labs/aptos-client";
import {
  AptosApiError,
  Aptos,
  AptosConfig,
  Network,
  getAptosFullNode,
  postAptosFullNode,
  type Client,
  type ClientRequest,
  type ClientResponse,
  type MoveModuleBytecode,
} from "@aptos-labs/ts-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_TABLE_HANDLE, devnetAccount } from "../../src/ingest/devnet/chain.js";
import { sqliteBackend } from "../helpers/backends.js";
import { startTestNode, type TestNode } from "../helpers/node.js";
import { call, GENESIS_TABLE_ITEM, genesisModuleNames, hex, startDevnetNode, startGenesisNode } from "./helpers.js";

/** The SDK logs a note for every CUSTOM-network config; other network names plus `fullnode` behave the same. */
const sdk = (base: string, extra: Partial<ConstructorParameters<typeof AptosConfig>[0]> = {}) =>
  new Aptos(new AptosConfig({ network: Network.LOCAL, fullnode: base, ...extra }));

/**
 * `getGasPriceEstimation` (5 minutes) and `getLedgerInfo` (10 seconds) are memoized per process
 * under keys made of the network name only, so every test that calls them takes network names no
 * other test of this file used.
 */
const unusedNetworks = {
  names: Object.values(Network).filter((n) => n !== Network.LOCAL) as string[],
  count: 0,
  /** The SDK's own names first; then names it does not know (it only uses them as cache keys here). */
  shift(): Network {
    return (this.names.shift() ?? `ledger-node-test-${this.count++}`) as Network;
  },
};

/** A transport that counts requests (and can rename the X-NODE-* response headers to x-aptos-*). */
function transport(o: { rename?: boolean } = {}): { client: Client; requests: string[] } {
  const requests: string[] = [];
  const client: Client = {
    async provider<Req, Res>(req: ClientRequest<Req>): Promise<ClientResponse<Res>> {
      requests.push(`${req.method} ${req.url}${req.params ? "?" + new URLSearchParams(definedParams(req.params)) : ""}`);
      const res = await aptosClient<Res>(req as Parameters<typeof aptosClient>[0]);
      if (!o.rename) return res;
      const headers: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(res.headers ?? {})) headers[k.replace(/^x-node-/, "x-aptos-")] = v;
      return { ...res, headers };
    },
  };
  return { client, requests };
}

function definedParams(p: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));
}

const names = (mods: MoveModuleBytecode[]) => mods.map((m) => m.abi!.name);

const backend = sqliteBackend();
describe(`@aptos-labs/ts-sdk against the node (${backend.name})`, () => {
  /** Genesis fixture, `--aptos-headers`, default page sizes. */
  let node: TestNode;
  /** Same ledger, but a modules page holds at most 8 (the server clamps `limit`). */
  let smallPages: TestNode;
  /** Same ledger, X-NODE-* headers only (the default). */
  let nodeHeadersOnly: TestNode;
  /** Devnet with user transactions, `--aptos-headers`. */
  let devnet: TestNode;
  /** 0x1's modules in the node's order, read once over plain HTTP. */
  let all: string[];

  beforeAll(async () => {
    const db = await backend.newDb();
    node = await startGenesisNode(db, { aptosHeaders: true });
    smallPages = await startTestNode(db, { aptosHeaders: true, api: { modulesMaxPageSize: 8 } });
    nodeHeadersOnly = await startTestNode(db);
    devnet = await startDevnetNode(await backend.newDb(), 5, { aptosHeaders: true });
    const r = await call(`${node.base}/accounts/0x1/modules`);
    all = (r.json as MoveModuleBytecode[]).map((m) => m.abi!.name);
  });
  afterAll(async () => {
    await Promise.all([node, smallPages, nodeHeadersOnly, devnet].map((n) => n?.close()));
    await backend.cleanup();
  });

  it("getLedgerInfo and getChainId read GET /v1, then serve it from a 10-second process-wide cache", async () => {
    const network = unusedNetworks.shift();
    const { client, requests } = transport();
    const aptos = sdk(devnet.base, { network, client });
    const http = await call(`${devnet.base}`);
    const info = await aptos.getLedgerInfo();
    expect(info).toEqual(http.json);
    expect(info).toMatchObject({ chain_id: 4, node_role: "full_node", encryption_key: null });
    expect(await aptos.getChainId()).toBe(4);
    expect(requests).toEqual([`GET ${devnet.base}`]);
    // A new block: the node moves on, the SDK keeps answering the memoized ledger info.
    await devnet.devnet!.produceBlock();
    const after = await call(`${devnet.base}/`);
    expect(BigInt(after.json.ledger_version)).toBeGreaterThan(BigInt(info.ledger_version));
    expect(await sdk(devnet.base, { network, client }).getLedgerInfo()).toEqual(info);
    expect(requests).toHaveLength(1);
  });

  it("getAccountModulesPage pages through every module of 0x1 with small limits, each exactly once", async () => {
    const expected = genesisModuleNames("0x1");
    expect(all).toHaveLength(expected.length);
    expect([...all].sort()).toEqual([...expected].sort());
    for (const limit of [1, 7, 20, 59, 100]) {
      const { client, requests } = transport();
      const aptos = sdk(node.base, { client });
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        // The 64-hex form on purpose: the SDK sends special addresses in short form (0x1).
        const page = await aptos.getAccountModulesPage({ accountAddress: "0x" + "1".padStart(64, "0"), options: { cursor, limit } });
        // Full pages until the last, which holds the rest and carries no cursor.
        expect(page.modules).toHaveLength(Math.min(limit, all.length - seen.length));
        expect(page.cursor === undefined, `cursor after ${seen.length + page.modules.length} of ${all.length}`).toBe(seen.length + page.modules.length === all.length);
        seen.push(...names(page.modules));
        cursor = page.cursor;
      } while (cursor !== undefined);
      expect(seen, `limit ${limit}`).toEqual(all);
      expect(new Set(seen).size).toBe(seen.length);
      const later = Array.from({ length: Math.ceil(all.length / limit) - 1 }, () => expect.stringMatching(new RegExp(`\\?start=[0-9a-f]+&limit=${limit}$`)));
      expect(requests).toEqual([`GET ${node.base}/accounts/0x1/modules?limit=${limit}`, ...later]);
    }
  });

  it("getAccountModules returns every module once when the node's page holds them all", async () => {
    const { client, requests } = transport();
    const mods = await sdk(node.base, { client }).getAccountModules({ accountAddress: "0x1" });
    expect(names(mods)).toEqual(all);
    expect(requests).toEqual([`GET ${node.base}/accounts/0x1/modules?limit=1000`]);
    const first20 = await sdk(node.base).getAccountModules({ accountAddress: "0x1", options: { limit: 20 } });
    expect(names(first20)).toEqual(all.slice(0, 20));
  });

  it("getAccountModules never sends the cursor (SDK bug): on smaller server pages it returns page 1 again and again", async () => {
    const { client, requests } = transport();
    const aptos = sdk(smallPages.base, { client });
    const mods = await aptos.getAccountModules({ accountAddress: "0x1", options: { limit: 20 } });
    // What a correct client would return: all.slice(0, 20). What it does: 8 + 8 + 4 of page 1.
    expect(names(mods)).toEqual([...all.slice(0, 8), ...all.slice(0, 8), ...all.slice(0, 4)]);
    expect(requests.map((r) => r.split("?")[1])).toEqual(["limit=20", "limit=12", "limit=4"]);
    // With the default limit (1000) it makes 125 requests for 8 distinct modules.
    const { client: c2, requests: r2 } = transport();
    const many = await sdk(smallPages.base, { client: c2 }).getAccountModules({ accountAddress: "0x1" });
    expect(many).toHaveLength(1000);
    expect(new Set(names(many))).toEqual(new Set(all.slice(0, 8)));
    expect(r2).toHaveLength(125);
    // getAccountModulesPage, given the cursor explicitly, pages correctly on the same node.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await aptos.getAccountModulesPage({ accountAddress: "0x1", options: { cursor, limit: 20 } });
      expect(page.modules.length).toBeLessThanOrEqual(8);
      seen.push(...names(page.modules));
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(seen).toEqual(all);
  });

  it("getAccountModules and getAccountModulesPage drop ledgerVersion (SDK bug)", async () => {
    const { client, requests } = transport();
    const aptos = sdk(node.base, { client });
    const far = 1_000_000n;
    const page = await aptos.getAccountModulesPage({ accountAddress: "0x1", options: { ledgerVersion: far, limit: 2 } });
    expect(names(page.modules)).toEqual(all.slice(0, 2));
    const mods = await aptos.getAccountModules({ accountAddress: "0x1", options: { ledgerVersion: far, limit: 2 } });
    expect(names(mods)).toEqual(all.slice(0, 2));
    expect(requests.length, "one request per call at least").toBeGreaterThanOrEqual(2);
    for (const r of requests) expect(r).not.toContain("ledger_version");
    // The node itself answers that version with 404, had it been sent.
    const http = await call(`${node.base}/accounts/0x1/modules?limit=2&ledger_version=${far}`);
    expect(http.status).toBe(404);
    expect(http.json.error_code).toBe("version_not_found");
  });

  it("without --aptos-headers the SDK sees no cursor; a header-renaming client.provider restores paging", async () => {
    const http = await call(`${nodeHeadersOnly.base}/accounts/0x1/modules?limit=7`);
    expect(http.headers.get("x-node-cursor")).toMatch(/^[0-9a-f]+$/);
    expect(http.headers.get("x-aptos-cursor")).toBeNull();
    const plain = await sdk(nodeHeadersOnly.base).getAccountModulesPage({ accountAddress: "0x1", options: { limit: 7 } });
    expect(plain.modules).toHaveLength(7);
    expect(plain.cursor).toBeUndefined();

    const { client } = transport({ rename: true });
    const aptos = sdk(nodeHeadersOnly.base, { client });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await aptos.getAccountModulesPage({ accountAddress: "0x1", options: { cursor, limit: 7 } });
      seen.push(...names(page.modules));
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(seen).toEqual(all);
  });

  it("getGasPriceEstimation returns the node's estimate, then serves it from a 5-minute process-wide cache", async () => {
    const http = await call(`${devnet.base}/estimate_gas_price`);
    expect(http.status).toBe(200);
    const network = unusedNetworks.shift();
    const { client, requests } = transport();
    const est = await sdk(devnet.base, { network, client }).getGasPriceEstimation();
    expect(est).toEqual(http.json);
    expect(est.gas_estimate).toBeGreaterThanOrEqual(100);
    // A second client with the same network name makes no request at all...
    const again = await sdk(devnet.base, { network, client }).getGasPriceEstimation();
    expect(again).toEqual(est);
    expect(requests).toEqual([`GET ${devnet.base}/estimate_gas_price`]);
    // ...while another network name asks the node again.
    await sdk(devnet.base, { network: unusedNetworks.shift(), client }).getGasPriceEstimation();
    expect(requests).toHaveLength(2);
  });

  it("getAptosFullNode reads /v1/info", async () => {
    const res = await getAptosFullNode<Record<string, never>, Record<string, unknown>>({ aptosConfig: sdk(node.base).config, originMethod: "info", path: "info" });
    expect(res.status).toBe(200);
    expect(res.data).toEqual((await call(`${node.base}/info`)).json);
    expect(res.data).toMatchObject({ chain_id: 4, node_type: "ledger-node", storage: backend.name });
  });

  it("getAptosFullNode reads transaction_summaries with start_version and limit, and sees the ledger headers", async () => {
    const account = devnetAccount(0);
    const everything = (await call(`${devnet.base}/accounts/${account}/transaction_summaries`)).json as Array<{ version: string }>;
    expect(everything.length).toBeGreaterThanOrEqual(3);
    const start = everything[1]!.version;
    const res = await getAptosFullNode<Record<string, never>, Array<Record<string, unknown>>>({
      aptosConfig: sdk(devnet.base).config,
      originMethod: "getTransactionSummaries",
      path: `accounts/${account}/transaction_summaries`,
      params: { start_version: start, limit: 2 },
    });
    expect(res.status).toBe(200);
    expect(res.data).toEqual(everything.slice(1, 3));
    expect(res.headers["x-aptos-ledger-version"]).toBe(res.headers["x-node-ledger-version"]);
    expect(res.headers["x-aptos-chain-id"]).toBe("4");
  });

  it("raw_item: bcsRequest returns the stored bytes exactly", async () => {
    const g = await bcsRequest({
      url: `${node.base}/tables/${GENESIS_TABLE_ITEM.handle}/raw_item`,
      method: "POST",
      headers: { accept: "application/x-bcs" },
      body: { key: GENESIS_TABLE_ITEM.key },
    });
    expect(g.status).toBe(200);
    expect(hex(g.data)).toBe(GENESIS_TABLE_ITEM.value);
    // Devnet genesis: key 1 holds u64 1000 = e8 03 …, a byte ≥ 0x80.
    const d = await bcsRequest({
      url: `${devnet.base}/tables/${DEVNET_TABLE_HANDLE}/raw_item`,
      method: "POST",
      headers: { accept: "application/x-bcs" },
      params: { ledger_version: 0 },
      body: { key: "0x0100000000000000" },
    });
    expect(hex(d.data)).toBe("0xe803000000000000");
    expect(d.headers?.["x-aptos-ledger-version"]).toBeDefined();
  });

  it("raw_item through postAptosFullNode: the JSON client text-decodes BCS (bytes ≥ 0x80 are lost), and Accept JSON is 403", async () => {
    const aptosConfig = sdk(devnet.base).config;
    const res = await postAptosFullNode<{ key: string }, object>({
      aptosConfig,
      originMethod: "getRawTableItem",
      path: `tables/${DEVNET_TABLE_HANDLE}/raw_item`,
      params: { ledger_version: 0 },
      body: { key: "0x0100000000000000" },
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/x-bcs");
    // The SDK sends no Accept header, so the node answers BCS, which the SDK decodes as UTF-8 text.
    expect(res.data).toBe("\uFFFD\u0003\0\0\0\0\0\0");
    await expect(
      postAptosFullNode({
        aptosConfig: new AptosConfig({ network: Network.LOCAL, fullnode: devnet.base, fullnodeConfig: { HEADERS: { Accept: "application/json" } } }),
        originMethod: "getRawTableItem",
        path: `tables/${DEVNET_TABLE_HANDLE}/raw_item`,
        body: { key: "0x0100000000000000" },
      }),
    ).rejects.toSatisfy((e: unknown) => e instanceof AptosApiError && e.status === 403 && e.data.error_code === "api_disabled");
  });
});
