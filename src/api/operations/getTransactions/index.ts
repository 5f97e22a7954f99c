/**
 * GET /v1/transactions — committed transactions in version order, from `start` (default: the
 * latest page), `limit` of them (default 25, at most 100), each as the node it was ingested from
 * printed it (docs/decisions.md §20). If `start` has been pruned, the server responds with a 410.
 *
 * JSON only: BCS is answered 406 (this node holds the transactions' JSON, not their BCS).
 *
 * @example curl 'http://127.0.0.1:8080/v1/transactions?start=0&limit=10'
 */
import { defineOperation, limitParam, ref, u64Param } from "../../http/operation.js";
import { transaction } from "../../schemas.js";
import { readTransactionsPage } from "./read.js";

export const getTransactions = defineOperation({
  operationId: "get_transactions",
  method: "GET",
  url: "/v1/transactions",
  summary: "Get transactions",
  description:
    "Retrieve on-chain committed transactions. The page size and start ledger version can be provided to get a specific sequence of transactions. " +
    "JSON only: BCS is answered 406 (this node holds transactions as JSON). " +
    "If the version has been pruned, then a 410 will be returned. To retrieve a pending transaction, use /transactions/by_hash.",
  tags: ["Transactions"],
  query: {
    type: "object",
    properties: {
      start: u64Param("Ledger version to start list of transactions. If not provided, defaults to showing the latest transactions"),
      limit: limitParam("Max number of transactions to retrieve. If not provided, defaults to default page size"),
    },
  } as const,
  formats: ["json", "bcs"],
  response: { description: "Committed transactions, ascending by version", json: { type: "array", items: ref(transaction) } },
  errors: [400, 406, 410, 500, 503],
  ledger: "latest",
  // POST /v1/transactions submits a transaction: the upstream's, with --proxy.
  upstreamMethods: ["POST"],
  failure: "Failed to get transactions from storage",
  read:
    (ctx) =>
    ({ query }, at, format) =>
      readTransactionsPage(ctx, query.start, query.limit, at.info, format),
});
