/**
 * GET /v1/accounts/{address}/resource/{resource_type} — one resource of an account at a ledger
 * version: `{"type", "data"}`. A resource the account does not hold answers 404
 * `resource_not_found`; a type that does not parse as a Move struct tag 400.
 * If the requested ledger version has been pruned, the server responds with a 410.
 *
 * JSON only: the chain's changes carry a resource's value as JSON, not its BCS bytes, so an
 * Accept of `application/x-bcs` alone answers 406 `bcs_not_supported`.
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1/resource/0x1::account::Account'
 */
import { defineOperation, ref, structTagParam, accountAddressParam, stateVersionQuery } from "../../http/operation.js";
import { moveResource } from "../../schemas.js";
import { readAccountResource } from "./read.js";

export const getAccountResource = defineOperation({
  operationId: "get_account_resource",
  method: "GET",
  url: "/v1/accounts/:address/resource/:resource_type",
  summary: "Get account resource",
  description:
    "Retrieves an individual resource from a given account and at a specific ledger version. " +
    "If the ledger version is not specified in the request, the latest ledger version is used. " +
    "JSON only: BCS is answered 406 (this node holds resource values as JSON). " +
    "The Aptos nodes prune account state history, via a configurable time window. " +
    "If the requested ledger version has been pruned, the server responds with a 410.",
  tags: ["Accounts"],
  params: {
    type: "object",
    required: ["address", "resource_type"],
    properties: {
      address: accountAddressParam,
      resource_type: structTagParam("Name of struct to retrieve e.g. `0x1::account::Account`"),
    },
  } as const,
  query: stateVersionQuery,
  formats: ["json", "bcs"],
  response: { description: "The resource", json: ref(moveResource) },
  errors: [400, 404, 406, 410, 500, 503],
  ledger: { at: "ledger_version" },
  failure: ({ params }) => `Failed to query DB to check for ${params.resource_type}`,
  read:
    (ctx) =>
    ({ params }, at, format) =>
      readAccountResource(ctx, params.address, params.resource_type, at, format),
});
