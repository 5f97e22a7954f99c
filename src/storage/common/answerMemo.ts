/**
 * The read memo both dialects keep: answers of the reads at the newest position, keyed by read
 * (`memoKeys.ts`), dropped together when the position moves, bounded in bytes (key, value
 * and a fixed overhead per entry; an entry over MEMO_ENTRY_BYTES is not kept). What makes the
 * answers stale is each dialect's own rule, around it: SQLite's `PRAGMA data_version`
 * (`sqlite/dataVersionMemo.ts`), PostgreSQL's position seen by a recent read (`postgres/positionMemo.ts`).
 */
import { LRUCache } from "lru-cache";
import { MEMO_BYTES, MEMO_ENTRY_BYTES, memoEntrySize } from "./memoKeys.js";

export class AnswerMemo<V extends object> {
  private readonly answers = new LRUCache<string, V>({ maxSize: MEMO_BYTES, maxEntrySize: MEMO_ENTRY_BYTES });

  /** The answer held under `key`, whether or not it is still fresh (the dialect's rule decides). */
  get(key: string): V | undefined {
    return this.answers.get(key);
  }

  /** Keeps `value` under `key` (`valueBytes`: what the value holds besides its fixed overhead). */
  remember(key: string, value: V, valueBytes = 0): void {
    this.answers.set(key, value, { size: memoEntrySize(key, valueBytes) });
  }

  /** Drops every answer: the position moved, or this process wrote. */
  clear(): void {
    this.answers.clear();
  }
}
