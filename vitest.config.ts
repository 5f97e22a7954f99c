import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Files share their worker's module cache instead of importing src/ afresh in a new process
    // each (most of the run's time went to that), and a 2-core machine runs two workers instead
    // of vitest's default of one: most files wait on sockets, child processes and PostgreSQL.
    // Tests restore what they change (fake clocks, environment), and every node they start is
    // closed in their afterAll.
    isolate: false,
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // One throwaway PostgreSQL for the run (test/helpers/postgres.ts).
    globalSetup: ["test/helpers/postgresGlobalSetup.ts"],
    reporters: ["default"],
  },
});
