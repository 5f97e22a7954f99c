/**
 * GET /v1/accounts/{address}/modules — every module of an account at a ledger version: bytecode
 * plus the ABI derived from it (`abi: null` when the bytecode does not decode).
 *
 * Cursor paging (docs/decisions.md §11): modules come in the reference node's state-key order; when more
 * follow, `X-NODE-CURSOR` names the first module of the next page — pass it back as `start` with
 * the same `ledger_version`. A page is also cut early when its JSON would pass the byte budget.
 * If the requested ledger version has been pruned, the server responds with a 410.
 *
 * JSON (default) or BCS (`Accept: application/x-bcs`: a map from `"<address>::<name>"` to bytecode).
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1/modules?limit=5'
 */
import { defineOperation, ref, accountPathParams, pagedStateQuery } from "../../http/operation.js";
import { moveModuleBytecode } from "../../schemas.js";
import { encodeModulesPage } from "./encode.js";
import { modulesPageKey, pageLimit } from "./page.js";
import { readModulesPage, resolveModulesVersion } from "./read.js";

export const getAccountModules = defineOperation({
  operationId: "get_account_modules",
  method: "GET",
  url: "/v1/accounts/:address/modules",
  summary: "Get account modules",
  description:
    "Retrieves all account modules' bytecode and ABI for a given account at a specific ledger version. " +
    "If the ledger version is not specified in the request, the latest ledger version is used. " +
    "Paged with the `start` cursor from the X-NODE-CURSOR header. " +
    "If the requested ledger version has been pruned, the server responds with a 410.",
  tags: ["Accounts"],
  params: accountPathParams,
  query: pagedStateQuery("Max number of modules to retrieve. If not provided, defaults to the default page size."),
  formats: ["json", "bcs"],
  response: {
    description: "Modules of the account (JSON) or a BCS map of module id to bytecode",
    json: { type: "array", items: ref(moveModuleBytecode) },
  },
  errors: [400, 403, 404, 410, 500, 503],
  ledger: { at: "ledger_version" },
  paged: true,
  failure: "Failed to get modules from storage",
  resolve: resolveModulesVersion,
  pageKey:
    (ctx) =>
    ({ params, query }, { found }, format) =>
      modulesPageKey(params.address, query, pageLimit(query, ctx.config), format, `${found?.value ?? "-"}`),
  read:
    (ctx) =>
    ({ params, query }, at, format) =>
      readModulesPage(ctx, params.address, query, at, format),
  encode:
    (ctx) =>
    (read, format, { params }) =>
      encodeModulesPage(ctx.config.modulesPageBytes, params.address, read, format),
});
