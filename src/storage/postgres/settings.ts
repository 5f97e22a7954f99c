/**
 * Settings of the PostgreSQL backend. Each can be given as a query parameter of the `--db` URL
 * (removed before the URL reaches the driver) or as an option of `PostgresStore.connect`; an
 * option wins over the URL.
 *
 * | URL parameter       | option              | default | meaning                                          |
 * |---------------------|---------------------|---------|--------------------------------------------------|
 * | `pool_size`         | `poolSize`          | 10      | most pooled connections (transactions, writes,   |
 * |                     |                     |         | and reads when `read_connections` is 0)          |
 * | `read_connections`  | `readConnections`   | 2       | long-lived pipelined connections the reads are   |
 * |                     |                     |         | spread over (`pipelined.ts`); 0: reads on the pool |
 * | `statement_timeout` | `statementTimeoutMs`| 5000    | ms a statement may run (server side); the client |
 * |                     |                     |         | gives up 1 s later if the server stays silent    |
 * |                     |                     |         | (prune statements: PRUNE_STATEMENT_TIMEOUT_MS)   |
 * | `connect_timeout`   | `connectTimeoutMs`  | 3       | seconds to wait for a connection (URL: seconds,  |
 * |                     |                     |         | as libpq; option: ms); also bounds waiting for a |
 * |                     |                     |         | free pooled connection                           |
 * | `idle_timeout`      | `idleTimeoutMs`     | 30      | seconds an idle pooled connection is kept        |
 * | `prune_step_versions` | `pruneStepVersions` | 10000 | versions whose transactions and blocks one prune |
 * |                     |                     |         | step removes (rounded up to a block boundary)    |
 * | `prune_step_rows`   | `pruneStepRows`     | 20000   | state rows per table one prune step visits        |
 * | `partition_versions` | `partitionVersions` | 2^25  | versions a partition of `transactions` holds,     |
 * |                     |                     |         | used when the table is partitioned (a new         |
 * |                     |                     |         | database, or migration 7); null: the database's,  |
 * |                     |                     |         | or the default for a new one (`partitions.ts`)    |
 *
 * Every other parameter (`sslmode`, `application_name`, `options`, `host=/socket/dir`, …) is
 * passed to the driver (node-postgres) unchanged.
 */

export interface PostgresStoreOptions {
  poolSize?: number;
  readConnections?: number;
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
  idleTimeoutMs?: number;
  pruneStepVersions?: number;
  pruneStepRows?: number;
  partitionVersions?: number;
}

/** Every setting; `partitionVersions` null when not given (the database keeps the span it has). */
export type PostgresSettings = Required<Omit<PostgresStoreOptions, "partitionVersions">> & { partitionVersions: number | null };

export const DEFAULT_POSTGRES_SETTINGS: PostgresSettings = {
  poolSize: 10,
  readConnections: 2,
  statementTimeoutMs: 5_000,
  connectTimeoutMs: 3_000,
  idleTimeoutMs: 30_000,
  pruneStepVersions: 10_000,
  pruneStepRows: 20_000,
  partitionVersions: null,
};

/** URL parameter → [option, multiplier to ms (or 1 for counts), min, max]. */
const PARAMS: Record<string, [keyof PostgresSettings, number, number, number]> = {
  pool_size: ["poolSize", 1, 1, 10_000],
  read_connections: ["readConnections", 1, 0, 1_000],
  statement_timeout: ["statementTimeoutMs", 1, 1, 86_400_000],
  connect_timeout: ["connectTimeoutMs", 1000, 1, 3_600],
  idle_timeout: ["idleTimeoutMs", 1000, 1, 86_400],
  prune_step_versions: ["pruneStepVersions", 1, 1, 1_000_000_000],
  prune_step_rows: ["pruneStepRows", 1, 1, 1_000_000_000],
  // Far fewer versions a partition would make thousands of partitions, each one probed by every summaries read.
  partition_versions: ["partitionVersions", 1, 1_024, 1_000_000_000_000],
};

/** Each option's bounds: `PARAMS`' min as a count (1 for every time limit given in ms), and its max in the option's unit. */
const OPTION_BOUNDS = Object.fromEntries(Object.values(PARAMS).map(([key, scale, min, max]) => [key, [min, max * scale]])) as Record<
  keyof PostgresSettings,
  [number, number]
>;

/** Splits our settings off a `postgres://` URL; throws a message naming a bad value. */
export function parsePostgresUrl(
  url: string,
  opts: PostgresStoreOptions = {},
): { connectionString: string; settings: PostgresSettings } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`invalid PostgreSQL URL ${redactUrl(url)}`);
  }
  const settings: PostgresSettings = { ...DEFAULT_POSTGRES_SETTINGS };
  for (const [param, [key, scale, min, max]] of Object.entries(PARAMS)) {
    const raw = u.searchParams.get(param);
    if (raw === null) continue;
    u.searchParams.delete(param);
    if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new Error(`invalid ${param}=${JSON.stringify(raw)} in the PostgreSQL URL: give an integer from ${min} to ${max}`);
    }
    settings[key] = Number(raw) * scale;
  }
  for (const [key, value] of Object.entries(opts) as Array<[keyof PostgresSettings, number | undefined]>) {
    if (value === undefined) continue;
    const [min, max] = OPTION_BOUNDS[key];
    if (!Number.isInteger(value) || value < min || value > max) throw new Error(`invalid PostgreSQL option ${key}: ${value} (an integer from ${min} to ${max})`);
    settings[key] = value;
  }
  return { connectionString: u.toString(), settings };
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/i, "$1:***@");
}
