/**
 * Seeds for every randomised test: `TEST_SEED=n` repeats a run, otherwise each test's fixed default
 * applies. Tests put the seed in their name (so a failure's report shows it) and pass it to
 * fast-check (`seed`, which prints it with the counterexample) or use `prng(seed)` instead of
 * Math.random.
 */

/** The seed of this run: `$TEST_SEED` when set, else `fallback`. */
export function testSeed(fallback: number): number {
  const env = process.env.TEST_SEED;
  if (env === undefined || env === "") return fallback;
  const n = Number(env);
  if (!Number.isSafeInteger(n)) throw new Error(`TEST_SEED must be an integer, got ${JSON.stringify(env)}`);
  return n;
}

/** A seeded PRNG (mulberry32): the same sequence of floats in [0, 1) for the same seed; the devnet's own. */
export { prng } from "../../src/ingest/devnet/chain.js";
