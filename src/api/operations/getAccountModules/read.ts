/**
 * The reads of the modules operation, through the page strategy (`Pages`): the version
 * resolution's read (the position and the account's newest module change, with the page itself on
 * a request's first ask) and the page's read.
 */
import type { LedgerInfo, ModuleEntry } from "../../../ledger/types.js";
import type { Snapshot } from "../../../storage/contracts/reader.js";
import type { NodeContext } from "../../context.js";
import type { JoinedRecords } from "../../pages/moduleRecords.js";
import { ApiError } from "../../http/apiError.js";
import type { PositionReads } from "../../http/operation.js";
import type { WireFormat } from "../../http/negotiate.js";
import type { Position } from "../../http/operation.js";
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
   * JSON: the records of the page's modules joined (`ModuleRecords.join`), copied when read, so a
   * record overwritten before the encoding cannot leave a module without its code.
   */
  records: JoinedRecords | null;
}

/** Version resolution's answer: the version naming the account's pages, and the page when it was read with the position. */
export type ModulesVersion = Snapshot<bigint | null> & { rows?: ModuleEntry[] };

/**
 * Version resolution's read: the ledger position with the version of the account's newest module
 * change at the requested version, which names the page in the page cache; with the page itself
 * (`readModules` gives that version as `changed`) on a request's first ask (`Pages.firstAsk`).
 */
export function resolveModulesVersion(
  _reads: PositionReads,
  input: { params: { address: Uint8Array }; query: ModulesQuery },
  version: bigint | undefined,
  format: WireFormat,
  ctx: NodeContext,
): ModulesVersion | null | Promise<ModulesVersion | null> {
  const { address } = input.params;
  const ask = pageAsk(ctx, address, version, input.query, format);
  if (!ask) return ctx.pages.modulesVersion(address, version);
  return ctx.pages.readModules(address, version, ask.start, ask.limit, format).then((snap) => snap && { info: snap.info, value: snap.value.changed, rows: snap.value.rows });
}

/** The page to read with the position, on its first ask; none for input the read refuses. */
function pageAsk(ctx: NodeContext, address: Uint8Array, version: bigint | undefined, query: ModulesQuery, format: WireFormat): { start: Uint8Array | null; limit: number } | undefined {
  if (!ctx.pages.roundTrips) return undefined;
  const start = query.start === undefined ? null : readCursor(query.start, address);
  if (start instanceof ApiError || query.limit === 0) return undefined;
  const limit = pageLimit(query, ctx.config);
  if (!ctx.pages.firstAsk(modulesPageKey(address, query, limit, format, `at ${version ?? "-"}`))) return undefined;
  return { start, limit: limit + 1 };
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
  at: Position<ModulesVersion>,
  format: WireFormat,
): Promise<ModulesRead> {
  const start = query.start === undefined ? null : refused(readCursor(query.start, address));
  if (query.limit === 0) throw ApiError.invalidInput("Given limit value (0) must not be zero", at.info);
  const limit = pageLimit(query, ctx.config);
  const records = ctx.pages.records;
  let info = at.info;
  let rows = at.found?.rows;
  if (rows === undefined) {
    const snapshot = await ctx.pages.readModules(address, at.version, start, limit + 1, format);
    if (!snapshot) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
    info = snapshot.info;
    rows = snapshot.value.rows;
  }
  const count = Math.min(rows.length, limit);
  if (format !== "json") {
    for (let i = 0; i < count; i++) {
      const module = rows[i]!;
      if (module.bytecode === undefined) module.bytecode = await readCode(ctx, module);
    }
    return { info, rows, limit, records: null };
  }
  // A module neither held nor read with its code (held when the list was read, overwritten since)
  // has its code read by hash, and the page is joined again.
  for (;;) {
    const joined = records.join(rows, count);
    if (joined) return { info, rows, limit, records: joined };
    for (let i = 0; i < count; i++) {
      const module = rows[i]!;
      if (module.record === undefined && module.bytecode === undefined && !records.has(module.codeHash)) module.bytecode = await readCode(ctx, module);
    }
  }
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
