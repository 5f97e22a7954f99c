/**
 * GET /v1/blocks/by_height/{block_height} — a block by its height: its hash, timestamp and
 * versions, and with `with_transactions=true` its transactions as the node they were ingested from
 * printed them (docs/decisions.md §20). A height past the ledger is 404 `block_not_found`; if the
 * block has been pruned, the server responds with a 410 `block_pruned`.
 *
 * @example curl 'http://127.0.0.1:8080/v1/blocks/by_height/1?with_transactions=true'
 */
import type { LedgerInfo } from "../../../ledger/types.js";
import type { NodeContext } from "../../context.js";
import type { WireFormat } from "../../http/negotiate.js";
import { defineOperation, ref, u64Param, type Answer } from "../../http/operation.js";
import { block } from "../../schemas.js";
import { blockJson, blockNotFoundByHeight, blockPruned, transactionBcsNotHeld } from "../history.js";

/** The query of a block read: whether its transactions come with it. */
const blockQuery = {
  type: "object",
  properties: {
    with_transactions: {
      type: "boolean",
      description: "If set to true, include all transactions in the block. If not provided, no transactions will be retrieved",
    },
  },
} as const;

/** What the two block operations share: the query, the formats, the answer and its errors, the latest ledger. */
export const blockOperation = {
  tags: ["Blocks"],
  query: blockQuery,
  formats: ["json", "bcs"],
  response: { description: "The block", json: ref(block) },
  errors: [400, 404, 406, 410, 500, 503],
  ledger: "latest",
} as const;

export const getBlockByHeight = defineOperation({
  ...blockOperation,
  operationId: "get_block_by_height",
  method: "GET",
  url: "/v1/blocks/by_height/:block_height",
  summary: "Get blocks by height",
  description:
    "This endpoint allows you to get the transactions in a block and the corresponding block information. " +
    "Transactions are limited by max default transactions size. If not all transactions are present, the user will need to query for the rest of the transactions via the get transactions API. " +
    "JSON only: BCS is answered 406 (this node holds transactions as JSON). If the block is pruned, it will return a 410",
  params: {
    type: "object",
    required: ["block_height"],
    properties: { block_height: u64Param("Block height to lookup. Starts at 0") },
  } as const,
  failure: ({ params }) => `Failed to get block by height ${params.block_height}`,
  read:
    (ctx) =>
    ({ params, query }, at, format) =>
      readBlockByHeight(ctx, params.block_height, query.with_transactions === true, at.info, format),
});

async function readBlockByHeight(ctx: NodeContext, height: bigint, withTransactions: boolean, info: LedgerInfo, format: WireFormat): Promise<Answer> {
  if (format === "bcs") return { error: transactionBcsNotHeld(info) };
  if (height > info.blockHeight) return { error: blockNotFoundByHeight(height, info) };
  const pruned = (): Answer => (ctx.upstream !== null ? { upstream: true } : { error: blockPruned(height, info) });
  if (height < info.oldestBlockHeight) return pruned();
  const b = await ctx.store.getBlockByHeight(height);
  if (b === null) return pruned();
  const json = await blockJson(ctx, b, withTransactions);
  if (json === null) return pruned();
  return { body: json.body, exactAt: json.info };
}
