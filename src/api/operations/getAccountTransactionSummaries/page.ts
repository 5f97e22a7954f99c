/** The page a summaries request asks for: its window, its size, and the one cache key it is kept under. */
import { toHex } from "../../../ledger/address.js";
import type { LedgerInfo } from "../../../ledger/types.js";
import type { ApiConfig } from "../../config.js";
import type { WireFormat } from "../../http/negotiate.js";

/** The query of a summaries request, parsed. */
export interface SummariesQuery {
  start_version?: bigint;
  end_version?: bigint;
  limit?: number;
}

/** Summaries asked for in a page: the limit given, else the default, at most the largest. */
export function pageLimit(query: SummariesQuery, config: ApiConfig): number {
  return Math.min(query.limit ?? config.summariesPageSize, config.summariesMaxPageSize);
}

/** The version a backward page ends at (`end_version`, which `start_version` overrides), if any. */
export function settledEnd(query: SummariesQuery): bigint | undefined {
  return query.start_version === undefined ? query.end_version : undefined;
}

/**
 * What a page's content depends on, for its cache key: "settled" for a page that ends at a
 * committed `end_version` (read with the position or not), else the version of the sender's
 * newest transaction in the window that version resolution read.
 */
export function pageName(query: SummariesQuery, info: LedgerInfo, found: { value: bigint | null } | undefined): string {
  const end = settledEnd(query);
  return end !== undefined && end <= info.ledgerVersion ? "settled" : `${found?.value ?? "-"}`;
}

/**
 * The cache key of a summaries page: the request (format, sender, window, page size) and `name`,
 * what its content depends on: "settled" for a page that ends at a committed `end_version` (it
 * never changes), else the version of the sender's newest transaction in the window (a page of
 * the account stays the same until it sends again); or, for the page cache's memory of requests
 * (`PageCache.firstAsk`), "asked".
 */
export function summariesPageKey(sender: Uint8Array, query: SummariesQuery, limit: number, format: WireFormat, name: string): string {
  const start = query.start_version;
  const window = start === undefined ? `-|${query.end_version ?? "-"}` : `${start}|-`;
  return `summaries|${format}|${toHex(sender)}|${window}|${limit}|${name}`;
}
