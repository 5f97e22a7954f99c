/**
 * GET /v1/accounts/{address}/resources — every resource of an account at a ledger version, each
 * `{"type", "data"}`, in the reference's state-key order.
 *
 * Cursor paging as for modules (docs/decisions.md §11): when more follow, `X-NODE-CURSOR` names the first
 * resource of the next page — pass it back as `start` with the same `ledger_version`. An account
 * without resources answers `[]`.
 * If the requested ledger version has been pruned, the server responds with a 410.
 *
 * JSON only: the chain's changes carry resource values as JSON, not BCS, so an Accept of
 * `application/x-bcs` alone answers 406 `bcs_not_supported`.
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1/resources?limit=5'
 */
import { defineOperation, ref, accountPathParams, pagedStateQuery } from "../../http/operation.js";
import { moveResource } from "../../schemas.js";
import { readResourcesPage } from "./read.js";

export const getAccountResources = defineOperation({
  operationId: "get_account_resources",
  method: "GET",
  url: "/v1/accounts/:address/resources",
  summary: "Get account resources",
  description:
    "Retrieves all account resources for a given account and a specific ledger version. " +
    "If the ledger version is not specified in the request, the latest ledger version is used. " +
    "Paged with the `start` cursor from the X-NODE-CURSOR header. JSON only: BCS is answered 406 (this node holds resource values as JSON). " +
    "The Aptos nodes prune account state history, via a configurable time window. " +
    "If the requested ledger version has been pruned, the server responds with a 410.",
  tags: ["Accounts"],
  params: accountPathParams,
  query: pagedStateQuery("Max number of account resources to retrieve. If not provided, defaults to default page size."),
  formats: ["json", "bcs"],
  response: { description: "Resources of the account", json: { type: "array", items: ref(moveResource) } },
  errors: [400, 404, 406, 410, 500, 503],
  ledger: { at: "ledger_version" },
  paged: true,
  failure: "Failed to get resources from storage",
  read:
    (ctx) =>
    ({ params, query }, at, format) =>
      readResourcesPage(ctx, params.address, query, at, format),
});
