/**
 * vitest global setup: one PostgreSQL cluster a major of `PG_MAJORS` for the whole test run
 * (starting one per test file cost a second or two each), torn down when the run ends. Workers find
 * them in `$LEDGER_NODE_TEST_PG` (they inherit the environment); each test still gets a database of
 * its own (`postgres.ts`).
 */
import { findPostgresBin, PG_MAJORS, PgCluster, type PgMajor, SHARED_PG_ENV, type SharedCluster } from "./postgres.js";

export default async function setup(): Promise<() => Promise<void>> {
  const started = await Promise.allSettled(
    // Files run in parallel on these servers, each with its own pools: room for several at once.
    PG_MAJORS.map(async (major) => PgCluster.start(["max_connections=500"], findPostgresBin(major))),
  );
  const shared: Partial<Record<PgMajor, SharedCluster>> = {};
  const clusters: PgCluster[] = [];
  for (const [i, major] of PG_MAJORS.entries()) {
    const r = started[i]!;
    if (r.status === "fulfilled") {
      clusters.push(r.value);
      shared[major] = { url: r.value.url() };
    } else {
      // Not thrown here, so tests without PostgreSQL still run; every test on this major fails with this.
      shared[major] = { error: (r.reason as Error).message };
    }
  }
  process.env[SHARED_PG_ENV] = JSON.stringify(shared);
  return async () => {
    await Promise.all(clusters.map((c) => c.destroy()));
  };
}
