import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Colocated tests that start a server (HTTP, PostgreSQL), a child process or a node are named
 * `*.integration.test.ts`; every other `src/**\/*.test.ts` is a unit test. `npm run test:unit` runs
 * the unit project alone, without a build; `npm test` builds and runs both projects, each file once.
 */
const INTEGRATION_IN_SRC = "src/**/*.integration.test.ts";

export default defineConfig({
  test: {
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
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["src/**/*.test.ts"],
          exclude: [...configDefaults.exclude, INTEGRATION_IN_SRC],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/**/*.test.ts", INTEGRATION_IN_SRC],
          // One throwaway PostgreSQL for the run (test/helpers/postgres.ts).
          globalSetup: ["test/helpers/postgresGlobalSetup.ts"],
        },
      },
    ],
  },
});
