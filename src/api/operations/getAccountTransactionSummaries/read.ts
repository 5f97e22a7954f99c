/**
 * The store reads of the summaries operation: the version resolution's read (the position and
 * the sender's newest transaction in the window, with the page itself for a request not seen
 * before) and the page's read.
 */
import type { LedgerInfo } from "../../../ledger/types.js";
import type { SummariesJsonPage, SummariesPage, SummariesPageAsk, SummariesVersionSnapshot } from "../../../storage/LedgerStore.js";
import type { NodeContext } from "../../context.js";
import { ApiError } from "../../errors.js";
import type { PositionReads } from "../../operation.js";
import type { WireFormat } from "../../negotiate.js";
import type { Position } from "../../operation.js";
import { pageLimit, settledEnd, summariesPageKey, type SummariesQuery } from "./page.js";

/** A page of summaries as read, for `encode`. */
export interface SummariesRead {
  /** The page: its rows, or its JSON text where the store writes it. */
  page: SummariesPage | SummariesJsonPage;
  /** The ledger position the page is exact for. */
  info: LedgerInfo;
}

/**
 * Version resolution's read: the ledger position with the version of the sender's newest
 * transaction in the window, which names the page in the page cache (a page that ends at a
 * committed `end_version` needs no read of the account: `settledAt`). A request the cache has not
 * seen names the page it will read, as the modules operation's does: a store whose reads are
 * round trips reads it with the position.
 */
export function resolveSummariesVersion(
  reads: PositionReads,
  input: { params: { address: Uint8Array }; query: SummariesQuery },
  _version: bigint | undefined,
  format: WireFormat,
  ctx: NodeContext,
) {
  const { address } = input.params;
  return reads.readSummariesVersion(address, settledEnd(input.query), pageAsk(ctx, address, input.query, format));
}

/** The page read on a cache miss, for a request the page cache has not seen. */
function pageAsk(ctx: NodeContext, sender: Uint8Array, query: SummariesQuery, format: WireFormat): SummariesPageAsk | undefined {
  const limit = pageLimit(query, ctx.config);
  if (!ctx.pages.firstAsk(summariesPageKey(sender, query, limit, format, "asked"))) return undefined;
  const { start_version: start, end_version: end } = query;
  return { query: { sender, start, end, limit }, json: format === "json" && ctx.store.readSummariesJson !== undefined };
}

/**
 * The page with the ledger position it is exact for: the page version resolution read with the
 * position, else one store read (position and rows in one snapshot, so a prune committing
 * meanwhile cannot cut into it; the handler judges the requested bounds against that position).
 * JSON comes as the store writes it where it can (`readSummariesJson`).
 */
export async function readSummariesPage(
  ctx: NodeContext,
  sender: Uint8Array,
  query: SummariesQuery,
  at: Position<SummariesVersionSnapshot>,
  format: WireFormat,
): Promise<SummariesRead> {
  const found = at.found?.page;
  if (found) return { page: found, info: at.info };
  const q = { sender, start: query.start_version, end: query.end_version, limit: pageLimit(query, ctx.config) };
  const snapshot = format === "json" && ctx.store.readSummariesJson ? await ctx.store.readSummariesJson(q) : await ctx.store.readSummaries(q);
  if (!snapshot) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  return { page: snapshot.value, info: snapshot.info };
}
