/**
 * Every error case of docs/decisions.md answers the decided status and error_code, as the JSON error
 * object, with the ledger headers on the data operations. Also pruning: 410 below the oldest kept
 * version. SQLite only: these test the handlers; the store's reads are pinned on every backend
 * by the store suite and the parity test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "./apiError.js";
import { sqliteBackend } from "../../../test/helpers/backends.js";
import { ChainBuilder, addr, u64le, writeTable } from "../../../test/helpers/chain.js";
import { pruneServed, serveChain, stopNode, type TestNode } from "../../../test/helpers/node.js";
import { LEDGER_HEADERS } from "../../../test/helpers/headers.js";

const H = addr("7ab1e");

const backend = sqliteBackend();
describe(`errors (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis();
  beforeAll(async () => {
    for (let b = 0; b < 20; b++) chain.block([{ sender: addr("b0b"), seq: b, changes: [writeTable(H, u64le(b % 3), u64le(b))] }]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const latest = () => chain.version - 1n;
  const cases: Array<{ name: string; req: () => [string, RequestInit?]; status: number; code: string; message?: string | RegExp; headers: boolean }> = [
    {
      name: "bad address",
      req: () => ["/accounts/xyz/modules"],
      status: 400,
      code: "web_framework_error",
      message: "failed to parse path `address`: failed to parse \"string(Address)\": Invalid account address: Hex characters are invalid: Invalid character 'x' at position 61",
      headers: true,
    },
    { name: "address without 0x, short", req: () => ["/accounts/01/modules"], status: 400, code: "web_framework_error", message: /`address`.*"01"/, headers: true },
    { name: "address too long", req: () => [`/accounts/0x${"1".repeat(65)}/transaction_summaries`], status: 400, code: "web_framework_error", headers: true },
    { name: "address 0X prefix", req: () => ["/accounts/0X1/modules"], status: 400, code: "web_framework_error", headers: true },
    {
      name: "ledger_version not a u64",
      req: () => ["/accounts/0x1/modules?ledger_version=-1"],
      status: 400,
      code: "web_framework_error",
      message:
        'failed to parse parameter `ledger_version`: failed to parse "string(U64)": Parsing u64 string "-1" failed, caused by error: invalid digit found in string (occurred while parsing "optional<string(U64)>")',
      headers: true,
    },
    { name: "ledger_version over u64", req: () => ["/accounts/0x1/modules?ledger_version=18446744073709551616"], status: 400, code: "web_framework_error", message: /18446744073709551616/, headers: true },
    {
      name: "ledger_version in the future",
      req: () => ["/accounts/0x1/modules?ledger_version=1000000000000000000"],
      status: 404,
      code: "version_not_found",
      message: "Ledger version not found by Ledger version(1000000000000000000)",
      headers: true,
    },
    {
      name: "limit not a number",
      req: () => ["/accounts/0x1/modules?limit=hello"],
      status: 400,
      code: "web_framework_error",
      message: 'failed to parse parameter `limit`: failed to parse "integer(uint16)": invalid digit found in string (occurred while parsing "optional<integer(uint16)>")',
      headers: true,
    },
    {
      name: "limit over u16",
      req: () => ["/accounts/0x1/transaction_summaries?limit=65536"],
      status: 400,
      code: "web_framework_error",
      message: 'failed to parse parameter `limit`: failed to parse "integer(uint16)": number too large to fit in target type (occurred while parsing "optional<integer(uint16)>")',
      headers: true,
    },
    { name: "modules limit=0", req: () => ["/accounts/0x1/modules?limit=0"], status: 400, code: "invalid_input", message: "Given limit value (0) must not be zero", headers: true },
    { name: "garbage cursor", req: () => ["/accounts/0x1/modules?start=iwouldnotsurviveavibecheckrightnow"], status: 400, code: "web_framework_error", headers: true },
    { name: "hex that is no state key", req: () => ["/accounts/0x1/modules?start=00ff"], status: 400, code: "web_framework_error", message: /00ff/, headers: true },
    { name: "start_version not a u64", req: () => ["/accounts/0x1/transaction_summaries?start_version=1.5"], status: 400, code: "web_framework_error", headers: true },
    {
      name: "raw_item version in the future",
      req: () => [`/tables/${H}/raw_item?ledger_version=${latest() + 1n}`, { method: "POST", headers: { "content-type": "application/json", accept: "application/x-bcs" }, body: '{"key":"0x00"}' }],
      status: 404,
      code: "version_not_found",
      headers: true,
    },
    ...["0x10", "0b11", "1e1", "Infinity", "+5", " 5", "5.0", "-0"].map((v) => ({
      name: `limit=${JSON.stringify(v)} (decimal digits only)`,
      req: (): [string] => [`/accounts/0x1/transaction_summaries?limit=${encodeURIComponent(v)}`],
      status: 400,
      code: "web_framework_error",
      message: 'failed to parse parameter `limit`: failed to parse "integer(uint16)": invalid digit found in string (occurred while parsing "optional<integer(uint16)>")',
      headers: true,
    })),
    ...[["a number", "1100000000000000", "a number"], ["null", "null", "null"], ["true", "true", "a boolean"], ["an array", '["0x01"]', "an array"]].map(([what, key, got]) => ({
      name: `raw_item key as ${what} (a JSON string only)`,
      req: (): [string, RequestInit] => [`/tables/${H}/raw_item`, { method: "POST", headers: { "content-type": "application/json", accept: "application/x-bcs" }, body: `{"key": ${key}}` }],
      status: 400,
      code: "web_framework_error",
      message: `parse request payload error: key: expected a JSON string, got ${got}`,
      headers: true,
    })),
    {
      name: "a missing 1 MB table key, quoted clipped",
      req: () => [`/tables/${H}/raw_item`, { method: "POST", headers: { "content-type": "application/json", accept: "application/x-bcs" }, body: JSON.stringify({ key: "0x" + "ab".repeat(500_000) }) }],
      status: 404,
      code: "table_item_not_found",
      message: new RegExp(`^Table Item not found by Table handle\\(0x7ab1e\\), Table key\\(0x(ab){49}…\\) and Ledger version\\(\\d+\\)$`),
      headers: true,
    },
    {
      name: "a 1 MB key that is not hex, quoted clipped",
      req: () => [`/tables/${H}/raw_item`, { method: "POST", headers: { "content-type": "application/json", accept: "application/x-bcs" }, body: JSON.stringify({ key: "zz".repeat(500_000) }) }],
      status: 400,
      code: "web_framework_error",
      message: new RegExp(`^parse request payload error: key: decode hex-encoded string\\("z{100}…"\\) failed`),
      headers: true,
    },
    { name: "a long bad ledger_version, quoted clipped", req: () => [`/accounts/0x1/modules?ledger_version=${"9x".repeat(3000)}`], status: 400, code: "web_framework_error", message: /Parsing u64 string "(9x){50}…" failed/, headers: true },
    { name: "unknown route", req: () => ["/nope"], status: 404, code: "web_framework_error", message: "not found", headers: false },
    { name: "a trailing slash (exact match, as the reference)", req: () => ["/info/"], status: 404, code: "web_framework_error", message: "not found", headers: false },
    { name: "a trailing slash on a POST route", req: () => [`/tables/${H}/raw_item/`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"key":"0x01"}' }], status: 404, code: "web_framework_error", message: "not found", headers: false },
    { name: "a dot in a route is not a wildcard", req: () => ["/specxjson", { method: "POST" }], status: 404, code: "web_framework_error", message: "not found", headers: false },
    { name: "bad percent-encoding in the path", req: () => ["/accounts/%zz/modules"], status: 400, code: "web_framework_error", message: 'failed to parse the request path: invalid percent-encoding in "/v1/accounts/%zz/modules"', headers: false },
    { name: "wrong method", req: () => ["/estimate_gas_price", { method: "POST" }], status: 405, code: "web_framework_error", message: "method not allowed", headers: false },
    { name: "GET on raw_item", req: () => [`/tables/${H}/raw_item`], status: 405, code: "web_framework_error", message: "method not allowed", headers: false },
  ];

  for (const c of cases) {
    it(`answers ${c.status} ${c.code} for ${c.name}`, async () => {
      const [path, init] = c.req();
      const res = await fetch(node.base + path, init);
      expect(res.status).toBe(c.status);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      const body = (await res.json()) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(["error_code", "message"]);
      expect(body.error_code).toBe(c.code);
      expect(ERROR_CODES).toContain(body.error_code);
      expect(body.message).toEqual(
        c.message === undefined ? expect.any(String) : typeof c.message === "string" ? c.message : expect.stringMatching(c.message),
      );
      for (const h of LEDGER_HEADERS) expect(res.headers.get(h) !== null, h).toBe(c.headers);
      expect(res.headers.get("x-node-ledger-version")).toBe(c.headers ? String(latest()) : null);
    });
  }

  it("answers 410 version_pruned below the oldest kept version, on every versioned operation", async () => {
    const r = await pruneServed(node, "30");
    expect(r).not.toBeNull();
    const oldest = r!.oldestVersion;
    const info = await (await fetch(`${node.base}/estimate_gas_price`)).headers;
    expect(info.get("x-node-ledger-oldest-version")).toBe(String(oldest));
    expect(info.get("x-node-oldest-block-height")).toBe(String(r!.oldestBlockHeight));
    const below = oldest - 1n;
    const reqs: Array<[string, RequestInit?]> = [
      [`/accounts/0x1/modules?ledger_version=${below}`],
      [`/accounts/${addr("b0b")}/transaction_summaries?start_version=${below}`],
      [`/accounts/${addr("b0b")}/transaction_summaries?end_version=${below}`],
      [`/tables/${H}/raw_item?ledger_version=${below}`, { method: "POST", headers: { "content-type": "application/json", accept: "application/x-bcs" }, body: JSON.stringify({ key: u64le(1) }) }],
    ];
    for (const [path, init] of reqs) {
      const res = await fetch(node.base + path, init);
      expect(res.status, path).toBe(410);
      expect(await res.json()).toEqual({ message: `Ledger version(${below}) has been pruned`, error_code: "version_pruned" });
      expect(res.headers.get("x-node-ledger-oldest-version")).toBe(String(oldest));
    }
    // At and above the oldest version every read is exact: each key's newest value survived.
    for (let k = 0; k < 3; k++) {
      const res = await fetch(`${node.base}/tables/${H}/raw_item?ledger_version=${oldest}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/x-bcs" },
        body: JSON.stringify({ key: u64le(k) }),
      });
      expect(res.status).toBe(200);
    }
    const s = (await (await fetch(`${node.base}/accounts/${addr("b0b")}/transaction_summaries`)).json()) as Array<{ version: string }>;
    expect(s.every((x) => BigInt(x.version) >= oldest)).toBe(true);
    expect(s.length).toBeGreaterThan(0);
  });
});
