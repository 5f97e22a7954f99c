/**
 * SQLite's read transactions. Each read runs in one (one WAL read lock, one snapshot); with
 * `readsPerTurn` on a read-only connection the reads of one event-loop turn share one, ended on
 * the next turn (`setImmediate`): the lock's system calls are paid once for the requests a turn
 * serves, and the ledger row is read once a turn for the pages that need it.
 */
import type { Database as Db, Statement } from "better-sqlite3";
import type { LedgerInfo } from "../../ledger/types.js";

export class ReadTurns {
  /** Runs reads in one read transaction: this turn's with `readsPerTurn`, else one of their own. */
  readonly readTx: <T>(read: () => T) => T;
  /** Whether this turn's read transaction is open (`readsPerTurn`). */
  private turnOpen = false;
  /**
   * The ledger row as this turn's snapshot has it, once a page read it (`readsPerTurn`; undefined:
   * not read in this turn). The snapshot does not move within a turn, so neither does the row.
   */
  private turnLedger: LedgerInfo | null | undefined = undefined;
  private readonly beginTurn: Statement;
  private readonly endTurn: Statement;

  constructor(
    private readonly db: Db,
    /** `SqliteStoreOptions.readsPerTurn`, on a read-only connection only. */
    readonly perTurn: boolean,
    private readonly readLedgerInfo: () => LedgerInfo | null,
  ) {
    const readTx = db.transaction((read: () => unknown) => read());
    this.beginTurn = db.prepare("BEGIN");
    this.endTurn = db.prepare("COMMIT");
    this.readTx = perTurn
      ? <T>(read: () => T): T => {
          this.openTurn();
          return read();
        }
      : <T>(read: () => T): T => readTx(read) as T;
  }

  /** One statement's read: in this turn's read transaction with `readsPerTurn`, else on its own. */
  inTurn<T>(read: () => T): T {
    if (this.perTurn) this.openTurn();
    return read();
  }

  /** Opens this turn's read transaction (`readsPerTurn`) unless it is open; ended on the next turn. */
  openTurn(): void {
    if (this.turnOpen) return;
    // (A transaction left open, if a COMMIT below ever failed, is adopted as this turn's.)
    if (!this.db.inTransaction) this.beginTurn.run();
    this.turnOpen = true;
    setImmediate(this.closeTurn);
  }

  /** Ends this turn's read transaction, if open. A failed read may have ended it already (SQLite rolls back on some errors). */
  readonly closeTurn = (): void => {
    if (!this.turnOpen) return;
    this.turnOpen = false;
    this.turnLedger = undefined;
    if (!this.db.open || !this.db.inTransaction) return;
    try {
      this.endTurn.run();
    } catch {
      // Ending a read-only transaction commits nothing; whatever failed, the next read says so.
    }
  };

  /**
   * The ledger row of the snapshot the calling read is in. Call inside a read transaction: with
   * `readsPerTurn` that is the turn's, and the row is read once a turn, not once a request.
   */
  snapshotLedgerInfo(): LedgerInfo | null {
    // (a read that failed may have ended the turn's transaction: each statement then has its own)
    if (!this.turnOpen || !this.db.inTransaction) return this.readLedgerInfo();
    if (this.turnLedger === undefined) this.turnLedger = this.readLedgerInfo();
    return this.turnLedger;
  }
}
