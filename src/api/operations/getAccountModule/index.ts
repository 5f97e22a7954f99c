/**
 * GET /v1/accounts/{address}/module/{module_name} — one module of an account at a ledger version:
 * its bytecode and the ABI derived from it (`abi: null` when the bytecode does not decode), from
 * the same records as the modules page. A module the account does not have answers 404
 * `module_not_found`; a name that is not a Move identifier 400.
 * If the requested ledger version has been pruned, the server responds with a 410.
 *
 * JSON (default, `MoveModuleBytecode`) or BCS (`Accept: application/x-bcs`: the bytecode itself).
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1/module/coin'
 */
import { defineOperation, identifierParam, ref, accountAddressParam, stateVersionQuery } from "../../http/operation.js";
import { moveModuleBytecode } from "../../schemas.js";
import { readAccountModule } from "./read.js";

export const getAccountModule = defineOperation({
  operationId: "get_account_module",
  method: "GET",
  url: "/v1/accounts/:address/module/:module_name",
  summary: "Get account module",
  description:
    "Retrieves an individual module from a given account and at a specific ledger version. " +
    "If the ledger version is not specified in the request, the latest ledger version is used. " +
    "The Aptos nodes prune account state history, via a configurable time window. " +
    "If the requested ledger version has been pruned, the server responds with a 410.",
  tags: ["Accounts"],
  params: {
    type: "object",
    required: ["address", "module_name"],
    properties: {
      address: accountAddressParam,
      module_name: identifierParam("Name of module to retrieve e.g. `coin`"),
    },
  } as const,
  query: stateVersionQuery,
  formats: ["json", "bcs"],
  response: { description: "The module's bytecode and ABI (JSON), or its bytecode (BCS)", json: ref(moveModuleBytecode) },
  errors: [400, 404, 410, 500, 503],
  ledger: { at: "ledger_version" },
  failure: "Failed to query DB to check for the module",
  read:
    (ctx) =>
    ({ params }, at, format) =>
      readAccountModule(ctx, params.address, params.module_name, at, format),
});
