import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Files share their worker's module cache instead of importing src/ afresh in a new process
    // each (about 1.5 s of transform and import per file, most of the run's time), and a 2-core
    // machine runs two workers instead of vitest's default of one (cores - 1); most files wait on
    // sockets, child processes and PostgreSQL. Measured on 2 shared cores, whole suite:
    // isolated, 1 worker 162 s; 3 workers 134 s; not isolated, 2 workers 86 s, 3 workers 103 s.
    // Tests restore what they change (fake clocks, environment), and every node they start is
    // closed in their afterAll.
    isolate: false,
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // One throwaway PostgreSQL for the run (test/helpers/postgres.ts).
    globalSetup: ["test/helpers/postgresGlobalSetup.ts"],
    reporters: ["default"],
  },
});
