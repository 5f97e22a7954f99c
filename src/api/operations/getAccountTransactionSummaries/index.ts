/**
 * GET /v1/accounts/{address}/transaction_summaries — summaries of committed transactions sent by
 * the account, sequence-number-based and orderless alike, ascending by version (docs/decisions.md §10):
 * from `start_version` forward; else the `limit` latest at or before `end_version`; else the
 * `limit` latest. If `start_version` or `end_version` has been pruned, the server responds with a 410.
 *
 * JSON (default) or BCS (`vector<IndexedTransactionSummary>`).
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1/transaction_summaries?limit=10'
 */
import { defineOperation, limitParam, ref, u64Param, accountPathParams } from "../../http/operation.js";
import { transactionSummary } from "../../schemas.js";
import { encodeSummariesPage } from "./encode.js";
import { pageLimit, pageName, summariesPageKey } from "./page.js";
import { readSummariesPage, resolveSummariesVersion } from "./read.js";

export const getAccountTransactionSummaries = defineOperation({
  operationId: "get_account_transaction_summaries",
  method: "GET",
  url: "/v1/accounts/:address/transaction_summaries",
  summary: "Get account transaction summaries",
  description:
    "Retrieves summaries of on-chain committed transactions (sequence number based and orderless) sent by an account. " +
    "With start_version, the summaries start at that version; with only end_version, they end there; with neither, " +
    "the latest are returned. Always ascending by version. Pending transactions are not returned. " +
    "If start_version or end_version has been pruned, the server responds with a 410.",
  tags: ["Transactions"],
  params: accountPathParams,
  query: {
    type: "object",
    properties: {
      start_version: u64Param("Transaction version to start the output from (inclusive)"),
      end_version: u64Param("Transaction version to end the output at (inclusive); ignored when start_version is given"),
      limit: limitParam("Max number of summaries to retrieve. If not provided, defaults to the default page size."),
    },
  } as const,
  formats: ["json", "bcs"],
  response: { description: "Transaction summaries, ascending by version", json: { type: "array", items: ref(transactionSummary) } },
  errors: [400, 403, 404, 410, 500, 503],
  // Always the latest ledger; the bounds only must not have been pruned.
  ledger: { bounds: ["start_version", "end_version"] },
  failure: "Failed to retrieve account transaction summaries",
  resolve: resolveSummariesVersion,
  pageKey:
    (ctx) =>
    ({ params, query }, { info, found }, format) =>
      summariesPageKey(params.address, query, pageLimit(query, ctx.config), format, pageName(query, info, found)),
  read:
    (ctx) =>
    ({ params, query }, at, format) =>
      readSummariesPage(ctx, params.address, query, at, format),
  encode: () => encodeSummariesPage,
});
