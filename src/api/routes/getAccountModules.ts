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
import { formatAddress, toHex } from "../../ledger/address.js";
import { parseModuleStateKey } from "../../ledger/stateKey.js";
import type { LedgerInfo, ModuleEntry } from "../../ledger/types.js";
import { EncodedBody } from "../compression.js";
import type { ApiConfig } from "../config.js";
import type { NodeContext } from "../context.js";
import { ApiError, quote } from "../errors.js";
import { after } from "../later.js";
import type { WireFormat } from "../negotiate.js";
import { addressParam, cursorParam, defineOperation, limitParam, ref, u64Param } from "../operation.js";
import { ModuleRecords } from "../moduleRecords.js";
import type { Page } from "../pageCache.js";
import type { Snapshot } from "../../storage/reader.js";
import { moveModuleBytecode } from "../schemas.js";

const moduleMapBcs = bcs.vector(bcs.tuple([bcs.string(), bcs.byteVector()]));
const OPEN = Buffer.from("[");
const COMMA = Buffer.from(",");
const CLOSE = Buffer.from("]");
const ALL = () => true;
/** What the position read found: the version naming the account's pages, and the page when read with it. */
interface Found {
  changed: bigint | null;
  rows?: ModuleEntry[] | undefined;
}

export const getAccountModules = defineOperation({
  operationId: "get_account_modules",
  method: "GET",
  url: "/v1/accounts/:address/modules",
  summary: "Get account modules",
  description:
    "Retrieves all account modules' bytecode and ABI for a given account at a specific ledger version. " +
    "If the ledger version is not specified in the request, the latest ledger version is used. " +
    "Paged with the `start` cursor from the X-NODE-CURSOR header. " +
    "If the requested ledger version has been pruned, the server responds with a 410.",
  tags: ["Accounts"],
  params: { type: "object", required: ["address"], properties: { address: addressParam("Address of account with or without a 0x prefix") } } as const,
  query: {
    type: "object",
    properties: {
      ledger_version: u64Param("Ledger version to get state of account. If not provided, it will be the latest version"),
      start: cursorParam(
        "Cursor specifying where to start for pagination. Use the cursor provided by the X-NODE-CURSOR header in the response from the previous page.",
      ),
      limit: limitParam("Max number of modules to retrieve. If not provided, defaults to the default page size."),
    },
  } as const,
  formats: ["json", "bcs"],
  response: {
    description: "Modules of the account (JSON) or a BCS map of module id to bytecode",
    json: { type: "array", items: ref(moveModuleBytecode) },
  },
  errors: [400, 403, 404, 410, 500, 503],
  ledger: { at: "ledger_version" },
  paged: true,
  failure: "Failed to get modules from storage",
  // The position with the version of the account's newest module change at the requested version:
  // every page of the account is the same at every version with the same newest change. A request
  // the page cache has not seen names the page the handler will read: a store whose reads are
  // round trips reads that page with the position in one read (`readModules`), and the handler
  // then takes it; a store that reads in process reads the position alone (no promise, no page). A request seen before asks for the position alone: its page is likely
  // cached, and reading it with the position would cost the database the whole page (the 155 KB
  // page of 0x1 at the newest version: 1,335 against 205 µs of server and cluster CPU a request on
  // PostgreSQL when every position read brought its page, bench/RESULTS.md).
  position: (reads, { params, query }, version, format, ctx) => {
    const ask = pageAsk(ctx, params.address, version, query, format);
    if (ask) {
      const page =
        format === "json" && ctx.store.wire
          ? ctx.store.wire.readModules(params.address, version, ask.start, ask.limit, ALL)
          : ctx.store.readModules(params.address, version, ask.start, ask.limit, ALL);
      return page.then((snap): Snapshot<Found> | null => snap && { info: snap.info, value: { changed: snap.value.changed, rows: snap.value.rows } });
    }
    return after(reads.readModulesVersion(params.address, version), (snap): Snapshot<Found> | null => snap && { info: snap.info, value: { changed: snap.value } });
  },
  handler: (ctx) => {
    /** Module records printed once per bytecode hash (from the ABI text stored with the code). */
    const records = new ModuleRecords(ctx.config.moduleCacheBytes);
    return async function getAccountModules({ params, query }, { info, version, found }, format) {
      const address = params.address;
      const start = query.start === undefined ? null : throwing(readCursor(query.start, address));
      if (query.limit === 0) throw ApiError.invalidInput("Given limit value (0) must not be zero", info);
      const limit = pageLimit(query, ctx.config);
      const key = `modules|${format}|${toHex(address)}|${found.changed ?? "-"}|${start ? toHex(start) : "-"}|${limit}`;
      const cached = ctx.pages.get<ModulesMeta>(key);
      if (cached) return { body: cached.body, cursor: cached.meta.cursor };
      // the page the store read with the position, in its snapshot; else read now
      const read = found.rows ? { info, rows: found.rows } : await readModules(ctx, records, address, version, start, limit, format);
      const page = await encodePage(ctx, records, address, read.rows, limit, format);
      ctx.pages.offer(key, page);
      return { body: page.body, cursor: page.meta.cursor, exactAt: read.info };
    };
  },
});

/** Modules asked for in a page: the limit given, else the default, at most the largest. */
function pageLimit(query: { limit?: number }, config: ApiConfig): number {
  return Math.min(query.limit ?? config.modulesPageSize, config.modulesMaxPageSize);
}

/**
 * The page to read with the position, on a store whose reads are round trips, for a request the
 * page cache has not seen (`PageCache.firstAsk`); none for input the handler refuses.
 */
function pageAsk(
  ctx: NodeContext,
  address: Uint8Array,
  version: bigint | undefined,
  query: { start?: string; limit?: number },
  format: WireFormat,
): { start: Uint8Array | null; limit: number } | undefined {
  if (ctx.store.immediate) return undefined;
  const start = query.start === undefined ? null : readCursor(query.start, address);
  if (start instanceof ApiError || query.limit === 0) return undefined;
  const limit = pageLimit(query, ctx.config);
  if (!ctx.pages.firstAsk(`modules|${format}|${toHex(address)}|${version ?? "-"}|${query.start ?? "-"}|${limit}`)) return undefined;
  return { start, limit: limit + 1 };
}

interface ModulesMeta {
  /** The X-NODE-CURSOR value: the state key of the next page's first module, hex. */
  cursor: string | null;
}

/**
 * Reads one page and one more module (to know whether a next page exists), with the ledger
 * position the store read it in (one snapshot: the wrapper judges the version against it).
 */
async function readModules(
  ctx: NodeContext,
  records: ModuleRecords,
  address: Uint8Array,
  version: bigint,
  start: Uint8Array | null,
  limit: number,
  format: WireFormat,
): Promise<{ info: LedgerInfo; rows: ModuleEntry[] }> {
  // Code comes with the list, in the same snapshot, for what the record cache has not printed yet
  // (every module's, for BCS): for JSON as the record itself where the store writes it.
  const wanted = format === "json" ? (hash: string) => !records.has(hash) : ALL;
  const snapshot =
    format === "json" && ctx.store.wire
      ? await ctx.store.wire.readModules(address, version, start, limit + 1, wanted)
      : await ctx.store.readModules(address, version, start, limit + 1, wanted);
  if (!snapshot) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  return { info: snapshot.info, rows: snapshot.value.rows };
}

/** Encodes the page of `rows` (a page and one more), cut at the page limit or the byte budget. */
async function encodePage(
  ctx: NodeContext,
  records: ModuleRecords,
  address: Uint8Array,
  rows: ModuleEntry[],
  limit: number,
  format: WireFormat,
): Promise<Page<ModulesMeta>> {
  // what the store did not read with the list (a store may read none of it), or a record evicted since
  const readCode = async (m: ModuleEntry): Promise<Uint8Array> => {
    const bytes = await ctx.store.getModuleCode(m.codeHash);
    if (!bytes) throw new Error(`module bytecode ${m.codeHash} of ${m.name} is missing from storage`);
    return bytes;
  };
  const budget = ctx.config.modulesPageBytes;
  const page: Array<{ module: ModuleEntry; json: Buffer | null; bytes: Uint8Array | null }> = [];
  let size = 2;
  for (let i = 0; i < rows.length && i < limit; i++) {
    const module = rows[i]!;
    let json: Buffer | null = null;
    let bytes: Uint8Array | null = null;
    if (format === "json") {
      json =
        records.cached(module.codeHash) ??
        (module.record !== undefined
          ? records.written(module.codeHash, module.record)
          : records.record(module.codeHash, module.bytecode ?? (await readCode(module)), module.abi));
    }
    else bytes = module.bytecode ?? (await readCode(module));
    const add = json ? json.length + 1 : bytes!.length + module.name.length + 80;
    if (page.length > 0 && size + add > budget) break;
    page.push({ module, json, bytes });
    size += add;
  }
  const next = rows[page.length];
  const meta = { cursor: next ? Buffer.from(next.stateKey).toString("hex") : null };
  if (format === "bcs") {
    const owner = formatAddress(address);
    // the map's order: by the BCS bytes of its keys (each serialized once, not once per comparison)
    const entries = page.map(({ module, bytes }) => {
      const id = `${owner}::${module.name}`;
      return { id, key: Buffer.from(bcs.string().serialize(id).toBytes()), bytes: bytes! };
    });
    entries.sort((a, b) => Buffer.compare(a.key, b.key));
    const body = new EncodedBody(Buffer.from(moduleMapBcs.serialize(entries.map((e) => [e.id, e.bytes] as [string, Uint8Array])).toBytes()));
    return { body, meta };
  }
  const parts: Buffer[] = [OPEN];
  for (const [i, entry] of page.entries()) {
    if (i > 0) parts.push(COMMA);
    parts.push(entry.json!);
  }
  parts.push(CLOSE);
  return { body: new EncodedBody(Buffer.concat(parts)), meta };
}

/** The `start` cursor: hex (optionally 0x) of one module state key of this account; else the 400 to send. */
function readCursor(raw: string, address: Uint8Array): Uint8Array | ApiError {
  const hex = raw.startsWith("0x") ? raw.slice(2) : raw;
  const key = /^([0-9a-fA-F]{2})+$/.test(hex) ? parseModuleStateKey(Buffer.from(hex, "hex")) : null;
  if (!key) {
    return ApiError.badParam(
      `failed to parse parameter \`start\`: ${quote(raw)} is not a module state key cursor (pass the X-NODE-CURSOR value of the previous page)`,
    );
  }
  if (!Buffer.from(key.address).equals(Buffer.from(address))) {
    return ApiError.badParam(
      `failed to parse parameter \`start\`: cursor ${quote(raw)} belongs to account ${formatAddress(key.address)}, not ${formatAddress(address)}`,
    );
  }
  return Buffer.from(hex, "hex");
}

/** `value`, or the error a parse gave it thrown: the handler refuses what `pageAsk` only skips. */
function throwing<T>(value: T | ApiError): T {
  if (value instanceof ApiError) throw value;
  return value;
}
