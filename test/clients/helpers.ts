/**
 * Ledgers for the real-client tests: the real Aptos genesis fixture (59 framework modules at 0x1,
 * one table item) imported through the real Importer, and the devnet (user transactions, a gas
 * market, a table with values ≥ 0x80 bytes) advanced block by block.
 */
import { readFileSync } from "node:fs";
import { Importer } from "../../src/ingest/importer.js";
import { readTransactions } from "../../src/ingest/files/readInput.js";
import { openStore } from "../../src/storage/open.js";
import type { ServeOptions } from "../../src/server.js";
import { FIXTURES, startTestNode, type TestNode } from "../helpers/node.js";

export const GENESIS = `${FIXTURES}genesis_transaction.json`;
export const APTOS_SPEC = `${FIXTURES}aptos-openapi-spec.json`;
/** The paths of the operations the interface document lists (and the explorer shows), sorted. */
export const OPERATION_PATHS = [
  "/accounts/{address}",
  "/accounts/{address}/balance/{asset_type}",
  "/accounts/{address}/events/{creation_number}",
  "/accounts/{address}/events/{event_handle}/{field_name}",
  "/accounts/{address}/module/{module_name}",
  "/accounts/{address}/modules",
  "/accounts/{address}/resource/{resource_type}",
  "/accounts/{address}/resources",
  "/accounts/{address}/transaction_summaries",
  "/accounts/{address}/transactions",
  "/blocks/by_height/{block_height}",
  "/blocks/by_version/{version}",
  "/estimate_gas_price",
  "/info",
  "/spec",
  "/tables/{table_handle}/item",
  "/tables/{table_handle}/raw_item",
  "/transactions",
  "/transactions/by_hash/{txn_hash}",
  "/transactions/by_version/{txn_version}",
  "/transactions/stream",
  "/transactions/wait_by_hash/{txn_hash}",
].sort();

type Json = Record<string, any>;

const genesis: Json = JSON.parse(readFileSync(GENESIS, "utf8"))[0];

/** Names of the fixture's modules at an address (as the reference node named them). */
export function genesisModuleNames(address: string): string[] {
  return genesis.changes
    .filter((c: Json) => c.type === "write_module" && c.address === address)
    .map((c: Json) => c.data.abi.name as string);
}

/** The fixture's one table item: handle, BCS key and BCS value, all `0x` hex. */
export const GENESIS_TABLE_ITEM: { handle: string; key: string; value: string } = (() => {
  const c = genesis.changes.find((x: Json) => x.type === "write_table_item");
  return { handle: c.handle, key: c.key, value: c.value };
})();

/** Imports the genesis fixture into a fresh database. */
export async function importGenesis(db: string): Promise<void> {
  const store = await openStore(db);
  try {
    const imp = await Importer.open(store, 4);
    for await (const t of readTransactions(GENESIS)) await imp.push(t);
    await imp.finish();
  } finally {
    await store.close();
  }
}

/** A node over a fresh database holding the genesis fixture. */
export async function startGenesisNode(db: string, o: Partial<ServeOptions> = {}): Promise<TestNode> {
  await importGenesis(db);
  return startTestNode(db, o);
}

/**
 * A devnet node that writes blocks only when told (`blockIntervalMs` 60 s; the test calls
 * `produceBlock`), with `blocks` blocks on top of its genesis.
 */
export async function startDevnetNode(db: string, blocks: number, o: Partial<ServeOptions> = {}): Promise<TestNode> {
  const node = await startTestNode(db, { devnet: { blockIntervalMs: 60_000 }, ...o });
  for (let i = 0; i < blocks; i++) await node.devnet!.produceBlock();
  return node;
}

export const hex = (b: ArrayBuffer | Uint8Array): string =>
  "0x" + Buffer.from(b instanceof Uint8Array ? b : new Uint8Array(b)).toString("hex");

/** GET or POST on the node, returning status, headers and the parsed JSON (or raw bytes). */
export async function call(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; json: any; bytes: Buffer }> {
  const res = await fetch(url, init);
  const bytes = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get("content-type") ?? "";
  const json = type.startsWith("application/json") ? JSON.parse(bytes.toString("utf8")) : undefined;
  return { status: res.status, headers: res.headers, json, bytes };
}
