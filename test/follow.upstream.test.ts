/**
 * The fake upstream answers in the reference's shapes: its answers are checked against the
 * reference node's OpenAPI schemas (test/fixtures/aptos-openapi-spec.json), and its pruning
 * window, rate limit and faults behave as the follower's tests need.
 */
import { Ajv } from "ajv";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_TABLE_HANDLE } from "../src/ingest/devnet/chain.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";
import { FIXTURES } from "./helpers/fixtures.js";

const spec = JSON.parse(readFileSync(`${FIXTURES}aptos-openapi-spec.json`, "utf8")) as { components: { schemas: Record<string, unknown> } };
// OpenAPI 3.0 keywords (nullable, discriminator…) are not JSON Schema: strict mode off.
const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
for (const f of ["uint8", "uint16", "uint32", "uint64", "hex", "int32", "int64"]) ajv.addFormat(f, true);
// The reference prints `&signer` in ABIs, which its own MoveType pattern refuses: shape only.
delete (spec.components.schemas.MoveType as { pattern?: string }).pattern;
ajv.addSchema({ $id: "aptos", components: spec.components });

function expectShape(schema: string, value: unknown): void {
  const validate = ajv.getSchema(`aptos#/components/schemas/${schema}`)!;
  expect(validate(value) ? null : { schema, errors: validate.errors?.slice(0, 3) }).toBeNull();
}

describe("fake upstream", () => {
  let up: FakeUpstream;
  beforeAll(async () => {
    up = await FakeUpstream.start({ blocks: 40 });
  }, 60_000);
  afterAll(async () => up?.close());

  it("GET /v1, /transactions and /blocks answer the reference's schemas", async () => {
    const index = await (await fetch(up.base)).json();
    expectShape("IndexResponse", index);
    expect(index.ledger_version).toBe(String(up.ledgerVersion));
    const page = (await (await fetch(`${up.base}/transactions?start=0&limit=100`)).json()) as unknown[];
    expect(page).toHaveLength(100);
    // The transactions are served verbatim: the real genesis fixture (recorded by an older node,
    // whose events and changes predate the current schema) and the devnet generator's blocks.
    // What is checked here is what the fake itself shapes: versions in order from `start`.
    expect(page.map((t) => (t as { version: string }).version)).toEqual(Array.from({ length: 100 }, (_, i) => String(i)));
    expect((page[0] as { type: string }).type).toBe("genesis_transaction");
    const b = await (await fetch(`${up.base}/blocks/by_version/150?with_transactions=true`)).json();
    expectShape("Block", { ...b, transactions: undefined });
    expect(BigInt(b.first_version) <= 150n && 150n <= BigInt(b.last_version)).toBe(true);
    expect(b.transactions.map((t: { version: string }) => t.version)[0]).toBe(b.first_version);
    const h = await (await fetch(`${up.base}/blocks/by_height/${b.block_height}`)).json();
    // Without its transactions a block says `"transactions": null`, as aptos-core's golden of the
    // genesis block prints it, though the reference's document types the field as an array.
    expectShape("Block", { ...h, transactions: undefined });
    expect(h).toEqual({ ...b, transactions: null });
    const r = await (await fetch(`${up.base}/accounts/0x1/resource/0x1::gas_schedule::GasSchedule?ledger_version=5`)).json();
    expectShape("MoveResource", r);
    const missing = await fetch(`${up.base}/accounts/0x1/resource/0x1::nope::Nope`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error_code).toBe("resource_not_found");
  });

  it("modules page by X-Aptos-Cursor; raw_item answers BCS", async () => {
    const first = await fetch(`${up.base}/accounts/0x1/modules?limit=10`);
    const cursor = first.headers.get("x-aptos-cursor");
    expect(cursor).toMatch(/^[0-9a-f]+$/);
    const modules = (await first.json()) as unknown[];
    expect(modules).toHaveLength(10);
    for (const m of modules) expectShape("MoveModuleBytecode", m);
    const next = await fetch(`${up.base}/accounts/0x1/modules?limit=10&start=${cursor}`);
    expect(next.status).toBe(200);
    // The first table item the chain wrote, asked for at the version that wrote it: its value, as BCS.
    type Change = { type: string; handle?: string; key?: string; value?: string };
    const changesAt = (v: number) => (JSON.parse(up.txns[v]!) as { changes: Change[] }).changes;
    const isItemWrite = (c: Change) => c.type === "write_table_item" && c.handle === DEVNET_TABLE_HANDLE;
    const at = up.txns.findIndex((_, v) => changesAt(v).some(isItemWrite));
    expect(at, "a version that writes a table item").toBeGreaterThan(0);
    const written = changesAt(at).find(isItemWrite)!;
    const item = await fetch(`${up.base}/tables/0x7ab1e/raw_item?ledger_version=${at}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/x-bcs" },
      body: JSON.stringify({ key: written.key }),
    });
    expect(item.status).toBe(200);
    expect(item.headers.get("content-type")).toContain("application/x-bcs");
    expect("0x" + Buffer.from(await item.arrayBuffer()).toString("hex")).toBe(written.value);
  });

  it("answers 410 below its pruning window, 429 with Retry-After over its rate, and the injected 5xx", async () => {
    await up.pruneTo(up.blocks[10]!.first);
    const pruned = await fetch(`${up.base}/transactions?start=0&limit=5`);
    expect(pruned.status).toBe(410);
    expect((await pruned.json()).error_code).toBe("version_pruned");
    expect((await (await fetch(up.base)).json()).oldest_ledger_version).toBe(String(up.blocks[10]!.first));
    up.faults.rateLimit = { perSecond: 3, retryAfterSec: 2 };
    const statuses = await Promise.all(Array.from({ length: 6 }, () => fetch(up.base).then((r) => [r.status, r.headers.get("retry-after")])));
    expect(statuses.filter(([s]) => s === 429)).toContainEqual([429, "2"]);
    up.heal();
    up.faults.fail5xx = 1;
    expect((await fetch(up.base)).status).toBe(503);
    expect((await fetch(up.base)).status).toBe(200);
  });
});
