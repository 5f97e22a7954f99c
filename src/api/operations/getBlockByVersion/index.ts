/**
 * GET /v1/blocks/by_version/{version} — the block holding a version, as by height. A version past
 * the ledger is 404 `version_not_found`; if the version has been pruned, the server responds with
 * a 410 `version_pruned`.
 *
 * @example curl 'http://127.0.0.1:8080/v1/blocks/by_version/5'
 */
import type { LedgerInfo } from "../../../ledger/types.js";
import { withoutStack } from "../../../storage/contracts/errors.js";
import type { NodeContext } from "../../context.js";
import { ApiError } from "../../http/apiError.js";
import type { WireFormat } from "../../http/negotiate.js";
import { defineOperation, u64Param, type Answer } from "../../http/operation.js";
import { blockOperation } from "../getBlockByHeight/index.js";
import { blockJson, historyNotHeld, transactionBcsNotHeld } from "../history.js";

export const getBlockByVersion = defineOperation({
  ...blockOperation,
  operationId: "get_block_by_version",
  method: "GET",
  url: "/v1/blocks/by_version/:version",
  summary: "Get blocks by version",
  description:
    "This endpoint allows you to get the transactions in a block and the corresponding block information given a version in the block. " +
    "Transactions are limited by max default transactions size. If not all transactions are present, the user will need to query for the rest of the transactions via the get transactions API. " +
    "JSON only: BCS is answered 406 (this node holds transactions as JSON). If the block has been pruned, it will return a 410",
  params: {
    type: "object",
    required: ["version"],
    properties: { version: u64Param("Ledger version to lookup block information for.") },
  } as const,
  failure: ({ params }) => `Failed to get block by version ${params.version}`,
  read:
    (ctx) =>
    ({ params, query }, at, format) =>
      readBlockByVersion(ctx, params.version, query.with_transactions === true, at.info, format),
});

async function readBlockByVersion(ctx: NodeContext, version: bigint, withTransactions: boolean, info: LedgerInfo, format: WireFormat): Promise<Answer> {
  if (format === "bcs") return { error: transactionBcsNotHeld(info) };
  if (version > info.ledgerVersion) return { error: ApiError.versionNotFound(version, info) };
  if (version < info.oldestVersion) return historyNotHeld(ctx, version, info);
  const b = await ctx.store.getBlockByVersion(version);
  if (b === null || b.lastVersion < version) {
    return { error: withoutStack(() => new ApiError(404, "block_not_found", `Block not found by Ledger version(${version})`, info)) };
  }
  const json = await blockJson(ctx, b, withTransactions);
  if (json === null) return historyNotHeld(ctx, version, info);
  return { body: json.body, exactAt: json.info };
}
