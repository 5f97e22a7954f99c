/**
 * The rows a summaries page reads, both backends': its query bounded by the snapshot's ledger
 * version, forward from `start` or backward from `end`.
 */
import type { SummaryQuery } from "../contracts/reader.js";

/**
 * The rows a summaries query asks for, never past the ledger version it resolved: forward from
 * `start`, or backward from `end` (at most the ledger version). Null when `limit <= 0`: nothing.
 */
export type SummaryRange =
  | { direction: "forward"; from: bigint; to: bigint; limit: number }
  | { direction: "backward"; to: bigint; limit: number };

/** A summaries query bounded by the ledger version of the snapshot that reads it. */
export type SummaryWindow = SummaryQuery & { ledgerVersion: bigint };

/** The window of `q` at `ledgerVersion`. */
export function summaryWindow(q: SummaryQuery, ledgerVersion: bigint): SummaryWindow {
  return { ...q, ledgerVersion };
}

export function summaryRange(q: SummaryWindow): SummaryRange | null {
  if (q.limit <= 0) return null;
  if (q.start !== undefined) return { direction: "forward", from: q.start, to: q.ledgerVersion, limit: q.limit };
  const to = q.end !== undefined && q.end < q.ledgerVersion ? q.end : q.ledgerVersion;
  return { direction: "backward", to, limit: q.limit };
}
