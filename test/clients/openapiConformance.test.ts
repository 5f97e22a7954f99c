/**
 * Every JSON body the node sends — the 200 of every operation and every kind of error — checked
 * with ajv against the reference node's OpenAPI document (`aptos-openapi-spec.json`), the way
 * a spec-driven client or validating proxy would see them, and against our own `/v1/spec.json`.
 *
 * - The schema is looked up from the document itself: path, method, status, content type. A status
 *   the operation does not list (405, 413, 415, unknown route) is checked against `AptosError`.
 * - Required response headers of the document are checked too (present, and digits when the
 *   document says integer).
 * - A discriminated `oneOf` (transactions, write-set changes, …) is checked by the branch its tag
 *   names, and an optional property may be null, as the reference node prints it.
 * - The reference `TransactionSummary.replay_protector` cannot be satisfied by any value (a `oneOf`
 *   of two identical schemas), so it is dropped from the reference copy; our own document's tagged
 *   union (docs/decisions.md §5) checks it instead.
 * - Formats: `hex` and string `uint64` are checked; the document's other formats (uint8, int128, …)
 *   are tolerated.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_APP_ADDRESS, DEVNET_TABLE_HANDLE, devnetAccount } from "../../src/ingest/devnet/chain.js";
import { sqliteBackend } from "../helpers/backends.js";
import { FIXTURES, pruneServed, startTestNode, type TestNode } from "../helpers/node.js";
import { APTOS_SPEC, call, GENESIS, GENESIS_TABLE_ITEM, startDevnetNode, startGenesisNode } from "./helpers.js";

type Json = Record<string, any>;

const RECORDED_TRANSACTIONS = `${FIXTURES}transactions/aptos_api__tests__transactions_test__test_get_transactions_output_user_transaction_with_entry_function_payload.json`;

const U64_MAX = (1n << 64n) - 1n;
const TOLERATED_FORMATS = ["uint8", "uint16", "uint32", "uint128", "uint256", "int8", "int16", "int32", "int64", "int128", "int256", "binary"];

/** One OpenAPI document, with a lookup of the schema of a response. */
class SpecValidator {
  private readonly ajv: Ajv;
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(
    readonly name: string,
    readonly doc: Json,
  ) {
    this.ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
    this.ajv.addFormat("hex", { type: "string", validate: (s: string) => /^(0x)?[0-9a-fA-F]*$/.test(s) });
    this.ajv.addFormat("uint64", { type: "string", validate: (s: string) => /^[0-9]{1,20}$/.test(s) && BigInt(s) <= U64_MAX });
    for (const f of TOLERATED_FORMATS) this.ajv.addFormat(f, true);
    this.ajv.addSchema(doc, name);
  }

  /** The OpenAPI path of a concrete request path (`/v1` already removed). */
  template(method: string, path: string): string | null {
    for (const t of Object.keys(this.doc.paths)) {
      const re = new RegExp("^" + t.replace(/\{[^}]+\}/g, "[^/]+") + "$");
      if (re.test(path) && this.doc.paths[t][method.toLowerCase()]) return t;
    }
    return null;
  }

  response(template: string | null, method: string, status: number): Json | null {
    if (!template) return null;
    const op = this.doc.paths[template][method.toLowerCase()];
    return op.responses[String(status)] ?? null;
  }

  /** Compiles a schema taken out of the document, its `#/…` references pointing back into it. */
  compile(schema: Json): ValidateFunction {
    const text = JSON.stringify(schema).replaceAll('"#/', `"${this.name}#/`);
    let v = this.cache.get(text);
    if (!v) {
      v = this.ajv.compile(JSON.parse(text));
      this.cache.set(text, v);
    }
    return v;
  }

  component(name: string): ValidateFunction {
    return this.compile({ $ref: `#/components/schemas/${name}` });
  }

  /** The first few ajv errors of the last run of `v`, readable. */
  errors(v: ValidateFunction): string {
    return (v.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
  }
}

/**
 * The reference document, less three schemas that the reference node's own output breaks (each
 * shown by the test "each waiver … is forced by the reference node itself"):
 * - `TransactionSummary.replay_protector`: `allOf` an object and a U64 string — nothing satisfies it;
 * - `MoveType.pattern`: the node prints `&signer`, `&mut 0x1::coin::Coin<T0>`, `T0` in ABIs;
 * - `IndexResponse.encryption_key`: typed string, but the node sends `null` (its test golden);
 * - `MoveValue`'s `type: object`: a table item's value is any JSON value (the node's state test
 *   expects `1`, `"1"`, `true` as answers), which the schema's own `anyOf` lists.
 */
function loadReference(): Json {
  const doc = byDiscriminator(nullableOptionals(loadReferenceUnpatched()));
  const ts = doc.components.schemas.TransactionSummary;
  delete ts.properties.replay_protector;
  ts.required = ts.required.filter((r: string) => r !== "replay_protector");
  delete doc.components.schemas.MoveType.pattern;
  doc.components.schemas.IndexResponse.properties.encryption_key.nullable = true;
  delete doc.components.schemas.MoveValue.type;
  return doc;
}

function loadReferenceUnpatched(): Json {
  return JSON.parse(readFileSync(APTOS_SPEC, "utf8"));
}

/**
 * The reference node prints an absent optional property as `null` (`Option` fields without
 * `skip_serializing_if`: a user transaction's `replay_protection_nonce`, its `state_checkpoint_hash`,
 * a block's `transactions`), where the document only leaves them out of `required`: every optional
 * property of an object schema may also be null.
 */
function nullableOptionals(doc: Json): Json {
  for (const schema of Object.values<Json>(doc.components.schemas)) {
    for (const part of [schema, ...(schema.allOf ?? [])]) {
      for (const [name, prop] of Object.entries<Json>(part.properties ?? {})) {
        if ((part.required ?? []).includes(name)) continue;
        part.properties[name] = prop.type ? { ...prop, nullable: true } : { anyOf: [prop, { type: "null" }] };
      }
    }
  }
  return doc;
}

/**
 * Each `oneOf` with a discriminator (transactions, write-set changes, payloads, signatures) checked
 * as the discriminator says: the branch its tag names, so an error names the branch's own problem
 * rather than every other branch's. The same bodies pass and fail as under the plain `oneOf`.
 */
function byDiscriminator(doc: Json): Json {
  for (const schema of Object.values<Json>(doc.components.schemas)) {
    const d = schema.discriminator as { propertyName: string; mapping: Record<string, string> } | undefined;
    if (!d || !schema.oneOf) continue;
    delete schema.oneOf;
    delete schema.discriminator;
    schema.required = [...new Set([...(schema.required ?? []), d.propertyName])];
    schema.properties = { ...schema.properties, [d.propertyName]: { type: "string", enum: Object.keys(d.mapping) } };
    schema.allOf = Object.entries(d.mapping).map(([tag, ref]) => ({
      if: { properties: { [d.propertyName]: { const: tag } } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a promise
      then: { $ref: ref },
    }));
  }
  return doc;
}

/** Every parameter and return type string the reference node printed in the fixture's ABIs. */
function genesisAbiTypes(): string[] {
  const out = new Set<string>();
  for (const c of JSON.parse(readFileSync(GENESIS, "utf8"))[0].changes) {
    if (c.type !== "write_module") continue;
    for (const f of c.data.abi.exposed_functions) for (const t of [...f.params, ...f.return]) out.add(t);
  }
  return [...out];
}

interface Exchange {
  what: string;
  method: string;
  path: string;
  status: number;
  type: string;
  headers: Headers;
  body: unknown;
}

/** Checks one response against one document; returns readable problems (empty when it conforms). */
function problems(v: SpecValidator, x: Exchange): string[] {
  const out: string[] = [];
  const template = v.template(x.method, x.path);
  const resp = v.response(template, x.method, x.status);
  const isError = x.status >= 400;
  if (!isError && !resp) return [`${v.name}: ${x.method} ${x.path} ${x.status} is not documented`];
  const mediaType = x.type.split(";")[0]!.trim();
  if (resp) {
    const content = resp.content?.[mediaType];
    if (!content) out.push(`${v.name}: ${mediaType} is not a documented content type of ${x.method} ${template} ${x.status}`);
    else if (mediaType === "application/json" || mediaType === "text/html") {
      const validate = v.compile(content.schema);
      if (!validate(x.body)) out.push(`${v.name}: ${v.errors(validate)}`);
    }
    for (const [name, h] of Object.entries<Json>(resp.headers ?? {})) {
      if (!h.required) continue;
      const value = x.headers.get(name);
      if (value === null) out.push(`${v.name}: required header ${name} missing`);
      else if (h.schema?.type === "integer" && !/^[0-9]+$/.test(value)) out.push(`${v.name}: header ${name}=${value} is not an integer`);
    }
  }
  if (isError) {
    const validate = v.component("AptosError");
    if (!validate(x.body)) out.push(`${v.name}: AptosError: ${v.errors(validate)}`);
  }
  return out;
}

const backend = sqliteBackend();
describe(`bodies conform to the reference OpenAPI document (${backend.name})`, () => {
  let genesis: TestNode;
  let devnet: TestNode;
  let empty: TestNode;
  let reference: SpecValidator;
  let ours: SpecValidator;
  const exchanges: Exchange[] = [];

  async function send(what: string, node: TestNode, path: string, init: RequestInit = {}): Promise<Exchange> {
    const r = await call(`${node.base}${path}`, init);
    const type = r.headers.get("content-type") ?? "";
    const body = type.startsWith("application/json") ? r.json : type.startsWith("text/html") ? r.bytes.toString("utf8") : r.bytes;
    const x: Exchange = { what, method: init.method ?? "GET", path: (path.split("?")[0] || "/"), status: r.status, type, headers: r.headers, body };
    exchanges.push(x);
    return x;
  }

  beforeAll(async () => {
    reference = new SpecValidator("aptos-spec.json", loadReference());
    genesis = await startGenesisNode(await backend.newDb(), { aptosHeaders: true });
    // 20 blocks: sequence-number and orderless transactions, a full-block burst, table churn.
    devnet = await startDevnetNode(await backend.newDb(), 20, { aptosHeaders: true, api: { bodyLimit: 4096 } });
    empty = await startTestNode(await backend.newDb(), { aptosHeaders: true });
    ours = new SpecValidator("ledger-node-spec.json", (await call(`${genesis.base}/spec.json`)).json);

    const json = { "content-type": "application/json" };
    const bcs = { ...json, accept: "application/x-bcs" };
    const rawItem = (node: TestNode, handle: string, key: string, q = "", headers: Record<string, string> = bcs) =>
      [node, `/tables/${handle}/raw_item${q}`, { method: "POST", headers, body: JSON.stringify({ key }) }] as const;

    // 200s: every operation, several shapes of each.
    await send("spec", genesis, "/spec");
    await send("info", genesis, "/info");
    await send("info (devnet)", devnet, "/info");
    await send("index", devnet, "");
    await send("index with slash", genesis, "/");
    await send("healthy", devnet, "/-/healthy");
    await send("healthy fresh", devnet, "/-/healthy?duration_secs=600");
    await send("modules 0x1", genesis, "/accounts/0x1/modules");
    await send("modules 0x3", genesis, "/accounts/0x3/modules");
    const page = await send("modules page", genesis, "/accounts/0x1/modules?limit=10");
    await send("modules next page", genesis, `/accounts/0x1/modules?limit=10&start=${page.headers.get("x-node-cursor")}`);
    await send("modules empty account", genesis, "/accounts/0xabc/modules");
    await send("modules devnet 0x1", devnet, "/accounts/0x1/modules");
    await send("modules devnet app", devnet, `/accounts/${DEVNET_APP_ADDRESS}/modules`);
    for (let i = 0; i < 6; i++) await send(`summaries account ${i}`, devnet, `/accounts/${devnetAccount(i)}/transaction_summaries?limit=100`);
    await send("summaries start", devnet, `/accounts/${devnetAccount(1)}/transaction_summaries?start_version=20&limit=5`);
    await send("summaries end", devnet, `/accounts/${devnetAccount(1)}/transaction_summaries?end_version=200&limit=5`);
    await send("summaries none", genesis, "/accounts/0x1/transaction_summaries");
    await send("gas", genesis, "/estimate_gas_price");
    await send("gas devnet", devnet, "/estimate_gas_price");
    await send("raw item", ...rawItem(genesis, GENESIS_TABLE_ITEM.handle, GENESIS_TABLE_ITEM.key));
    const tableItem = (node: TestNode, body: unknown, q = "", headers: Record<string, string> = json) =>
      [node, `/tables/${GENESIS_TABLE_ITEM.handle}/item${q}`, { method: "POST", headers, body: JSON.stringify(body) }] as const;
    const supply = { key_type: "address", value_type: "u128", key: "0x619dc29a0aac8fa146714058e8dd6d2d0f3bdf5f6331907bf91f3acd81e6935" };
    await send("table item", ...tableItem(genesis, supply));
    await send("raw item devnet", ...rawItem(devnet, DEVNET_TABLE_HANDLE, "0x0100000000000000", "?ledger_version=0"));
    await send("account devnet", devnet, `/accounts/${devnetAccount(0)}`);
    await send("account 0x1", genesis, "/accounts/0x1");
    await send("resource", genesis, "/accounts/0x1/resource/0x1::chain_id::ChainId");
    await send("resource generic", devnet, `/accounts/${devnetAccount(0)}/resource/0x1::account::Account`);
    // (the genesis fixture abbreviates some of 0x1's resource values to strings: the devnet's are whole)
    await send("resources devnet 0x1", devnet, "/accounts/0x1/resources");
    const resources = await send("resources page", devnet, `/accounts/${devnetAccount(0)}/resources?limit=1`);
    expect(resources.headers.get("x-node-cursor")).toBeNull();
    await send("resources empty account", genesis, "/accounts/0xabc/resources");
    await send("module", genesis, "/accounts/0x1/module/coin");
    await send("module devnet app", devnet, `/accounts/${DEVNET_APP_ADDRESS}/module/registry`);
    // The history (docs/decisions.md §20, §21): transactions of every kind the devnet and the genesis make, blocks, balances.
    // (the genesis fixture was printed by an older node, before `is_view`, `is_event` and `is_enum`
    // in ABIs: it is served as recorded, and not checked against today's document)
    const txns = await send("transactions devnet", devnet, "/transactions?start=0&limit=100");
    await send("transactions latest", devnet, "/transactions?limit=7");
    const user = (txns.body as Json[]).find((t) => t.type === "user_transaction")!;
    await send("transaction by_version", devnet, `/transactions/by_version/${user.version}`);
    await send("transaction by_version 0", devnet, "/transactions/by_version/0");
    await send("transaction by_hash", devnet, `/transactions/by_hash/${user.hash}`);
    await send("transaction wait_by_hash", devnet, `/transactions/wait_by_hash/${user.hash}`);
    await send("account transactions", devnet, `/accounts/${user.sender}/transactions?limit=10`);
    await send("account transactions none", genesis, "/accounts/0xabc/transactions");
    await send("block by_height", devnet, "/blocks/by_height/1");
    await send("block by_height with transactions", devnet, "/blocks/by_height/2?with_transactions=true");
    await send("block by_version", devnet, `/blocks/by_version/${user.version}?with_transactions=true`);
    await send("block 0", devnet, "/blocks/by_height/0?with_transactions=true");
    await send("balance coin", devnet, `/accounts/${devnetAccount(0)}/balance/0x1::aptos_coin::AptosCoin`);
    await send("balance fungible asset", genesis, "/accounts/0x1/balance/0xa");
    await send("events by creation number", genesis, "/accounts/0x1/events/3");
    await send("events devnet", devnet, "/accounts/0x1/events/3?limit=5");
    await send("events by event handle", genesis, "/accounts/0x1/events/0x1::block::BlockResource/new_block_events");

    // Errors of every kind.
    await send("400 limit", genesis, "/accounts/0x1/modules?limit=hello");
    await send("400 limit zero", genesis, "/accounts/0x1/modules?limit=0");
    await send("400 address", genesis, "/accounts/nope/modules");
    await send("400 ledger_version", genesis, "/accounts/0x1/modules?ledger_version=abc");
    await send("400 cursor", genesis, "/accounts/0x1/modules?start=zz");
    await send("400 start_version", devnet, `/accounts/${devnetAccount(0)}/transaction_summaries?start_version=-1`);
    await send("400 key", ...rawItem(genesis, GENESIS_TABLE_ITEM.handle, "zz"));
    await send("400 no key", genesis, `/tables/${GENESIS_TABLE_ITEM.handle}/raw_item`, { method: "POST", headers: bcs, body: "{}" });
    await send("400 table item key type", ...tableItem(genesis, { ...supply, key_type: "u9" }));
    await send("400 table item key", ...tableItem(genesis, { ...supply, key: 5 }));
    await send("404 table item", ...tableItem(genesis, { ...supply, key: "0x1" }));
    await send("400 duration", genesis, "/-/healthy?duration_secs=abc");
    await send("403 raw item as JSON", ...rawItem(genesis, GENESIS_TABLE_ITEM.handle, GENESIS_TABLE_ITEM.key, "", { ...json, accept: "application/json" }));
    await send("404 item", ...rawItem(genesis, GENESIS_TABLE_ITEM.handle, "0x00"));
    await send("404 version", genesis, "/accounts/0x1/modules?ledger_version=5");
    await send("404 account", genesis, "/accounts/0xabc");
    await send("404 resource", genesis, "/accounts/0x1/resource/0x1::a::B");
    await send("404 module", genesis, "/accounts/0x1/module/nono");
    await send("404 struct field", genesis, "/accounts/0x1/events/0x1::block::BlockResource/nope");
    await send("400 not an event handle", genesis, "/accounts/0x1/events/0x1::block::BlockResource/height");
    await send("400 resource type", genesis, "/accounts/0x1/resource/0x1::a");
    await send("400 module name", genesis, "/accounts/0x1/module/1coin");
    await send("404 route", genesis, "/accounts/0x1/nothing");
    await send("400 transactions limit zero", devnet, "/transactions?limit=0");
    await send("400 transactions start", genesis, "/transactions?start=9");
    await send("400 by_version", genesis, "/transactions/by_version/x");
    await send("400 by_hash", genesis, "/transactions/by_hash/0x12");
    await send("400 block height", genesis, "/blocks/by_height/-1");
    await send("400 balance asset type", genesis, "/accounts/0x1/balance/0x1::a");
    await send("404 by_version", genesis, "/transactions/by_version/9");
    await send("404 by_hash", genesis, `/transactions/by_hash/0x${"ab".repeat(32)}`);
    await send("404 block height", genesis, "/blocks/by_height/9");
    await send("404 block version", genesis, "/blocks/by_version/9");
    await send("406 transaction as BCS", genesis, "/transactions/by_version/0", { headers: { accept: "application/x-bcs" } });
    await send("405", genesis, "/estimate_gas_price", { method: "POST", headers: json, body: "{}" });
    await send("413", devnet, `/tables/${DEVNET_TABLE_HANDLE}/raw_item`, { method: "POST", headers: bcs, body: JSON.stringify({ key: "0x" + "00".repeat(4096) }) });
    await send("415", genesis, `/tables/${GENESIS_TABLE_ITEM.handle}/raw_item`, { method: "POST", headers: { "content-type": "text/plain" }, body: "0x00" });
    await send("503 stale", genesis, "/-/healthy?duration_secs=10");
    for (const [what, path] of [
      ["503 empty modules", "/accounts/0x1/modules"],
      ["503 empty summaries", "/accounts/0x1/transaction_summaries"],
      ["503 empty gas", "/estimate_gas_price"],
      ["503 empty index", ""],
      ["503 empty healthy", "/-/healthy"],
    ]) {
      await send(what!, empty, path!);
    }
    await send("503 empty raw item", ...rawItem(empty, GENESIS_TABLE_ITEM.handle, GENESIS_TABLE_ITEM.key));
    // 410: prune the devnet to its last 50 versions, then ask for version 0.
    await pruneServed(devnet, "50");
    await send("410 modules", devnet, "/accounts/0x1/modules?ledger_version=0");
    await send("410 summaries", devnet, `/accounts/${devnetAccount(0)}/transaction_summaries?start_version=0`);
    await send("410 raw item", ...rawItem(devnet, DEVNET_TABLE_HANDLE, "0x0100000000000000", "?ledger_version=0"));
    await send("410 transactions", devnet, "/transactions?start=0");
    await send("410 by_version", devnet, "/transactions/by_version/0");
    await send("410 block", devnet, "/blocks/by_height/0");
    await send("410 account transactions", devnet, `/accounts/${user.sender}/transactions?start=0`);
    await send("410 balance", devnet, `/accounts/${devnetAccount(0)}/balance/0xa?ledger_version=0`);
  });
  afterAll(async () => {
    await Promise.all([genesis, devnet, empty].map((n) => n?.close()));
    await backend.cleanup();
  });

  it("the exchanges cover every operation's 200 and every error status", () => {
    const ops = new Set(exchanges.filter((x) => x.status === 200).map((x) => `${x.method} ${reference.template(x.method, x.path)}`));
    expect([...ops].sort()).toEqual(
      [
        "GET /",
        "GET /-/healthy",
        "GET /accounts/{address}",
        "GET /accounts/{address}/module/{module_name}",
        "GET /accounts/{address}/modules",
        "GET /accounts/{address}/resource/{resource_type}",
        "GET /accounts/{address}/resources",
        "GET /accounts/{address}/events/{creation_number}",
        "GET /accounts/{address}/events/{event_handle}/{field_name}",
        "GET /accounts/{address}/transaction_summaries",
        "GET /accounts/{address}/transactions",
        "GET /accounts/{address}/balance/{asset_type}",
        "GET /blocks/by_height/{block_height}",
        "GET /blocks/by_version/{version}",
        "GET /transactions",
        "GET /transactions/by_hash/{txn_hash}",
        "GET /transactions/by_version/{txn_version}",
        "GET /transactions/wait_by_hash/{txn_hash}",
        "GET /estimate_gas_price",
        "GET /info",
        "GET /spec",
        "POST /tables/{table_handle}/item",
        "POST /tables/{table_handle}/raw_item",
      ].sort(),
    );
    const statuses = new Set(exchanges.map((x) => x.status));
    expect([...statuses].sort()).toEqual([200, 400, 403, 404, 405, 406, 410, 413, 415, 503]);
    for (const x of exchanges) {
      const expected = Number(/^[0-9]{3}/.exec(x.what)?.[0] ?? 200);
      expect(x.status, `${x.what}: ${JSON.stringify(x.body)}`).toBe(expected);
    }
    // Non-trivial data: orderless and sequence-number summaries, modules with ABIs.
    const summaries = exchanges.filter((x) => x.what.startsWith("summaries account")).flatMap((x) => x.body as Json[]);
    expect(new Set(summaries.map((s) => s.replay_protector.type))).toEqual(new Set(["sequence_number", "nonce"]));
  });

  it("every 200 body and every error body satisfies the reference document's schemas", () => {
    const failures = exchanges.flatMap((x) => problems(reference, x).map((p) => `${x.what}: ${p}`));
    expect(failures).toEqual([]);
  });

  it("every 200 body and every error body satisfies our own /v1/spec.json", () => {
    const documented = exchanges.filter((x) => ours.template(x.method, x.path) !== null || x.status >= 400);
    expect(documented.length).toBeGreaterThan(40);
    const failures = documented.flatMap((x) => problems(ours, x).map((p) => `${x.what}: ${p}`));
    expect(failures).toEqual([]);
  });

  it("our document names the reference's tags, parameters and parameter schemas for the eight data operations", () => {
    const ops = (doc: Json) => {
      const out = new Map<string, Json>();
      for (const item of Object.values<Json>(doc.paths)) for (const op of Object.values<Json>(item)) out.set(op.operationId, op);
      return out;
    };
    const theirs = ops(reference.doc);
    const mine = ops(ours.doc);
    const shape = (op: Json) => ({
      tags: op.tags,
      // The reference's limit schema is {type, format}; ours adds the bounds it validates.
      parameters: (op.parameters ?? []).map((p: Json) => ({ in: p.in, name: p.name, required: p.required, ref: p.schema.$ref ?? `${p.schema.type}(${p.schema.format})` })),
      contentTypes: Object.fromEntries(Object.entries<Json>(op.responses).map(([st, r]) => [st, Object.keys(r.content ?? {}).sort()])),
    });
    for (const id of ["get_account_transaction_summaries", "get_account_modules", "get_raw_table_item", "estimate_gas_price"]) {
      const want = shape(theirs.get(id)!);
      // raw_item's 200 is BCS only (docs/decisions.md §12; the reference answers JSON with 403 too).
      if (id === "get_raw_table_item") want.contentTypes["200"] = ["application/x-bcs"];
      expect(shape(mine.get(id)!), id).toEqual(want);
    }
    // The four state reads and the two event reads: the same tags and parameters (their error statuses differ: 406 for BCS, see docs/differences.md).
    for (const id of ["get_account", "get_account_resource", "get_account_resources", "get_account_module", "get_events_by_creation_number", "get_events_by_event_handle"]) {
      const { tags, parameters } = shape(theirs.get(id)!);
      expect({ tags: shape(mine.get(id)!).tags, parameters: shape(mine.get(id)!).parameters }, id).toEqual({ tags, parameters });
    }
    for (const name of ["Address", "U64", "StateKeyWrapper"]) {
      expect(ours.doc.components.schemas[name].type, name).toBe(reference.doc.components.schemas[name].type);
    }
  });

  it("each waiver of the reference document is forced by the reference node itself", () => {
    const strict = new SpecValidator("aptos-spec-unpatched.json", loadReferenceUnpatched());
    // The real node's ABIs (genesis fixture): 78 distinct parameter types break MoveType's pattern.
    const moveType = strict.component("MoveType");
    const printed = genesisAbiTypes();
    const broken = printed.filter((t) => !moveType(t));
    expect(broken).toEqual(expect.arrayContaining(["&signer", "T0", "&mut 0x1::coin::Coin<T0>"]));
    expect(broken.length).toBeGreaterThan(50);
    // The reference node's index golden (aptos-core `test_get_index`, api/src/tests/index_test.rs) has encryption_key null.
    const golden = { chain_id: 4, epoch: "0", ledger_version: "0", oldest_ledger_version: "0", ledger_timestamp: "0", node_role: "validator", oldest_block_height: "0", block_height: "0", git_hash: "", encryption_key: null };
    const index = strict.component("IndexResponse");
    expect(index(golden)).toBe(false);
    expect(strict.errors(index)).toBe("/encryption_key must be string");
    expect(reference.component("IndexResponse")(golden)).toBe(true);
    // Optional properties printed as null: the reference node's own user transaction (aptos-core
    // golden, test/fixtures/transactions) has `"state_checkpoint_hash": null`.
    const recorded = JSON.parse(readFileSync(RECORDED_TRANSACTIONS, "utf8")) as Json[];
    const userTxn = recorded.find((t) => t.type === "user_transaction")!;
    expect(userTxn.state_checkpoint_hash).toBeNull();
    const strictUser = strict.component("Transaction_UserTransaction");
    expect(strictUser(userTxn)).toBe(false);
    expect(strict.errors(strictUser)).toContain("/state_checkpoint_hash must be string");
    const patched = reference.component("Transaction");
    expect(patched(userTxn), reference.errors(patched)).toBe(true);
    // MoveValue: the answers aptos-core's state test (`test_get_table_item`) expects fail `type: object`.
    const moveValue = strict.component("MoveValue");
    for (const v of [1, "1", true, ["abc", "abc"]]) expect(moveValue(v), JSON.stringify(v)).toBe(false);
    expect(reference.component("MoveValue")(1)).toBe(true);
    // replay_protector: neither tagged objects nor bare U64 strings pass.
    const rp = strict.component("ReplayProtector");
    for (const v of [{ type: "sequence_number", sequence_number: "5" }, { type: "sequence_number" }, "5", { type: "nonce", nonce: "7" }]) {
      expect(rp(v), JSON.stringify(v)).toBe(false);
    }
  });

  it("the reference document's schemas are really applied (a broken body fails)", () => {
    const modules = exchanges.find((x) => x.what === "modules 0x1")!;
    const broken = structuredClone(modules.body) as Json[];
    broken[0]!.abi.exposed_functions[0].is_view = "yes";
    delete broken[1]!.bytecode;
    expect(problems(reference, { ...modules, body: broken }).join("\n")).toMatch(/is_view must be boolean[\s\S]*must have required property 'bytecode'/);
    const gas = exchanges.find((x) => x.what === "gas")!;
    expect(problems(reference, { ...gas, body: { gas_estimate: "100" } })).toHaveLength(1);
    const summary = exchanges.find((x) => x.what === "summaries account 0")!;
    const badVersion = (summary.body as Json[]).map((s) => ({ ...s, version: "18446744073709551616" }));
    expect(problems(reference, { ...summary, body: badVersion })[0]).toMatch(/must match format "uint64"/);
    const err = exchanges.find((x) => x.what === "400 limit")!;
    expect(problems(reference, { ...err, body: { message: "x", error_code: "teapot" } })[0]).toMatch(/error_code must be equal to one of the allowed values/);
    const noHeaders = new Headers([...modules.headers].filter(([k]) => !k.startsWith("x-aptos-")));
    expect(problems(reference, { ...modules, headers: noHeaders })).toContain("aptos-spec.json: required header X-APTOS-CHAIN-ID missing");
  });
});
