/**
 * `serve --follow URL --proxy` (issue 34, part 2), the built CLI on a real SQLite file in front of
 * the fake upstream: a `/v1` route the node does not serve is passed to the upstream with its
 * method, path, query, body and content headers under the follower's API key, and the answer comes
 * back with its status and headers (hop-by-hop ones dropped); the node's own routes never reach the
 * upstream; an upstream down answers 503, a slow one 504, a body over the bound 413, each as the
 * error object, while the locally held reads still answer; a used-up request budget answers 503
 * with `Retry-After`; the counter of proxied requests; and `--proxy` without `--follow` is refused.
 * An over-long path parameter answers 414 with or without `--proxy` (issue 45).
 */
import { request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli, runCli } from "./helpers/cli.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";
import { parsePrometheus } from "./helpers/prometheus.js";
import { rawRequest } from "./helpers/rawHttp.js";
import { type ServeProcess, startServe } from "./helpers/serveProcess.js";

const API_KEY = "operator-key-34";
const TIMEOUT_MS = 1500;
const BODY_LIMIT = 8 * 1024 * 1024;

async function caughtUp(base: string, version: bigint): Promise<void> {
  const until = Date.now() + 120_000;
  while (Date.now() < until) {
    const i = (await (await fetch(`${base}/info`)).json().catch(() => null)) as { ledger_version?: string } | null;
    if (i?.ledger_version === String(version)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the replica did not reach version ${version}`);
}

/** A POST whose body of `bytes` zeros is sent chunked (no Content-Length) or with it declared. */
function postBody(url: string, bytes: number, chunked: boolean): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (!chunked) headers["content-length"] = String(bytes);
    const req = request(url, { method: "POST", headers }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    // The node may answer and close before the whole body is written.
    req.on("error", (e) => reject(e));
    const chunk = Buffer.alloc(64 * 1024);
    let left = bytes;
    const write = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!req.write(chunk.subarray(0, n))) return void req.once("drain", write);
      }
      req.end();
    };
    write();
  });
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request whose target is sent exactly as given (`curl --path-as-is`: fetch would resolve dot segments first). */
function asIs(base: string, target: string, method = "GET", body?: string): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) };
    const req = request({ host: hostname, port, path: target, method, headers, agent: false }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("serve --follow --proxy", () => {
  const dir = mkdtempSync(join(tmpdir(), "ledger-node-proxy-"));
  let up: FakeUpstream;
  let replica: ServeProcess;
  beforeAll(async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: 130 });
    replica = await startServe([
      "--follow", up.base, "--proxy", "--api-key", API_KEY, "--db", join(dir, "replica.db"), "--no-prune", "--quiet",
      "--max-rps", "5000", "--proxy-max-rps", "5000", "--poll", "50", "--upstream-timeout", String(TIMEOUT_MS),
    ]);
    await caughtUp(replica.base, up.ledgerVersion);
  }, 180_000);
  afterAll(async () => {
    await replica?.stop();
    await up?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("passes a /v1 route it does not serve to the upstream with its method, path, query, body and content headers, under the follower's API key", async () => {
    const v = String(up.ledgerVersion);
    const body = JSON.stringify({ function: "0xa11ce::registry::get", type_arguments: [], arguments: ["2"] });
    const headers = { "content-type": "application/json", accept: "application/json", authorization: "Bearer the-client-own", cookie: "session=1" };
    const proxied = await fetch(`${replica.base}/view?ledger_version=${v}`, { method: "POST", headers, body });
    const seen = up.received.filter((r) => r.url.startsWith("/v1/view")).at(-1)!;
    const direct = await fetch(`${up.base}/view?ledger_version=${v}`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(proxied.status).toBe(200);
    expect(await proxied.text()).toBe(await direct.text());
    expect(proxied.headers.get("x-aptos-ledger-version")).toBe(v);
    expect(seen).toMatchObject({ method: "POST", url: `/v1/view?ledger_version=${v}` });
    expect(seen.headers).toMatchObject({ authorization: `Bearer ${API_KEY}`, "content-type": "application/json", accept: "application/json", "content-length": String(body.length) });
    expect(seen.headers.cookie).toBeUndefined();
  });

  it("streams back the upstream's status, headers and body, without hop-by-hop headers or those its Connection lists", async () => {
    up.faults.answerHeaders = { connection: "x-hop-only", "x-hop-only": "1", "keep-alive": "timeout=3, max=9", upgrade: "h2c", "x-upstream-note": "kept" };
    try {
      const page = await rawRequest(`${replica.base}/transactions?start=5&limit=3`);
      const direct = await rawRequest(`${up.base}/transactions?start=5&limit=3`);
      expect(page.status).toBe(200);
      expect(page.body.equals(direct.body)).toBe(true);
      expect(page.headers["x-upstream-note"]).toBe("kept");
      expect(page.headers["x-hop-only"]).toBeUndefined();
      expect(page.headers.upgrade).toBeUndefined();
      expect(page.headers["keep-alive"]).not.toBe("timeout=3, max=9");
      expect(direct.headers["x-hop-only"]).toBe("1");
      const missing = await rawRequest(`${replica.base}/transactions/by_hash/0x${"de".repeat(32)}`);
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body.toString())).toMatchObject({ error_code: "transaction_not_found" });
    } finally {
      up.faults.answerHeaders = null;
    }
  });

  it("never passes on what the node serves: its routes, their 405s, /metrics, and paths outside /v1", async () => {
    const before = up.received.length;
    const local = await fetch(`${replica.base}/info`);
    expect(local.status).toBe(200);
    expect((await fetch(`${replica.base}/-/healthy`)).status).toBe(200);
    expect((await fetch(`${replica.base}/spec.json`)).status).toBe(200);
    expect((await fetch(`${replica.base.replace(/\/v1$/, "")}/metrics`)).status).toBe(200);
    const wrongMethod = await fetch(`${replica.base}/info`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("GET");
    expect(await wrongMethod.json()).toEqual({ message: "method not allowed", error_code: "web_framework_error" });
    const outside = await fetch(`${replica.base.replace(/\/v1$/, "")}/transactions`);
    expect(outside.status).toBe(404);
    expect(await outside.json()).toEqual({ message: "not found", error_code: "web_framework_error" });
    const asked = ["/v1/info", "/v1/-/healthy", "/v1/spec.json", "/metrics", "/transactions"];
    expect(up.received.slice(before).filter((r) => asked.includes(r.url.split("?")[0]!))).toEqual([]);
  });

  it("with the upstream slow answers 504, with it down 503, as error objects, and still answers the reads it holds", async () => {
    // Read once while the upstream is up: what a head-started replica lacks is fetched and kept.
    const modules = await fetch(`${replica.base}/accounts/0x1/modules`);
    expect(modules.status).toBe(200);
    expect((await fetch(`${replica.base}/estimate_gas_price`)).status).toBe(200);
    const hash = `0x${"ab".repeat(32)}`;
    up.faults.only = "/v1/transactions/by_hash";
    up.faults.slowMs = TIMEOUT_MS * 4;
    try {
      const slow = await fetch(`${replica.base}/transactions/by_hash/${hash}`);
      expect(slow.status).toBe(504);
      expect(await slow.json()).toEqual({
        message: `the upstream did not answer GET ${up.base}/transactions/by_hash/${hash} within ${TIMEOUT_MS} ms`,
        error_code: "internal_error",
      });
    } finally {
      up.heal();
    }
    up.faults.down = true;
    try {
      const down = await fetch(`${replica.base}/transactions/by_hash/${hash}`);
      expect(down.status).toBe(503);
      const error = (await down.json()) as { message: string; error_code: string };
      expect(error.error_code).toBe("internal_error");
      expect(error.message).toContain(`the upstream could not be reached for GET ${up.base}/transactions/by_hash/${hash}`);
      expect((await fetch(`${replica.base}/info`)).status).toBe(200);
      const again = await fetch(`${replica.base}/accounts/0x1/modules`);
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(await modules.text());
      expect((await fetch(`${replica.base}/estimate_gas_price`)).status).toBe(200);
    } finally {
      up.heal();
    }
  });

  it("answers an over-long path parameter 414 exactly as a node without --proxy does, GET and HEAD", async () => {
    const plain = await startServe(["--follow", up.base, "--db", join(dir, "plain.db"), "--no-prune", "--quiet", "--max-rps", "5000", "--poll", "50"]);
    try {
      const long = "a".repeat(1200);
      const targets = [`/v1/accounts/0x${long}`, `/v1/accounts/0x1/resource/0x1::m::${long}`, `/v1/accounts/%30x${long}/modules`, `/v1/accounts/0x${long}?ledger_version=1`];
      const comparable = (a: Answer) => {
        const { date: _date, "x-request-id": _id, ...headers } = a.headers;
        return { status: a.status, headers, body: a.body };
      };
      for (const target of targets) {
        for (const method of ["GET", "HEAD"]) {
          const withProxy = await asIs(replica.base, target, method);
          const without = await asIs(plain.base, target, method);
          expect({ target, method, status: without.status }).toEqual({ target, method, status: 414 });
          expect(comparable(withProxy)).toEqual(comparable(without));
        }
      }
    } finally {
      await plain.stop();
    }
  });

  it("answers 413 for a request body over the bound, declared or chunked, and never sends a declared one on", async () => {
    const before = up.received.length;
    const declared = await postBody(`${replica.base}/view`, BODY_LIMIT + 1, false);
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toEqual({ message: `request body is larger than the limit of ${BODY_LIMIT} bytes`, error_code: "web_framework_error" });
    expect(up.received.slice(before).filter((r) => r.url.startsWith("/v1/view"))).toEqual([]);
    const chunked = await postBody(`${replica.base}/view`, BODY_LIMIT + 64 * 1024, true);
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ error_code: "web_framework_error" });
  });

  it("counts proxied requests by status class and by who answered", async () => {
    const text = await (await fetch(`${replica.base.replace(/\/v1$/, "")}/metrics`)).text();
    const m = parsePrometheus(text);
    const count = (status_class: string, from: string) => m.value("ledger_node_proxied_requests_total", { status_class, from }) ?? 0;
    expect(count("2xx", "upstream")).toBeGreaterThanOrEqual(2);
    expect(count("4xx", "upstream")).toBeGreaterThanOrEqual(1);
    expect(count("5xx", "node")).toBeGreaterThanOrEqual(2);
    expect(count("4xx", "node")).toBeGreaterThanOrEqual(2);
  });

  it("answers 503 with Retry-After once its own request budget is used up, without asking the upstream", async () => {
    const tight = await startServe([
      "--follow", up.base, "--proxy", "--db", join(dir, "tight.db"), "--no-prune", "--quiet", "--max-rps", "5000", "--poll", "50",
      "--proxy-max-rps", "1", "--upstream-timeout", "500",
    ]);
    try {
      const first = await fetch(`${tight.base}/blocks/by_height/3`);
      const before = up.received.length;
      const second = await fetch(`${tight.base}/blocks/by_height/4`);
      expect(first.status).toBe(200);
      expect(second.status).toBe(503);
      expect(second.headers.get("retry-after")).toBe("1");
      expect(await second.json()).toEqual({ message: "the proxy's upstream request rate (1 a second) is used up: try again later", error_code: "internal_error" });
      // the follower's own block reads go on meanwhile; the refused request's never left
      expect(up.received.slice(before).filter((r) => r.url === "/v1/blocks/by_height/4")).toEqual([]);
    } finally {
      await tight.stop();
    }
  });

  it("refuses --proxy without --follow, saying why", async () => {
    const r = await runCli(["serve", "--proxy", "--db", join(dir, "none.db"), "--create", "--port", "0"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--proxy needs --follow URL");
  });
});
