/**
 * CORS on every response (successes, errors and preflights), as browser clients and the explorer
 * need it: any origin, GET and POST, and the ledger headers exposed so that scripts can read them.
 * The reference node's `index_test.rs` CORS tests, over real HTTP. By default `*` without
 * credentials; credentials only for the origins of an explicit allow-list (`corsOrigins`).
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APTOS_HEADER_NAMES, NODE_HEADER_NAMES } from "../../src/api/http/ledgerHeaders.js";
import { sqliteBackend } from "../helpers/backends.js";
import { FIXTURES, startTestNode, type TestNode } from "../helpers/node.js";
import { call, GENESIS_TABLE_ITEM, startGenesisNode } from "./helpers.js";

const ORIGIN = "http://explorer.example";

/** The golden holds one JSON document per refused preflight, back to back. */
function goldenDocuments(name: string): unknown[] {
  const text = readFileSync(`${FIXTURES}goldens/${name}`, "utf8");
  return text.split(/\n(?=\{)/).map((d) => JSON.parse(d));
}

/** Our error objects leave `vm_error_code` out when it is null (docs/decisions.md §7). */
function withoutNullVmErrorCode(doc: unknown): unknown {
  const { vm_error_code, ...rest } = doc as { vm_error_code?: unknown };
  return vm_error_code === null ? rest : doc;
}

const preflight = (method: string, headers = "Content-Type") => ({
  method: "OPTIONS",
  headers: { origin: ORIGIN, "access-control-request-method": method, "access-control-request-headers": headers },
});

function exposed(h: Headers): string[] {
  return (h.get("access-control-expose-headers") ?? "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
}

/** The default: any origin may read, none may send credentials. */
function expectCors(h: Headers, what: string): void {
  expect(h.get("access-control-allow-origin"), what).toBe("*");
  expect(h.get("access-control-allow-credentials"), what).toBeNull();
  expect(h.get("vary") ?? "", what).toMatch(/\bOrigin\b/);
}

const backend = sqliteBackend();
describe(`CORS (${backend.name})`, () => {
  let node: TestNode;
  let aptosNode: TestNode;
  let listNode: TestNode;

  beforeAll(async () => {
    const db = await backend.newDb();
    node = await startGenesisNode(db);
    aptosNode = await startTestNode(db, { aptosHeaders: true });
    listNode = await startTestNode(db, { api: { corsOrigins: [ORIGIN, "https://wallet.example"] } });
  });
  afterAll(async () => {
    await Promise.all([node, aptosNode, listNode].map((n) => n?.close()));
    await backend.cleanup();
  });

  it("preflights for GET and POST are 200 on every path, known or not", async () => {
    const paths = ["/spec.yaml", "/spec", "/", "/transactions", "/info", "/accounts/0x1/modules", `/tables/${GENESIS_TABLE_ITEM.handle}/raw_item`, "/accounts/nope/resources"];
    for (const path of paths) {
      for (const method of ["GET", "POST"]) {
        const r = await call(`${node.base}${path}`, preflight(method));
        expect(r.status, `${method} ${path}`).toBe(200);
        expectCors(r.headers, `${method} ${path}`);
        expect(r.headers.get("access-control-allow-methods")).toBe("GET, POST");
        expect(r.headers.get("access-control-allow-headers")).toBe("Content-Type");
        expect(r.headers.get("vary")).toContain("Access-Control-Request-Method");
        expect(r.bytes.length).toBe(0);
      }
    }
  });

  it("preflights for other methods are 403 request-method not allowed, as the reference golden (without the null vm_error_code)", async () => {
    const golden = goldenDocuments("aptos_api__tests__index_test__test_cors_forbidden.json");
    const paths = ["/spec.yaml", "/spec", "/", "/transactions"];
    expect(golden).toHaveLength(paths.length);
    for (const [i, path] of paths.entries()) {
      const r = await call(`${node.base}${path}`, preflight("PUT"));
      expect(r.status, path).toBe(403);
      expectCors(r.headers, path);
      expect(r.headers.get("access-control-allow-methods")).toBeNull();
      expect(r.json).toEqual(withoutNullVmErrorCode(golden[i]));
      expect(r.json).toEqual({ message: "request-method not allowed", error_code: "web_framework_error" });
    }
    for (const method of ["DELETE", "PATCH"]) {
      expect((await call(`${node.base}/info`, preflight(method))).status).toBe(403);
    }
  });

  it("a 400 carries the CORS headers (and the ledger headers, which it exposes)", async () => {
    const r = await call(`${node.base}/accounts/nope/modules`, { headers: { origin: ORIGIN } });
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe("web_framework_error");
    expectCors(r.headers, "400");
    expect(r.headers.get("x-node-ledger-version")).toBe("0");
    expect(exposed(r.headers)).toEqual(expect.arrayContaining(NODE_HEADER_NAMES.map((n) => n.toLowerCase())));
  });

  it("every operation's success and every kind of error carries the CORS headers", async () => {
    const json = { "content-type": "application/json" };
    const raw = `/tables/${GENESIS_TABLE_ITEM.handle}/raw_item`;
    const cases: Array<[string, string, RequestInit, number]> = [
      ["spec", "/spec", {}, 200],
      ["spec.json", "/spec.json", {}, 200],
      ["info", "/info", {}, 200],
      ["summaries", "/accounts/0x1/transaction_summaries", {}, 200],
      ["modules", "/accounts/0x1/modules?limit=2", {}, 200],
      ["raw item", raw, { method: "POST", headers: { ...json, accept: "application/x-bcs" }, body: JSON.stringify({ key: GENESIS_TABLE_ITEM.key }) }, 200],
      ["gas", "/estimate_gas_price", {}, 200],
      ["index", "", {}, 200],
      ["healthy", "/-/healthy", {}, 200],
      ["bad limit", "/accounts/0x1/modules?limit=hello", {}, 400],
      ["raw item as JSON", raw, { method: "POST", headers: { ...json, accept: "application/json" }, body: JSON.stringify({ key: GENESIS_TABLE_ITEM.key }) }, 403],
      ["missing item", raw, { method: "POST", headers: json, body: JSON.stringify({ key: "0x00" }) }, 404],
      ["future version", "/accounts/0x1/modules?ledger_version=99", {}, 404],
      ["unknown route", "/nothing/here", {}, 404],
      ["wrong method", "/info", { method: "POST", headers: json, body: "{}" }, 405],
      ["not JSON", raw, { method: "POST", headers: { "content-type": "text/plain" }, body: "key" }, 415],
      ["stale ledger", "/-/healthy?duration_secs=1", {}, 503],
    ];
    for (const [what, path, init, status] of cases) {
      const r = await call(`${node.base}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), origin: ORIGIN } });
      expect(r.status, what).toBe(status);
      expectCors(r.headers, what);
      expect(exposed(r.headers), what).toEqual(NODE_HEADER_NAMES.map((n) => n.toLowerCase()));
    }
  });

  it("with --aptos-headers the X-Aptos-* headers are exposed too", async () => {
    const r = await call(`${aptosNode.base}/accounts/0x1/modules?limit=2`, { headers: { origin: ORIGIN } });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-aptos-cursor")).toBe(r.headers.get("x-node-cursor"));
    expect(exposed(r.headers)).toEqual([...NODE_HEADER_NAMES, ...APTOS_HEADER_NAMES].map((n) => n.toLowerCase()));
    const pre = await call(`${aptosNode.base}/accounts/0x1/modules`, preflight("GET", "x-custom"));
    expect(pre.status).toBe(200);
    expect(exposed(pre.headers)).toContain("x-aptos-cursor");
  });

  it("by default any Origin, however odd, gets * and never credentials", async () => {
    for (const origin of [ORIGIN, "null", "https://evil.example", "http://127.0.0.1:1"]) {
      const r = await call(`${node.base}/info`, { headers: { origin } });
      expect(r.status).toBe(200);
      expect(r.headers.get("access-control-allow-origin"), origin).toBe("*");
      expect(r.headers.get("access-control-allow-credentials"), origin).toBeNull();
    }
  });

  it("with an allow-list, listed origins are echoed with credentials; others get * without", async () => {
    for (const origin of [ORIGIN, "https://wallet.example"]) {
      const r = await call(`${listNode.base}/info`, { headers: { origin } });
      expect(r.headers.get("access-control-allow-origin"), origin).toBe(origin);
      expect(r.headers.get("access-control-allow-credentials"), origin).toBe("true");
      expect(r.headers.get("vary")).toMatch(/\bOrigin\b/);
      const pre = await call(`${listNode.base}/info`, { ...preflight("GET"), headers: { ...preflight("GET").headers, origin } });
      expect(pre.status).toBe(200);
      expect(pre.headers.get("access-control-allow-credentials")).toBe("true");
    }
    for (const origin of ["https://evil.example", "http://explorer.example.evil", "null"]) {
      const r = await call(`${listNode.base}/info`, { headers: { origin } });
      expect(r.headers.get("access-control-allow-origin"), origin).toBe("*");
      expect(r.headers.get("access-control-allow-credentials"), origin).toBeNull();
    }
    const refused = await call(`${listNode.base}/info`, preflight("PUT"));
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({ message: "request-method not allowed", error_code: "web_framework_error" });
  });

  it("without Origin no CORS headers are sent, but Vary: Origin is, so caches keep the two apart", async () => {
    const r = await call(`${node.base}/info`);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    expect(r.headers.get("vary")).toBe("Origin");
  });
});
