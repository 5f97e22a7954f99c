/**
 * GET /v1/info — basic facts about this node (DECISIONS §14): a flat object with the chain id,
 * node type, software version, storage backend, pruning window and the ledger position.
 *
 * @example curl http://127.0.0.1:8080/v1/info
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { sendBody } from "../compression.js";
import { andThen, orNull } from "../context.js";
import { JSON_TYPE } from "../negotiate.js";
import type { LedgerInfo } from "../../ledger/types.js";
import type { RouteDef } from "../route.js";

export const getInfo: RouteDef = {
  method: "GET",
  url: "/v1/info",
  ledgerHeaders: false,
  schema: {
    operationId: "info",
    summary: "Show some basic info of the node.",
    description: "Shows basic information about the node: chain id, node type, software version, storage and pruning.",
    tags: ["General"],
    response: {
      200: {
        description: "Node information",
        content: { "application/json": { schema: { type: "object", additionalProperties: true } } },
      },
    },
  },
  handler: (ctx) => {
    // The body changes only when the ledger moves; the store hands out the same LedgerInfo until then.
    let last: { info: LedgerInfo; body: string } | null = null;
    return function getInfoHandler(req: FastifyRequest, reply: FastifyReply) {
      return andThen(orNull(() => ctx.store.getLedgerInfo()), (info) => {
        if (info && last?.info === info) return sendBody(ctx.config, req, reply, last.body, JSON_TYPE);
        return andThen(info ? info.chainId : orNull(() => ctx.store.getChainId()), (chainId) => {
          const text = infoJson(info, chainId);
          if (info) last = { info, body: text };
          return sendBody(ctx.config, req, reply, text, JSON_TYPE);
        });
      });
    };

    function infoJson(info: LedgerInfo | null, chainId: number | null): string {
      const body: Record<string, unknown> = {
        chain_id: chainId,
        node_type: "ledger-node",
        version: ctx.config.nodeVersion,
        storage: ctx.store.kind,
        prune_window: ctx.config.pruneWindow,
        ledger_version: info ? info.ledgerVersion.toString() : null,
        oldest_ledger_version: info ? info.oldestVersion.toString() : null,
        block_height: info ? info.blockHeight.toString() : null,
        oldest_block_height: info ? info.oldestBlockHeight.toString() : null,
        epoch: info ? info.epoch.toString() : null,
      };
      if (ctx.config.gitHash) body.git_hash = ctx.config.gitHash;
      return JSON.stringify(body);
    }
  },
};
