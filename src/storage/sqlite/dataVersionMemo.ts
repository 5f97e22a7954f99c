/**
 * The SQLite store's staleness rule over the shared memo (`../common/answerMemo.ts`): answers are kept while
 * `PRAGMA data_version` is unchanged (it moves when another connection or process commits; this
 * connection's own commits and prunes clear the memo). While nothing changed, the same statement
 * would give the same answer, and the PRAGMA costs less than the statement and its WAL read lock.
 * Within `memoLagMs` of the last check, a held answer is served without checking.
 *
 * Only reads at the newest version are memoized: those are what many clients ask again and again.
 * A read at an explicit version is one statement without it, as random versions are rarely asked
 * twice. An empty ledger's null answers are not kept.
 */
import type { Statement } from "better-sqlite3";
import { AnswerMemo } from "../common/answerMemo.js";
import type { ReadTurns } from "./readTransactions.js";

export class DataVersionMemo {
  private readonly answers = new AnswerMemo<object>();
  private dataVersion = -1;
  /** Until when (performance.now()) the memo is served without asking; see `memoLagMs`. */
  private trustedUntil = -Infinity;

  constructor(
    private readonly lagMs: number,
    private readonly dataVersionStatement: Statement<[], number>,
    private readonly turns: ReadTurns,
  ) {}

  /**
   * `read()`'s result, from the memo when the database has not changed since it was read. Within
   * `lagMs` of the last check, a key the memo holds is answered without checking. `valueBytes`
   * is what the value holds besides its fixed overhead (a table item's bytes).
   */
  read<T extends object>(key: string, read: () => T | null, valueBytes?: (v: T) => number, fresh = false): T | null {
    if (this.lagMs > 0) {
      const now = performance.now();
      if (!fresh && now < this.trustedUntil) {
        const hit = this.answers.get(key);
        if (hit !== undefined) return hit as T;
      }
      this.trustedUntil = now + this.lagMs;
    }
    // A held key costs the version check alone; a key the memo does not hold is read with the
    // check in the same read transaction, so a miss takes one read lock, not two.
    const turns = this.turns;
    if (turns.perTurn) {
      // A fresh read sees every commit so far: not this turn's snapshot, a new one.
      if (fresh) turns.closeTurn();
      turns.openTurn();
    }
    const held = this.answers.get(key);
    if (held !== undefined && this.dataVersionStatement.get() === this.dataVersion) return held as T;
    return turns.readTx(() => {
      const dataVersion = this.dataVersionStatement.get()!;
      if (dataVersion !== this.dataVersion) {
        this.answers.clear();
        this.dataVersion = dataVersion;
      }
      const value = read();
      if (value !== null) this.answers.remember(key, value, valueBytes ? valueBytes(value) : 0);
      return value;
    });
  }

  /** Forgets every answer: after a write through this connection. */
  clear(): void {
    this.answers.clear();
  }
}
