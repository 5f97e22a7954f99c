/**
 * The floor of this stack for the cache-missing rows of bench/scale.bench.ts: a bare `node:http`
 * server that answers them with the SQLite store's own prepared statements and nothing else: no
 * Fastify, no schemas or validation, no page cache or module records, no read transaction per turn,
 * fixed ledger headers (read once at start), bodies joined from the rows as the statements give them.
 * `node --import tsx bench/floorServer.ts DB PORT` prints its URL.
 *
 * Served: `GET /v1/accounts/{address}/transaction_summaries?limit=N&end_version=V` (JSON, the
 * page ending at V), `GET /v1/accounts/{address}/modules?limit=N&ledger_version=V` (JSON, the
 * first page), `POST /v1/tables/{handle}/raw_item[?ledger_version=V]` (BCS). Anything else is
 * answered 501, which the bench reports as not served. What it answers is not checked against
 * the node beyond the body sizes (they are the node's: the same statements); its point is what the
 * reads and a send cost when nothing else runs. The node's CPU per request over this server's is
 * what the API around the reads costs.
 */
import { createServer } from "node:http";
import { CODE_HASH_DIGITS } from "../src/ledger/codeHash.js";
import { SqliteStore } from "../src/storage/sqlite/SqliteStore.js";

type Rows<P extends unknown[], R> = { all(...p: P): R[]; get(...p: P): R | undefined };
/** The store's prepared statements the floor runs (private to the store: read here on purpose). */
interface Statements {
  summariesJsonBackward: Rows<[string, Uint8Array, bigint, number], string>;
  moduleKeys: Rows<[bigint, Uint8Array, Uint8Array, number], [Buffer, string, string | null]>;
  codeRecord: Rows<[number], string | Buffer>;
  tableItemAt: Rows<[Uint8Array, Uint8Array, bigint | null], unknown[]>;
}

const [db, port] = process.argv.slice(2);
if (!db) throw new Error("usage: floorServer.ts DB [PORT]");
const store = new SqliteStore(db, { readonly: true });
const st = (store as unknown as { statements: Statements }).statements;
const info = await store.getLedgerInfo();
if (!info) throw new Error(`${db}: an empty ledger`);
const ledgerHeaders = {
  "x-node-chain-id": String(info.chainId),
  "x-node-ledger-version": String(info.ledgerVersion),
  "x-node-ledger-oldest-version": String(info.oldestVersion),
  "x-node-ledger-timestampusec": String(info.timestampUsec),
  "x-node-epoch": String(info.epoch),
  "x-node-block-height": String(info.blockHeight),
  "x-node-oldest-block-height": String(info.oldestBlockHeight),
};
const JSON_HEADERS = { ...ledgerHeaders, "content-type": "application/json" };
const BCS_HEADERS = { ...ledgerHeaders, "content-type": "application/x-bcs" };
const NOT_FOUND = JSON.stringify({ message: "Table Item not found", error_code: "table_item_not_found", vm_error_code: null });

const SUMMARIES = /^\/v1\/accounts\/0x([0-9a-f]{64})\/transaction_summaries\?limit=(\d+)&end_version=(\d+)$/;
const MODULES = /^\/v1\/accounts\/0x([0-9a-f]{64})\/modules\?limit=(\d+)&ledger_version=(\d+)$/;
const RAW_ITEM = /^\/v1\/tables\/0x([0-9a-f]{64})\/raw_item(?:\?ledger_version=(\d+))?$/;
const NO_KEY = new Uint8Array(0);

const server = createServer((req, res) => {
  const url = req.url ?? "";
  const summaries = SUMMARIES.exec(url);
  if (summaries) {
    const [, address, limit, end] = summaries as unknown as [string, string, string, string];
    const rows = st.summariesJsonBackward.all(`0x${address}`, Buffer.from(address, "hex"), BigInt(end), Number(limit)).reverse();
    res.writeHead(200, JSON_HEADERS).end(`[${rows.join(",")}]`);
    return;
  }
  const modules = MODULES.exec(url);
  if (modules) {
    const [, address, limit, version] = modules as unknown as [string, string, string, string];
    const parts: string[] = [];
    for (const [, , codeOf] of st.moduleKeys.all(BigInt(version), Buffer.from(address, "hex"), NO_KEY, Number(limit))) {
      if (codeOf === null) continue;
      const record = st.codeRecord.get(Number(codeOf.slice(CODE_HASH_DIGITS)));
      if (typeof record === "string") parts.push(record);
    }
    res.writeHead(200, JSON_HEADERS).end(`[${parts.join(",")}]`);
    return;
  }
  const item = req.method === "POST" ? RAW_ITEM.exec(url) : null;
  if (!item) {
    res.writeHead(501).end();
    return;
  }
  const handle = Buffer.from(item[1]!, "hex");
  const version = item[2] === undefined ? null : BigInt(item[2]);
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const key = Buffer.from((JSON.parse(Buffer.concat(chunks).toString()) as { key: string }).key.slice(2), "hex");
    const value = st.tableItemAt.get(handle, key, version)?.at(-1) as Buffer | null | undefined;
    if (value) res.writeHead(200, BCS_HEADERS).end(value);
    else res.writeHead(404, JSON_HEADERS).end(NOT_FOUND);
  });
});
server.listen(Number(port ?? 0), "127.0.0.1", () => {
  const a = server.address();
  console.log(`http://127.0.0.1:${typeof a === "object" && a ? a.port : port}`);
});
// (an exit of its own on SIGINT, so `node --cpu-prof` writes its profile)
process.on("SIGINT", () => process.exit(0));
