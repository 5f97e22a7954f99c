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
import { formatAddress } from "../../ledger/address.js";
import { parseModuleStateKey } from "../../ledger/stateKey.js";
import type { ModuleEntry } from "../../ledger/types.js";
import { ApiError } from "../errors.js";
import { ledgerHeaderSchemas } from "../headers.js";
import { AbiCache } from "../../move/abiCache.js";
import { acceptType, BCS_TYPE } from "../negotiate.js";
import { addressPath, addressPathSchema, limitQuerySchema, u64Query, u64QuerySchema } from "../params.js";
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
    params: { type: "object", required: ["address"], properties: { address: addressPathSchema } },
    querystring: {
      type: "object",
      properties: {
        ledger_version: u64QuerySchema("Ledger version to get state of account. If not provided, it will be the latest version"),
        start: {
          type: "string",
          pattern: "^(0x)?[0-9a-fA-F]{2,1024}$",
          description:
            "Cursor specifying where to start for pagination. Use the cursor provided by the X-NODE-CURSOR header in the response from the previous page.",
        },
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
    async function getAccountModulesHandler(req: FastifyRequest, reply: FastifyReply) {
      // 1. validate
      const params = req.params as GetAccountModulesParams;
      const query = req.query as GetAccountModulesQuery;
      const address = addressPath("address", params.address);
      const requested = u64Query("ledger_version", query.ledger_version);
      const start = query.start === undefined ? null : parseCursor(query.start, address);
      const format = acceptType(req.headers.accept);
      // 2. resolve the ledger version
      const { info, version } = await ctx.resolve(requested);
      if (query.limit === 0) throw ApiError.invalidInput("Given limit value (0) must not be zero", info);
      const limit = Math.min(query.limit ?? ctx.config.modulesPageSize, ctx.config.modulesMaxPageSize);
      // 3. read (one more than the page, to know whether a next page exists)
      const rows = await ctx.read("Failed to get modules from storage", info, () =>
        ctx.store.getModules(address, version, start, limit + 1),
      );
      await ctx.ensureKept(version);
      // 3b. bytecode, stored once per content hash: read only what the record cache has not
      // printed yet (every module's, for BCS)
      const code = async (m: ModuleEntry): Promise<Uint8Array> => {
        const bytes = await ctx.read("Failed to get module bytecode from storage", info, () => ctx.store.getModuleCode(m.codeHash));
        if (!bytes) throw ApiError.internal(`Module bytecode ${m.codeHash} of ${m.name} is missing from storage`, info);
        return bytes;
      };
      // 4. encode, cutting the page at the byte budget
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
      reply.headers(ctx.headers.ledger(info));
      if (next) reply.headers(ctx.headers.cursor(Buffer.from(next.stateKey).toString("hex")));
      if (format === "bcs") {
        const addr = formatAddress(address);
        const entries = page.map(({ m, bytes }) => [`${addr}::${m.name}`, bytes!] as [string, Uint8Array]);
        entries.sort((a, b) => Buffer.compare(Buffer.from(bcs.string().serialize(a[0]).toBytes()), Buffer.from(bcs.string().serialize(b[0]).toBytes())));
        return reply.type(BCS_TYPE).send(Buffer.from(moduleMapBcs.serialize(entries).toBytes()));
      }
      const parts: Buffer[] = [OPEN];
      page.forEach((p, i) => (i === 0 ? parts.push(p.json!) : parts.push(COMMA, p.json!)));
      parts.push(CLOSE);
      return reply.type("application/json").send(Buffer.concat(parts));
    },
};

/** The `start` cursor: hex (optionally 0x) of one module state key of this account. */
function parseCursor(raw: string, address: Uint8Array): Uint8Array {
  const hex = raw.startsWith("0x") ? raw.slice(2) : raw;
  const key = /^([0-9a-fA-F]{2})+$/.test(hex) ? parseModuleStateKey(Buffer.from(hex, "hex")) : null;
  if (!key) {
    throw ApiError.badParam(
      `failed to parse parameter \`start\`: ${JSON.stringify(raw)} is not a module state key cursor (pass the X-NODE-CURSOR value of the previous page)`,
    );
  }
  if (!Buffer.from(key.address).equals(Buffer.from(address))) {
    throw ApiError.badParam(
      `failed to parse parameter \`start\`: cursor ${JSON.stringify(raw)} belongs to account ${formatAddress(key.address)}, not ${formatAddress(address)}`,
    );
  }
  return Buffer.from(hex, "hex");
}
