import pgModule from "pg";
import { describe, expect, it } from "vitest";
import { RecoveryConflictError, StorageUnavailableError } from "../contracts/errors.js";
import { NamedStatements, RECOVERY_CONFLICT_ATTEMPTS, type StatementSender } from "./connection.js";

const { DatabaseError } = pgModule;

/** A driver error with a SQLSTATE, as `pg` raises it. */
function sqlState(code: string, message: string): InstanceType<typeof DatabaseError> {
  const e = new DatabaseError(message, 0, "error");
  e.code = code;
  return e;
}

/** A sender whose statements fail with `failures` in turn, then answer one row. */
function poolFailing(failures: InstanceType<typeof DatabaseError>[]): { pool: StatementSender; calls: () => number } {
  let calls = 0;
  const pool: StatementSender = {
    send: (_read, done) => {
      const n = ++calls;
      const e = failures[n - 1];
      setImmediate(() => (e ? done(e) : done(null, [{ answer: n }])));
    },
  };
  return { pool, calls: () => calls };
}

const conflict = () => sqlState("40001", "canceling statement due to conflict with recovery");

describe("NamedStatements on a hot standby", () => {
  it("sends a statement cancelled for a recovery conflict again, each attempt a new query", async () => {
    const { pool, calls } = poolFailing([conflict(), sqlState("40P01", "deadlock with recovery"), conflict()]);
    await expect(new NamedStatements(pool).rows("ledger", [])).resolves.toEqual([{ answer: 4 }]);
    expect(calls()).toBe(4);
  });

  it("gives up after a bounded number of attempts with a RecoveryConflictError, the API's 503", async () => {
    const { pool, calls } = poolFailing(Array.from({ length: RECOVERY_CONFLICT_ATTEMPTS + 1 }, conflict));
    const failed = new NamedStatements(pool).tuples("ledger", []);
    await expect(failed).rejects.toBeInstanceOf(RecoveryConflictError);
    await expect(failed).rejects.toThrow(`ledger (${RECOVERY_CONFLICT_ATTEMPTS} attempts)`);
    expect(calls()).toBe(RECOVERY_CONFLICT_ATTEMPTS);
  });

  it("sends a statement bound behind a failed Parse of its name again (SQLSTATE 26000)", async () => {
    const { pool, calls } = poolFailing([sqlState("26000", 'prepared statement "ln_ledger" does not exist')]);
    await expect(new NamedStatements(pool).tuples("ledger", [])).resolves.toEqual([{ answer: 2 }]);
    expect(calls()).toBe(2);
  });

  it("sends a statement whose result type a migration changed again (SQLSTATE 0A000): the retry parses it anew", async () => {
    const { pool, calls } = poolFailing([sqlState("0A000", "cached plan must not change result type")]);
    await expect(new NamedStatements(pool).tuples("ledger", [])).resolves.toEqual([{ answer: 2 }]);
    expect(calls()).toBe(2);
  });

  it("does not retry any other failure", async () => {
    const { pool, calls } = poolFailing([sqlState("57P01", "terminating connection due to administrator command")]);
    await expect(new NamedStatements(pool).rows("ledger", [])).rejects.toBeInstanceOf(StorageUnavailableError);
    expect(calls()).toBe(1);
  });
});
