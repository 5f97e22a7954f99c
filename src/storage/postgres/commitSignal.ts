/**
 * Commits to a PostgreSQL primary told by the database (docs/decisions.md §24): each block's
 * `commit` statement notifies `COMMIT_CHANNEL` with its transaction's last version, which
 * PostgreSQL delivers when the transaction commits to every session listening on it, whichever
 * process wrote. A watch keeps one such session, opened again after it is lost (the watcher polls
 * meanwhile). A hot standby refuses LISTEN: a store on one listens on its primary, when given it,
 * and checks that it is its primary each time the session opens (`primaryCheck.ts`).
 */
import pg from "pg";
import type { CommitSignal, CommitWatch } from "../contracts/reader.js";
import { COMMIT_CHANNEL } from "./sql.js";
/** Pause before opening a lost session again, doubling from the first up to the last. */
const RETRY_MS = { first: 1_000, most: 30_000 };

export class NotifySignal implements CommitSignal {
  private readonly watches = new Set<ListeningSession>();

  /**
   * Sessions with the client settings `config`, to the database `shown` (its URL without the
   * password). `verify`: why a session just opened may not listen there (a standby's check of its
   * primary), or null; a session it refuses is lost so, and tried again as any other.
   */
  constructor(
    private readonly config: pg.ClientConfig,
    private readonly shown: string,
    private readonly verify: ((session: pg.ClientBase) => Promise<string | null>) | null = null,
  ) {}

  watch(onCommit: (version: bigint | null) => void, onLost?: (reason: string) => void): CommitWatch {
    const w = new ListeningSession(this.config, this.verify, onCommit, (why) => onLost?.(`${this.shown}: ${why}`), () => this.watches.delete(w));
    this.watches.add(w);
    return w;
  }

  /** Ends every watch's session (the store closes). */
  stopAll(): void {
    for (const w of [...this.watches]) w.stop();
  }
}

class ListeningSession implements CommitWatch {
  live = false;
  /** The session being opened or open; null once lost or stopped. */
  private client: pg.Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;
  private failures = 0;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly verify: ((session: pg.ClientBase) => Promise<string | null>) | null,
    private readonly onCommit: (version: bigint | null) => void,
    private readonly onLost: (reason: string) => void,
    private readonly onStop: () => void,
  ) {
    void this.listen();
  }

  private async listen(): Promise<void> {
    const c = new pg.Client(this.config);
    this.client = c;
    c.on("notification", (n) => {
      if (n.channel === COMMIT_CHANNEL) this.onCommit(n.payload !== undefined && /^\d{1,20}$/.test(n.payload) ? BigInt(n.payload) : null);
    });
    c.on("error", (e) => this.lost(c, e.message));
    c.on("end", () => this.lost(c, "the listening session ended"));
    try {
      await c.connect();
      const problem = this.verify === null ? null : await this.verify(c);
      if (problem !== null) {
        this.lost(c, problem);
        return;
      }
      await c.query(`LISTEN ${COMMIT_CHANNEL}`);
    } catch (e) {
      this.lost(c, (e as Error).message);
      return;
    }
    if (this.client !== c) return;
    this.live = true;
    this.failures = 0;
    // Commits made before the session listened were not told: the watcher looks once now.
    this.onCommit(null);
  }

  private lost(c: pg.Client, why: string): void {
    if (this.client !== c) return;
    this.client = null;
    this.live = false;
    c.end().catch(() => undefined);
    if (this.stopped) return;
    // Said once an outage: the first failure after listening, or of the first attempt.
    if (this.failures === 0) this.onLost(why);
    const ms = Math.min(RETRY_MS.most, RETRY_MS.first * 2 ** Math.min(this.failures++, 5));
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.listen();
    }, ms);
    this.retry.unref();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.live = false;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const c = this.client;
    this.client = null;
    c?.end().catch(() => undefined);
    this.onStop();
  }
}
