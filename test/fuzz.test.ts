/**
 * Bad input never answers 5xx: fast-check drives at least 5,000 real HTTP requests over the paths,
 * queries, Accept and Accept-Encoding headers and bodies of all routes. Every answer is a 2xx, or a 4xx carrying the
 * JSON error object with a code from the closed set. SQLite only: it tests request handling, not
 * the store. Seeded (`TEST_SEED=n` repeats a run; the seed is in the test's name).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../src/api/http/apiError.js";
import { sqliteBackend } from "./helpers/backends.js";
import { ChainBuilder, addr, u64le, writeTable } from "./helpers/chain.js";
import { serveChain, stopNode, type TestNode } from "./helpers/node.js";
import { testSeed } from "./helpers/seed.js";

const RUNS = 5_200;
const SEED = testSeed(20261122);

const hexish = fc.stringMatching(/^(0x|0X)?[0-9a-fA-FxXg]{0,70}$/);
const weird = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom("", "-1", "1.5", "1e3", "18446744073709551615", "18446744073709551616", "99999999999999999999999", "0", "65535", "65536", " 1", "%00", "null", "[]", "0x1"),
  fc.bigInt({ min: 0n, max: 1n << 70n }).map(String),
);
const address = fc.oneof(hexish, fc.constantFrom("0x1", "1", addr("b0b"), "0x", "%zz", "..", "0x1/..", "%2F"));
const query = fc
  .dictionary(fc.constantFrom("limit", "start", "ledger_version", "start_version", "end_version", "x"), weird, { maxKeys: 4 })
  .map((d) => new URLSearchParams(d).toString());
const accept = fc.option(
  fc.oneof(
    fc.constantFrom("application/json", "application/x-bcs", "*/*", "text/html", "application/json;q=0.1, application/x-bcs", "application/x-bcs;charset=x", ",,,", "application/*"),
    fc.string({ maxLength: 40 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
  ),
  { nil: undefined },
);
/** Accept-Encoding: what clients send, malformed weights, refusals of everything, and noise. */
const encoding = fc.option(
  fc.oneof(
    fc.constantFrom("gzip, deflate, br", "br", "x-gzip", "*", "*;q=0", "identity;q=0", "gzip;q=abc", "gzip;level=9", ",,,", "", "br;q=0, gzip;q=0, deflate;q=0"),
    fc.string({ maxLength: 40 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
  ),
  { nil: undefined },
);
const body = fc.oneof(
  fc.json(),
  fc.record({ key: fc.oneof(hexish, fc.integer(), fc.constant(null)) }).map((o) => JSON.stringify(o)),
  fc.string({ maxLength: 50 }),
);
const contentType = fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-8", undefined);

type Req = { method: string; path: string; accept: string | undefined; encoding: string | undefined; body?: string; contentType?: string | undefined };

const request: fc.Arbitrary<Req> = fc.oneof(
  fc.record({ method: fc.constant("GET"), path: fc.tuple(address, query).map(([a, q]) => `/accounts/${encodeURIComponent(a)}/modules?${q}`), accept, encoding }),
  fc.record({ method: fc.constant("GET"), path: fc.tuple(address, query).map(([a, q]) => `/accounts/${encodeURIComponent(a)}/transaction_summaries?${q}`), accept, encoding }),
  fc.record({
    method: fc.constant("POST"),
    path: fc.tuple(address, query).map(([a, q]) => `/tables/${encodeURIComponent(a)}/raw_item?${q}`),
    accept,
    encoding,
    body,
    contentType,
  }),
  fc.record({ method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH"), path: fc.constantFrom("/info", "/estimate_gas_price", "/spec", "/spec.json", "/", "/accounts", "/tables/0x1/raw_item"), accept, encoding }),
  fc.record({ method: fc.constantFrom("GET", "POST"), path: fc.string({ maxLength: 40 }).map((s) => "/" + encodeURIComponent(s).replace(/%2F/g, "/")), accept, encoding }),
);

const backend = sqliteBackend();
describe(`fuzz (${backend.name})`, () => {
  let node: TestNode;
  beforeAll(async () => {
    const chain = new ChainBuilder().genesis();
    for (let b = 0; b < 5; b++) chain.block([{ sender: addr("b0b"), seq: b, changes: [writeTable(addr("1"), u64le(b), u64le(b))] }]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  it(`never answers 5xx to ${RUNS} random requests (seed ${SEED})`, async () => {
    let count = 0;
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        count++;
        const headers: Record<string, string> = {};
        if (r.accept !== undefined) headers.accept = r.accept;
        // fetch sends its own Accept-Encoding unless one is given, and decodes what comes back
        if (r.encoding !== undefined) headers["accept-encoding"] = r.encoding;
        if (r.contentType !== undefined) headers["content-type"] = r.contentType;
        const res = await fetch(node.base + r.path, {
          method: r.method,
          headers,
          body: r.method === "GET" ? undefined : r.body,
        });
        const buf = Buffer.from(await res.arrayBuffer());
        expect(res.status, `${r.method} ${r.path}`).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.headers.get("content-type"), `${r.method} ${r.path}`).toMatch(/^application\/json/);
          const err = JSON.parse(buf.toString("utf8")) as { message: unknown; error_code: unknown };
          expect(typeof err.message).toBe("string");
          expect(ERROR_CODES).toContain(err.error_code);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
    expect(count).toBeGreaterThanOrEqual(5_000);
  }, 240_000);
});
