/** Starts a real node on a real port (127.0.0.1, ephemeral) over a real database. */
import { pruneNow } from "../../src/ingest/pruneToWindow.js";
import { parsePruneWindow } from "../../src/ledger/pruning.js";
import { startNode, type RunningNode, type ServeOptions } from "../../src/server.js";
import { openStore } from "../../src/storage/open.js";
import { type Backend, backendFactories } from "./backends.js";
import type { ChainBuilder } from "./chain.js";

export interface TestNode extends RunningNode {
  /** `http://127.0.0.1:PORT/v1` */
  base: string;
  /** The `--db` it serves. */
  db: string;
}

export async function startTestNode(db: string, o: Partial<ServeOptions> = {}): Promise<TestNode> {
  const node = await startNode({ db, host: "127.0.0.1", port: 0, pruneIntervalMs: 3_600_000, ...o });
  return Object.assign(node, { base: `${node.url}/v1`, db });
}

export { FIXTURES } from "./fixtures.js";

/** Imports `chain` into a fresh database of `backend` and serves it. */
export async function serveChain(backend: Backend, chain: ChainBuilder, o: Partial<ServeOptions> = {}): Promise<TestNode> {
  const db = await backend.newDb();
  await chain.importInto(db);
  return startTestNode(db, o);
}

/**
 * `chain` served once on every backend of `backendFactories` (SQLite, the reference, first), for
 * tests that compare their answers; `stop` is their afterAll.
 */
export async function serveOnEveryBackend(chain: ChainBuilder): Promise<{ nodes: TestNode[]; stop: () => Promise<void> }> {
  const backends = backendFactories.map((f) => f());
  const nodes: TestNode[] = [];
  const stop = async () => {
    for (const [i, b] of backends.entries()) await stopNode(nodes[i], b);
  };
  try {
    for (const b of backends) nodes.push(await serveChain(b, chain));
  } catch (e) {
    await stop();
    throw e;
  }
  return { nodes, stop };
}

/** afterAll of a suite: stops its node (if it started) and removes the backend's databases. */
export async function stopNode(node: TestNode | undefined, backend: Backend): Promise<void> {
  await node?.close();
  await backend.cleanup();
}

/**
 * Prunes what `node` serves to `window`, through a connection of its own: a SQLite node's writers
 * run on their own thread, and the connection it serves from only reads.
 */
export async function pruneServed(node: TestNode, window: string): Promise<Awaited<ReturnType<typeof pruneNow>>> {
  const store = await openStore(node.db);
  try {
    return await pruneNow(store, parsePruneWindow(window));
  } finally {
    await store.close();
  }
}
