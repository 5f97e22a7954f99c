/**
 * POST /v1/tables/{handle}/raw_item: time travel, BCS-only, missing items, bad bodies. SQLite only:
 * the store's table reads are pinned on every backend by the store suite, parity and prune races.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr, deleteTable, u64le, writeTable } from "../../../../test/helpers/chain.js";
import { serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";

const H = addr("7ab1e");
const KEY = u64le(42);

const backend = sqliteBackend();
describe(`raw_item (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis();
  const v: Record<string, bigint> = {};
  beforeAll(async () => {
    v.written = chain.nextUserVersion;
    chain.block([{ sender: addr("b0b"), changes: [writeTable(H, KEY, u64le(1))] }]);
    v.overwritten = chain.nextUserVersion;
    chain.block([{ sender: addr("b0b"), seq: 1, changes: [writeTable(H, KEY, u64le(2))] }]);
    v.deleted = chain.nextUserVersion;
    chain.block([{ sender: addr("b0b"), seq: 2, changes: [deleteTable(H, KEY)] }]);
    v.rewritten = chain.nextUserVersion;
    chain.block([{ sender: addr("b0b"), seq: 3, changes: [writeTable(H, KEY, "0xff80")] }]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const post = (body: unknown, q = "", headers: Record<string, string> = { accept: "application/x-bcs" }, handle = H) =>
    fetch(`${node.base}/tables/${handle}/raw_item${q}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  it("reads the value written, overwritten, deleted and written again at each version", async () => {
    const read = async (at: bigint) => {
      const res = await post({ key: KEY }, `?ledger_version=${at}`);
      return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), res };
    };
    expect((await read(v.written! - 1n)).status).toBe(404);
    const w = await read(v.written!);
    expect(w.status).toBe(200);
    expect(w.res.headers.get("content-type")).toBe("application/x-bcs");
    expect(w.bytes).toEqual(Buffer.from(u64le(1).slice(2), "hex"));
    expect((await read(v.overwritten! - 1n)).bytes).toEqual(w.bytes);
    expect((await read(v.overwritten!)).bytes).toEqual(Buffer.from(u64le(2).slice(2), "hex"));
    const d = await read(v.deleted!);
    expect(d.status).toBe(404);
    expect(JSON.parse(d.bytes.toString())).toEqual({
      message: `Table Item not found by Table handle(0x7ab1e), Table key(${KEY}) and Ledger version(${v.deleted})`,
      error_code: "table_item_not_found",
    });
    expect(d.res.headers.get("x-node-ledger-version")).toBe(String(chain.version - 1n));
    // Bytes >= 0x80 come back verbatim (no text decoding anywhere).
    const latest = await post({ key: KEY });
    expect(Buffer.from(await latest.arrayBuffer())).toEqual(Buffer.from([0xff, 0x80]));
  });

  it("accepts the key with either hex case and without 0x, and the handle in short form", async () => {
    const res = await post({ key: KEY.slice(2).toUpperCase() }, "", { accept: "application/x-bcs" }, "0x7AB1E");
    expect(res.status).toBe(200);
  });

  it("answers BCS for a missing Accept or */*, and 403 api_disabled when only JSON is asked for", async () => {
    expect((await post({ key: KEY }, "", {})).status).toBe(200);
    expect((await post({ key: KEY }, "", { accept: "*/*" })).status).toBe(200);
    expect((await post({ key: KEY }, "", { accept: "application/json, application/x-bcs" })).status).toBe(403);
    // Ranked by q-value (docs/decisions.md §3): a lower-weighted JSON loses to BCS; q=0 excludes.
    expect((await post({ key: KEY }, "", { accept: "application/json;q=0.1, application/x-bcs" })).status).toBe(200);
    expect((await post({ key: KEY }, "", { accept: "application/json, application/x-bcs;q=0" })).status).toBe(403);
    expect((await post({ key: KEY }, "", { accept: "application/json;q=0, application/x-bcs;q=0.5" })).status).toBe(200);
    const res = await post({ key: KEY }, "", { accept: "application/json" });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error_code: string; message: string };
    expect(body.error_code).toBe("api_disabled");
    expect(body.message).toContain("application/x-bcs");
    expect(res.headers.get("x-node-chain-id")).toBe("4");
  });

  it("rejects bad keys, bodies and handles with 4xx JSON errors naming the value", async () => {
    const cases: Array<[unknown, number, string]> = [
      [{ key: "0x123" }, 400, "0x123"],
      [{ key: "zz" }, 400, "zz"],
      [{}, 400, "key"],
      [{ key: 5 }, 400, "key"],
      ["not json", 400, "payload"],
      ["[]", 400, "object"],
    ];
    for (const [body, status, mention] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      const err = (await res.json()) as { message: string; error_code: string };
      expect(err.error_code).toBe("web_framework_error");
      expect(err.message).toContain(mention);
    }
    const badHandle = await post({ key: KEY }, "", { accept: "application/x-bcs" }, "0xnothex");
    expect(badHandle.status).toBe(400);
    expect(((await badHandle.json()) as { message: string }).message).toBe(
      "failed to parse path `table_handle`: failed to parse \"string(Address)\": Invalid account address: Hex characters are invalid: Invalid character 'n' at position 58",
    );
    const text = await fetch(`${node.base}/tables/${H}/raw_item`, { method: "POST", headers: { "content-type": "text/plain" }, body: "x" });
    expect(text.status).toBe(415);
    expect(((await text.json()) as { error_code: string }).error_code).toBe("web_framework_error");
    const big = await post({ key: "0x" + "00".repeat(5 * 1024 * 1024) });
    expect(big.status).toBe(413);
  });
});
