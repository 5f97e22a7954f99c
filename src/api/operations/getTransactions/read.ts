/**
 * The read of the transactions page: the page's versions as the reference's `Page` computes them
 * (`limit` 0 refused, clamped to the maximum; `start` past the ledger refused), then the texts and
 * the position in one snapshot.
 */
import type { LedgerInfo } from "../../../ledger/types.js";
import type { NodeContext } from "../../context.js";
import { ApiError } from "../../http/apiError.js";
import type { WireFormat } from "../../http/negotiate.js";
import type { Answer } from "../../http/operation.js";
import { historyNotHeld, historyPageSize, textsArray, transactionBcsNotHeld } from "../history.js";

/** The page size asked for, as the reference takes it: 0 refused, past the maximum clamped. */
export function transactionsLimit(ctx: NodeContext, limit: number | undefined, info: LedgerInfo): number {
  return historyPageSize(limit, ctx.config.transactionsPageSize, ctx.config.transactionsMaxPageSize, info);
}

export async function readTransactionsPage(ctx: NodeContext, start: bigint | undefined, limit: number | undefined, info: LedgerInfo, format: WireFormat): Promise<Answer> {
  if (format === "bcs") return { error: transactionBcsNotHeld(info) };
  const count = transactionsLimit(ctx, limit, info);
  // Without a start, the latest page; it never reaches below the oldest version kept.
  const latest = info.ledgerVersion - BigInt(count - 1);
  const first = start ?? (latest > info.oldestVersion ? latest : info.oldestVersion);
  if (first > info.ledgerVersion) {
    throw ApiError.invalidInput(`Given start value (${first}) is higher than the current ledger version, it must be < ${info.ledgerVersion}`, info);
  }
  const snap = await ctx.store.readTransactions(first, count, ctx.config.transactionsPageBytes);
  if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  if (first < snap.info.oldestVersion || snap.value.texts.length === 0) return historyNotHeld(ctx, first, snap.info);
  return { body: textsArray(snap.value.texts), exactAt: snap.info };
}
