/**
 * The storage backends every HTTP and store test runs against. Each gives a fresh, empty database
 * per call (`--db` value) and cleans up after the run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresBackend } from "./postgres.js";

export interface Backend {
  name: "sqlite" | "postgres";
  /** A new empty database; returns its `--db` value. */
  newDb(): Promise<string>;
  /** Removes everything this backend created (call in afterAll). */
  cleanup(): Promise<void>;
}

export function sqliteBackend(): Backend {
  const dir = mkdtempSync(join(tmpdir(), "ledger-node-test-"));
  let n = 0;
  return {
    name: "sqlite",
    async newDb() {
      return join(dir, `ledger-${n++}.db`);
    },
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Factories of every backend the suites run on. PostgreSQL databases live on the test run's
 * throwaway server (see `postgres.ts`), which fails, never skips, when it cannot start.
 */
export const backendFactories: Array<() => Backend> = [sqliteBackend, postgresBackend];
