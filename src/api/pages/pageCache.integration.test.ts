/**
 * The page cache (on both backends: it keys pages by the store's versions) and response
 * compression (SQLite only), over real HTTP.
 *
 * Pages (modules, transaction summaries) are cached by the version of the account's data they
 * depend on. These tests move the ledger under a running node (imports from another connection,
 * module upgrades, new transactions, a prune) and compare every answer with a node over the same
 * database that has the cache turned off. Compression is checked byte for byte after decoding.
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pruneNow } from "../../ingest/pruneToWindow.js";
import { parsePruneWindow } from "../../ledger/pruning.js";
import { buildModule } from "../../move/builder.js";
import { openStore } from "../../storage/open.js";
import { backendFactories, sqliteBackend } from "../../../test/helpers/backends.js";
import { ChainBuilder, addr, u64le, writeModule, writeTable } from "../../../test/helpers/chain.js";
import { startTestNode, type TestNode } from "../../../test/helpers/node.js";
import { rawRequest as get, untilEncodingShrinks, type RawResponse } from "../../../test/helpers/rawHttp.js";

function decode(r: RawResponse): Buffer {
  switch (r.headers["content-encoding"]) {
    case undefined:
      return r.body;
    case "gzip":
      return gunzipSync(r.body);
    case "br":
      return brotliDecompressSync(r.body);
    case "deflate":
      return inflateSync(r.body);
    default:
      throw new Error(`unexpected content-encoding ${String(r.headers["content-encoding"])}`);
  }
}

const APP = addr("cafe");
const TABLE = addr("7ab1e");
const BOB = addr("b0b");
/** A module with enough functions that a page of it passes the compression threshold. */
const shop = (version: number) =>
  buildModule({
    address: APP,
    name: "shop",
    functions: Array.from({ length: 4 + version }, (_, i) => ({ name: `f${i}`, entry: true, params: ["&signer", "u64", "address"] })),
  });
const other = (name: string) => buildModule({ address: APP, name, functions: [{ name: "run", entry: true, params: ["&signer"] }] });

for (const factory of backendFactories) {
  const backend = factory();
  describe(`page cache (${backend.name})`, () => {
    const chain = new ChainBuilder().genesis();
    let db: string;
    let cached: TestNode;
    let uncached: TestNode;
    let bobSeq = 0;
    const bobSends = (n: number) => {
      for (let i = 0; i < n; i++) chain.block([{ sender: BOB, seq: bobSeq++ }]);
    };

    beforeAll(async () => {
      chain.block([{ sender: APP, changes: [writeModule(APP, shop(0)), writeModule(APP, other("a")), writeModule(APP, other("b"))] }]);
      bobSends(6);
      db = await backend.newDb();
      await chain.importInto(db);
      cached = await startTestNode(db);
      // without the page cache, and without module records kept: every module page reads and builds its records
      uncached = await startTestNode(db, { api: { pageCacheBytes: 0, moduleCacheBytes: 0 } });
    });
    afterAll(async () => {
      await cached?.close();
      await uncached?.close();
      await backend.cleanup();
    });

    /** Every page request the tests make, in both formats. */
    const pageUrls = (latest: bigint): string[] => {
      const paths = [
        `/accounts/${APP}/modules`,
        `/accounts/${APP}/modules?limit=1`,
        `/accounts/${APP}/modules?limit=2&ledger_version=2`,
        `/accounts/${APP}/modules?ledger_version=${latest}`,
        `/accounts/${BOB}/transaction_summaries`,
        `/accounts/${BOB}/transaction_summaries?limit=3`,
        `/accounts/${BOB}/transaction_summaries?start_version=0&limit=2`,
        `/accounts/${BOB}/transaction_summaries?end_version=${latest - 3n}&limit=2`,
        // an end past the ledger (the same URL after the ledger moved): the page moves as bob
        // sends, so it is named by his newest transaction, not by its end
        `/accounts/${BOB}/transaction_summaries?end_version=1000000&limit=2`,
      ];
      // three times: the second request keeps the page, the third is a cache hit on the cached node
      return paths.flatMap((p) => [p, p, p]);
    };
    /** Compares every page of both nodes; returns the statuses seen. */
    const same = async (latest: bigint): Promise<Set<number>> => {
      const statuses = new Set<number>();
      for (const path of pageUrls(latest)) {
        for (const accept of ["application/json", "application/x-bcs"]) {
          const [a, b] = await Promise.all([get(cached.base + path, { accept }), get(uncached.base + path, { accept })]);
          expect(a.status, path).toBe(b.status);
          statuses.add(a.status);
          expect(a.body.equals(b.body), `${path} (${accept})`).toBe(true);
          expect(a.headers["x-node-cursor"], path).toEqual(b.headers["x-node-cursor"]);
          expect(a.headers["x-node-ledger-version"], path).toEqual(b.headers["x-node-ledger-version"]);
        }
      }
      return statuses;
    };
    const modules = async (node: TestNode, q = "") => JSON.parse((await get(`${node.base}/accounts/${APP}/modules${q}`)).body.toString()) as Array<{ bytecode: string }>;
    const summaryVersions = async (q = "") =>
      (JSON.parse((await get(`${cached.base}/accounts/${BOB}/transaction_summaries${q}`)).body.toString()) as Array<{ version: string }>).map((s) => s.version);

    it("answers every page exactly as a node without the cache, while the ledger moves under it", async () => {
      expect(await same(chain.version - 1n)).toEqual(new Set([200]));
      const before = await modules(cached);
      const upgradedAt = chain.nextUserVersion;
      // another connection commits: an upgrade of shop, and more transactions from bob
      chain.block([{ sender: APP, seq: 1, changes: [writeModule(APP, shop(1))] }]);
      bobSends(2);
      await chain.importInto(db);
      const after = await modules(cached);
      expect(after).not.toEqual(before);
      expect(after.map((m) => m.bytecode)).toContain("0x" + Buffer.from(shop(1)).toString("hex"));
      // the page at an older version is still the old one
      expect(await modules(cached, `?ledger_version=${upgradedAt - 1n}`)).toEqual(before);
      expect((await summaryVersions()).at(-1)).toBe(String(chain.version - 2n));
      expect(await same(chain.version - 1n)).toEqual(new Set([200]));
    });

    it("reads a cached summaries page again once pruning has cut into it, instead of serving pruned rows", async () => {
      const all = await summaryVersions("?limit=100");
      expect(all.length).toBeGreaterThan(4);
      // prune past bob's first two transactions (a window of the last few versions)
      const store = await openStore(db);
      try {
        const keep = chain.version - 1n - BigInt(all[2]!);
        expect(await pruneNow(store, parsePruneWindow(String(keep)))).not.toBeNull();
      } finally {
        await store.close();
      }
      const oldest = BigInt((await get(`${cached.base}/info`)).headers["x-node-ledger-oldest-version"] as string ?? "0");
      const now = await summaryVersions("?limit=100");
      expect(now.length).toBeLessThan(all.length);
      expect(now.every((v) => BigInt(v) >= oldest)).toBe(true);
      // the page at ledger version 2 is pruned now: 410 from both
      expect(await same(chain.version - 1n)).toEqual(new Set([200, 410]));
    });
  });
}

/** Compression is the HTTP layer's: SQLite only. */
{
  const backend = sqliteBackend();
  describe(`compression (${backend.name})`, () => {
    const chain = new ChainBuilder().genesis();
    let nodes: TestNode[] = [];
    let node: TestNode;
    let low: TestNode;
    let off: TestNode;
    let plainMisses: TestNode;
    beforeAll(async () => {
      chain.block([
        {
          sender: APP,
          changes: [
            writeModule(APP, shop(3)),
            writeModule(APP, other("a")),
            writeTable(TABLE, u64le(1), "0x" + "ab".repeat(3000)),
            writeTable(TABLE, u64le(2), "0x" + "cd".repeat(10)),
          ],
        },
      ]);
      const db = await backend.newDb();
      await chain.importInto(db);
      node = await startTestNode(db);
      low = await startTestNode(db, { api: { compressionThreshold: 32 } });
      off = await startTestNode(db, { api: { compression: false } });
      plainMisses = await startTestNode(db, { api: { plainMisses: true } });
      nodes = [node, low, off, plainMisses];
    });
    afterAll(async () => {
      for (const n of nodes) await n.close();
      await backend.cleanup();
    });

    const page = (n: TestNode, headers: Record<string, string> = {}) => get(`${n.base}/accounts/${APP}/modules`, headers);

    it("sends a page br, gzip or deflate as Accept-Encoding asks, the same bytes once decoded", async () => {
      const plain = await page(node);
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(plain.body.length).toBeGreaterThan(1024);
      const cases: Array<[string, string | undefined]> = [
        ["gzip, deflate, br", "br"], // what the official SDK sends
        ["gzip", "gzip"],
        ["deflate", "deflate"],
        ["br;q=0.5, gzip", "gzip"],
        ["gzip;q=0, deflate", "deflate"],
        ["x-gzip", "gzip"],
        ["*", "gzip"],
        ["identity", undefined],
        ["compress", undefined],
      ];
      for (const [accept, expected] of cases) {
        for (let i = 0; i < 2; i++) {
          // twice: made once, then served from the cached page
          const r = await page(node, { "accept-encoding": accept });
          expect(r.status).toBe(200);
          expect(r.headers["content-encoding"], accept).toBe(expected);
          // Compressed to less than half, or sent as is; either way it varies by Accept-Encoding.
          expect(r.body.length < plain.body.length / 2, `${accept}: compressed`).toBe(expected !== undefined);
          expect(String(r.headers["vary"])).toMatch(/Origin.*accept-encoding/i);
          expect(r.headers["content-length"]).toBe(String(r.body.length));
          expect(decode(r).equals(plain.body), accept).toBe(true);
          expect(r.headers["x-node-ledger-version"]).toBe(plain.headers["x-node-ledger-version"]);
        }
      }
    });

    it("sends a body it has sent often at its encoding's best level (made in the background): fewer bytes, the same body", async () => {
      for (const [path, encoding] of [
        [`/accounts/${APP}/modules`, "br"],
        ["/spec.json", "br"],
        ["/spec.json", "gzip"],
      ] as const) {
        const plain = await get(node.base + path);
        // sending it again and again turns it hot; one best-level encoding runs at a time, so keep asking
        const { first, last } = await untilEncodingShrinks(node.base + path, encoding, 10_000);
        expect(first.headers["content-encoding"]).toBe(encoding);
        expect(last.headers["content-encoding"]).toBe(encoding);
        expect(last.body.length, `${path} ${encoding}`).toBeLessThan(first.body.length);
        expect(last.headers["content-length"]).toBe(String(last.body.length));
        expect(decode(last).equals(plain.body), path).toBe(true);
        expect(decode(first).equals(plain.body), path).toBe(true);
      }
    });

    it("compresses BCS pages and uncached bodies (the spec) too", async () => {
      const plain = await page(low, { accept: "application/x-bcs" });
      const gz = await page(low, { accept: "application/x-bcs", "accept-encoding": "gzip" });
      expect(gz.headers["content-encoding"]).toBe("gzip");
      expect(gz.headers["content-type"]).toBe("application/x-bcs");
      expect(decode(gz).equals(plain.body)).toBe(true);
      const spec = await get(`${node.base}/spec.json`, { "accept-encoding": "br" });
      expect(spec.headers["content-encoding"]).toBe("br");
      expect(JSON.parse(decode(spec).toString()).openapi).toMatch(/^3\./);
    });

    it("compresses a large table item, and never a small one", async () => {
      const item = (key: number, enc: string) =>
        get(`${node.base}/tables/${TABLE}/raw_item`, { accept: "application/x-bcs", "accept-encoding": enc }, JSON.stringify({ key: u64le(key) }));
      const big = await item(1, "gzip, deflate, br");
      expect(big.status).toBe(200);
      expect(big.headers["content-encoding"]).toBe("br");
      expect(decode(big).equals(Buffer.from("ab".repeat(3000), "hex"))).toBe(true);
      expect(big.headers["x-node-ledger-version"]).toBeDefined();
      const small = await item(2, "gzip, deflate, br");
      expect(small.headers["content-encoding"]).toBeUndefined();
      expect(small.body.equals(Buffer.from("cd".repeat(10), "hex"))).toBe(true);
    });

    it("leaves bodies under the threshold alone; at the reference node's 32 bytes /v1/info is gzipped", async () => {
      const info = await get(`${node.base}/info`, { "accept-encoding": "gzip" });
      expect(info.body.length).toBeLessThan(1024);
      expect(info.headers["content-encoding"]).toBeUndefined();
      const small = await get(`${low.base}/info`, { "accept-encoding": "gzip" });
      expect(small.headers["content-encoding"]).toBe("gzip");
      expect(JSON.parse(decode(small).toString())).toEqual(JSON.parse(info.body.toString()));
      expect((await get(`${low.base}/info`)).headers["content-encoding"]).toBeUndefined();
    });

    it("with plainMisses, sends a body made for its request as it is where identity is acceptable, and a cached page compressed", async () => {
      const sdk = { "accept-encoding": "gzip, deflate, br" };
      const plain = await page(node);
      // asked twice, the page is read twice (the second ask admits it), then served from the cache
      const sent = [await page(plainMisses, sdk), await page(plainMisses, sdk), await page(plainMisses, sdk)];
      expect(sent.map((r) => r.headers["content-encoding"])).toEqual([undefined, undefined, "br"]);
      for (const r of sent) {
        expect(decode(r).equals(plain.body)).toBe(true);
        expect(String(r.headers["vary"])).toMatch(/Origin.*accept-encoding/i);
      }
      // A large table item is made per request: sent as it is, but compressed for a client that refuses identity.
      const item = (enc: string) =>
        get(`${plainMisses.base}/tables/${TABLE}/raw_item`, { accept: "application/x-bcs", "accept-encoding": enc }, JSON.stringify({ key: u64le(1) }));
      const asIs = await item(sdk["accept-encoding"]);
      expect(asIs.headers["content-encoding"]).toBeUndefined();
      expect(asIs.body.equals(Buffer.from("ab".repeat(3000), "hex"))).toBe(true);
      expect((await item("br, identity;q=0")).headers["content-encoding"]).toBe("br");
      expect((await item("gzip, *;q=0")).headers["content-encoding"]).toBe("gzip");
      expect((await item("gzip, *;q=0, identity")).headers["content-encoding"]).toBeUndefined();
      expect((await get(`${plainMisses.base}/spec.json`, sdk)).headers["content-encoding"]).toBe("br");
    });

    it("never compresses with compression off", async () => {
      for (const path of [`/accounts/${APP}/modules`, "/spec.json", "/info"]) {
        const r = await get(off.base + path, { "accept-encoding": "gzip, deflate, br" });
        expect(r.status).toBe(200);
        expect(r.headers["content-encoding"], path).toBeUndefined();
      }
    });
  });
}
