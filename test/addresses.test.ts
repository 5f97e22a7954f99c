/**
 * Every place the API prints an address prints it as the reference's `to_hex_literal`
 * (docs/decisions.md §6): leading zero digits stripped. Two accounts cover both shapes real chains have:
 * a short vanity address (`0xa11ce`) and a 64-digit address whose first nibble is zero, which
 * prints with 63 digits. Over real HTTP on SQLite (the formatting is not the store's).
 */
import { bcs } from "@mysten/bcs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { moduleStateKey } from "../src/ledger/stateKey.js";
import { buildModule } from "../src/move/builder.js";
import { sqliteBackend } from "./helpers/backends.js";
import { ChainBuilder, addr, u64le, writeModule, writeTable } from "./helpers/chain.js";
import { serveChain, stopNode, type TestNode } from "./helpers/node.js";

/** The two spellings each account has: as a client may send it, and as the node must print it. */
const SHORT = { sent: addr("a11ce"), printed: "0xa11ce" };
const LONG_HEX = "07" + "e".repeat(61) + "5";
const LONG = { sent: "0x" + LONG_HEX, printed: "0x" + LONG_HEX.slice(1) };

const shop = buildModule({
  address: SHORT.printed,
  name: "shop",
  friends: [`${LONG.printed}::vault`],
  structs: [{ name: "Coin", abilities: ["store"], typeParams: [{ phantom: true }], fields: [{ name: "value", type: "u64" }] }],
  functions: [{ name: "pay", entry: true, params: ["&signer", `${LONG.printed}::vault::Marker`] }],
});
const vault = buildModule({
  address: LONG.sent,
  name: "vault",
  friends: [`${SHORT.printed}::shop`],
  structs: [
    { name: "Marker", abilities: ["copy", "drop", "store"], fields: [{ name: "by", type: "address" }] },
    { name: "Safe", abilities: ["key"], fields: [{ name: "coins", type: `vector<${SHORT.printed}::shop::Coin<${LONG.printed}::vault::Marker>>` }] },
  ],
  functions: [
    {
      name: "open",
      view: true,
      params: [`&${SHORT.printed}::shop::Coin<${LONG.printed}::vault::Marker>`],
      returns: [`vector<${SHORT.printed}::shop::Coin<${LONG.printed}::vault::Marker>>`],
    },
  ],
});

type Json = Record<string, any>;

describe("addresses are printed with leading zeros stripped, everywhere", () => {
  const backend = sqliteBackend();
  let node: TestNode;
  beforeAll(async () => {
    const chain = new ChainBuilder().genesis();
    chain.block([
      { sender: SHORT.sent, changes: [writeModule(SHORT.sent, shop), writeTable(SHORT.sent, u64le(1), u64le(2))] },
      { sender: LONG.sent, changes: [writeModule(LONG.sent, vault)] },
    ]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const modules = async (who: string): Promise<Json[]> => (await (await fetch(`${node.base}/accounts/${who}/modules`)).json()) as Json[];

  it("in the ABI's address, friends and every nested type string", async () => {
    const [s] = await modules(SHORT.sent);
    expect(s!.abi.address).toBe("0xa11ce");
    expect(s!.abi.friends).toEqual([`${LONG.printed}::vault`]);
    expect(s!.abi.exposed_functions[0].params).toEqual(["&signer", `${LONG.printed}::vault::Marker`]);

    const [v] = await modules(LONG.sent);
    expect(LONG.printed).toHaveLength(65); // 0x + 63 digits
    expect(v!.abi.address).toBe(LONG.printed);
    expect(v!.abi.friends).toEqual(["0xa11ce::shop"]);
    const nested = `0xa11ce::shop::Coin<${LONG.printed}::vault::Marker>`;
    expect(v!.abi.structs.find((x: Json) => x.name === "Safe").fields).toEqual([{ name: "coins", type: `vector<${nested}>` }]);
    const open = v!.abi.exposed_functions.find((f: Json) => f.name === "open");
    expect(open.params).toEqual([`&${nested}`]);
    expect(open.return).toEqual([`vector<${nested}>`]);
  });

  it("in a summary's sender", async () => {
    for (const a of [SHORT, LONG]) {
      const body = (await (await fetch(`${node.base}/accounts/${a.sent}/transaction_summaries`)).json()) as Json[];
      expect(body.map((x) => x.sender)).toEqual([a.printed]);
    }
  });

  it("in the keys of the modules BCS map", async () => {
    const map = bcs.vector(bcs.tuple([bcs.string(), bcs.byteVector()]));
    for (const [a, name] of [[SHORT, "shop"], [LONG, "vault"]] as const) {
      const res = await fetch(`${node.base}/accounts/${a.sent}/modules`, { headers: { accept: "application/x-bcs" } });
      expect(map.parse(new Uint8Array(await res.arrayBuffer())).map(([k]) => k)).toEqual([`${a.printed}::${name}`]);
    }
  });

  it("in error messages: a table handle, and the accounts a cursor names", async () => {
    for (const a of [SHORT, LONG]) {
      const res = await fetch(`${node.base}/tables/${a.sent}/raw_item`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/x-bcs" },
        body: JSON.stringify({ key: "0x09" }),
      });
      expect(res.status).toBe(404);
      expect(((await res.json()) as Json).message).toMatch(new RegExp(`^Table Item not found by Table handle\\(${a.printed}\\), `));
    }
    // A cursor (a module state key) of one account sent with the other.
    const shopKey = Buffer.from(moduleStateKey(Buffer.from(SHORT.sent.slice(2), "hex"), "shop")).toString("hex");
    const res = await fetch(`${node.base}/accounts/${LONG.sent}/modules?start=${shopKey}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).message).toContain(`belongs to account 0xa11ce, not ${LONG.printed}`);
  });
});
