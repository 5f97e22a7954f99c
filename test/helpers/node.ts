/** Starts a real node on a real port (127.0.0.1, ephemeral) over a real database. */
import { startNode, type RunningNode, type ServeOptions } from "../../src/server.js";

export interface TestNode extends RunningNode {
  /** `http://127.0.0.1:PORT/v1` */
  base: string;
}

export async function startTestNode(db: string, o: Partial<ServeOptions> = {}): Promise<TestNode> {
  const node = await startNode({ db, host: "127.0.0.1", port: 0, pruneIntervalMs: 3_600_000, ...o });
  return Object.assign(node, { base: `${node.url}/v1` });
}

export const FIXTURES = new URL("../../../shared/fixtures/", import.meta.url).pathname;
