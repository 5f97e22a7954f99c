/**
 * GET /v1/transactions/by_hash/{txn_hash} — one committed transaction by its hash, as the node it
 * was ingested from printed it (docs/decisions.md §20). This node has no mempool: a hash no
 * committed transaction has is 404 `transaction_not_found`, as the reference answers a hash it
 * knows neither committed nor pending.
 *
 * JSON only: BCS is answered 406 (this node holds the transactions' JSON, not their BCS).
 *
 * @example curl 'http://127.0.0.1:8080/v1/transactions/by_hash/0x…'
 */
import type { LedgerInfo } from "../../../ledger/types.js";
import type { NodeContext } from "../../context.js";
import { ApiError } from "../../http/apiError.js";
import type { WireFormat } from "../../http/negotiate.js";
import { defineOperation, hashParam, ref, type Answer } from "../../http/operation.js";
import { transaction } from "../../schemas.js";
import { historyNotHeld, textBody, transactionBcsNotHeld, transactionNotFoundByHash } from "../history.js";

/** What the by-hash operations share: the path naming a transaction by its hash, the formats, the answer and its errors. */
export const byHashOperation = {
  tags: ["Transactions"],
  params: { type: "object", required: ["txn_hash"], properties: { txn_hash: hashParam("Hash of transaction to retrieve") } },
  formats: ["json", "bcs"],
  response: { description: "The transaction", json: ref(transaction) },
  errors: [400, 404, 406, 410, 500, 503],
  ledger: "latest",
  failure: "Failed to get transaction by hash",
} as const;

export const getTransactionByHash = defineOperation({
  ...byHashOperation,
  operationId: "get_transaction_by_hash",
  method: "GET",
  url: "/v1/transactions/by_hash/:txn_hash",
  summary: "Get transaction by hash",
  description:
    "Look up a transaction by its hash. This node holds committed transactions only (it has no mempool): " +
    "a hash no committed transaction has is answered 404. JSON only: BCS is answered 406.",
  read:
    (ctx) =>
    ({ params }, at, format) =>
      readTransactionByHash(ctx, params.txn_hash, at.info, format),
});

/** The transaction with this hash, or null when no committed transaction has it (the caller answers 404). */
export async function findTransactionByHash(ctx: NodeContext, hash: Uint8Array, info: LedgerInfo, format: WireFormat): Promise<Answer | null> {
  if (format === "bcs") return { error: transactionBcsNotHeld(info) };
  const snap = await ctx.store.readTransactionByHash(hash);
  if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  if (snap.value === null) return null;
  const text = snap.value.texts[0];
  return text === undefined ? historyNotHeld(ctx, snap.value.start, snap.info) : { body: textBody(text), exactAt: snap.info };
}

async function readTransactionByHash(ctx: NodeContext, hash: Uint8Array, info: LedgerInfo, format: WireFormat): Promise<Answer> {
  const found = await findTransactionByHash(ctx, hash, info, format);
  if (found !== null) return found;
  if (ctx.upstream !== null) return { upstream: true };
  return { error: transactionNotFoundByHash(hash, info) };
}
