/**
 * The PostgreSQL store's staleness rule over the shared memo (`../common/answerMemo.ts`), for the reads that fix
 * a request's position (`memoLagMs`): the ledger row, and the answers at the newest version of
 * `readTableItem`, `readModulesVersion` and `readSummariesVersion`. Without it each of them is a
 * round trip, made by every request before anything else (bench/results/archive.md).
 *
 * SQLite checks its memo with `PRAGMA data_version`, in process. PostgreSQL has no such check
 * short of a round trip, so this memo trusts the position the store's reads last saw for `lagMs`:
 * every snapshot read returns the ledger position with its value, and each renews the trust from
 * when it was asked. A read that sees a newer position (a block, a prune) drops the memoized
 * answers and adopts it; one that was overtaken by a read of a later commit changes nothing.
 * Commits and prunes made through the store clear it, so a process sees its own writes at once.
 */
import type { LedgerInfo } from "../../ledger/types.js";
import type { Snapshot } from "../contracts/reader.js";
import { AnswerMemo } from "../common/answerMemo.js";

/** Sign of how position `a` stands to `b`: ledger version first, then oldest version (both only grow). */
function compare(a: LedgerInfo, b: LedgerInfo): number {
  if (a.ledgerVersion !== b.ledgerVersion) return a.ledgerVersion > b.ledgerVersion ? 1 : -1;
  if (a.oldestVersion !== b.oldestVersion) return a.oldestVersion > b.oldestVersion ? 1 : -1;
  return 0;
}

/** When a read was asked (`PositionMemo.asking`). */
export interface Asked {
  at: number;
  clears: number;
}

export class PositionMemo {
  private position: LedgerInfo | null = null;
  /** Until when (performance.now()) `position` and the answers read at it are served without asking. */
  private trustedUntil = -Infinity;
  /** `clear()` calls so far: a read asked before the last one may have seen the ledger before it. */
  private clears = 0;
  private readonly answers = new AnswerMemo<Snapshot<unknown>>();

  /** `lagMs` 0: nothing is memoized and every read asks the database. */
  constructor(private readonly lagMs: number) {}

  /** The position, while a read asked less than `lagMs` ago confirmed it; else null. */
  ledger(): LedgerInfo | null {
    return this.position !== null && performance.now() < this.trustedUntil ? this.position : null;
  }

  /** The answer memoized under `key`, while the position it was read at is trusted. */
  get<T>(key: string): Snapshot<T> | undefined {
    if (!(performance.now() < this.trustedUntil)) return undefined;
    return this.answers.get(key) as Snapshot<T> | undefined;
  }

  /** Taken just before a read is sent, for `saw`. */
  asking(): Asked {
    return { at: performance.now(), clears: this.clears };
  }

  /**
   * Tells the memo the position `info` that a read (`asked`) answered with. True when that is the
   * memo's position now: an answer read with it may be remembered.
   */
  saw(info: LedgerInfo, asked: Asked): boolean {
    if (this.lagMs <= 0 || asked.clears !== this.clears) return false;
    const order = this.position === null ? 1 : compare(info, this.position);
    if (order < 0) return false;
    if (order > 0) {
      this.answers.clear();
      this.position = info;
      this.trustedUntil = asked.at + this.lagMs;
    } else {
      this.trustedUntil = Math.max(this.trustedUntil, asked.at + this.lagMs);
    }
    return true;
  }

  /** Keeps `answer` under `key` (`valueBytes`: what its value holds besides a fixed overhead). */
  remember(key: string, answer: Snapshot<unknown>, valueBytes = 0): void {
    this.answers.remember(key, answer, valueBytes);
  }

  /** Forgets everything, and what reads already under way will say: after a commit or a prune through this store. */
  clear(): void {
    this.answers.clear();
    this.position = null;
    this.trustedUntil = -Infinity;
    this.clears++;
  }
}
