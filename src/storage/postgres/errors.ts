/**
 * PostgreSQL failures as the storage contract's errors: a server that cannot be used right now is
 * a `StorageUnavailableError` (503 at the API edge; the pool reconnects on the next call).
 */
import pg from "pg";
import { RecoveryConflictError, StandbyWriteError, StorageUnavailableError } from "../contracts/errors.js";
import type { BlockWrite } from "../contracts/writer.js";

const { DatabaseError } = pg;

/**
 * True when `e` means the database could not be used right now rather than that the statement
 * was wrong: anything that is not a server error (refused, reset, timed out, terminated), and the
 * server's connection (08), resource (53) and operator-intervention (57: shutdown, starting up,
 * statement timeout) classes.
 */
export function isUnavailableError(e: unknown): boolean {
  if (e instanceof StorageUnavailableError) return true;
  if (e instanceof DatabaseError) return /^(08|53|57)/.test(e.code ?? "");
  return e instanceof Error && !(e instanceof TypeError) && !(e instanceof RangeError);
}

/** Whether a connection that failed with `e` must be discarded rather than returned to the pool (a statement timeout leaves it usable). */
export function breaksConnection(e: unknown): boolean {
  return isUnavailableError(e) && !(e instanceof DatabaseError && e.code === "57014");
}

/**
 * True when a hot standby cancelled the statement because it replayed a change under it ("conflict
 * with recovery"): a snapshot or lock conflict is SQLSTATE 40001, a buffer-pin deadlock with the
 * startup process 40P01. The reads are single statements in READ COMMITTED, which raise neither
 * on a primary.
 */
export function isRecoveryConflict(e: unknown): boolean {
  return e instanceof DatabaseError && (e.code === "40001" || e.code === "40P01");
}

/**
 * SQLSTATE 26000, a named statement the connection does not hold: on a pipelined connection, the
 * statements sent behind the first use of a name bind it before its Parse is answered, and fail
 * so when that Parse failed (node-postgres parses the name again on the next use).
 */
export function isMissingStatement(e: unknown): boolean {
  return e instanceof DatabaseError && e.code === "26000";
}

/**
 * SQLSTATE 0A000 on a named statement: "cached plan must not change result type", a migration
 * changed what the statement returns since the connection parsed it (`PreparedRead` parses it
 * again). The reads' statements raise no other feature-not-supported error.
 */
export function isChangedResultType(e: unknown): boolean {
  return e instanceof DatabaseError && e.code === "0A000";
}

/** SQLSTATE 25006: a write in a read-only transaction, as every write on a hot standby fails. */
function isReadOnlyRefusal(e: unknown): boolean {
  return e instanceof DatabaseError && e.code === "25006";
}

/**
 * `e` as the store throws it: unavailable when `isUnavailableError`, a recovery conflict or a
 * standby's refusal of a write typed as such, else as it is.
 */
export function storageError(e: unknown, what: string): Error {
  if (e instanceof StorageUnavailableError || e instanceof RecoveryConflictError || e instanceof StandbyWriteError) return e;
  if (isRecoveryConflict(e)) return new RecoveryConflictError(`the hot standby cancelled ${what} (conflict with recovery): ${(e as Error).message}`, { cause: e });
  if (isReadOnlyRefusal(e)) return new StandbyWriteError(`${what} cannot write: the database is read-only (a hot standby?): ${(e as Error).message}`, { cause: e });
  if (isUnavailableError(e)) {
    return new StorageUnavailableError(`PostgreSQL is unavailable (${what}): ${(e as Error).message}`, { cause: e });
  }
  return e instanceof Error ? e : new Error(String(e));
}

/** A failed commit naming its blocks and versions (an unavailable database stays unavailable). */
export function commitError(e: unknown, writes: ReadonlyArray<Pick<BlockWrite, "block">>): Error {
  const err = storageError(e, "commitBlock");
  if (err instanceof StorageUnavailableError || err instanceof StandbyWriteError) return err;
  const first = writes[0]!.block;
  const last = writes[writes.length - 1]!.block;
  const what = writes.length === 1 ? `block ${first.height}` : `blocks ${first.height}..${last.height}`;
  return new Error(`cannot commit ${what} (versions ${first.firstVersion}..${last.lastVersion}): ${err.message}`, { cause: e });
}
