/**
 * The floor of this stack for the cache-missing rows of bench/scale.bench.ts: a bare `node:http`
 * server that answers them with the SQLite store's own prepared statements and nothing else: no
 * Fastify, no schemas or validation, no page cache or module records, no read transaction per turn,
 * fixed ledger headers (read once at start), bodies joined from the rows as the statements give them.
 * `node --import tsx bench/floorServer.ts DB PORT [--fastify]` prints its URL.
 *
 * Served: `GET /v1/accounts/{address}/transaction_summaries?limit=N&end_version=V` (JSON, the
 * page ending at V), `GET /v1/accounts/{address}/modules?limit=N&ledger_version=V` (JSON, the
 * first page), `GET /v1/transactions/by_version/{v}` and `GET /v1/transactions?start=S&limit=N`
 * (the stored texts), `POST /v1/tables/{handle}/raw_item[?ledger_version=V]` (BCS). Anything else is
 * answered 501, which the bench reports as not served. What it answers is not checked against
 * the node beyond the body sizes (they are the node's: the same statements); its point is what the
 * reads and a send cost when nothing else runs. The node's CPU per request over this server's is
 * what the API around the reads costs. With `--fastify` the same answers are served by a bare
 * Fastify (its routing, the routes' parameter and body schemas, its reply; no hooks, no logger):
 * what the chosen HTTP framework costs before any of the node's own work.
 */
import { createServer } from "node:http";
import { CODE_HASH_DIGITS } from "../src/ledger/codeHash.js";
import { textsFrom } from "../src/storage/common/history.js";
import { SqliteStore } from "../src/storage/sqlite/SqliteStore.js";

type Rows<P extends unknown[], R> = { all(...p: P): R[]; get(...p: P): R | undefined };
/** The store's prepared statements the floor runs (private to the store: read here on purpose). */
interface Statements {
  summariesJsonBackward: Rows<[string, Uint8Array, bigint, number], string>;
  moduleKeys: Rows<[bigint, Uint8Array, Uint8Array, number], [Buffer, string, string | null]>;
  codeRecord: Rows<[number], string | Buffer>;
  tableItemAt: Rows<[Uint8Array, Uint8Array, bigint | null], unknown[]>;
  historyFrom: Rows<[bigint, bigint], [bigint, Buffer]>;
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
const BY_VERSION = /^\/v1\/transactions\/by_version\/(\d+)$/;
const TRANSACTIONS = /^\/v1\/transactions\?start=(\d+)&limit=(\d+)$/;
const NO_KEY = new Uint8Array(0);

/** The stored texts of `limit` versions from `start` on. */
function texts(start: bigint, limit: number): Uint8Array[] {
  const chunks = st.historyFrom.all(start, start + BigInt(limit - 1)).map(([firstVersion, body]) => ({ firstVersion, body }));
  return textsFrom(chunks, start, limit);
}

/** An answer of the floor's: status, headers and body. */
type Answer = [number, Record<string, string>, string | Buffer];

/** The summaries or modules page a GET asks for, or null for any other URL. */
function getPage(url: string): Answer | null {
  const summaries = SUMMARIES.exec(url);
  if (summaries) {
    const [, address, limit, end] = summaries as unknown as [string, string, string, string];
    const rows = st.summariesJsonBackward.all(`0x${address}`, Buffer.from(address, "hex"), BigInt(end), Number(limit)).reverse();
    return [200, JSON_HEADERS, `[${rows.join(",")}]`];
  }
  const one = BY_VERSION.exec(url);
  if (one) return [200, JSON_HEADERS, Buffer.from(texts(BigInt(one[1]!), 1)[0]!)];
  const page = TRANSACTIONS.exec(url);
  if (page) {
    const parts = texts(BigInt(page[1]!), Number(page[2]!));
    return [200, JSON_HEADERS, Buffer.concat([Buffer.from("["), ...parts.flatMap((t, i) => (i === 0 ? [t] : [Buffer.from(","), t])), Buffer.from("]")])];
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
    return [200, JSON_HEADERS, `[${parts.join(",")}]`];
  }
  return null;
}

/** The table item a raw_item POST asks for (its URL matched `RAW_ITEM`), by the key of its body. */
function rawItem(item: RegExpExecArray, key: string): Answer {
  const handle = Buffer.from(item[1]!, "hex");
  const version = item[2] === undefined ? null : BigInt(item[2]);
  const value = st.tableItemAt.get(handle, Buffer.from(key.slice(2), "hex"), version)?.at(-1) as Buffer | null | undefined;
  return value ? [200, BCS_HEADERS, value] : [404, JSON_HEADERS, NOT_FOUND];
}

/** The same answers behind a bare Fastify (`--fastify`): its routing, parsing and reply, no hooks. */
async function listenFastify(): Promise<string> {
  const { default: fastify } = await import("fastify");
  const app = fastify({ logger: false });
  const hex64 = { type: "string", pattern: "^0x[0-9a-f]{64}$" };
  const page = (query: Record<string, unknown>) => ({ params: { type: "object", properties: { address: hex64 } }, querystring: { type: "object", properties: query } });
  const send = (reply: import("fastify").FastifyReply, [status, headers, body]: Answer) => reply.code(status).headers(headers).send(body);
  const get = (req: import("fastify").FastifyRequest, reply: import("fastify").FastifyReply) => send(reply, getPage(req.url) ?? [501, {}, ""]);
  app.get("/v1/accounts/:address/transaction_summaries", { schema: page({ limit: { type: "string" }, end_version: { type: "string" } }) }, get);
  app.get("/v1/accounts/:address/modules", { schema: page({ limit: { type: "string" }, ledger_version: { type: "string" } }) }, get);
  app.get("/v1/transactions/by_version/:v", { schema: { params: { type: "object", properties: { v: { type: "string" } } } } }, get);
  app.get("/v1/transactions", { schema: { querystring: { type: "object", properties: { start: { type: "string" }, limit: { type: "string" } } } } }, get);
  app.post(
    "/v1/tables/:handle/raw_item",
    { schema: { params: { type: "object", properties: { handle: hex64 } }, body: { type: "object", required: ["key"], properties: { key: { type: "string" } } } } },
    (req, reply) => {
      const item = RAW_ITEM.exec(req.url);
      return send(reply, item ? rawItem(item, (req.body as { key: string }).key) : [501, {}, ""]);
    },
  );
  return app.listen({ port: Number(port ?? 0), host: "127.0.0.1" });
}

if (process.argv.includes("--fastify")) console.log(await listenFastify());
else {
  const server = createServer((req, res) => {
    const url = req.url ?? "";
    const answer = getPage(url);
    if (answer) {
      res.writeHead(answer[0], answer[1]).end(answer[2]);
      return;
    }
    const item = req.method === "POST" ? RAW_ITEM.exec(url) : null;
    if (!item) {
      res.writeHead(501).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const [status, headers, body] = rawItem(item, (JSON.parse(Buffer.concat(chunks).toString()) as { key: string }).key);
      res.writeHead(status, headers).end(body);
    });
  });
  server.listen(Number(port ?? 0), "127.0.0.1", () => {
    const a = server.address();
    console.log(`http://127.0.0.1:${typeof a === "object" && a ? a.port : port}`);
  });
}
// (an exit of its own on SIGINT, so `node --cpu-prof` writes its profile)
process.on("SIGINT", () => process.exit(0));
