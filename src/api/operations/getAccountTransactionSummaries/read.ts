/**
 * The reads of the summaries operation, through the page strategy (`Pages`): the version
 * resolution's read (the position and the sender's newest transaction in the window, with the
 * page itself on a request's first ask, `Pages.firstAsk`) and the page's read.
 */
import type { LedgerInfo } from "../../../ledger/types.js";
import type { Snapshot, SummariesPage, SummaryQuery } from "../../../storage/contracts/reader.js";
import type { SummariesJsonPage } from "../../../storage/contracts/pageReads.js";
import type { NodeContext } from "../../context.js";
import { ApiError } from "../../http/apiError.js";
import type { PositionReads } from "../../http/operation.js";
import type { WireFormat } from "../../http/negotiate.js";
import type { Position } from "../../http/operation.js";
import { pageLimit, settledEnd, summariesPageKey, type SummariesQuery } from "./page.js";

/** A page of summaries as read, for `encode`. */
export interface SummariesRead {
  /** The page: its rows, or its JSON text where the store writes it. */
  page: SummariesPage | SummariesJsonPage;
  /** The ledger position the page is exact for. */
  info: LedgerInfo;
}

/** Version resolution's answer: the version naming the page, and the page when it was read with the position. */
export type SummariesVersion = Snapshot<bigint | null> & { page?: SummariesPage | SummariesJsonPage };

/**
 * Version resolution's read: the ledger position with the version of the sender's newest
 * transaction in the window, which names the page in the page cache (a page that ends at a
 * committed `end_version` needs no read of the account: `Pages.summariesVersion`). A request's
 * first ask (`Pages.firstAsk`) reads its page with the position (its `newest` is that version).
 */
export function resolveSummariesVersion(
  _reads: PositionReads,
  input: { params: { address: Uint8Array }; query: SummariesQuery },
  _version: bigint | undefined,
  format: WireFormat,
  ctx: NodeContext,
): SummariesVersion | null | Promise<SummariesVersion | null> {
  const { address } = input.params;
  const ask = pageAsk(ctx, address, input.query, format);
  if (ask) return readWithPosition(ctx, ask, format);
  return ctx.pages.summariesVersion(address, settledEnd(input.query));
}

/** The page with the position it was read at, as version resolution's answer (its `newest` names the page). */
function readWithPosition(ctx: NodeContext, ask: SummaryQuery, format: WireFormat): Promise<SummariesVersion | null> {
  return ctx.pages.readSummaries(ask, format).then((snap) => snap && { info: snap.info, value: snap.value.newest, page: snap.value });
}

/** The page to read with the position: on a store whose reads are round trips, for a request the page cache has not seen. */
function pageAsk(ctx: NodeContext, sender: Uint8Array, query: SummariesQuery, format: WireFormat): SummaryQuery | undefined {
  if (!ctx.pages.roundTrips) return undefined;
  const limit = pageLimit(query, ctx.config);
  if (!ctx.pages.firstAsk(summariesPageKey(sender, query, limit, format, "asked"))) return undefined;
  return { sender, start: query.start_version, end: query.end_version, limit };
}

/**
 * The page with the ledger position it is exact for: the page version resolution read with the
 * position, else one store read (position and rows in one snapshot, so a prune committing
 * meanwhile cannot cut into it; the handler judges the requested bounds against that position).
 * JSON comes as the store writes it where it can (`WireReads`).
 */
export async function readSummariesPage(
  ctx: NodeContext,
  sender: Uint8Array,
  query: SummariesQuery,
  at: Position<SummariesVersion>,
  format: WireFormat,
): Promise<SummariesRead> {
  const found = at.found?.page;
  if (found) return { page: found, info: at.info };
  const q = { sender, start: query.start_version, end: query.end_version, limit: pageLimit(query, ctx.config) };
  const snapshot = await ctx.pages.readSummaries(q, format);
  if (!snapshot) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  return { page: snapshot.value, info: snapshot.info };
}
