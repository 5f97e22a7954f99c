/**
 * Runs the node: the API over a store, an optional devnet feeding the same store, and a pruner
 * that keeps the ledger inside its window. Used by `ledger-node serve` and by the tests.
 */
import type { FastifyInstance } from "fastify";
import { readFileSync } from "node:fs";
import { buildApp } from "./api/app.js";
import type { ApiConfig } from "./api/config.js";
import { Devnet, type DevnetOptions } from "./ingest/devnet.js";
import { formatPruneWindow, parsePruneWindow, pruneNow } from "./ledger/pruning.js";
import type { LedgerStore } from "./storage/LedgerStore.js";
import { openStore } from "./storage/open.js";

export interface ServeOptions {
  db: string;
  host: string;
  port: number;
  aptosHeaders?: boolean;
  /** Pruning window (versions or duration); default 90000000, or 2000 with a devnet. */
  pruneWindow?: string;
  pruneIntervalMs?: number;
  devnet?: boolean | Partial<DevnetOptions>;
  chainId?: number;
  logger?: boolean | object;
  api?: Partial<ApiConfig>;
}

export interface RunningNode {
  app: FastifyInstance;
  store: LedgerStore;
  url: string;
  devnet: Devnet | null;
  close(): Promise<void>;
}

export const PACKAGE_VERSION: string = (() => {
  try {
    return JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version as string;
  } catch {
    return "0.0.0";
  }
})();

export async function startNode(o: ServeOptions): Promise<RunningNode> {
  const windowText = o.pruneWindow ?? (o.devnet ? "2000" : "90000000");
  const window = parsePruneWindow(windowText);
  const store = await openStore(o.db);
  let devnet: Devnet | null = null;
  if (o.devnet) {
    devnet = await Devnet.open(store, { chainId: o.chainId ?? 4, ...(typeof o.devnet === "object" ? o.devnet : {}) });
  }
  const { app } = await buildApp({
    store,
    logger: o.logger ?? false,
    config: {
      aptosHeaders: o.aptosHeaders ?? false,
      pruneWindow: formatPruneWindow(window),
      nodeVersion: PACKAGE_VERSION,
      gitHash: process.env.LEDGER_NODE_GIT_HASH ?? null,
      ...o.api,
    },
  });
  const address = await app.listen({ host: o.host, port: o.port });
  devnet?.start();
  let pruning = false;
  const pruner = setInterval(() => {
    if (pruning) return;
    pruning = true;
    pruneNow(store, window)
      .then((r) => r && app.log.info({ prune: { ...r, oldestVersion: String(r.oldestVersion), oldestBlockHeight: String(r.oldestBlockHeight) } }, "pruned"))
      .catch((e) => app.log.error({ err: e }, "pruning failed"))
      .finally(() => (pruning = false));
  }, o.pruneIntervalMs ?? 10_000);
  pruner.unref();
  return {
    app,
    store,
    url: address,
    devnet,
    async close() {
      clearInterval(pruner);
      await devnet?.stop();
      await app.close();
      await store.close();
    },
  };
}
