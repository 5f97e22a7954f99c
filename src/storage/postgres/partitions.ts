/**
 * The `transactions` table in version ranges of a fixed span (migration 7): partition n, table
 * `transactions_<n>`, holds versions [n·span, (n+1)·span). The history (`transaction_history`,
 * migration 9) is partitioned alike, by a chunk's first version: `transaction_history_<n>`, and
 * so are the events (`events`, migration 11) by their transaction's version: `events_<n>`. The
 * span is the database's own, in `transaction_partitions` (set once, when the table is
 * partitioned: `partition_versions`, or the default below). A prune drops the partitions wholly
 * below the oldest version (their files removed, almost no WAL) instead of deleting their rows
 * one by one; the writer creates the partitions a block's versions need in the same transaction
 * as the block. Readers query the parents and see none of this.
 */
import type pg from "pg";
import type { PoolClient } from "pg";

/**
 * Versions a partition holds in a new or migrated database unless `partition_versions` says
 * otherwise (2^25): the default prune window (90,000,000 versions) spans 3 or 4 of them, since
 * every partition kept costs each summaries read a probe of its index.
 */
export const DEFAULT_TRANSACTION_PARTITION_VERSIONS = 33_554_432;

/**
 * The session setting migration 7 reads its span from (`current_setting`): set in the migration's
 * transaction, since a migration is one SQL text without parameters.
 */
export const PARTITION_VERSIONS_SETTING = "ledger_node.partition_versions";

/** Transaction advisory lock held while creating partitions ("ledgerpt"): writers take turns. */
const PARTITION_LOCK = BigInt("0x6c65646765727074").toString();

/** The tables partitioned by version with the same span: partition n of each holds the same versions. */
export const PARTITIONED_TABLES = ["transactions", "transaction_history", "events"] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** The partition holding `version`. */
export const partitionOf = (version: bigint, span: bigint): bigint => version / span;

/** The name of partition `n` of `table`. */
export const partitionName = (n: bigint, table: PartitionedTable = "transactions"): string => `${table}_${n}`;

/** The DDL creating partition `n` of `table` unless it exists. */
export const createPartitionSql = (n: bigint, span: bigint, table: PartitionedTable = "transactions"): string =>
  `CREATE TABLE IF NOT EXISTS ${partitionName(n, table)} PARTITION OF ${table} FOR VALUES FROM (${n * span}) TO (${(n + 1n) * span})`;

/** The database's partition span. */
export async function partitionSpan(c: PoolClient | pg.Pool): Promise<bigint> {
  const r = await c.query<{ versions: string }>("SELECT versions FROM transaction_partitions WHERE id = 1");
  return BigInt(r.rows[0]!.versions);
}

/** The numbers of the partitions of `table` that exist, ascending. */
export async function existingPartitions(c: PoolClient, table: PartitionedTable = "transactions"): Promise<bigint[]> {
  const r = await c.query<{ name: string }>(
    "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass",
    [table],
  );
  const named = new RegExp(`^${table}_(\\d+)$`);
  return r.rows
    .map((row) => named.exec(row.name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(BigInt)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * What a writer knows of the partitions: versions below `coveredTo` have one (partitions are only
 * ever dropped below the oldest version, never where blocks are written). A commit whose versions
 * reach past it creates the missing ones first, in its own transaction (DDL is transactional: a
 * commit that fails leaves no partition behind), and the bound moves once it committed.
 */
export class TransactionPartitions {
  private coveredTo = 0n;

  /** Whether versions up to `lastVersion` are known to have their partitions. */
  covers(lastVersion: bigint): boolean {
    return lastVersion < this.coveredTo;
  }

  /** In the commit's transaction: the partitions of versions [first, last], of every partitioned table; gives the bound to `committed` after. */
  async create(c: PoolClient, firstVersion: bigint, lastVersion: bigint): Promise<bigint> {
    await c.query("SELECT pg_advisory_xact_lock($1::bigint)", [PARTITION_LOCK]);
    const span = await partitionSpan(c);
    const last = partitionOf(lastVersion, span);
    for (let n = partitionOf(firstVersion, span); n <= last; n++) {
      for (const table of PARTITIONED_TABLES) await c.query(createPartitionSql(n, span, table));
    }
    return (last + 1n) * span;
  }

  /** The bound `create` gave, once its transaction committed. */
  committed(coveredTo: bigint): void {
    if (coveredTo > this.coveredTo) this.coveredTo = coveredTo;
  }
}
