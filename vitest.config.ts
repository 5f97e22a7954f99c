import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // One throwaway PostgreSQL for the run (test/helpers/postgres.ts).
    globalSetup: ["test/helpers/postgresGlobalSetup.ts"],
    reporters: ["default"],
  },
});
