/**
 * Raw HTTP over a TCP socket (issue 18): bad request lines, methods, versions, headers (malformed,
 * huge, conflicting lengths), bad percent-encoding, bad chunked encoding and garbage bodies. Every
 * response is a 2xx, or the JSON error object with a 4xx the API uses — never a 5xx, never
 * Fastify's or Node's own shape, never a silently closed connection. Seeded: TEST_SEED=n repeats a
 * run, and a failure prints its seed.
 */
import fc from "fast-check";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../src/api/http/apiError.js";
import { sqliteBackend } from "./helpers/backends.js";
import { ChainBuilder, addr, u64le, writeTable } from "./helpers/chain.js";
import { serveChain, stopNode, type TestNode } from "./helpers/node.js";
import { testSeed } from "./helpers/seed.js";

const RUNS = 1_500;
const SEED = testSeed(18_2026);
const ALLOWED = new Set([400, 403, 404, 405, 408, 410, 413, 414, 415, 417, 431]);
const H = addr("7ab1e");

const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/);
const printable = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);
const bytes = fc.uint8Array({ maxLength: 60 }).map((a) => Buffer.from(a).toString("latin1"));

const method = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("GET", "POST") },
  fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE", "get", "G ET", "", "FOO", "POST\t"),
  token,
);
const path = fc.oneof(
  fc.constantFrom(
    "/v1/info",
    "/v1/info/",
    "/v1",
    "/v1/",
    "/v1/-/healthy",
    "/v1/spec.json",
    "/v1/specxjson",
    `/v1/tables/${H}/raw_item`,
    "/v1/accounts/0x1/modules?limit=0x10",
    "/v1/accounts/0x1/modules?limit=1e1",
    "/v1/accounts/0x1/transaction_summaries?limit=+5",
    "/v1/accounts/0x1/modules?limit=Infinity",
    "/v1/accounts/%zz/modules",
    "/v1/%",
    "/v1/accounts/0x1%2/modules",
    "/v1/accounts/%C0%AF/modules",
    "/v1/info?%zz=%",
    "*",
    "http://127.0.0.1/v1/info",
    "v1/info",
    "//v1//info",
    "/v1/accounts/0x" + "1".repeat(900) + "/modules",
    "/" + "a".repeat(9_000),
  ),
  printable.map((s) => "/v1/" + s.replace(/ /g, "%20")),
  bytes.map((s) => "/" + s),
);
const version = fc.oneof(
  { weight: 4, arbitrary: fc.constant("HTTP/1.1") },
  { weight: 1, arbitrary: fc.constantFrom("HTTP/1.0", "HTTP/2.0", "HTTP/9.9", "HTTP/1.1x", "", "http/1.1") },
);
const header = fc.oneof(
  fc.tuple(token, printable).map(([k, v]) => `${k}: ${v}`),
  fc.constantFrom(
    "Content-Type: application/json",
    "Content-Type: text/plain",
    "Accept: application/x-bcs",
    "Accept: application/json",
    "Content-Length: 5",
    "Content-Length: -1",
    "Content-Length: abc",
    "Content-Length: 99999999999999999999",
    "Transfer-Encoding: chunked",
    "Transfer-Encoding: gzip, chunked",
    "Transfer-Encoding: bogus",
    "Expect: 100-continue",
    "Expect: the-unexpected",
    "Connection: upgrade\r\nUpgrade: websocket",
    "X-Request-Id: \u0001bad",
    "NoColonHere",
    " Leading: space",
    "Bad Name: x",
    "X: a\u0000b",
    "X: " + "h".repeat(20_000),
    "Origin: https://evil.example",
  ),
  bytes.map((b) => `X-Bytes: ${b}`),
);
const body = fc.oneof(
  fc.constantFrom("", '{"key":"0x01"}', '{"key": 1100000000000000}', '{"key": null}', "{", "[]", "0\r\n\r\n", "5\r\nhello\r\n0\r\n\r\n", "zz\r\n", "3\r\nab\r\n", "ffffffffffffffffff\r\n", "1;" + "e".repeat(9_000) + "\r\nx\r\n0\r\n\r\n"),
  fc.json(),
  bytes,
);

const rawRequest = fc.oneof(
  { weight: 6, arbitrary: fc.record({ method, path, version, host: fc.boolean(), headers: fc.array(header, { maxLength: 4 }), body }).map((r) => {
    const head = [`${r.method} ${r.path} ${r.version}`.trimEnd(), ...(r.host ? ["Host: 127.0.0.1"] : []), ...r.headers];
    return `${head.join("\r\n")}\r\n\r\n${r.body}`;
  }) },
  // Whole garbage, and a request cut off anywhere.
  { weight: 1, arbitrary: bytes.filter((s) => s.length > 0) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1, max: 60 }), body).map(([n, b]) => `POST /v1/tables/${H}/raw_item HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n${b}`.slice(0, n + 60)) },
);

interface Answer {
  status: number;
  headers: Map<string, string>;
  body: Buffer;
}

/** Sends `text` (latin1 bytes), half-closes, and reads everything until the server closes. */
function exchange(port: number, text: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = connect(port, "127.0.0.1", () => s.end(Buffer.from(text, "latin1")));
    const t = setTimeout(() => {
      s.destroy();
      reject(new Error(`no close within 5 s; got ${JSON.stringify(Buffer.concat(chunks).toString("latin1").slice(0, 200))}`));
    }, 5_000);
    s.on("data", (d: Buffer) => chunks.push(d));
    s.on("error", () => undefined); // a reset after the response: what arrived is judged below
    s.on("close", () => {
      clearTimeout(t);
      resolve(Buffer.concat(chunks));
    });
  });
}

/** The first final (non-1xx) response in `raw`. */
function firstResponse(raw: Buffer): Answer | null {
  let at = 0;
  for (;;) {
    const end = raw.indexOf("\r\n\r\n", at);
    if (end < 0) return null;
    const lines = raw.subarray(at, end).toString("latin1").split("\r\n");
    const m = /^HTTP\/1\.[01] (\d{3}) /.exec(lines[0]!);
    if (!m) return null;
    const status = Number(m[1]);
    const headers = new Map(lines.slice(1).map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()] as [string, string]));
    if (status < 200) {
      at = end + 4;
      continue;
    }
    const len = Number(headers.get("content-length") ?? NaN);
    return { status, headers, body: raw.subarray(end + 4, Number.isFinite(len) ? end + 4 + len : undefined) };
  }
}

describe("raw HTTP fuzz (sqlite)", () => {
  const backend = sqliteBackend();
  let node: TestNode;
  beforeAll(async () => {
    const chain = new ChainBuilder().genesis();
    chain.block([{ sender: addr("b0b"), seq: 0, changes: [writeTable(H, u64le(1), u64le(7))] }]);
    node = await serveChain(backend, chain, { api: { requestTimeoutMs: 3_000, headersTimeoutMs: 3_000 } });
  });
  afterAll(() => stopNode(node, backend));

  it(`answers ${RUNS} malformed raw requests with the error object (seed ${SEED})`, async () => {
    const port = Number(new URL(node.url).port);
    const statuses = new Map<number, number>();
    try {
      await fc.assert(
        fc.asyncProperty(rawRequest, async (text) => {
          const raw = await exchange(port, text);
          const r = firstResponse(raw);
          if (r === null) throw new Error(`no HTTP response; got ${JSON.stringify(raw.toString("latin1").slice(0, 200))}`);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (r.status >= 200 && r.status < 300) return;
          expect(ALLOWED.has(r.status), `status ${r.status}`).toBe(true);
          expect(r.headers.get("content-type")).toMatch(/^application\/json/);
          const err = JSON.parse(r.body.toString("utf8")) as Record<string, unknown>;
          expect(typeof err.message).toBe("string");
          expect((err.message as string).length).toBeLessThan(400);
          expect(ERROR_CODES).toContain(err.error_code);
          expect(Object.keys(err).sort()).toEqual(["error_code", "message"]);
        }),
        { numRuns: RUNS, seed: SEED },
      );
    } catch (e) {
      console.error(`raw HTTP fuzz failed: repeat with TEST_SEED=${SEED}`);
      throw e;
    }
    console.log(`raw fuzz statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
    // The fuzz reached the parser's refusals as well as the routes'.
    for (const s of [200, 400, 404, 405, 431]) expect(statuses.get(s) ?? 0, `status ${s}`).toBeGreaterThan(0);
    // And the node still serves.
    expect((await fetch(`${node.base}/info`)).status).toBe(200);
  }, 240_000);

  it("answers each named malformation as the issue lists it", async () => {
    const port = Number(new URL(node.url).port);
    const ask = async (text: string) => firstResponse(await exchange(port, text))!;
    const cases: Array<[string, string, number, RegExp]> = [
      ["trailing slash", "GET /v1/info/ HTTP/1.1\r\nHost: x\r\n\r\n", 404, /^not found$/],
      ["unescaped dot", "GET /v1/specxjson HTTP/1.1\r\nHost: x\r\n\r\n", 404, /^not found$/],
      ["bad percent-encoding", "GET /v1/accounts/%zz/modules HTTP/1.1\r\nHost: x\r\n\r\n", 400, /percent-encoding/],
      ["bad method", "G@T /v1/info HTTP/1.1\r\nHost: x\r\n\r\n", 400, /^malformed HTTP request/],
      ["huge header", `GET /v1/info HTTP/1.1\r\nHost: x\r\nX: ${"h".repeat(20_000)}\r\n\r\n`, 431, /too large/],
      ["bad chunk", `POST /v1/tables/${H}/raw_item HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`, 400, /^malformed HTTP request/],
      ["CONNECT", "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: x\r\n\r\n", 405, /^method not allowed$/],
      ["Expect", "GET /v1/info HTTP/1.1\r\nHost: x\r\nExpect: nothing\r\n\r\n", 417, /^expectation failed/],
    ];
    for (const [what, text, status, message] of cases) {
      const r = await ask(text);
      expect(r.status, what).toBe(status);
      const err = JSON.parse(r.body.toString("utf8")) as { message: string; error_code: string };
      expect(err.error_code, what).toBe("web_framework_error");
      expect(err.message, what).toMatch(message);
    }
  });
});
