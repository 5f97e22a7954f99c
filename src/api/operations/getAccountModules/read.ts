/**
 * The store reads of the modules operation: the version resolution's read (the position and the
 * account's newest module change, with the page itself for a request not seen before) and the
 * page's read.
 */
import type { LedgerInfo, ModuleEntry } from "../../../ledger/types.js";
import type { ModulesPageAsk, ModulesVersionSnapshot } from "../../../storage/LedgerStore.js";
import type { NodeContext } from "../../context.js";
import { ApiError } from "../../errors.js";
import type { PositionReads } from "../../operation.js";
import type { WireFormat } from "../../negotiate.js";
import type { Position } from "../../operation.js";
import { modulesPageKey, pageLimit, readCursor, type ModulesQuery } from "./page.js";

/** A page of modules as read, for `encode`. */
export interface ModulesRead {
  /** The ledger position the page was read in. */
  info: LedgerInfo;
  /** The page and one more module (whether a next page exists), each with its code where the record cache lacks it. */
  rows: ModuleEntry[];
  /** Modules asked for. */
  limit: number;
  /**
   * JSON: the record of each module of the page the record cache held when read (taken then, so an
   * eviction before the encoding cannot leave a module without its code).
   */
  records: Array<Buffer | undefined> | null;
}

const ALL = () => true;

/**
 * Version resolution's read: the ledger position with the version of the account's newest module
 * change at the requested version, which names the page in the page cache. A request the cache
 * has not seen names the page it will read: a store whose reads are round trips reads that page
 * with the position (`ModulesPageAsk`), one round trip where there were two. A request seen before
 * asks for the position alone: its page is likely cached, and reading it with the position would
 * cost the database the whole page (bench/RESULTS.md).
 */
export function resolveModulesVersion(
  reads: PositionReads,
  input: { params: { address: Uint8Array }; query: ModulesQuery },
  version: bigint | undefined,
  format: WireFormat,
  ctx: NodeContext,
) {
  const { address } = input.params;
  return reads.readModulesVersion(address, version, pageAsk(ctx, address, version, input.query, format));
}

/** The page read on a cache miss, for a request the page cache has not seen; none for input the read refuses. */
function pageAsk(ctx: NodeContext, address: Uint8Array, version: bigint | undefined, query: ModulesQuery, format: WireFormat): ModulesPageAsk | undefined {
  const start = query.start === undefined ? null : readCursor(query.start, address);
  if (start instanceof ApiError || query.limit === 0) return undefined;
  const limit = pageLimit(query, ctx.config);
  if (!ctx.pages.firstAsk(modulesPageKey(address, query, limit, format, `at ${version ?? "-"}`))) return undefined;
  return { start, limit: limit + 1, form: format === "json" ? "record" : "bytecode" };
}

/**
 * The page and one more module, in the ledger position it was read in: the page version
 * resolution read with the position, else one store read (`readModules`, the code of the modules
 * whose record is not cached coming with the list, in the same snapshot). The code of a module the
 * store did not bring (a store may bring none) is read by its hash.
 */
export async function readModulesPage(
  ctx: NodeContext,
  address: Uint8Array,
  query: ModulesQuery,
  at: Position<ModulesVersionSnapshot>,
  format: WireFormat,
): Promise<ModulesRead> {
  const start = query.start === undefined ? null : refused(readCursor(query.start, address));
  if (query.limit === 0) throw ApiError.invalidInput("Given limit value (0) must not be zero", at.info);
  const limit = pageLimit(query, ctx.config);
  const records = ctx.moduleRecords;
  let info = at.info;
  let rows = at.found?.rows;
  if (rows === undefined) {
    const wanted = format === "json" ? (hash: string) => !records.has(hash) : ALL;
    const snapshot = await ctx.store.readModules(address, at.version, start, limit + 1, wanted, format === "json" ? "record" : "bytecode");
    if (!snapshot) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
    info = snapshot.info;
    rows = snapshot.value.rows;
  }
  const count = Math.min(rows.length, limit);
  const held: Array<Buffer | undefined> | null = format === "json" ? new Array(count) : null;
  for (let i = 0; i < count; i++) {
    const module = rows[i]!;
    if (held) {
      held[i] = records.cached(module.codeHash);
      if (held[i] !== undefined || module.record !== undefined) continue;
    }
    if (module.bytecode === undefined) module.bytecode = await readCode(ctx, module);
  }
  return { info, rows, limit, records: held };
}

async function readCode(ctx: NodeContext, module: ModuleEntry): Promise<Uint8Array> {
  const bytes = await ctx.store.getModuleCode(module.codeHash);
  if (!bytes) throw new Error(`module bytecode ${module.codeHash} of ${module.name} is missing from storage`);
  return bytes;
}

/** `value`, or the 400 its parse gave thrown: the read refuses what `pageAsk` only skips. */
function refused<T>(value: T | ApiError): T {
  if (value instanceof ApiError) throw value;
  return value;
}
