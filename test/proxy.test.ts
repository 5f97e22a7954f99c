/**
 * `serve --follow URL --proxy` (issue 34, part 2), the built CLI on a real SQLite file in front of
 * the fake upstream: a `/v1` route the node does not serve is passed to the upstream with its
 * method, path, query, body and content headers under the follower's API key, and the answer comes
 * back with its status and headers (hop-by-hop ones and those that act on this node's origin
 * dropped); the node's own routes never reach the upstream; an upstream down answers 503, a slow
 * one 504, a body over the bound 413, each as the error object, while the locally held reads still
 * answer; a used-up request budget answers 503 with `Retry-After`; the counter of proxied requests;
 * and `--proxy` without `--follow` is refused.
 *
 * Issue 45: only paths under the upstream's own `/v1` are passed on, exactly as sent, and a path with
 * a dot segment or an encoded separator in any spelling is refused with 400, also for an upstream
 * served under a path (`PathGateway`, which records every target as it arrived); no answer names
 * the upstream's URL or the socket's error (the log does); the deadline starts once the request is
 * sent, so a slow upload does not count, nor does the wait for the node's own rate, and it also cuts
 * an answer that stalls; each request gets one answer; an over-long path parameter answers 414 with
 * or without `--proxy`.
 */
import { request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli, runCli } from "./helpers/cli.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";
import { PathGateway } from "./helpers/pathGateway.js";
import { parsePrometheus } from "./helpers/prometheus.js";
import { rawRequest } from "./helpers/rawHttp.js";
import { caughtUp, type ServeProcess, startServe } from "./helpers/serveProcess.js";

const API_KEY = "operator-key-34";
const TIMEOUT_MS = 1500;
const BODY_LIMIT = 8 * 1024 * 1024;


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

/**
 * Writes `head` and then `body` on a connection of its own, keeps it open, and collects everything
 * the node sends until it closes the connection (or `withinMs` passed: an error).
 */
function everythingSent(base: string, head: string, body: string, withinMs: number): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let got = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the node did not close the connection within ${withinMs} ms; it sent ${JSON.stringify(got)}`));
    }, withinMs);
    socket.on("data", (c) => (got += c));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(got);
    });
    socket.write(head + body);
  });
}

/** The status lines of the HTTP responses in `raw`, in order. */
function statusLines(raw: string): string[] {
  return raw.match(/HTTP\/1\.1 \d{3}[^\r]*/g) ?? [];
}

/**
 * Every path that must be refused: dot segments in each spelling the issue reproduced, and the other
 * ways a segment could name a parent (mixed case, a `;` parameter, encoded slashes and backslashes,
 * a double encoding).
 */
const ESCAPES = [
  "/v1/%2e%2e/admin/reset",
  "/v1/../x",
  "/v1/.%2e/admin",
  "/v1/%2E./admin",
  "/v1/%2e%2E/admin",
  "/v1/transactions/../../secret",
  "/v1/./transactions",
  "/v1/transactions/%2e",
  "/v1/transactions/..",
  "/v1/..;/admin",
  "/v1/a/..%2fadmin",
  "/v1/%2e%2e%2Fadmin",
  "/v1/a/..%5cadmin",
  "/v1/a/..\\admin",
  "/v1/%252e%252e/admin",
];

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

  it("answers the events it holds itself, byte for byte as the upstream, and passes those of sequence numbers it does not hold to the upstream", async () => {
    const asked = (path: string) => up.received.filter((r) => r.url === `/v1${path}`).length;
    const latest = "/accounts/0x1/events/3?limit=5";
    const [ours, theirs] = await Promise.all([fetch(`${replica.base}${latest}`), fetch(`${up.base}${latest}`)]);
    expect(await ours.text()).toBe(await theirs.text());
    expect(asked(latest)).toBe(1);
    // The genesis's block event precedes the replica's first synced version.
    const first = "/accounts/0x1/events/3?start=0&limit=3";
    const before = asked(first);
    const proxied = await fetch(`${replica.base}${first}`);
    expect(proxied.status).toBe(200);
    expect(await proxied.text()).toBe(await (await fetch(`${up.base}${first}`)).text());
    expect(asked(first)).toBe(before + 2);
  });

  it("streams back the upstream's status, headers and body, without hop-by-hop headers or those its Connection lists", async () => {
    up.faults.answerHeaders = { connection: "x-hop-only", "x-hop-only": "1", "keep-alive": "timeout=3, max=9", upgrade: "h2c", "x-upstream-note": "kept" };
    try {
      const page = await rawRequest(`${replica.base}/upstream-only/3`);
      const direct = await rawRequest(`${up.base}/upstream-only/3`);
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
      expect(await slow.json()).toEqual({ message: `the upstream did not answer within ${TIMEOUT_MS} ms`, error_code: "internal_error" });
    } finally {
      up.heal();
    }
    up.faults.down = true;
    try {
      const down = await fetch(`${replica.base}/transactions/by_hash/${hash}`);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ message: "the upstream could not be reached", error_code: "internal_error" });
      expect((await fetch(`${replica.base}/info`)).status).toBe(200);
      const again = await fetch(`${replica.base}/accounts/0x1/modules`);
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(await modules.text());
      expect((await fetch(`${replica.base}/estimate_gas_price`)).status).toBe(200);
    } finally {
      up.heal();
    }
  });

  it("refuses a path with a dot segment or an encoded separator, in every spelling, with a 400 naming it, and sends nothing on", async () => {
    const before = up.received.length;
    for (const target of ESCAPES) {
      for (const method of ["GET", "POST"]) {
        const r = await asIs(replica.base, target, method, method === "POST" ? "{}" : undefined);
        expect({ target, method, status: r.status }).toEqual({ target, method, status: 400 });
        const error = JSON.parse(r.body) as { message: string; error_code: string };
        expect(error.error_code).toBe("web_framework_error");
        expect(error.message).toMatch(/^the path ".*" is not passed to the upstream: its segment ".*" (is a dot segment|holds an encoded separator or a backslash), which could name a path outside the upstream's \/v1$/);
        expect(error.message).toContain(`the path ${JSON.stringify(target)} `);
      }
    }
    const issue = await asIs(replica.base, "/v1/%2e%2e/admin/reset", "POST", "{}");
    expect(JSON.parse(issue.body)).toEqual({
      message: `the path "/v1/%2e%2e/admin/reset" is not passed to the upstream: its segment "%2e%2e" is a dot segment, which could name a path outside the upstream's /v1`,
      error_code: "web_framework_error",
    });
    expect(up.received.slice(before).filter((r) => !r.url.startsWith("/v1/blocks/") && !r.url.startsWith("/v1/transactions?") && r.url !== "/v1")).toEqual([]);
  });

  it("passes the path and query on exactly as they were sent, escapes and all", async () => {
    const targets = [
      "/v1/upstream-only/0x1::coin::CoinStore%3C0x1::aptos_coin::AptosCoin%3E/deposit_events?limit=2",
      "/v1/upstream-only/0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>/withdraw_events",
      "/v1/upstream-only/%33?a=%2e%2e/../x&b=%41",
      "/v1//upstream-only/3",
      "/v1/upstream-only/.../x",
    ];
    for (const target of targets) {
      const before = up.received.length;
      const r = await asIs(replica.base, target);
      expect({ target, status: r.status }).not.toEqual({ target, status: 400 });
      expect(up.received.slice(before).map((x) => x.url)).toContain(target);
    }
  });

  it("drops the upstream's headers that would act on this node's origin: Set-Cookie, Strict-Transport-Security, Alt-Svc, Clear-Site-Data", async () => {
    up.faults.answerHeaders = {
      "set-cookie": "upstream-session=1; Path=/",
      "strict-transport-security": "max-age=31536000; includeSubDomains",
      "alt-svc": 'h3=":443"',
      "clear-site-data": '"cookies"',
      "x-upstream-note": "kept",
    };
    try {
      const proxied = await rawRequest(`${replica.base}/upstream-only/3`);
      const direct = await rawRequest(`${up.base}/upstream-only/3`);
      expect(direct.headers["set-cookie"]).toEqual(["upstream-session=1; Path=/"]);
      expect(direct.headers["strict-transport-security"]).toBe("max-age=31536000; includeSubDomains");
      expect(proxied.status).toBe(200);
      expect(proxied.body.equals(direct.body)).toBe(true);
      expect(proxied.headers["x-upstream-note"]).toBe("kept");
      expect(proxied.headers["set-cookie"]).toBeUndefined();
      expect(proxied.headers["strict-transport-security"]).toBeUndefined();
      expect(proxied.headers["alt-svc"]).toBeUndefined();
      expect(proxied.headers["clear-site-data"]).toBeUndefined();
    } finally {
      up.faults.answerHeaders = null;
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
      const first = await fetch(`${tight.base}/upstream-only/3`);
      const before = up.received.length;
      const second = await fetch(`${tight.base}/upstream-only/4`);
      expect(first.status).toBe(200);
      expect(second.status).toBe(503);
      expect(second.headers.get("retry-after")).toBe("1");
      expect(await second.json()).toEqual({ message: "the proxy's upstream request rate (1 a second) is used up: try again later", error_code: "internal_error" });
      // the follower's own block reads go on meanwhile; the refused request's never left
      expect(up.received.slice(before).filter((r) => r.url === "/v1/upstream-only/4")).toEqual([]);
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

describe("serve --follow --proxy, the upstream served under a path (http://host/TOKEN/v1)", () => {
  const dir = mkdtempSync(join(tmpdir(), "ledger-node-proxy-path-"));
  const TOKEN = "tenant-secret-7f3a";
  let up: FakeUpstream;
  let gateway: PathGateway;
  let replica: ServeProcess;
  beforeAll(async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: 30 });
    gateway = await PathGateway.start(up.base, `/${TOKEN}`);
    replica = await startServe([
      "--follow", gateway.base, "--proxy", "--api-key", API_KEY, "--db", join(dir, "replica.db"), "--no-prune", "--quiet",
      "--max-rps", "5000", "--proxy-max-rps", "5000", "--poll", "50", "--upstream-timeout", String(TIMEOUT_MS),
    ]);
    await caughtUp(replica.base, up.ledgerVersion);
  }, 180_000);
  afterAll(async () => {
    await replica?.stop();
    await gateway?.stop();
    await up?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("never reaches outside the upstream's own /v1 with the operator's key, however the path is spelled", async () => {
    const before = gateway.arrivals.length;
    const escapes = [...ESCAPES, "/v1/%2e%2e/%2e%2e/other-tenant/v1/view", "/v1/../../other-tenant/v1/view", "/v1/.%2e/%2E%2e/other-tenant/v1/view"];
    for (const target of escapes) {
      const r = await asIs(replica.base, target, "POST", "{}");
      expect({ target, status: r.status }).toEqual({ target, status: 400 });
    }
    const hash = `0x${"cd".repeat(32)}`;
    const passed = await asIs(replica.base, `/v1/transactions/by_hash/${hash}`);
    expect(passed.status).toBe(404);
    expect(JSON.parse(passed.body)).toMatchObject({ error_code: "transaction_not_found" });
    const arrived = gateway.arrivals.slice(before);
    expect(arrived).toContainEqual({ method: "GET", target: `/${TOKEN}/v1/transactions/by_hash/${hash}`, authorization: `Bearer ${API_KEY}` });
    expect(arrived.filter((a) => a.target !== `/${TOKEN}/v1` && !a.target.startsWith(`/${TOKEN}/v1/`) && !a.target.startsWith(`/${TOKEN}/v1?`))).toEqual([]);
    expect(arrived.filter((a) => /(^|\/)(\.|%2e){1,2}(\/|$|\?)/i.test(a.target))).toEqual([]);
  });

  it("answers an upstream that is silent 504 and one that cannot be reached 503, naming neither its URL, host nor the socket's error; the log keeps them", async () => {
    const what = `/v1/transactions/by_hash/0x${"ef".repeat(32)}`;
    const forbidden = [TOKEN, gateway.hostPort, String(new URL(gateway.base).port), "ECONN", "socket", "hang up"];
    gateway.answer = (req, res) => {
      if (!req.url?.endsWith(what)) return false;
      const t = setTimeout(() => res.end("{}"), TIMEOUT_MS * 4);
      res.once("close", () => clearTimeout(t));
      return true;
    };
    try {
      const silent = await asIs(replica.base, what);
      expect(silent.status).toBe(504);
      expect(JSON.parse(silent.body)).toEqual({ message: `the upstream did not answer within ${TIMEOUT_MS} ms`, error_code: "internal_error" });
      for (const f of forbidden) expect(silent.body).not.toContain(f);
    } finally {
      gateway.answer = null;
    }
    await gateway.stop();
    try {
      const unreachable = await asIs(replica.base, what);
      expect(unreachable.status).toBe(503);
      expect(JSON.parse(unreachable.body)).toEqual({ message: "the upstream could not be reached", error_code: "internal_error" });
      for (const f of forbidden) expect(unreachable.body).not.toContain(f);
    } finally {
      await gateway.listen();
    }
    // The node's own log names the upstream request and the socket's error, for the operator (the
    // lines reach this process a moment after the answers).
    const logged = (msg: string, detail: string) =>
      replica
        .stdout()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { msg?: string; cause?: string })
        .some((l) => l.msg === msg && (l.cause ?? "").includes(detail));
    const upstreamWhat = `GET ${gateway.base}${what.slice("/v1".length)}`;
    for (const [msg, detail] of [
      ["the upstream could not be reached", `${upstreamWhat}: ECONNREFUSED`],
      [`the upstream did not answer within ${TIMEOUT_MS} ms`, `${upstreamWhat}: no answer within ${TIMEOUT_MS} ms`],
    ] as const) {
      for (const until = Date.now() + 10_000; !logged(msg, detail) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
      expect({ msg, logged: logged(msg, detail) }).toEqual({ msg, logged: true });
    }
  });

  /** Asks for `path` and reads the answer (pausing `pauseMs` after its first bytes): how much came, and whether it was cut. */
  function readAnswer(path: string, pauseMs = 0): Promise<{ bytes: number; cut: boolean }> {
    const { hostname, port } = new URL(replica.base);
    return new Promise((resolve, reject) => {
      const req = request({ host: hostname, port, path, agent: false }, (res) => {
        let bytes = 0;
        let paused = pauseMs === 0;
        res.on("data", (c: Buffer) => {
          bytes += c.length;
          if (paused) return;
          paused = true;
          res.pause();
          setTimeout(() => res.resume(), pauseMs);
        });
        res.on("aborted", () => resolve({ bytes, cut: true }));
        res.on("error", () => resolve({ bytes, cut: true }));
        res.on("end", () => resolve({ bytes, cut: false }));
      });
      req.on("error", reject);
      req.end();
    });
  }

  it("cuts an answer that drips, with gaps under --upstream-timeout or over it", async () => {
    const BYTES = 12;
    for (const gapMs of [TIMEOUT_MS / 3, TIMEOUT_MS + 500]) {
      let closedEarly = false;
      gateway.answer = (req, res) => {
        if (!req.url?.endsWith("/v1/drip")) return false;
        res.writeHead(200, { "content-type": "application/json", "content-length": String(BYTES) });
        let sent = 0;
        const drip = () => {
          res.write(" ");
          if (++sent === BYTES) res.end();
        };
        drip();
        const t = setInterval(drip, gapMs);
        res.once("close", () => {
          clearInterval(t);
          closedEarly = sent < BYTES;
        });
        return true;
      };
      try {
        const got = await readAnswer("/v1/drip");
        expect({ gapMs, ...got }).toMatchObject({ gapMs, cut: true });
        expect(got.bytes).toBeLessThan(BYTES);
        await new Promise((r) => setTimeout(r, 100));
        expect(closedEarly).toBe(true);
      } finally {
        gateway.answer = null;
      }
    }
  });

  it("does not cut a large answer while the client is not reading it: that wait is not the upstream's", async () => {
    const size = 24 * 1024 * 1024;
    gateway.answer = (req, res) => {
      if (!req.url?.endsWith("/v1/large")) return false;
      res.writeHead(200, { "content-type": "application/json", "content-length": String(size) });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let left = size;
      const write = () => {
        while (left > 0) {
          left -= chunk.length;
          if (!res.write(chunk)) return void res.once("drain", write);
        }
        res.end();
      };
      write();
      return true;
    };
    try {
      const got = await readAnswer("/v1/large", TIMEOUT_MS * 2);
      expect(got).toEqual({ bytes: size, cut: false });
    } finally {
      gateway.answer = null;
    }
  });
});

describe("serve --follow --proxy: the deadline and one answer per request", () => {
  const dir = mkdtempSync(join(tmpdir(), "ledger-node-proxy-deadline-"));
  const DEADLINE_MS = 1500;
  const REQUEST_TIMEOUT_MS = 3000;
  let up: FakeUpstream;
  let replica: ServeProcess;
  beforeAll(async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: 10 });
    replica = await startServe([
      "--follow", up.base, "--proxy", "--db", join(dir, "replica.db"), "--no-prune", "--quiet", "--max-rps", "5000", "--poll", "50",
      "--proxy-max-rps", "5000", "--upstream-timeout", String(DEADLINE_MS), "--request-timeout", String(REQUEST_TIMEOUT_MS),
    ]);
  }, 180_000);
  afterAll(async () => {
    await replica?.stop();
    await up?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("does not count a slow upload against the deadline: it starts once the whole request is sent", async () => {
    const { hostname, port } = new URL(replica.base);
    const start = '{"function":"0xa11ce::registry::get","type_arguments":[],"arguments":["2"]';
    const pad = " ".repeat(256);
    const parts = 8;
    const body = start + pad.repeat(parts) + "}";
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = request(
        { host: hostname, port, path: "/v1/view", method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": String(body.length) } },
        (res) => {
          let text = "";
          res.on("data", (c) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
        },
      );
      req.on("error", reject);
      // The body comes in over twice the deadline.
      req.write(start);
      let sent = 0;
      const t = setInterval(() => {
        req.write(pad);
        if (++sent === parts) {
          clearInterval(t);
          req.end("}");
        }
      }, (DEADLINE_MS * 2) / parts);
    });
    const direct = await fetch(`${up.base}/view`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(await direct.text());
  });

  it("answers a request whose body never all arrives once, with the request timeout's 408, not a 504 and then a 408", async () => {
    const head = `POST /v1/view HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n`;
    const raw = await everythingSent(replica.base, head, '{"function":', REQUEST_TIMEOUT_MS * 3);
    expect(statusLines(raw)).toEqual(["HTTP/1.1 408 Request Timeout"]);
  });

  it("ends the connection after an answer given before the body has all arrived, so that no second answer follows", async () => {
    const head = `POST /v1/%2e%2e/admin HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n`;
    const raw = await everythingSent(replica.base, head, '{"function":', REQUEST_TIMEOUT_MS * 3);
    expect(statusLines(raw)).toEqual(["HTTP/1.1 400 Bad Request"]);
  });

  it("under 300 concurrent proxied requests, with the default rate and deadline, answers each 200 or, past its own rate, 503 with Retry-After; never 504; and asks the upstream only for those it answers 200", async () => {
    // --proxy-max-rps 50 and --upstream-timeout 5000 (the defaults): 250 fit in the rate's wait, the
    // last of them starting just under the deadline after they arrived.
    const defaults = await startServe(["--follow", up.base, "--proxy", "--db", join(dir, "defaults.db"), "--no-prune", "--quiet", "--max-rps", "5000", "--poll", "50"]);
    try {
      const { hostname, port } = new URL(defaults.base);
      const target = "/v1/upstream-only/3?with_transactions=false";
      const before = up.received.length;
      const one = () =>
        new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
          const req = request({ host: hostname, port, path: target, agent: false }, (res) => {
            res.resume();
            res.on("end", () => resolve({ status: res.statusCode!, retryAfter: res.headers["retry-after"] as string | undefined }));
          });
          req.on("error", reject);
          req.end();
        });
      const answers = await Promise.all(Array.from({ length: 300 }, one));
      const by = (s: number) => answers.filter((a) => a.status === s);
      expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
      expect(by(503).filter((a) => a.retryAfter === undefined)).toEqual([]);
      expect(by(200).length).toBeGreaterThan(0);
      expect(up.received.slice(before).filter((r) => r.url === target).length).toBe(by(200).length);
    } finally {
      await defaults.stop();
    }
  }, 60_000);
});
