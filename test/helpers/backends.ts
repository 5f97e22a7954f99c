/**
 * The storage backends every HTTP and store test runs against. Each gives a fresh, empty database
 * per call (`--db` value) and cleans up after the run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PG_MAJORS, type PgMajor, postgresBackend } from "./postgres.js";

export interface Backend {
  /** `postgres-<major>` on a PostgreSQL of that major (`postgres` on whichever a benchmark found). */
  name: "sqlite" | "postgres" | `postgres-${PgMajor}`;
  /** The store it opens (`Storage.kind`). */
  kind: "sqlite" | "postgres";
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
    kind: "sqlite",
    async newDb() {
      return join(dir, `ledger-${n++}.db`);
    },
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Factories of every backend the suites run on, PostgreSQL on one major (`DEFAULT_PG_MAJOR`).
 * PostgreSQL databases live on the test run's throwaway servers (see `postgres.ts`), which fail,
 * never skip, when they cannot start.
 */
export const backendFactories: Array<() => Backend> = [sqliteBackend, () => postgresBackend()];

/**
 * SQLite and PostgreSQL on every major of `PG_MAJORS`: for the suites where the majors may differ
 * (the store suite, `serve --workers`), so that a failure names the major it happened on.
 */
export const everyMajorBackendFactories: Array<() => Backend> = [sqliteBackend, ...PG_MAJORS.map((m) => () => postgresBackend(m))];
