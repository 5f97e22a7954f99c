/**
 * GET /v1/info — basic facts about this node (DECISIONS §14): a flat object with the chain id,
 * node type, software version, storage backend, pruning window and the ledger position. An empty
 * ledger answers too, with nulls for the position.
 *
 * @example curl http://127.0.0.1:8080/v1/info
 */
import type { LedgerInfo } from "../../ledger/types.js";
import { defineOperation } from "../operation.js";

export const getInfo = defineOperation({
  operationId: "info",
  method: "GET",
  url: "/v1/info",
  summary: "Show some basic info of the node.",
  description: "Shows basic information about the node: chain id, node type, software version, storage and pruning.",
  tags: ["General"],
  formats: ["json"],
  response: { description: "Node information", json: { type: "object", additionalProperties: true } },
  errors: [],
  // Its own terms: an unreadable or empty ledger is shown as nulls, not answered 503.
  ledger: "none",
  failure: "Failed to read the ledger",
  handler: (ctx) => {
    // The body changes only when the ledger moves.
    let last: { version: bigint; oldest: bigint; body: string } | null = null;
    return async function getInfo() {
      const info = await orNull(() => ctx.store.getLedgerInfo());
      if (info && last && last.version === info.ledgerVersion && last.oldest === info.oldestVersion) return { body: last.body };
      const chainId = info ? info.chainId : await orNull(() => ctx.store.getChainId());
      const body = infoJson(info, chainId);
      if (info) last = { version: info.ledgerVersion, oldest: info.oldestVersion, body };
      return { body };
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
});

/** The store's answer, or null when it fails: /v1/info answers without it. */
async function orNull<T>(read: () => Promise<T | null> | T | null): Promise<T | null> {
  try {
    return await read();
  } catch {
    return null;
  }
}
