/**
 * Whether the database a standby's store listens on (`--primary`) is its primary
 * (docs/decisions.md §24): it must be a primary and hold the standby's ledger, the same chain and,
 * at the standby's newest version, the same transaction. Asked when the store connects (a wrong
 * one is refused there) and each time the listening session opens (the URL may come to name
 * another server). Only the ledger's own tables are read, so no privilege beyond the node's is
 * needed.
 */
import type pg from "pg";
import { toHex } from "../../ledger/address.js";
import { inRecovery } from "./migrations.js";

/** The standby's ledger where the check compares: its chain and newest version with its hash. */
interface StandbyHead {
  chainId: number;
  version: string;
  hash: Buffer;
}

/** The standby's head, or null for an empty ledger (nothing to compare). */
async function standbyHead(db: pg.Pool): Promise<StandbyHead | null> {
  const rows = (
    await db.query<{ chain_id: number; v: string | null; hash: Buffer | null }>(
      "SELECT l.chain_id, l.ledger_version::text AS v, t.hash FROM ledger l LEFT JOIN transactions t ON t.version = l.ledger_version",
    )
  ).rows;
  const r = rows[0];
  return r && r.v !== null && r.hash !== null ? { chainId: Number(r.chain_id), version: r.v, hash: r.hash } : null;
}

/**
 * Why `primary` is not the primary of the hot standby `standby`, or null when it is (or it cannot
 * tell: the standby is empty, or lags so far that the primary pruned the standby's newest version).
 * The standby's head is read first: its primary is at or past it.
 */
export async function primaryProblem(primary: pg.ClientBase, standby: pg.Pool): Promise<string | null> {
  const head = await standbyHead(standby);
  if (await inRecovery(primary)) return "it is a hot standby itself, not a primary";
  // Two statements: a statement naming a table that does not exist fails when it is parsed.
  if ((await primary.query<{ t: string | null }>("SELECT to_regclass('ledger')::text AS t")).rows[0]?.t == null) return "it holds no ledger";
  if (head === null) return null;
  const ledger = (
    await primary.query<{ chain_id: number; v: string | null; oldest: string | null; hash: Buffer | null }>(
      "SELECT l.chain_id, l.ledger_version::text AS v, l.oldest_version::text AS oldest, " +
        "(SELECT hash FROM transactions WHERE version = $1::numeric) AS hash FROM ledger l",
      [head.version],
    )
  ).rows[0];
  if (ledger === undefined || ledger.v === null) return `it holds an empty ledger, and this standby's reaches version ${head.version}`;
  if (Number(ledger.chain_id) !== head.chainId) return `it holds chain ${ledger.chain_id}, this standby chain ${head.chainId}`;
  if (BigInt(ledger.v) < BigInt(head.version)) return `its ledger ends at version ${ledger.v}, before this standby's ${head.version}`;
  if (ledger.hash === null) return ledger.oldest !== null && BigInt(ledger.oldest) > BigInt(head.version) ? null : `it holds no transaction at this standby's version ${head.version}`;
  if (!ledger.hash.equals(head.hash)) return `its transaction at version ${head.version} is ${toHex(ledger.hash)}, this standby's ${toHex(head.hash)}`;
  return null;
}
