/**
 * GET /v1/accounts/{address}/transactions — the account's sequence-number transactions, ascending
 * by sequence number: from `start` (a sequence number), else the latest `limit` (default 25, at
 * most 100), each as the node it was ingested from printed it (docs/decisions.md §20). Orderless
 * transactions are not listed (the reference's sequence-number index holds none; the account's
 * transaction summaries list them). If the transactions asked for have been pruned, the server
 * responds with a 410.
 *
 * JSON only: BCS is answered 406 (this node holds the transactions' JSON, not their BCS).
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1/transactions?limit=10'
 */
import type { LedgerInfo } from "../../../ledger/types.js";
import type { NodeContext } from "../../context.js";
import { ApiError } from "../../http/apiError.js";
import type { WireFormat } from "../../http/negotiate.js";
import { accountPathParams, defineOperation, limitParam, ref, u64Param, type Answer } from "../../http/operation.js";
import { transaction } from "../../schemas.js";
import { transactionsLimit } from "../getTransactions/read.js";
import { textsArray, transactionBcsNotHeld } from "../history.js";
import { withoutStack } from "../../../storage/contracts/errors.js";

export const getAccountTransactions = defineOperation({
  operationId: "get_account_transactions",
  method: "GET",
  url: "/v1/accounts/:address/transactions",
  summary: "Get account transactions",
  description:
    "Retrieves on-chain committed transactions from an account. If the start version is too far in the past, a 410 will be returned. " +
    "If no start version is given, it will start at the most recent transactions. Orderless transactions are not listed " +
    "(the account's transaction summaries list them). JSON only: BCS is answered 406 (this node holds transactions as JSON).",
  tags: ["Transactions"],
  params: accountPathParams,
  query: {
    type: "object",
    properties: {
      start: u64Param("Account sequence number to start list of transactions. If not provided, defaults to showing the latest transactions"),
      limit: limitParam("Max number of transactions to retrieve. If not provided, defaults to default page size"),
    },
  } as const,
  formats: ["json", "bcs"],
  response: { description: "The account's transactions, ascending by sequence number", json: { type: "array", items: ref(transaction) } },
  errors: [400, 406, 410, 500, 503],
  ledger: "latest",
  failure: "Failed to get account transactions from storage",
  read:
    (ctx) =>
    ({ params, query }, at, format) =>
      readAccountTransactions(ctx, params.address, query.start, query.limit, at.info, format),
});

/** The 410 of an account's transactions from `start` on that this node no longer holds (pruned, or before a replica's first synced version). */
function notHeld(ctx: NodeContext, start: bigint, info: LedgerInfo): Answer {
  if (ctx.upstream !== null) return { upstream: true };
  return {
    error: withoutStack(() => new ApiError(410, "version_pruned", `Account transactions from sequence number(${start}) have been pruned: the oldest version kept is ${info.oldestVersion}`, info)),
    exactAt: info,
  };
}

async function readAccountTransactions(ctx: NodeContext, sender: Uint8Array, start: bigint | undefined, limit: number | undefined, info: LedgerInfo, format: WireFormat): Promise<Answer> {
  if (format === "bcs") return { error: transactionBcsNotHeld(info) };
  const count = transactionsLimit(ctx, limit, info);
  const snap = await ctx.store.readAccountTransactions({ sender, start, limit: count });
  if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  const { firstSequence, texts } = snap.value;
  // Sequence numbers run without a gap from 0: one asked for and not here was pruned, or precedes what a replica synced.
  if (start !== undefined && firstSequence !== null && firstSequence > start) return notHeld(ctx, start, snap.info);
  if (start !== undefined && firstSequence === null && (await nextSequenceNumber(ctx, sender)) > start) return notHeld(ctx, start, snap.info);
  if (texts.some((t) => t === null)) return notHeld(ctx, start ?? firstSequence ?? 0n, snap.info);
  return { body: textsArray(texts as Uint8Array[]), exactAt: snap.info };
}

/** The account's next sequence number, as its `0x1::account::Account` resource says (0 without one). */
async function nextSequenceNumber(ctx: NodeContext, address: Uint8Array): Promise<bigint> {
  const snap = await ctx.store.readResource(address, "0x1::account::Account", undefined);
  const text = snap?.value;
  if (!text) return 0n;
  const seq = (JSON.parse(text) as { sequence_number?: unknown }).sequence_number;
  return typeof seq === "string" && /^[0-9]{1,20}$/.test(seq) ? BigInt(seq) : 0n;
}
