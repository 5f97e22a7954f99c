/**
 * GET /v1/accounts/{address}/balance/{asset_type} — an account's balance of one asset at a ledger
 * version, as the reference sums it (docs/decisions.md §21): for a coin type, its `CoinStore`'s
 * coins plus the balance of its paired fungible asset's primary store; for a fungible asset's
 * metadata address, that primary store's balance. Whatever is missing counts 0, so an unknown
 * account is 0. If the requested ledger version has been pruned, the server responds with a 410.
 *
 * JSON (a bare integer, as the reference sends it) or BCS (a u64).
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1/balance/0x1::aptos_coin::AptosCoin'
 */
import { defineOperation, accountAddressParam, stateVersionQuery } from "../../http/operation.js";
import { readAccountBalance } from "./read.js";

export const getAccountBalance = defineOperation({
  operationId: "get_account_balance",
  method: "GET",
  url: "/v1/accounts/:address/balance/:asset_type",
  summary: "Get account balance",
  description:
    "Retrieves the balance of an account for a coin type (`0x1::aptos_coin::AptosCoin`) or a fungible asset's metadata address " +
    "(`0xa`): a coin type counts its CoinStore and its paired fungible asset's primary store. " +
    "If the ledger version is not specified in the request, the latest ledger version is used. " +
    "If the requested ledger version has been pruned, the server responds with a 410.",
  tags: ["Accounts"],
  params: {
    type: "object",
    required: ["address", "asset_type"],
    properties: {
      address: accountAddressParam,
      asset_type: { type: "string", description: "A coin's struct tag, or a fungible asset's metadata address" },
    },
  } as const,
  query: stateVersionQuery,
  formats: ["json", "bcs"],
  response: { description: "The balance", json: { type: "integer", format: "uint64" } },
  errors: [400, 404, 410, 500, 503],
  ledger: { at: "ledger_version" },
  failure: "Failed to retrieve state value",
  read:
    (ctx) =>
    ({ params }, at, format) =>
      readAccountBalance(ctx, params.address, params.asset_type, at, format),
});
