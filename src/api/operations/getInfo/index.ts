/**
 * GET /v1/info — basic facts about this node (docs/decisions.md §15): a flat object with the chain id,
 * node type, software version, storage backend, pruning window and the ledger position. An empty
 * ledger answers too, with nulls for the position.
 *
 * @example curl http://127.0.0.1:8080/v1/info
 */
import type { LedgerInfo } from "../../../ledger/types.js";
import type { FollowLagReport, StandbyReads } from "../../../storage/contracts/reader.js";
import type { LedgerReader } from "../../../storage/contracts/reader.js";
import { defineOperation, type Answer } from "../../http/operation.js";

const u64 = { type: "string", format: "uint64" } as const;

export const getInfo = defineOperation({
  operationId: "info",
  method: "GET",
  url: "/v1/info",
  summary: "Show some basic info of the node.",
  description: "Shows basic information about the node: chain id, node type, software version, storage and pruning.",
  tags: ["General"],
  formats: ["json"],
  response: {
    description: "Node information",
    json: {
      type: "object",
      required: ["chain_id", "node_type", "version", "storage", "prune_window", "ledger_version", "oldest_ledger_version", "block_height", "oldest_block_height", "epoch"],
      properties: {
        chain_id: { type: "integer", format: "uint8", nullable: true },
        node_type: { type: "string" },
        version: { type: "string" },
        storage: { type: "string", enum: ["sqlite", "postgres"] },
        prune_window: { type: "string", description: "The pruning window as configured" },
        ledger_version: { ...u64, nullable: true },
        oldest_ledger_version: { ...u64, nullable: true },
        block_height: { ...u64, nullable: true },
        oldest_block_height: { ...u64, nullable: true },
        epoch: { ...u64, nullable: true },
        git_hash: { type: "string" },
        follow_lag_versions: { ...u64, description: "Only when following a chain (serve --follow): versions behind the upstream's head" },
        follow_lag_seconds: { type: "number", description: "Only when following a chain: seconds of chain time behind the upstream's head" },
        standby_replay_lag_seconds: {
          type: "number",
          nullable: true,
          description:
            "Only when the database is a PostgreSQL hot standby: seconds its replay is behind the primary (0 when it has replayed all it received; null when it cannot be read). Its ledger_version is the one it has replayed.",
        },
      },
    },
  },
  errors: [],
  // An unreadable or empty ledger is shown as nulls, not answered 503.
  ledger: "latest-or-empty",
  failure: "Failed to read the ledger",
  read: (ctx) => {
    // The same answer while the ledger has not moved: built once per block.
    let last: { version: bigint; oldest: bigint; answer: Answer } | null = null;
    const standby = ctx.store.standby;
    return function getInfo(_input, { info }): Answer | Promise<Answer> {
      // A follower's lag moves while the ledger stands still: never the kept answer then.
      const lag = ctx.store.followLag?.() ?? null;
      // On a standby the replay lag is asked with each answer (one statement; a primary never asks).
      if (standby) return answerWithReplayLag(standby, info, lag);
      if (!lag && info && last?.version === info.ledgerVersion && last.oldest === info.oldestVersion) return last.answer;
      if (!info) return chainIdOrNull(ctx.store).then((chainId) => ({ json: withLag(infoJson(null, chainId), lag) }));
      const answer = { json: withLag(infoJson(info, info.chainId), lag) };
      if (!lag) last = { version: info.ledgerVersion, oldest: info.oldestVersion, answer };
      return answer;
    };

    async function answerWithReplayLag(s: StandbyReads, info: LedgerInfo | null, lag: FollowLagReport | null): Promise<Answer> {
      const [chainId, seconds] = await Promise.all([info ? info.chainId : chainIdOrNull(ctx.store), s.replayLagSeconds().catch(() => null)]);
      const json = withLag(infoJson(info, chainId), lag);
      json.standby_replay_lag_seconds = seconds;
      return { json };
    }

    function withLag(json: Record<string, unknown>, lag: { versions: bigint; seconds: number } | null): Record<string, unknown> {
      if (lag) {
        json.follow_lag_versions = lag.versions.toString();
        json.follow_lag_seconds = lag.seconds;
      }
      return json;
    }

    function infoJson(info: LedgerInfo | null, chainId: number | null): Record<string, unknown> {
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
      return body;
    }
  },
});

/** The stored chain id, or null when there is none or it cannot be read: /v1/info answers without it. */
async function chainIdOrNull(store: LedgerReader): Promise<number | null> {
  try {
    return await store.getChainId();
  } catch {
    return null;
  }
}
