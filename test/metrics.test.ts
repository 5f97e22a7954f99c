/**
 * Observability (issue 18): `GET /metrics` scraped over HTTP and parsed by a strict Prometheus text
 * parser, with values that follow the requests made between two scrapes (counts and histograms per
 * operation and status, page cache hits, ledger and oldest version, prune runs, storage errors);
 * `--metrics-port`; and `X-Request-Id` on every response. SQLite only: nothing here depends on the
 * backend.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "./helpers/backends.js";
import { ChainBuilder, addr, u64le, writeTable } from "./helpers/chain.js";
import { serveChain, startTestNode, stopNode, type TestNode } from "./helpers/node.js";
import { parsePrometheus, type Exposition } from "./helpers/prometheus.js";

const B0B = addr("b0b");
const H = addr("7ab1e");

async function scrape(url: string): Promise<Exposition> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.text());
}

const reqs = (e: Exposition, operation: string, status: number) => e.value("ledger_node_http_requests_total", { operation, status: String(status) }) ?? 0;
const timed = (e: Exposition, operation: string, status: number) => e.value("ledger_node_http_request_duration_seconds_count", { operation, status: String(status) }) ?? 0;

describe("metrics and request ids (sqlite)", () => {
  const backend = sqliteBackend();
  let node: TestNode;
  const chain = new ChainBuilder().genesis();
  beforeAll(async () => {
    for (let b = 0; b < 30; b++) chain.block([{ sender: B0B, seq: b, changes: [writeTable(H, u64le(b % 3), u64le(b))] }]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  it("counts requests and times them per operation and status, and the page cache's hits", async () => {
    const before = await scrape(`${node.url}/metrics`);
    expect(before.types.get("ledger_node_http_requests_total")).toBe("counter");
    expect(before.types.get("ledger_node_http_request_duration_seconds")).toBe("histogram");
    expect(before.types.get("ledger_node_ledger_version")).toBe("gauge");
    const info = (await (await fetch(`${node.base}/info`)).json()) as { ledger_version: string; oldest_ledger_version: string };
    expect(before.value("ledger_node_ledger_version")).toBe(Number(info.ledger_version));
    expect(before.value("ledger_node_oldest_ledger_version")).toBe(Number(info.oldest_ledger_version));

    for (let i = 0; i < 3; i++) expect((await fetch(`${node.base}/info`)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await fetch(`${node.base}/accounts/${B0B}/transaction_summaries?limit=7`)).status).toBe(200);
    expect((await fetch(`${node.base}/accounts/${B0B}/transaction_summaries?limit=0x10`)).status).toBe(400);
    expect((await fetch(`${node.base}/nothing/here`)).status).toBe(404);
    const missing = await fetch(`${node.base}/tables/${H}/raw_item`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"key":"0x09"}' });
    expect(missing.status).toBe(404);

    const after = await scrape(`${node.url}/metrics`);
    // `before` counted the first /info; the loop three more.
    expect(reqs(after, "info", 200) - reqs(before, "info", 200)).toBe(4);
    expect(reqs(after, "get_account_transaction_summaries", 200) - reqs(before, "get_account_transaction_summaries", 200)).toBe(3);
    expect(reqs(after, "get_account_transaction_summaries", 400) - reqs(before, "get_account_transaction_summaries", 400)).toBe(1);
    expect(reqs(after, "get_raw_table_item", 404) - reqs(before, "get_raw_table_item", 404)).toBe(1);
    expect(reqs(after, "not_found", 404) - reqs(before, "not_found", 404)).toBe(1);
    // The first scrape is counted by the second.
    expect(reqs(after, "metrics", 200)).toBeGreaterThanOrEqual(1);
    for (const [op, status] of [["info", 200], ["get_account_transaction_summaries", 200], ["get_raw_table_item", 404]] as const) {
      expect(timed(after, op, status), `${op} ${status}`).toBe(reqs(after, op, status));
      expect(after.value("ledger_node_http_request_duration_seconds_sum", { operation: op, status: String(status) })).toBeGreaterThan(0);
    }
    // The first two identical summaries pages were read (the second asked for it again, so it was
    // kept), the third came from the page cache.
    const lookups = (e: Exposition, result: string) => e.value("ledger_node_page_cache_lookups", { result }) ?? 0;
    expect(lookups(after, "hit") - lookups(before, "hit")).toBe(1);
    expect(lookups(after, "miss") - lookups(before, "miss")).toBe(2);
    const ratio = after.value("ledger_node_page_cache_hit_ratio")!;
    expect(ratio).toBeCloseTo(lookups(after, "hit") / (lookups(after, "hit") + lookups(after, "miss")), 10);
    expect(after.value("ledger_node_page_cache_bytes")).toBeGreaterThan(0);
    expect(after.value("ledger_node_open_connections")).toBeGreaterThanOrEqual(1);
    expect(after.value("ledger_node_storage_errors_total", { status: "500" }) ?? 0).toBe(0);
    // Every error answer by status and error code: the bad limit, the unknown path, the missing item.
    expect(after.types.get("ledger_node_http_errors_total")).toBe("counter");
    const errs = (e: Exposition, status: number, error_code: string) => e.value("ledger_node_http_errors_total", { status: String(status), error_code }) ?? 0;
    expect(errs(after, 400, "web_framework_error") - errs(before, 400, "web_framework_error")).toBe(1);
    expect(errs(after, 404, "web_framework_error") - errs(before, 404, "web_framework_error")).toBe(1);
    expect(errs(after, 404, "table_item_not_found") - errs(before, 404, "table_item_not_found")).toBe(1);
  });

  it("times a read from its arrival with one hook a request: a GET operation's route runs its onRequest alone, raw_item adds its body check", async () => {
    const hooksOf = (path: string, method: string): string[] => {
      const lines = node.app.printRoutes({ includeHooks: true, commonPrefix: false, method }).split("\n");
      const at = lines.findIndex((l) => l.includes(`${path} (${method})`));
      expect(at, path).toBeGreaterThan(-1);
      const hooks: string[] = [];
      for (const l of lines.slice(at + 1)) {
        const m = /• \((\w+)\)/.exec(l);
        if (!m) break;
        hooks.push(m[1]!);
      }
      return hooks;
    };
    expect(hooksOf("/transaction_summaries", "GET")).toEqual(["onRequest"]);
    expect(hooksOf("/modules", "GET")).toEqual(["onRequest"]);
    expect(hooksOf("/raw_item", "POST")).toEqual(["onRequest", "preValidation"]);

    // The 400 of a limit refused by the onRequest hook is timed from the request's arrival, like
    // the answers the handler sends.
    const sum = (e: Exposition) => e.value("ledger_node_http_request_duration_seconds_sum", { operation: "get_account_transaction_summaries", status: "400" }) ?? 0;
    const before = await scrape(`${node.url}/metrics`);
    const refused = await fetch(`${node.base}/accounts/${B0B}/transaction_summaries?limit=1e2`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toMatch(/`limit`/);
    const after = await scrape(`${node.url}/metrics`);
    expect(reqs(after, "get_account_transaction_summaries", 400) - reqs(before, "get_account_transaction_summaries", 400)).toBe(1);
    expect(sum(after) - sum(before)).toBeGreaterThan(0);
    expect(sum(after) - sum(before)).toBeLessThan(1);
  });

  it("sends X-Request-Id on every response, keeping a sane incoming one", async () => {
    const a = await fetch(`${node.base}/info`);
    const b = await fetch(`${node.base}/nothing`);
    const idA = a.headers.get("x-request-id");
    const idB = b.headers.get("x-request-id");
    expect(idA).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect(idB).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect(idA).not.toBe(idB);
    const kept = await fetch(`${node.base}/info`, { headers: { "x-request-id": "lb-7f3a:42" } });
    expect(kept.headers.get("x-request-id")).toBe("lb-7f3a:42");
    for (const bad of ["has space", "x".repeat(200), "quote\"d"]) {
      const r = await fetch(`${node.base}/info`, { headers: { "x-request-id": bad } });
      expect(r.headers.get("x-request-id"), bad).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    }
    const bad = await fetch(`${node.base}/accounts/%zz/modules`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get("x-request-id")).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
  });

  it("reports the built-in pruner's runs and the oldest version it left", async () => {
    const db = await backend.newDb();
    await chain.importInto(db);
    const pruning = await startTestNode(db, { pruneWindow: "20", pruneIntervalMs: 50 });
    try {
      let e = await scrape(`${pruning.url}/metrics`);
      for (const end = Date.now() + 10_000; (e.value("ledger_node_prune_runs_total", { result: "pruned" }) ?? 0) < 1 && Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 50));
        e = await scrape(`${pruning.url}/metrics`);
      }
      expect(e.value("ledger_node_prune_runs_total", { result: "pruned" })).toBeGreaterThanOrEqual(1);
      const oldest = Number(((await (await fetch(`${pruning.base}/info`)).json()) as { oldest_ledger_version: string }).oldest_ledger_version);
      expect(oldest).toBeGreaterThan(0);
      expect(e.value("ledger_node_prune_last_oldest_version")).toBe(oldest);
      expect(e.value("ledger_node_oldest_ledger_version")).toBe(oldest);
      expect(e.value("ledger_node_prune_deleted_transactions_total")).toBeGreaterThan(0);
      expect(e.value("ledger_node_prune_last_duration_seconds")).toBeGreaterThan(0);
    } finally {
      await pruning.close();
    }
  });

  it("serves /metrics on --metrics-port only, when given", async () => {
    const db = await backend.newDb();
    await chain.importInto(db);
    const separate = await startTestNode(db, { metricsPort: 0 });
    try {
      expect(separate.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect(separate.metricsUrl).not.toContain(new URL(separate.url).port + "/");
      expect((await fetch(`${separate.url}/metrics`)).status).toBe(404);
      for (let i = 0; i < 2; i++) await fetch(`${separate.base}/info`);
      const e = await scrape(separate.metricsUrl!);
      expect(reqs(e, "info", 200)).toBe(2);
    } finally {
      await separate.close();
    }
  });

  it("counts store failures answered 5xx as storage errors", async () => {
    const db = await backend.newDb();
    await chain.importInto(db);
    const broken = await startTestNode(db);
    try {
      const before = await scrape(`${broken.url}/metrics`);
      const count = (e: Exposition) => (e.value("ledger_node_storage_errors_total", { status: "500" }) ?? 0) + (e.value("ledger_node_storage_errors_total", { status: "503" }) ?? 0);
      // The store goes away under the API (as a failing disk would take it).
      await broken.store.close();
      const r = await fetch(`${broken.base}/accounts/${B0B}/transaction_summaries`);
      expect(r.status).toBeGreaterThanOrEqual(500);
      expect(((await r.json()) as { error_code: string }).error_code).toBe("internal_error");
      const after = await scrape(`${broken.url}/metrics`);
      expect(count(after) - count(before)).toBeGreaterThanOrEqual(1);
    } finally {
      await broken.app.close();
    }
  });
});
