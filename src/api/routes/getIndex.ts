/**
 * GET /v1 (and /v1/) — the ledger position, in the reference node's `IndexResponse` shape. It is
 * not one of the six operations of the interface document (so it is hidden from `/v1/spec`), but
 * every official Aptos SDK calls it for `getLedgerInfo` / `getChainId`, and so do tools built on
 * them (typemove), so a compatible node must answer it.
 *
 * - `chain_id` is a JSON number; every counter is a decimal u64 string.
 * - `node_role` is always `"full_node"`: this node serves reads and never validates.
 * - `git_hash` is the build's git hash (`LEDGER_NODE_GIT_HASH`), `""` when unknown, as the
 *   reference node's tests show; `encryption_key` is always `null`.
 * - An empty or unreadable ledger answers 503.
 *
 * JSON only (BCS of `IndexResponse` is not offered); the ledger headers are sent as on every data
 * operation.
 *
 * @example curl http://127.0.0.1:8080/v1
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { LedgerInfo } from "../../ledger/types.js";
import type { NodeContext } from "../context.js";
import { sendBody } from "../compression.js";
import { ledgerHeaderSchemas } from "../headers.js";
import { JSON_TYPE } from "../negotiate.js";
import { errorResponses, type RouteDef } from "../route.js";

/** The reference node's role names are `validator` and `full_node`; this node is the latter. */
export const NODE_ROLE = "full_node";

/** `IndexResponse` of the reference node. */
export interface GetIndexResponse {
  chain_id: number;
  epoch: string;
  ledger_version: string;
  oldest_ledger_version: string;
  ledger_timestamp: string;
  node_role: typeof NODE_ROLE;
  oldest_block_height: string;
  block_height: string;
  git_hash: string;
  encryption_key: null;
}

export function indexResponse(info: LedgerInfo, gitHash: string | null): GetIndexResponse {
  return {
    chain_id: info.chainId,
    epoch: info.epoch.toString(),
    ledger_version: info.ledgerVersion.toString(),
    oldest_ledger_version: info.oldestVersion.toString(),
    ledger_timestamp: info.timestampUsec.toString(),
    node_role: NODE_ROLE,
    oldest_block_height: info.oldestBlockHeight.toString(),
    block_height: info.blockHeight.toString(),
    git_hash: gitHash ?? "",
    encryption_key: null,
  };
}

const u64 = { type: "string", format: "uint64" } as const;

function indexRoute(url: "/v1" | "/v1/"): RouteDef {
  return {
    method: "GET",
    url,
    ledgerHeaders: true,
    schema: {
      operationId: url === "/v1" ? "get_ledger_info" : "get_ledger_info_slash",
      summary: "Get ledger info",
      description:
        "Get the latest ledger information, including data such as chain ID, role type, ledger versions, epoch, etc. " +
        "Served for the official Aptos SDKs (`getLedgerInfo`, `getChainId`); not part of the interface document.",
      tags: ["General"],
      hide: true,
      response: {
        200: {
          description: "The ledger position (IndexResponse)",
          headers: ledgerHeaderSchemas(false),
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: [
                  "chain_id",
                  "epoch",
                  "ledger_version",
                  "oldest_ledger_version",
                  "ledger_timestamp",
                  "node_role",
                  "oldest_block_height",
                  "block_height",
                ],
                properties: {
                  chain_id: { type: "integer", format: "uint8" },
                  epoch: u64,
                  ledger_version: u64,
                  oldest_ledger_version: u64,
                  ledger_timestamp: u64,
                  node_role: { type: "string", enum: ["validator", "full_node"] },
                  oldest_block_height: u64,
                  block_height: u64,
                  git_hash: { type: "string" },
                  encryption_key: { type: "string", nullable: true },
                },
              },
            },
          },
        },
        ...errorResponses([500, 503]),
      },
    } as RouteDef["schema"],
    handler: (ctx: NodeContext) =>
      async function getIndexHandler(req: FastifyRequest, reply: FastifyReply) {
        // 1. validate: no parameters; JSON only
        // 2. resolve: the latest ledger (503 when empty or unreadable)
        const info = await ctx.ledger();
        // 3. read: the ledger position is all there is
        const body = indexResponse(info, ctx.config.gitHash);
        // 4. encode
        reply.headers(ctx.headers.ledger(info));
        return sendBody(ctx.config, req, reply, JSON.stringify(body), JSON_TYPE);
      },
  };
}

export const getIndex: RouteDef = indexRoute("/v1");
/** The same with a trailing slash (`/v1/`), as the reference node's own tests call it. */
export const getIndexSlash: RouteDef = indexRoute("/v1/");
