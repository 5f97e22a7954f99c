/**
 * `--archival-endpoint`: a 410 names the endpoint as `archival_endpoint` (with the `hint` and
 * `oldest_ledger_version` of Aptos's gateway), and the official SDK's own
 * archival fallback retries the pruned read there once. The archive is a stand-in that serves a
 * resource as a real node recorded it (the genesis fixture), never this node's code.
 */
import { createServer, type Server } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AptosApiError, Aptos, AptosConfig, Network } from "@aptos-labs/ts-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../helpers/backends.js";
import { FIXTURES, pruneServed, type TestNode } from "../helpers/node.js";
import { call, startDevnetNode } from "./helpers.js";

/** 0x1's `0x1::account::Account` as the real genesis transaction wrote it. */
const RECORDED = (() => {
  const [genesis] = JSON.parse(readFileSync(join(FIXTURES, "genesis_transaction.json"), "utf8")) as [
    { changes: { type: string; address: string; data?: { type: string; data: unknown } }[] },
  ];
  const change = genesis.changes.find((c) => c.type === "write_resource" && c.address === "0x1" && c.data?.type === "0x1::account::Account");
  return change!.data!;
})();
const RESOURCE_PATH = "/v1/accounts/0x1/resource/0x1::account::Account?ledger_version=0";

const sdk = (base: string, archivalFallback?: boolean) =>
  new Aptos(new AptosConfig({ network: Network.LOCAL, fullnode: base, ...(archivalFallback === undefined ? {} : { archivalFallback }) }));

const backend = sqliteBackend();
describe("the archival endpoint of a 410, and the SDK's fallback to it", () => {
  let archive: Server;
  let archiveBase: string;
  /** The requests the archive received, path and query. */
  const archived: string[] = [];
  /** A pruned devnet with --archival-endpoint; the same without it. */
  let node: TestNode;
  let plain: TestNode;

  beforeAll(async () => {
    archive = createServer((req, res) => {
      archived.push(req.url ?? "");
      const known = req.url === RESOURCE_PATH;
      res.writeHead(known ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify(known ? RECORDED : { message: "not recorded", error_code: "resource_not_found" }));
    });
    await new Promise<void>((r) => archive.listen(0, "127.0.0.1", r));
    archiveBase = `http://127.0.0.1:${(archive.address() as { port: number }).port}/v1`;
    node = await startDevnetNode(await backend.newDb(), 20, { aptosHeaders: true, api: { archivalEndpoint: archiveBase } });
    plain = await startDevnetNode(await backend.newDb(), 20, { aptosHeaders: true });
    for (const n of [node, plain]) await pruneServed(n, "50");
  });
  afterAll(async () => {
    await Promise.all([node, plain].map((n) => n?.close()));
    await new Promise((r) => archive?.close(r));
    await backend.cleanup();
  });

  it("names the endpoint in every 410 of a pruned read, and in no other answer; without the flag the 410 is as before", async () => {
    const pruned = [RESOURCE_PATH, "/v1/accounts/0x1/modules?ledger_version=0", "/v1/accounts/0x1/transaction_summaries?start_version=0"];
    for (const p of pruned) {
      const withEndpoint = await call(`${node.url}${p}`);
      expect(withEndpoint.status, p).toBe(410);
      // As Aptos's gateway words it in front of its fullnodes, the oldest version kept as the headers give it.
      expect(withEndpoint.json, p).toEqual({
        message: withEndpoint.json.message,
        error_code: "version_pruned",
        hint: "The requested data has been pruned from this node. Retry your request against the archival endpoint to access full history.",
        oldest_ledger_version: withEndpoint.headers.get("x-aptos-ledger-oldest-version"),
        archival_endpoint: archiveBase,
      });
      expect(Number(withEndpoint.json.oldest_ledger_version), p).toBeGreaterThan(0);
      const without = await call(`${plain.url}${p}`);
      expect(without.status, p).toBe(410);
      expect(Object.keys(without.json).sort(), p).toEqual(["error_code", "message"]);
      expect(withEndpoint.json.message, p).toBe(without.json.message);
    }
    const notFound = await call(`${node.url}/v1/accounts/0x1/resource/0x1::account::Nothing`);
    expect([notFound.status, "archival_endpoint" in notFound.json]).toEqual([404, false]);
    const bad = await call(`${node.url}/v1/accounts/0x1/resource/0x1::account::Account?ledger_version=x`);
    expect([bad.status, "archival_endpoint" in bad.json]).toEqual([400, false]);
  });

  it("lets the SDK retry a pruned read at the archive once and return the archive's answer", async () => {
    archived.length = 0;
    const data = await sdk(`${node.url}/v1`).getAccountResource({
      accountAddress: "0x1",
      resourceType: "0x1::account::Account",
      options: { ledgerVersion: 0 },
    });
    expect(data).toEqual(RECORDED.data);
    expect(archived).toEqual([RESOURCE_PATH]);
  });

  it("leaves the 410 to the caller where the SDK's fallback is off, or where the node names no endpoint", async () => {
    archived.length = 0;
    const read = (base: string, fallback?: boolean) =>
      sdk(`${base}/v1`, fallback).getAccountResource({ accountAddress: "0x1", resourceType: "0x1::account::Account", options: { ledgerVersion: 0 } });
    for (const attempt of [read(node.url, false), read(plain.url)]) {
      const e = await attempt.then(() => null, (err: unknown) => err);
      expect(e).toBeInstanceOf(AptosApiError);
      expect((e as AptosApiError).status).toBe(410);
    }
    expect(archived).toEqual([]);
  });
});
