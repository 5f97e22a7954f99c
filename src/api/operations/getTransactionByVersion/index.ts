/**
 * GET /v1/transactions/by_version/{txn_version} — one committed transaction by its version, as the
 * node it was ingested from printed it (docs/decisions.md §20). A version past the ledger is 404
 * `transaction_not_found`; if the version has been pruned, the server responds with a 410.
 *
 * JSON only: BCS is answered 406 (this node holds the transactions' JSON, not their BCS).
 *
 * @example curl 'http://127.0.0.1:8080/v1/transactions/by_version/0'
 */
import type { LedgerInfo } from "../../../ledger/types.js";
import type { NodeContext } from "../../context.js";
import { ApiError } from "../../http/apiError.js";
import type { WireFormat } from "../../http/negotiate.js";
import { defineOperation, ref, u64Param, type Answer } from "../../http/operation.js";
import { transaction } from "../../schemas.js";
import { historyNotHeld, textBody, transactionBcsNotHeld, transactionNotFoundByVersion } from "../history.js";

export const getTransactionByVersion = defineOperation({
  operationId: "get_transaction_by_version",
  method: "GET",
  url: "/v1/transactions/by_version/:txn_version",
  summary: "Get transaction by version",
  description:
    "Retrieves a transaction by a given version. JSON only: BCS is answered 406 (this node holds transactions as JSON). " +
    "If the version has been pruned, a 410 will be returned.",
  tags: ["Transactions"],
  params: {
    type: "object",
    required: ["txn_version"],
    properties: { txn_version: u64Param("Version of transaction to retrieve") },
  } as const,
  formats: ["json", "bcs"],
  response: { description: "The transaction", json: ref(transaction) },
  errors: [400, 404, 406, 410, 500, 503],
  ledger: "latest",
  failure: ({ params }) => `Failed to get transaction by version ${params.txn_version}`,
  read:
    (ctx) =>
    ({ params }, at, format) =>
      readTransactionByVersion(ctx, params.txn_version, at.info, format),
});

async function readTransactionByVersion(ctx: NodeContext, version: bigint, info: LedgerInfo, format: WireFormat): Promise<Answer> {
  if (format === "bcs") return { error: transactionBcsNotHeld(info) };
  const snap = await ctx.store.readTransactions(version, 1);
  if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  if (version > snap.info.ledgerVersion) return { error: transactionNotFoundByVersion(version, snap.info), exactAt: snap.info };
  const text = snap.value.texts[0];
  return text === undefined || version < snap.info.oldestVersion ? historyNotHeld(ctx, version, snap.info) : { body: textBody(text), exactAt: snap.info };
}
