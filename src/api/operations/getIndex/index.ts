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
import type { LedgerInfo } from "../../../ledger/types.js";
import { defineOperation } from "../../http/operation.js";

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

function indexOperation(url: "/v1" | "/v1/") {
  return defineOperation({
    operationId: url === "/v1" ? "get_ledger_info" : "get_ledger_info_slash",
    method: "GET",
    url,
    summary: "Get ledger info",
    description:
      "Get the latest ledger information, including data such as chain ID, role type, ledger versions, epoch, etc. " +
      "Served for the official Aptos SDKs (`getLedgerInfo`, `getChainId`); not part of the interface document.",
    tags: ["General"],
    hidden: true,
    formats: ["json"],
    response: {
      description: "The ledger position (IndexResponse)",
      json: {
        type: "object",
        required: ["chain_id", "epoch", "ledger_version", "oldest_ledger_version", "ledger_timestamp", "node_role", "oldest_block_height", "block_height"],
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
    errors: [500, 503],
    ledger: "latest",
    failure: "Failed to read the ledger",
    read:
      (ctx) =>
      (_input, { info }) => ({ json: indexResponse(info, ctx.config.gitHash) }),
  });
}

export const getIndex = indexOperation("/v1");
/** The same with a trailing slash (`/v1/`), as the reference node's own tests call it. */
export const getIndexSlash = indexOperation("/v1/");
