/**
 * vitest global setup: one PostgreSQL cluster for the whole test run (starting one per test file
 * cost a second or two each), torn down when the run ends. Workers find it in `$LEDGER_NODE_TEST_PG`
 * (they inherit the environment); each test still gets a database of its own (`postgres.ts`).
 */
import { PgCluster, SHARED_PG_ENV } from "./postgres.js";

export default async function setup(): Promise<() => Promise<void>> {
  let cluster: PgCluster | null = null;
  try {
    // Files run in parallel on this one server, each with its own pools: room for several at once.
    cluster = await PgCluster.start(["max_connections=500"]);
    process.env[SHARED_PG_ENV] = JSON.stringify({ url: cluster.url() });
  } catch (e) {
    // Not thrown here, so tests without PostgreSQL still run; every PostgreSQL test fails with this.
    process.env[SHARED_PG_ENV] = JSON.stringify({ error: (e as Error).message });
  }
  return async () => {
    await cluster?.destroy();
  };
}
