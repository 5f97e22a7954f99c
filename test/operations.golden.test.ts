/**
 * Golden answers per operation, as aptos-core's API tests keep them (`check_golden_output`): for
 * each operation a success case and every error case it can return, asked of a real node on a real
 * port over a small deterministic SQLite ledger, and compared exactly with
 * `test/goldens/<operation>/<case>.json`: the status, the headers that carry meaning
 * (content-type, allow, the x-node-* ledger headers and x-node-cursor; never date or request id)
 * and the body (parsed JSON, or hex for BCS). They pin the handlers' observable behaviour for
 * refactors: a difference fails with the case's file name.
 *
 * Regenerate (after a deliberate change, then review the diff): `UPDATE_GOLDENS=1 npx vitest run
 * test/operations.golden.test.ts`. A missing golden fails unless UPDATE_GOLDENS is set. Only the
 * plain node's answers are written; the --proxy block compares with them even then.
 *
 * The ledger has no wall-clock data (ChainBuilder's timestamps and hashes follow from the
 * versions), so the goldens are stable. The node version in /v1/info is written as `<version>`
 * and checked against package.json instead, so a release does not touch the goldens.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/api/app.js";
import { buildModule } from "../src/move/builder.js";
import { openStore } from "../src/storage/open.js";
import { sqliteBackend } from "./helpers/backends.js";
import { ChainBuilder, addr, deleteResource, deleteTable, u64le, writeModule, writeResource, writeTable, type UserTxn } from "./helpers/chain.js";
import { pruneServed, serveChain, stopNode, type TestNode } from "./helpers/node.js";

const GOLDENS = new URL("./goldens/", import.meta.url).pathname;
const UPDATE = process.env.UPDATE_GOLDENS === "1" || process.env.UPDATE_GOLDENS === "true";
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

const ALICE = addr("a11ce");
const APP = addr("cafe");
const TABLE = addr("7ab1e");
const JSON_CT = { "content-type": "application/json" };
const BCS = { accept: "application/x-bcs" };
const COIN = "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>";

/**
 * The ledger: genesis, then 8 blocks. Alice sends in every block (sequence numbers, and nonces in
 * blocks 2 and 5); block 1 publishes three modules at 0xcafe, block 4 upgrades one; the table
 * gets keys 1..3, key 2 is deleted in block 6. Alice's Account resource is written in blocks 1
 * and 3, her CoinStore in block 1 and deleted in block 6.
 */
function ledger(): ChainBuilder {
  const mod = (name: string, fns: number) =>
    buildModule({
      address: APP,
      name,
      structs: [{ name: "Item", abilities: ["store", "drop"], fields: [{ name: "value", type: "u64" }] }],
      functions: Array.from({ length: fns }, (_, i) => ({ name: `f${i}`, entry: true, params: ["&signer", "u64"] })),
    });
  const chain = new ChainBuilder().genesis();
  let seq = 0;
  for (let b = 1; b <= 8; b++) {
    const changes = [];
    if (b === 1) changes.push(writeModule(APP, mod("shop", 1)), writeModule(APP, mod("bank", 1)), writeModule(APP, mod("a", 1)));
    if (b === 4) changes.push(writeModule(APP, mod("shop", 2)));
    if (b <= 3) changes.push(writeTable(TABLE, u64le(b), u64le(100 + b)));
    if (b === 6) changes.push(deleteTable(TABLE, u64le(2)), deleteResource(ALICE, COIN));
    if (b === 1 || b === 3) changes.push(writeResource(ALICE, "0x1::account::Account", { authentication_key: ALICE, sequence_number: String(b), guid_creation_num: "2" }));
    if (b === 1) changes.push(writeResource(ALICE, COIN, { coin: { value: "1000" }, frozen: false }));
    const users: UserTxn[] = [{ sender: ALICE, seq: seq++, price: 100 + b * 10, changes }];
    if (b === 2 || b === 5) users.push({ sender: ALICE, nonce: 7000 + b, price: 150 });
    chain.block(users);
  }
  return chain;
}

interface Req {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

interface Golden {
  request: { method: string; path: string; headers?: Record<string, string>; body?: string };
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** A request over node:http (no Accept-Encoding, no decoding), bytes as sent. */
function send(base: string, r: Req): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(base + r.path, { method: r.method ?? "GET", headers: r.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(r.body);
  });
}

/** The answer as a golden records it. */
async function answer(node: Pick<TestNode, "base">, r: Req, summarize?: (body: unknown) => unknown): Promise<Golden> {
  const res = await send(node.base, r);
  const headers: Record<string, string> = {};
  for (const name of Object.keys(res.headers).sort()) {
    if (name === "content-type" || name === "allow" || name.startsWith("x-node-")) headers[name] = String(res.headers[name]);
  }
  const type = headers["content-type"] ?? "";
  let body: unknown = type.startsWith("application/json") ? JSON.parse(res.body.toString("utf8")) : "0x" + res.body.toString("hex");
  if (summarize) body = summarize(body);
  const request: Golden["request"] = { method: r.method ?? "GET", path: r.path };
  if (r.headers) request.headers = r.headers;
  if (r.body !== undefined) request.body = r.body.length > 200 ? `<${r.body.length} bytes>` : r.body;
  return { request, status: res.status, headers, body };
}

/** Compares with (or, with UPDATE_GOLDENS=1, writes) `test/goldens/<operation>/<name>.json`. */
function checkGolden(operation: string, name: string, got: Golden): void {
  const file = `${GOLDENS}${operation}/${name}.json`;
  if (UPDATE) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(got, null, 2) + "\n");
    return;
  }
  compareGolden(operation, name, got);
}

/**
 * Compares with `test/goldens/<operation>/<name>.json`, UPDATE_GOLDENS or not: for the answers of
 * another node (the --proxy block), which must equal the goldens the plain node records, and never
 * write them.
 */
function compareGolden(operation: string, name: string, got: Golden): void {
  const file = `${GOLDENS}${operation}/${name}.json`;
  if (!existsSync(file)) throw new Error(`no golden ${file}: run with UPDATE_GOLDENS=1 to record it, then review it`);
  expect(got, `${operation}/${name}.json (UPDATE_GOLDENS=1 regenerates)`).toEqual(JSON.parse(readFileSync(file, "utf8")));
}

type Case = [name: string, req: Req, summarize?: (body: unknown) => unknown];

const rawItem = (key: string, q = "", headers: Record<string, string> = BCS, handle = TABLE): Req => ({
  method: "POST",
  path: `/tables/${handle}/raw_item${q}`,
  headers: { ...JSON_CT, ...headers },
  body: JSON.stringify({ key }),
});

const tableItem = (body: unknown, q = "", headers: Record<string, string> = {}, handle = TABLE): Req => ({
  method: "POST",
  path: `/tables/${handle}/item${q}`,
  headers: { ...JSON_CT, ...headers },
  body: JSON.stringify(body),
});
const U64_ITEM = (key: unknown) => ({ key_type: "u64", value_type: "u64", key });

/** The node's own version is not part of the golden. */
const infoBody = (b: unknown) => {
  const o = b as Record<string, unknown>;
  expect(o.version).toBe(PACKAGE_VERSION);
  return { ...o, version: "<version>" };
};

/** The document's shape (its paths, operations and schema names), not its every word. */
const specSummary = (b: unknown) => {
  const doc = b as { openapi: string; info: { title: string }; servers: unknown; paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>>; components: { schemas: Record<string, unknown> } };
  return {
    openapi: doc.openapi,
    title: doc.info.title,
    servers: doc.servers,
    operations: Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId} [${Object.keys(op.responses ?? {}).join(",")}]`),
    ),
    schemas: Object.keys(doc.components.schemas).sort(),
  };
};

/** Every operation's cases on the unpruned ledger (latest version 26, oldest 0). */
const OPERATIONS: Record<string, Case[]> = {
  info: [
    ["ok", { path: "/info" }, infoBody],
    ["accept_bcs", { path: "/info", headers: BCS }, infoBody],
    ["post_405", { method: "POST", path: "/info" }],
  ],
  transaction_summaries: [
    ["ok", { path: `/accounts/${ALICE}/transaction_summaries` }],
    ["ok_bcs", { path: `/accounts/${ALICE}/transaction_summaries`, headers: BCS }],
    ["short_address", { path: "/accounts/0xa11ce/transaction_summaries?limit=2" }],
    ["start_version", { path: `/accounts/${ALICE}/transaction_summaries?start_version=10&limit=3` }],
    ["start_version_bcs", { path: `/accounts/${ALICE}/transaction_summaries?start_version=10&limit=3`, headers: BCS }],
    ["end_version", { path: `/accounts/${ALICE}/transaction_summaries?end_version=10&limit=3` }],
    ["start_and_end_version", { path: `/accounts/${ALICE}/transaction_summaries?start_version=5&end_version=1&limit=2` }],
    ["limit", { path: `/accounts/${ALICE}/transaction_summaries?limit=2` }],
    ["limit_0", { path: `/accounts/${ALICE}/transaction_summaries?limit=0` }],
    ["limit_clamped", { path: `/accounts/${ALICE}/transaction_summaries?limit=65535` }],
    ["start_version_past_ledger", { path: `/accounts/${ALICE}/transaction_summaries?start_version=1000` }],
    ["unknown_account", { path: "/accounts/0xdead/transaction_summaries" }],
    ["bad_address_400", { path: "/accounts/xyz/transaction_summaries" }],
    ["bad_start_version_400", { path: `/accounts/${ALICE}/transaction_summaries?start_version=abc` }],
    ["start_version_over_u64_400", { path: `/accounts/${ALICE}/transaction_summaries?start_version=18446744073709551616` }],
    ["bad_end_version_400", { path: `/accounts/${ALICE}/transaction_summaries?end_version=-1` }],
    ["bad_limit_400", { path: `/accounts/${ALICE}/transaction_summaries?limit=hello` }],
    ["limit_over_u16_400", { path: `/accounts/${ALICE}/transaction_summaries?limit=65536` }],
    ["accept_html", { path: `/accounts/${ALICE}/transaction_summaries?limit=1`, headers: { accept: "text/html" } }],
    ["accept_bcs_excluded", { path: `/accounts/${ALICE}/transaction_summaries?limit=1`, headers: { accept: "application/x-bcs;q=0" } }],
    ["post_405", { method: "POST", path: `/accounts/${ALICE}/transaction_summaries` }],
  ],
  modules: [
    ["ok", { path: `/accounts/${APP}/modules` }],
    ["ok_bcs", { path: `/accounts/${APP}/modules`, headers: BCS }],
    ["page_1", { path: `/accounts/${APP}/modules?limit=1` }],
    ["page_1_bcs", { path: `/accounts/${APP}/modules?limit=1`, headers: BCS }],
    // the cursors are the state keys of 0xcafe::bank and 0xcafe::shop (the pages' x-node-cursor)
    ["page_2", { path: `/accounts/${APP}/modules?limit=1&start=` }],
    ["page_3", { path: `/accounts/${APP}/modules?limit=1&start=` }],
    ["ledger_version_before_upgrade", { path: `/accounts/${APP}/modules?ledger_version=10` }],
    ["ledger_version_before_publish", { path: `/accounts/${APP}/modules?ledger_version=1` }],
    ["no_modules", { path: "/accounts/0xdead/modules" }],
    ["bad_address_400", { path: "/accounts/xyz/modules" }],
    ["bad_ledger_version_400", { path: `/accounts/${APP}/modules?ledger_version=-1` }],
    ["ledger_version_over_u64_400", { path: `/accounts/${APP}/modules?ledger_version=18446744073709551616` }],
    ["bad_limit_400", { path: `/accounts/${APP}/modules?limit=hello` }],
    ["limit_0_400", { path: `/accounts/${APP}/modules?limit=0` }],
    ["bad_cursor_400", { path: `/accounts/${APP}/modules?start=iwouldnotsurviveavibecheckrightnow` }],
    ["cursor_not_a_state_key_400", { path: `/accounts/${APP}/modules?start=00ff` }],
    ["ledger_version_in_future_404", { path: `/accounts/${APP}/modules?ledger_version=1000000` }],
    ["accept_html", { path: `/accounts/${APP}/modules?limit=1`, headers: { accept: "text/html" } }],
    ["post_405", { method: "POST", path: `/accounts/${APP}/modules` }],
  ],
  account: [
    ["ok", { path: `/accounts/${ALICE}` }],
    ["short_address", { path: "/accounts/0xa11ce" }],
    ["ledger_version", { path: `/accounts/${ALICE}?ledger_version=10` }],
    ["no_account_404", { path: "/accounts/0xdead" }],
    ["accept_bcs_406", { path: `/accounts/${ALICE}`, headers: BCS }],
    ["bad_address_400", { path: "/accounts/xyz" }],
    ["bad_ledger_version_400", { path: `/accounts/${ALICE}?ledger_version=-1` }],
    ["ledger_version_in_future_404", { path: `/accounts/${ALICE}?ledger_version=1000000` }],
    ["post_405", { method: "POST", path: `/accounts/${ALICE}` }],
  ],
  resource: [
    ["ok", { path: `/accounts/${ALICE}/resource/0x1::account::Account` }],
    ["generic_type", { path: `/accounts/${ALICE}/resource/${encodeURIComponent(COIN)}?ledger_version=10` }],
    ["long_form_type", { path: `/accounts/${ALICE}/resource/${addr("1")}::account::Account` }],
    ["deleted_404", { path: `/accounts/${ALICE}/resource/${encodeURIComponent(COIN)}` }],
    ["never_written_404", { path: `/accounts/${ALICE}/resource/0x1::a::B` }],
    ["not_a_struct_tag_400", { path: `/accounts/${ALICE}/resource/0x1::account` }],
    ["invalid_identifier_400", { path: `/accounts/${ALICE}/resource/0x1::1account::Account` }],
    ["accept_bcs_406", { path: `/accounts/${ALICE}/resource/0x1::account::Account`, headers: BCS }],
    ["bad_address_400", { path: "/accounts/xyz/resource/0x1::account::Account" }],
    ["ledger_version_in_future_404", { path: `/accounts/${ALICE}/resource/0x1::account::Account?ledger_version=1000000` }],
  ],
  resources: [
    ["ok", { path: `/accounts/${ALICE}/resources?ledger_version=10` }],
    ["after_delete", { path: `/accounts/${ALICE}/resources` }],
    ["page_1", { path: `/accounts/${ALICE}/resources?ledger_version=10&limit=1` }],
    // the cursor is the state key of Alice's CoinStore (the first page's x-node-cursor)
    ["page_2", { path: `/accounts/${ALICE}/resources?ledger_version=10&limit=1&start=` }],
    ["no_resources", { path: "/accounts/0xdead/resources" }],
    ["limit_0_400", { path: `/accounts/${ALICE}/resources?limit=0` }],
    ["bad_cursor_400", { path: `/accounts/${ALICE}/resources?start=iwouldnotsurviveavibecheckrightnow` }],
    ["cursor_not_a_resource_key_400", { path: `/accounts/${ALICE}/resources?start=00ff` }],
    ["accept_bcs_406", { path: `/accounts/${ALICE}/resources`, headers: BCS }],
    ["ledger_version_in_future_404", { path: `/accounts/${ALICE}/resources?ledger_version=1000000` }],
  ],
  module: [
    ["ok", { path: `/accounts/${APP}/module/shop` }],
    ["ok_bcs", { path: `/accounts/${APP}/module/shop`, headers: BCS }],
    ["ledger_version_before_upgrade", { path: `/accounts/${APP}/module/shop?ledger_version=10` }],
    ["not_found_404", { path: `/accounts/${APP}/module/nono` }],
    ["before_publish_404", { path: `/accounts/${APP}/module/shop?ledger_version=1` }],
    ["bad_name_400", { path: `/accounts/${APP}/module/1shop` }],
    ["bad_address_400", { path: "/accounts/xyz/module/shop" }],
    ["ledger_version_in_future_404", { path: `/accounts/${APP}/module/shop?ledger_version=1000000` }],
  ],
  raw_item: [
    ["ok", rawItem(u64le(1))],
    ["ok_accept_any", rawItem(u64le(3), "", { accept: "*/*" })],
    ["ok_no_accept", rawItem(u64le(3), "", {})],
    ["ledger_version", rawItem(u64le(2), "?ledger_version=10")],
    ["deleted_404", rawItem(u64le(2))],
    ["missing_item_404", rawItem(u64le(9))],
    ["ledger_version_in_future_404", rawItem(u64le(1), "?ledger_version=1000000")],
    ["accept_json_403", rawItem(u64le(1), "", { accept: "application/json" })],
    ["accept_html_403", rawItem(u64le(1), "", { accept: "text/html" })],
    ["bad_handle_400", rawItem(u64le(1), "", BCS, "0xnothex")],
    ["bad_key_400", rawItem("zz")],
    ["odd_key_400", rawItem("0x123")],
    ["bad_ledger_version_400", rawItem(u64le(1), "?ledger_version=abc")],
    ["key_not_a_string_400", { method: "POST", path: `/tables/${TABLE}/raw_item`, headers: { ...JSON_CT, ...BCS }, body: '{"key": 5}' }],
    ["no_key_400", { method: "POST", path: `/tables/${TABLE}/raw_item`, headers: { ...JSON_CT, ...BCS }, body: "{}" }],
    ["body_not_json_400", { method: "POST", path: `/tables/${TABLE}/raw_item`, headers: { ...JSON_CT, ...BCS }, body: "not json" }],
    ["body_too_large_413", { method: "POST", path: `/tables/${TABLE}/raw_item`, headers: { ...JSON_CT, ...BCS }, body: JSON.stringify({ key: "0x" + "00".repeat(5 * 1024 * 1024) }) }],
    ["text_plain_415", { method: "POST", path: `/tables/${TABLE}/raw_item`, headers: { "content-type": "text/plain", ...BCS }, body: "x" }],
    ["get_405", { path: `/tables/${TABLE}/raw_item` }],
  ],
  table_item: [
    ["ok", tableItem(U64_ITEM("1"))],
    ["ok_bcs", tableItem(U64_ITEM("1"), "", BCS)],
    ["ledger_version", tableItem(U64_ITEM("2"), "?ledger_version=10")],
    ["struct_key_and_value", tableItem({ key_type: `${APP}::shop::Item`, value_type: `0xcafe::shop::Item`, key: { value: "3" } })],
    ["deleted_404", tableItem(U64_ITEM("2"))],
    ["missing_item_404", tableItem(U64_ITEM("9"))],
    ["ledger_version_in_future_404", tableItem(U64_ITEM("1"), "?ledger_version=1000000")],
    ["bad_ledger_version_400", tableItem(U64_ITEM("1"), "?ledger_version=abc")],
    ["bad_handle_400", tableItem(U64_ITEM("1"), "", {}, "0xnothex")],
    ["bad_key_type_400", tableItem({ key_type: "u9", value_type: "u64", key: "1" })],
    ["bad_value_type_400", tableItem({ key_type: "u64", value_type: "0x1::coin", key: "1" })],
    ["deep_key_type_400", tableItem({ key_type: `${"vector<".repeat(9)}u8${">".repeat(9)}`, value_type: "u64", key: "1" })],
    ["reference_key_type_400", tableItem({ key_type: "&u64", value_type: "u64", key: "1" })],
    ["key_not_a_string_400", tableItem(U64_ITEM(1))],
    ["key_not_a_u64_400", tableItem(U64_ITEM("1x"))],
    ["u8_out_of_range_400", tableItem({ key_type: "u8", value_type: "u64", key: 256 })],
    ["bad_address_key_400", tableItem({ key_type: "address", value_type: "u64", key: "0xzz" })],
    ["bad_hex_key_400", tableItem({ key_type: "vector<u8>", value_type: "u64", key: "0x123" })],
    ["struct_key_not_an_object_400", tableItem({ key_type: `${APP}::shop::Item`, value_type: "u64", key: "3" })],
    ["struct_key_missing_field_400", tableItem({ key_type: `${APP}::shop::Item`, value_type: "u64", key: { amount: "3" } })],
    ["unknown_module_400", tableItem({ key_type: `${APP}::nope::Item`, value_type: "u64", key: {} })],
    ["unknown_struct_400", tableItem({ key_type: `${APP}::shop::Nope`, value_type: "u64", key: {} })],
    ["module_not_yet_published_400", tableItem({ key_type: `${APP}::shop::Item`, value_type: "u64", key: { value: "1" } }, "?ledger_version=1")],
    ["signer_key_400", tableItem({ key_type: "signer", value_type: "u64", key: "0x1" })],
    ["oversized_key_400", tableItem({ key_type: "vector<u8>", value_type: "u64", key: "0x" + "00".repeat(2 * 1024 * 1024) })],
    ["value_not_of_value_type_400", tableItem({ key_type: "u64", value_type: "bool", key: "1" })],
    ["unknown_value_struct_400", tableItem({ key_type: "u64", value_type: `${APP}::shop::Nope`, key: "1" })],
    ["no_key_400", tableItem({ key_type: "u64", value_type: "u64" })],
    ["body_not_json_400", { method: "POST", path: `/tables/${TABLE}/item`, headers: JSON_CT, body: "not json" }],
    ["get_405", { path: `/tables/${TABLE}/item` }],
  ],
  transactions: [
    ["ok", { path: "/transactions?start=0&limit=3" }],
    ["latest", { path: "/transactions?limit=2" }],
    ["limit_0_400", { path: "/transactions?limit=0" }],
    ["start_past_ledger_400", { path: "/transactions?start=1000000" }],
    ["bad_start_400", { path: "/transactions?start=-1" }],
    ["accept_bcs_406", { path: "/transactions", headers: BCS }],
  ],
  transaction_by_version: [
    ["ok", { path: "/transactions/by_version/2" }],
    ["past_ledger_404", { path: "/transactions/by_version/1000000" }],
    ["bad_version_400", { path: "/transactions/by_version/abc" }],
    ["accept_bcs_406", { path: "/transactions/by_version/2", headers: BCS }],
  ],
  transaction_by_hash: [["bad_hash_400", { path: "/transactions/by_hash/0x12" }]],
  balance: [
    ["coin", { path: `/accounts/${ALICE}/balance/0x1::aptos_coin::AptosCoin?ledger_version=10` }],
    ["fungible_asset_none", { path: `/accounts/${ALICE}/balance/0xa` }],
    ["bad_asset_type_400", { path: `/accounts/${ALICE}/balance/not_a_type` }],
    ["accept_bcs", { path: `/accounts/${ALICE}/balance/0xa`, headers: BCS }],
  ],
  account_transactions: [
    ["ok", { path: `/accounts/${ALICE}/transactions?start=0&limit=2` }],
    ["latest", { path: `/accounts/${ALICE}/transactions` }],
    ["no_transactions", { path: "/accounts/0xdead/transactions" }],
    ["limit_0_400", { path: `/accounts/${ALICE}/transactions?limit=0` }],
    ["bad_address_400", { path: "/accounts/xyz/transactions" }],
  ],
  events_by_creation_number: [
    ["no_events", { path: `/accounts/${ALICE}/events/0` }],
    ["limit_0_400", { path: `/accounts/${ALICE}/events/0?limit=0` }],
    ["bad_start_400", { path: `/accounts/${ALICE}/events/0?start=-1` }],
    ["bad_creation_number_400", { path: `/accounts/${ALICE}/events/abc` }],
    ["bad_address_400", { path: "/accounts/xyz/events/0" }],
    ["accept_bcs_406", { path: `/accounts/${ALICE}/events/0`, headers: BCS }],
  ],
  events_by_event_handle: [
    ["resource_not_found_404", { path: `/accounts/${ALICE}/events/0x1::nope::Nope/x` }],
    ["field_not_found_404", { path: `/accounts/${ALICE}/events/0x1::account::Account/nope` }],
    ["not_an_event_handle_400", { path: `/accounts/${ALICE}/events/0x1::account::Account/sequence_number` }],
    ["bad_struct_tag_400", { path: `/accounts/${ALICE}/events/not_a_tag/x` }],
    ["bad_field_name_400", { path: `/accounts/${ALICE}/events/0x1::account::Account/1x` }],
  ],
  block_by_height: [
    ["ok", { path: "/blocks/by_height/1" }],
    ["with_transactions", { path: "/blocks/by_height/2?with_transactions=true" }],
    ["genesis", { path: "/blocks/by_height/0" }],
    ["past_ledger_404", { path: "/blocks/by_height/1000000" }],
  ],
  block_by_version: [
    ["ok", { path: "/blocks/by_version/5" }],
    ["past_ledger_404", { path: "/blocks/by_version/1000000" }],
  ],
  estimate_gas_price: [
    ["ok", { path: "/estimate_gas_price" }],
    ["ok_bcs", { path: "/estimate_gas_price", headers: BCS }],
    ["accept_html", { path: "/estimate_gas_price", headers: { accept: "text/html" } }],
    ["post_405", { method: "POST", path: "/estimate_gas_price" }],
  ],
  spec: [
    ["spec_json", { path: "/spec.json" }, specSummary],
    ["spec_yaml", { path: "/spec.yaml" }, () => "<document>"],
    ["spec_html", { path: "/spec" }, () => "<page>"],
    ["post_405", { method: "POST", path: "/spec.json" }],
  ],
  unknown_route: [
    ["get_404", { path: "/nope" }],
    ["trailing_slash_404", { path: "/info/" }],
    ["post_404", { method: "POST", path: "/view", headers: JSON_CT, body: "{}" }],
    ["bad_percent_encoding_400", { path: "/accounts/%zz/modules" }],
  ],
};

/** On a second node over the same ledger pruned to its last 10 versions: 410 for what is gone. */
const PRUNED: Record<string, Case[]> = {
  transaction_summaries: [
    ["start_version_pruned_410", { path: `/accounts/${ALICE}/transaction_summaries?start_version=1` }],
    ["end_version_pruned_410", { path: `/accounts/${ALICE}/transaction_summaries?end_version=1` }],
    ["after_prune", { path: `/accounts/${ALICE}/transaction_summaries` }],
  ],
  modules: [
    ["ledger_version_pruned_410", { path: `/accounts/${APP}/modules?ledger_version=1` }],
    ["after_prune", { path: `/accounts/${APP}/modules` }],
  ],
  account: [
    ["ledger_version_pruned_410", { path: `/accounts/${ALICE}?ledger_version=1` }],
    ["after_prune", { path: `/accounts/${ALICE}` }],
  ],
  resource: [["ledger_version_pruned_410", { path: `/accounts/${ALICE}/resource/0x1::account::Account?ledger_version=1` }]],
  resources: [
    ["ledger_version_pruned_410", { path: `/accounts/${ALICE}/resources?ledger_version=1` }],
    ["after_prune", { path: `/accounts/${ALICE}/resources` }],
  ],
  module: [
    ["ledger_version_pruned_410", { path: `/accounts/${APP}/module/shop?ledger_version=1` }],
    ["after_prune", { path: `/accounts/${APP}/module/shop` }],
  ],
  transactions: [["start_pruned_410", { path: "/transactions?start=1" }]],
  transaction_by_version: [["pruned_410", { path: "/transactions/by_version/1" }]],
  block_by_height: [["pruned_410", { path: "/blocks/by_height/1" }]],
  account_transactions: [["start_pruned_410", { path: `/accounts/${ALICE}/transactions?start=0` }]],
  block_by_version: [["pruned_410", { path: "/blocks/by_version/1" }]],
  raw_item: [
    ["ledger_version_pruned_410", rawItem(u64le(1), "?ledger_version=1")],
    ["after_prune", rawItem(u64le(1))],
  ],
  table_item: [
    ["ledger_version_pruned_410", tableItem(U64_ITEM("1"), "?ledger_version=1")],
    ["after_prune", tableItem(U64_ITEM("1"))],
  ],
  info: [["after_prune", { path: "/info" }, infoBody]],
  estimate_gas_price: [["after_prune", { path: "/estimate_gas_price" }]],
};

/** The cursors the paging cases follow: the node's own, from its first pages. */
interface Cursors {
  modules: string[];
  resources: string;
}

async function readCursors(base: string): Promise<Cursors> {
  const modules: string[] = [];
  let start = "";
  for (let i = 0; i < 2; i++) {
    const r = await send(base, { path: `/accounts/${APP}/modules?limit=1${start}` });
    const cursor = r.headers["x-node-cursor"];
    expect(typeof cursor, "a modules page of 1 of 3 has a cursor").toBe("string");
    modules.push(cursor as string);
    start = `&start=${cursor}`;
  }
  const first = await send(base, { path: `/accounts/${ALICE}/resources?ledger_version=10&limit=1` });
  expect(typeof first.headers["x-node-cursor"], "a resources page of 1 of 2 has a cursor").toBe("string");
  return { modules, resources: first.headers["x-node-cursor"] as string };
}

/** A case's request, its cursor appended where the case pages on. */
function withCursor(operation: string, name: string, req: Req, cursors: Cursors): Req {
  if (operation === "modules" && name === "page_2") return { ...req, path: req.path + cursors.modules[0] };
  if (operation === "modules" && name === "page_3") return { ...req, path: req.path + cursors.modules[1] };
  if (operation === "resources" && name === "page_2") return { ...req, path: req.path + cursors.resources };
  return req;
}

describe("golden answers per operation (sqlite)", () => {
  const backend = sqliteBackend();
  let node: TestNode;
  let pruned: TestNode;
  let cursors: Cursors;
  beforeAll(async () => {
    node = await serveChain(backend, ledger());
    pruned = await serveChain(backend, ledger());
    expect(await pruneServed(pruned, "10")).not.toBeNull();
    cursors = await readCursors(node.base);
  });
  afterAll(async () => {
    await pruned?.close();
    await stopNode(node, backend);
  });

  for (const [operation, cases] of Object.entries(OPERATIONS)) {
    describe(operation, () => {
      for (const [name, req, summarize] of cases) {
        it(name, async () => checkGolden(operation, name, await answer(node, withCursor(operation, name, req, cursors), summarize)));
      }
    });
  }

  for (const [operation, cases] of Object.entries(PRUNED)) {
    describe(`${operation} (pruned)`, () => {
      for (const [name, req, summarize] of cases) {
        it(name, async () => checkGolden(operation, `pruned_${name}`, await answer(pruned, req, summarize)));
      }
    });
  }

  it("keeps no golden without a case (UPDATE_GOLDENS=1 removes them)", () => {
    const expected = new Set([
      ...Object.entries(OPERATIONS).flatMap(([op, cases]) => cases.map(([name]) => `${op}/${name}.json`)),
      ...Object.entries(PRUNED).flatMap(([op, cases]) => cases.map(([name]) => `${op}/pruned_${name}.json`)),
    ]);
    const files = readdirSync(GOLDENS, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".json"));
    const stale = files.filter((f) => !expected.has(f));
    if (UPDATE) for (const f of stale) rmSync(GOLDENS + f);
    else expect(stale).toEqual([]);
    expect(files.length - stale.length).toBe(expected.size);
  });
});

/**
 * The same ledger served with the pass-through of `--proxy`, towards an upstream that is not there:
 * every golden answer stays as it is (the proxy is the not-found handler of /v1, reached after
 * every route, and a wrong method on a route keeps its 405); only the /v1 routes the node does not
 * serve change, to the proxy's 503, which names neither the upstream nor the socket's error. A
 * request with a bad percent-encoding never reaches a route, proxied or not.
 */
describe("golden answers per operation with --proxy (sqlite)", () => {
  const backend = sqliteBackend();
  let proxied: { base: string; close: () => Promise<void> };
  let cursors: Cursors;
  beforeAll(async () => {
    const db = await backend.newDb();
    await ledger().importInto(db);
    const store = await openStore(db);
    const upstream = "http://127.0.0.1:9/v1";
    const { app } = await buildApp({
      store,
      config: { pruneWindow: "90000000", nodeVersion: PACKAGE_VERSION },
      proxy: { upstream, apiKey: null, maxRequestsPerSecond: 1000, timeoutMs: 5000 },
    });
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    proxied = {
      base: `${url}/v1`,
      close: async () => {
        await app.close();
        await store.close();
      },
    };
    cursors = await readCursors(proxied.base);
  });
  afterAll(async () => {
    await proxied?.close();
    await backend.cleanup();
  });

  for (const [operation, cases] of Object.entries(OPERATIONS)) {
    for (const [name, req, summarize] of cases) {
      if (operation === "unknown_route" && name !== "bad_percent_encoding_400") continue;
      it(`${operation}/${name} is unchanged`, async () => compareGolden(operation, name, await answer(proxied, withCursor(operation, name, req, cursors), summarize)));
    }
  }

  it("passes the /v1 routes it does not serve to the upstream: 503 while it cannot be reached", async () => {
    for (const [, req] of OPERATIONS.unknown_route!.filter(([name]) => name !== "bad_percent_encoding_400")) {
      const got = await answer(proxied, req);
      expect(got.status, req.path).toBe(503);
      expect(got.body, req.path).toEqual({
        message: "the upstream could not be reached",
        error_code: "internal_error",
      });
    }
  });
});
