/**
 * GET /v1/accounts/{address} — an account's sequence number and authentication key at a ledger
 * version, from its `0x1::account::Account` resource. An address without one answers what the
 * reference answers: a default account (sequence number 0, the address as authentication key)
 * where the chain's stateless-account feature is on, else 404 `account_not_found`.
 * If the requested ledger version has been pruned, the server responds with a 410.
 *
 * JSON only: the Account resource is held as JSON, so an Accept of `application/x-bcs` alone
 * answers 406 `bcs_not_supported`.
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1'
 */
import { defineOperation, ref, accountPathParams, stateVersionQuery } from "../../http/operation.js";
import { accountData } from "../../schemas.js";
import { readAccount } from "./read.js";

export const getAccount = defineOperation({
  operationId: "get_account",
  method: "GET",
  url: "/v1/accounts/:address",
  summary: "Get account",
  description:
    "Return the authentication key and the sequence number for an account address. Optionally, a ledger version can be specified. " +
    "If the ledger version is not specified in the request, the latest ledger version is used. " +
    "JSON only: BCS is answered 406 (this node holds the Account resource as JSON). " +
    "If the requested ledger version has been pruned, the server responds with a 410.",
  tags: ["Accounts"],
  params: accountPathParams,
  query: stateVersionQuery,
  formats: ["json", "bcs"],
  response: { description: "The account's sequence number and authentication key", json: ref(accountData) },
  errors: [400, 404, 406, 410, 500, 503],
  ledger: { at: "ledger_version" },
  failure: "Failed to get the account from storage",
  read:
    (ctx) =>
    ({ params }, at, format) =>
      readAccount(ctx, params.address, at, format),
});
