/**
 * POST /v1/tables/{handle}/item over real HTTP on a real SQLite ledger: the real genesis's table
 * item (the APT supply aggregator, `address` → `u128`) and its framework modules, the answers
 * aptos-core's state test asserts for each kind of key and value, a test module's structs and
 * enum published later (time travel: the layout is the one held at the version), BCS, and every
 * refusal in the reference's words. The expected bytes are written with @mysten/bcs's types, not
 * with the codec under test.
 */
import { bcs } from "@mysten/bcs";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildModule } from "../../../move/builder.js";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr, writeModule, writeTable } from "../../../../test/helpers/chain.js";
import { FIXTURES, serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";

const hex = (b: Uint8Array) => "0x" + Buffer.from(b).toString("hex");
const ADDRESS = bcs.fixedArray(32, bcs.u8());
const address = (a: string) => hex(ADDRESS.serialize([...Buffer.from(a.slice(2).padStart(64, "0"), "hex")]).toBytes());

/** The genesis the fixture holds, as the chain's first transaction. */
const genesis = JSON.parse(readFileSync(`${FIXTURES}genesis_transaction.json`, "utf8"))[0] as { changes: unknown[] };
const SUPPLY = "0x1b854694ae746cdbd8d44186ca4929b2b337df21d1c74633be19b2710552fdca";
const SUPPLY_KEY = "0x619dc29a0aac8fa146714058e8dd6d2d0f3bdf5f6331907bf91f3acd81e6935";

const CAFE = addr("cafe");
const testModule = buildModule(
  {
    address: "0xcafe",
    name: "m",
    structs: [
      { name: "Key", abilities: ["copy", "drop", "store"], fields: [{ name: "id", type: "u64" }, { name: "name", type: "0x1::string::String" }] },
      {
        name: "Val",
        abilities: ["store"],
        typeParams: [{}],
        fields: [
          { name: "items", type: "vector<T0>" },
          { name: "owner", type: "address" },
          { name: "maybe", type: "0x1::option::Option<u8>" },
          { name: "id", type: "0x1::guid::ID" },
        ],
      },
      { name: "Color", abilities: ["copy", "drop", "store"], variants: [{ name: "Red" }, { name: "Rgb", fields: [{ name: "r", type: "u8" }, { name: "g", type: "u8" }, { name: "b", type: "u8" }] }] },
    ],
  },
  { version: 7 },
);

// One table per case of aptos-core's `state_test.rs` `test_get_table_item` (its inline answers).
const T = (n: number) => addr(`7ab1e${n}`);
const STRING = bcs.string();
const cases: Array<{ handle: string; keyType: string; valueType: string; key: unknown; value: unknown; keyBytes: string; valueBytes: string }> = [
  { handle: T(1), keyType: "u8", valueType: "u8", key: 1, value: 1, keyBytes: hex(bcs.u8().serialize(1).toBytes()), valueBytes: hex(bcs.u8().serialize(1).toBytes()) },
  { handle: T(2), keyType: "u64", valueType: "u64", key: "1", value: "1", keyBytes: hex(bcs.u64().serialize(1).toBytes()), valueBytes: hex(bcs.u64().serialize(1).toBytes()) },
  { handle: T(3), keyType: "u128", valueType: "u128", key: "1", value: "1", keyBytes: hex(bcs.u128().serialize(1).toBytes()), valueBytes: hex(bcs.u128().serialize(1).toBytes()) },
  { handle: T(4), keyType: "bool", valueType: "bool", key: true, value: true, keyBytes: "0x01", valueBytes: "0x01" },
  { handle: T(5), keyType: "address", valueType: "address", key: "0x1", value: "0x1", keyBytes: address("0x1"), valueBytes: address("0x1") },
  {
    handle: T(6),
    keyType: "0x1::string::String",
    valueType: "0x1::string::String",
    key: "abc",
    value: "abc",
    keyBytes: hex(STRING.serialize("abc").toBytes()),
    valueBytes: hex(STRING.serialize("abc").toBytes()),
  },
  { handle: T(7), keyType: "vector<u8>", valueType: "vector<u8>", key: "0x0102", value: "0x0102", keyBytes: "0x020102", valueBytes: "0x020102" },
  {
    handle: T(8),
    keyType: "vector<0x1::string::String>",
    valueType: "vector<0x1::string::String>",
    key: ["abc", "abc"],
    value: ["abc", "abc"],
    keyBytes: hex(bcs.vector(STRING).serialize(["abc", "abc"]).toBytes()),
    valueBytes: hex(bcs.vector(STRING).serialize(["abc", "abc"]).toBytes()),
  },
  {
    handle: T(9),
    keyType: "0x1::guid::ID",
    valueType: "0x1::guid::ID",
    key: { addr: "0xcafe", creation_num: "3" },
    value: { addr: "0xcafe", creation_num: "3" },
    // fields in declaration order: creation_num, then addr
    keyBytes: hex(bcs.u64().serialize(3).toBytes()) + address("0xcafe").slice(2),
    valueBytes: hex(bcs.u64().serialize(3).toBytes()) + address("0xcafe").slice(2),
  },
  // a nested table: the value is the inner table's handle, then an item of it
  { handle: T(10), keyType: "u8", valueType: "0x1::table::Table<u8, u8>", key: 1, value: { handle: "0x7ab1e11" }, keyBytes: "0x01", valueBytes: address(T(11)) },
  { handle: T(11), keyType: "u8", valueType: "u8", key: 2, value: 3, keyBytes: "0x02", valueBytes: "0x03" },
];

const KEY_BYTES = hex(bcs.u64().serialize(7).toBytes()) + hex(STRING.serialize("seven").toBytes()).slice(2);
// Val<u16>: items [1, 2], owner 0xcafe, maybe Some(9), id { creation_num 3, addr 0x1 }
const VAL_BYTES =
  hex(bcs.vector(bcs.u16()).serialize([1, 2]).toBytes()) +
  address("0xcafe").slice(2) +
  hex(bcs.vector(bcs.u8()).serialize([9]).toBytes()).slice(2) +
  hex(bcs.u64().serialize(3).toBytes()).slice(2) +
  address("0x1").slice(2);

const backend = sqliteBackend();
describe(`table item (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis(genesis.changes as never[]);
  const v: Record<string, bigint> = {};
  beforeAll(async () => {
    chain.block([{ sender: addr("b0b"), changes: cases.map((c) => writeTable(c.handle, c.keyBytes, c.valueBytes)) }]);
    v.beforeModule = chain.nextUserVersion - 1n;
    chain.block([
      {
        sender: CAFE,
        changes: [
          writeModule(CAFE, testModule, "m"),
          writeTable(addr("5757"), KEY_BYTES, VAL_BYTES),
          writeTable(addr("c010"), "0x00", "0x00"),
          writeTable(addr("c010"), "0x01", "0x01010203"),
          // a stored value that is not a value of the type a client may name for it
          writeTable(addr("bad"), "0x00", "0x02"),
        ],
      },
    ]);
    v.module = chain.nextUserVersion - 1n;
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const post = (handle: string, body: unknown, q = "", headers: Record<string, string> = {}) =>
    fetch(`${node.base}/tables/${handle}/item${q}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const json = async (res: Response) => ({ status: res.status, body: await res.json() });

  it("reads the genesis's supply aggregator item by its address key as the node decodes it, and its stored bytes in BCS", async () => {
    const request = { key_type: "address", value_type: "u128", key: SUPPLY_KEY };
    const res = await post(SUPPLY, request);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("x-node-ledger-version")).toBe(String(chain.version - 1n));
    // 0x00000000000000000100000000000000 as a u128
    expect(await res.text()).toBe('"18446744073709551616"');
    const at0 = await post(SUPPLY, { ...request, key: "0x0619dc29a0aac8fa146714058e8dd6d2d0f3bdf5f6331907bf91f3acd81e6935" }, "?ledger_version=0");
    expect(await at0.text()).toBe('"18446744073709551616"');
    const raw = await post(SUPPLY, request, "", { accept: "application/x-bcs" });
    expect(raw.headers.get("content-type")).toBe("application/x-bcs");
    expect(hex(new Uint8Array(await raw.arrayBuffer()))).toBe("0x00000000000000000100000000000000");
  });

  it("answers each case of aptos-core's state test as it asserts", async () => {
    for (const c of cases) {
      const { status, body } = await json(await post(c.handle, { key_type: c.keyType, value_type: c.valueType, key: c.key }));
      expect({ status, body }, c.keyType).toEqual({ status: 200, body: c.value });
    }
  });

  it("encodes struct keys and decodes generic structs, options and enums by the module held at the version", async () => {
    const key = { name: "seven", id: "7" };
    const res = await post(addr("5757"), { key_type: "0xcafe::m::Key", value_type: "0xcafe::m::Val<u16>", key });
    expect(res.status).toBe(200);
    // members sorted by name, u16 as numbers, an Option as its vector (a vector<u8>, so hex)
    expect(await res.text()).toBe('{"id":{"addr":"0x1","creation_num":"3"},"items":[1,2],"maybe":{"vec":"0x09"},"owner":"0xcafe"}');
    expect((await json(await post(addr("c010"), { key_type: "u8", value_type: "0xcafe::m::Color", key: 0 }))).body).toEqual({ __variant__: "Red" });
    expect((await json(await post(addr("c010"), { key_type: "u8", value_type: "0xcafe::m::Color", key: 1 }))).body).toEqual({ __variant__: "Rgb", b: 3, g: 2, r: 1 });
    // before the module was published its struct has no layout: a 400 with the ledger headers
    const before = await post(addr("5757"), { key_type: "0xcafe::m::Key", value_type: "u8", key }, `?ledger_version=${v.beforeModule}`);
    expect(await before.json()).toEqual({ message: "Could not find module", error_code: "invalid_input" });
    expect(before.status).toBe(400);
    expect(before.headers.get("x-node-ledger-version")).toBe(String(chain.version - 1n));
  });

  it("takes an object key as its address, without its type's module", async () => {
    const res = await post(T(5), { key_type: "0x1::object::Object<0xcafe::m::Nothing>", value_type: "address", key: "0x1" });
    expect(await json(res)).toEqual({ status: 200, body: "0x1" });
  });

  it("answers 404 table_item_not_found naming the key as JSON, and 410/404 for versions as the other state reads", async () => {
    const res = await post(T(1), { key_type: "u8", value_type: "u8", key: 9 });
    expect(await json(res)).toEqual({
      status: 404,
      body: { message: `Table Item not found by Table handle(0x7ab1e1), Table key(9) and Ledger version(${chain.version - 1n})`, error_code: "table_item_not_found" },
    });
    const str = await post(T(6), { key_type: "0x1::string::String", value_type: "u8", key: "zz" });
    expect(((await str.json()) as { message: string }).message).toContain('Table key("zz")');
    const ahead = await post(T(1), { key_type: "u8", value_type: "u8", key: 1 }, "?ledger_version=999999");
    expect(((await ahead.json()) as { error_code: string }).error_code).toBe("version_not_found");
    expect(ahead.status).toBe(404);
  });

  it("refuses a value type the stored value is not a value of with a 400 naming it (the reference answers 500)", async () => {
    const res = await post(addr("bad"), { key_type: "u8", value_type: "bool", key: 0 });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { message: string; error_code: string };
    expect(body.error_code).toBe("invalid_input");
    expect(body.message).toMatch(/^Failed to deserialize table item retrieved from DB as value_type "bool": /);
    // the same for a value type whose struct is unknown (decoded after the lookup, as the reference does)
    const unknown = await post(addr("bad"), { key_type: "u8", value_type: "0xcafe::m::Nope", key: 0 });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      message: `Failed to deserialize table item retrieved from DB as value_type "0xcafe::m::Nope": Could not find struct named Nope in module 0x${"cafe".padStart(64, "0")}::m`,
    });
  });

  it("refuses bad input with 4xx JSON errors in the reference's words, never a 500", async () => {
    const refusals: Array<[string, unknown, number, string, string]> = [
      [T(1), { key_type: "u9", value_type: "u8", key: 1 }, 400, "invalid_input", "'table_item_request' invalid: Unable to parse move type u9"],
      [T(1), { key_type: "u8", value_type: "0x1::", key: 1 }, 400, "invalid_input", "'table_item_request' invalid: Unable to parse move type 0x1::"],
      [T(1), { key_type: "&u8", value_type: "u8", key: 1 }, 400, "invalid_input", "Failed to parse key_type: Invalid move type for converting into `TypeTag`: Reference { mutable: false, to: U8 }"],
      [
        T(1),
        { key_type: `${"vector<".repeat(9)}u8${">".repeat(9)}`, value_type: "u8", key: 1 },
        400,
        "invalid_input",
        "'table_item_request' invalid: Move type u8 has gone over the limit of recursive types 8",
      ],
      [T(1), { key_type: "u8", value_type: "u8", key: "1" }, 400, "invalid_input", 'invalid type: string "1", expected u8'],
      [T(1), { key_type: "u8", value_type: "u8", key: 256 }, 400, "invalid_input", "invalid value: integer `256`, expected u8"],
      [T(2), { key_type: "u64", value_type: "u64", key: 1 }, 400, "invalid_input", "invalid type: integer `1`, expected a string"],
      [T(5), { key_type: "address", value_type: "address", key: "0xzz" }, 400, "invalid_input", "Invalid account address: Hex characters are invalid: Invalid character 'z' at position 62"],
      [T(7), { key_type: "vector<u8>", value_type: "vector<u8>", key: "0x123" }, 400, "invalid_input", 'decode hex-encoded string("0x123") failed, caused by error: Odd number of digits'],
      [T(9), { key_type: "0x1::guid::ID", value_type: "u8", key: { addr: "0x1" } }, 400, "invalid_input", "field creation_num not found."],
      [T(9), { key_type: "0x1::nope::ID", value_type: "u8", key: {} }, 400, "invalid_input", "Could not find module"],
      [T(9), { key_type: "0x1::guid::Nope", value_type: "u8", key: {} }, 400, "invalid_input", `Could not find struct named Nope in module 0x${"1".padStart(64, "0")}::guid`],
      [T(9), { key_type: "signer", value_type: "u8", key: "0x1" }, 400, "invalid_input", "Type layouts cannot contain signer"],
      [addr("c010"), { key_type: "0xcafe::m::Color", value_type: "u8", key: {} }, 400, "invalid_input", "enum variants not yet supported by layouts"],
    ];
    for (const [handle, body, status, code, message] of refusals) {
      const res = await post(handle, body);
      expect(await json(res), JSON.stringify(body)).toEqual({ status, body: { message, error_code: code } });
    }
    // a key error is answered at the resolved position
    expect((await post(T(1), { key_type: "u8", value_type: "u8", key: "1" })).headers.get("x-node-ledger-version")).toBe(String(chain.version - 1n));
    // the body's shape and the handle are the framework's 400s, as for raw_item
    for (const body of [{ value_type: "u8", key: 1 }, { key_type: "u8", key: 1 }, { key_type: "u8", value_type: "u8" }, { key_type: 5, value_type: "u8", key: 1 }, "not json"]) {
      const res = await post(T(1), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error_code: string }).error_code).toBe("web_framework_error");
    }
    const badHandle = await post("0xnothex", { key_type: "u8", value_type: "u8", key: 1 });
    expect(await json(badHandle)).toMatchObject({ status: 400, body: { error_code: "web_framework_error" } });
    // a key longer than any stored key is refused, not looked up
    const long = await post(T(7), { key_type: "vector<u8>", value_type: "u8", key: "0x" + "00".repeat(2 * 1024 * 1024) });
    expect(await json(long)).toEqual({ status: 400, body: { message: `the key's BCS bytes are longer than ${1 << 20}`, error_code: "invalid_input" } });
  });
});
