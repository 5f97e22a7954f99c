/**
 * GET /v1/accounts/{address}/modules — every module of an account at a ledger version: bytecode
 * plus the ABI derived from it (`abi: null` when the bytecode does not decode).
 *
 * Cursor paging (DECISIONS §10): modules come in the reference node's state-key order; when more
 * follow, `X-NODE-CURSOR` names the first module of the next page — pass it back as `start` with
 * the same `ledger_version`. A page is also cut early when its JSON would pass the byte budget.
 * If the requested ledger version has been pruned, the server responds with a 410.
 *
 * JSON (default) or BCS (`Accept: application/x-bcs`: a map from `"<address>::<name>"` to bytecode).
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1/modules?limit=5'
 */
import { bcs } from "@mysten/bcs";
import type { FastifyReply, FastifyRequest } from "fastify";
import { formatAddress, toHex } from "../../ledger/address.js";
import { parseModuleStateKey } from "../../ledger/stateKey.js";
import type { LedgerInfo, ModuleEntry } from "../../ledger/types.js";
import { ApiError, quote } from "../errors.js";
import { ledgerHeaderSchemas } from "../headers.js";
import { AbiCache } from "../../move/abiCache.js";
import { EncodedBody, sendBody } from "../compression.js";
import { andThen, type NodeContext } from "../context.js";
import { acceptType, BCS_TYPE, JSON_TYPE, type WireFormat } from "../negotiate.js";
import type { Page } from "../pageCache.js";
import { addressPath, addressPathSchema, cursorQuerySchema, limitQuerySchema, u64Query, u64QuerySchema } from "../params.js";
import { errorResponses, type RouteDef } from "../route.js";

export interface GetAccountModulesParams {
  address: string;
}
export interface GetAccountModulesQuery {
  ledger_version?: string;
  start?: string;
  limit?: number;
}

const moduleMapBcs = bcs.vector(bcs.tuple([bcs.string(), bcs.byteVector()]));
const OPEN = Buffer.from("[");
const COMMA = Buffer.from(",");
const CLOSE = Buffer.from("]");
/** Module records printed once per bytecode hash (ABI decoded once). */
const records = new AbiCache(20_000);

export const getAccountModules: RouteDef = {
  method: "GET",
  url: "/v1/accounts/:address/modules",
  ledgerHeaders: true,
  schema: {
    operationId: "get_account_modules",
    summary: "Get account modules",
    description:
      "Retrieves all account modules' bytecode and ABI for a given account at a specific ledger version. " +
      "If the ledger version is not specified in the request, the latest ledger version is used. " +
      "Paged with the `start` cursor from the X-NODE-CURSOR header. " +
      "If the requested ledger version has been pruned, the server responds with a 410.",
    tags: ["Accounts"],
    params: { type: "object", required: ["address"], properties: { address: addressPathSchema("Address of account with or without a 0x prefix") } },
    querystring: {
      type: "object",
      properties: {
        ledger_version: u64QuerySchema("Ledger version to get state of account. If not provided, it will be the latest version"),
        start: cursorQuerySchema(
          "Cursor specifying where to start for pagination. Use the cursor provided by the X-NODE-CURSOR header in the response from the previous page.",
        ),
        limit: limitQuerySchema("Max number of modules to retrieve. If not provided, defaults to the default page size."),
      },
    },
    response: {
      200: {
        description: "Modules of the account (JSON) or a BCS map of module id to bytecode",
        headers: ledgerHeaderSchemas(true),
        content: {
          "application/json": { schema: { type: "array", items: { $ref: "MoveModuleBytecode#" } } },
          "application/x-bcs": { schema: { type: "string", format: "binary" } },
        },
      },
      ...errorResponses([400, 403, 404, 410, 500, 503]),
    },
  },
  handler: (ctx) =>
    function getAccountModulesHandler(req: FastifyRequest, reply: FastifyReply) {
      // 1. validate
      const params = req.params as GetAccountModulesParams;
      const query = req.query as GetAccountModulesQuery;
      const address = addressPath("address", params.address);
      const requested = u64Query("ledger_version", query.ledger_version);
      const start = query.start === undefined ? null : parseCursor(query.start, address);
      const format = acceptType(req.headers.accept);
      // 2. resolve the ledger version, with the version of the account's newest module change
      // read in the same snapshot
      const resolved = ctx.snapshot("Failed to get modules from storage", requested, () => ctx.store.readModulesVersion(address, requested));
      return andThen(resolved, ({ info, version, value: changed }) => {
        if (query.limit === 0) throw ApiError.invalidInput("Given limit value (0) must not be zero", info);
        const limit = Math.min(query.limit ?? ctx.config.modulesPageSize, ctx.config.modulesMaxPageSize);
        // 3. read: the page is the same at every version with the same newest change, so a page
        // built once serves them all from the cache
        const key = `modules|${format}|${toHex(address)}|${changed ?? "-"}|${start ? toHex(start) : "-"}|${limit}`;
        const page =
          ctx.pages.get<ModulesMeta>(key) ??
          readPage(ctx, info, address, version, start, limit, format).then((built) => ctx.pages.set(key, built));
        return andThen(page, (page) => {
          // 4. encode
          reply.headers(ctx.headers.ledger(info));
          if (page.meta.cursor) reply.headers(ctx.headers.cursor(page.meta.cursor));
          return sendBody(ctx.config, req, reply, page.body, format === "bcs" ? BCS_TYPE : JSON_TYPE);
        });
      });
    },
};

interface ModulesMeta {
  /** The X-NODE-CURSOR value: the state key of the next page's first module, hex. */
  cursor: string | null;
}

/** Reads and encodes one page, cut at the page limit or the byte budget. */
async function readPage(
  ctx: NodeContext,
  info: LedgerInfo,
  address: Uint8Array,
  version: bigint,
  start: Uint8Array | null,
  limit: number,
  format: WireFormat,
): Promise<Page<ModulesMeta>> {
  // one more than the page, to know whether a next page exists
  const rows = await ctx.read("Failed to get modules from storage", info, () => ctx.store.getModules(address, version, start, limit + 1));
  await ctx.ensureKept(version);
  // bytecode, stored once per content hash: read only what the record cache has not printed yet
  // (every module's, for BCS)
  const code = async (m: ModuleEntry): Promise<Uint8Array> => {
    const bytes = await ctx.read("Failed to get module bytecode from storage", info, () => ctx.store.getModuleCode(m.codeHash));
    if (!bytes) throw ApiError.internal(`Module bytecode ${m.codeHash} of ${m.name} is missing from storage`, info);
    return bytes;
  };
  const budget = ctx.config.modulesPageBytes;
  const page: Array<{ m: ModuleEntry; json: Buffer | null; bytes: Uint8Array | null }> = [];
  let size = 2;
  for (let i = 0; i < rows.length && i < limit; i++) {
    const m = rows[i]!;
    let json: Buffer | null = null;
    let bytes: Uint8Array | null = null;
    if (format === "json") json = records.cachedRecord(m.codeHash) ?? records.record(m.codeHash, await code(m));
    else bytes = await code(m);
    const add = json ? json.length + 1 : bytes!.length + m.name.length + 80;
    if (page.length > 0 && size + add > budget) break;
    page.push({ m, json, bytes });
    size += add;
  }
  const next = rows[page.length];
  const meta = { cursor: next ? Buffer.from(next.stateKey).toString("hex") : null };
  if (format === "bcs") {
    const addr = formatAddress(address);
    const entries = page.map(({ m, bytes }) => [`${addr}::${m.name}`, bytes!] as [string, Uint8Array]);
    entries.sort((a, b) => Buffer.compare(Buffer.from(bcs.string().serialize(a[0]).toBytes()), Buffer.from(bcs.string().serialize(b[0]).toBytes())));
    return { body: new EncodedBody(Buffer.from(moduleMapBcs.serialize(entries).toBytes())), meta };
  }
  const parts: Buffer[] = [OPEN];
  page.forEach((p, i) => (i === 0 ? parts.push(p.json!) : parts.push(COMMA, p.json!)));
  parts.push(CLOSE);
  return { body: new EncodedBody(Buffer.concat(parts)), meta };
}

/** The `start` cursor: hex (optionally 0x) of one module state key of this account. */
function parseCursor(raw: string, address: Uint8Array): Uint8Array {
  const hex = raw.startsWith("0x") ? raw.slice(2) : raw;
  const key = /^([0-9a-fA-F]{2})+$/.test(hex) ? parseModuleStateKey(Buffer.from(hex, "hex")) : null;
  if (!key) {
    throw ApiError.badParam(
      `failed to parse parameter \`start\`: ${quote(raw)} is not a module state key cursor (pass the X-NODE-CURSOR value of the previous page)`,
    );
  }
  if (!Buffer.from(key.address).equals(Buffer.from(address))) {
    throw ApiError.badParam(
      `failed to parse parameter \`start\`: cursor ${quote(raw)} belongs to account ${formatAddress(key.address)}, not ${formatAddress(address)}`,
    );
  }
  return Buffer.from(hex, "hex");
}
