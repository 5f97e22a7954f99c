/**
 * The database's commit signal as the commit feed watches it (docs/decisions.md §24): watched
 * while the feed runs, where this process's writer tells it of nothing, and kept a minute after it
 * stops; dropped for a while once polls find commits it did not tell of; and said in the log when
 * it cannot tell. A look's timing stays the feed's: this only answers `live` and `awaited`.
 */
import type { FastifyBaseLogger } from "fastify";
import type { CommitSignal, CommitWatch } from "../../../storage/contracts/reader.js";

/**
 * How long the signal is kept watched after the feed stopped: a client that opens and closes
 * streams in a loop would otherwise make the node open a PostgreSQL session each.
 */
const KEPT_MS = 60_000;
/**
 * After a signal that missed commits was dropped, it is watched again after this long, doubling
 * with each drop up to an hour: a session lost without a word (a network path cut silently) comes
 * back, and a pooler that never delivers costs a log line an hour at most.
 */
const RETRY_MS = { first: 5 * 60_000, most: 60 * 60_000 };

export class FeedSignal {
  private named = -1n;
  private running = false;
  private watch: CommitWatch | null = null;
  /** Ends the watch once the feed has been stopped for `KEPT_MS`. */
  private kept: NodeJS.Timeout | null = null;
  /** A poll found commits nothing had told of; a second one with no signal between drops the signal. */
  private untold = false;
  /** Drops so far (each later retry waits twice as long), and the retry pending. */
  private drops = 0;
  private retry: NodeJS.Timeout | null = null;
  /** The signal said it cannot tell (logged once); the log says so when it tells again. */
  private lost = false;

  constructor(
    private readonly signal: CommitSignal | null,
    private readonly log: FastifyBaseLogger,
    /** Whether to watch: false where this process's writer tells the feed of each commit (read at each start). */
    private readonly wanted: () => boolean,
    /** Told of a commit while the feed runs. */
    private readonly onCommit: () => void,
    /** What the log calls the signal's source ("file system", "database"), and how often the feed polls without it. */
    private readonly source: string,
    private readonly pollMs: number,
  ) {}

  /** The newest version the signal named since the feed started: the feed looks often until its store has it (a standby replaying). */
  get awaited(): bigint {
    return this.named;
  }

  /** Whether a commit now would be told. */
  get live(): boolean {
    return this.watch?.live ?? false;
  }

  /** The feed starts: the signal is watched (again), unless a dropped one waits for its retry. */
  start(): void {
    this.running = true;
    this.untold = false;
    this.named = -1n;
    if (this.kept) clearTimeout(this.kept);
    this.kept = null;
    if (this.retry === null) this.watchNow();
  }

  /** The feed stops: the watch is kept for `KEPT_MS`. */
  stop(): void {
    this.running = false;
    if (this.watch && !this.kept) {
      this.kept = setTimeout(() => this.end(), KEPT_MS);
      this.kept.unref();
    }
  }

  /** Stops watching now (the app closes). */
  end(): void {
    if (this.kept) clearTimeout(this.kept);
    this.kept = null;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.watch?.stop();
    this.watch = null;
    this.lost = false;
  }

  /**
   * A poll found commits nothing told of. Once is a race (the commit's signal is on its way);
   * twice with no signal between, the signal misses commits (such as a LISTEN behind a pooler that
   * hands the session's server connection to others): it is dropped until `RETRY_MS` has passed.
   */
  foundUntold(): void {
    // While the signal is not live (its session being opened again), the polls are what finds commits.
    if (this.watch === null || !this.watch.live) return;
    if (!this.untold) {
      this.untold = true;
      return;
    }
    this.watch.stop();
    this.watch = null;
    const retryMs = Math.min(RETRY_MS.most, RETRY_MS.first * 2 ** Math.min(this.drops++, 10));
    this.log.warn(
      `transaction streams: the ${this.source} did not tell of commits another process made; ` +
        `looking every ${this.pollMs} ms instead, and listening again in ${retryMs / 60_000} minutes`,
    );
    this.retry = setTimeout(() => {
      this.retry = null;
      if (!this.running) return;
      this.untold = false;
      this.watchNow();
    }, retryMs);
    this.retry.unref();
  }

  private watchNow(): void {
    if (this.watch !== null || !this.signal || !this.wanted()) return;
    this.watch = this.signal.watch(
      (v) => this.told(v),
      (why) => this.cannotTell(why),
    );
  }

  /** The database told of a commit, up to `version` where it names one. */
  private told(version: bigint | null): void {
    if (this.lost) {
      this.lost = false;
      this.log.info("transaction streams: told of commits again");
    }
    if (!this.running) return;
    this.untold = false;
    if (version !== null && version > this.named) this.named = version;
    this.onCommit();
  }

  /** The signal cannot tell (a wrong `--primary`, the database restarting): the operator learns why, once an outage. */
  private cannotTell(why: string): void {
    if (this.lost) return;
    this.lost = true;
    this.log.warn(`transaction streams: not told of commits (${why.slice(0, 300)}); looking every ${this.pollMs} ms until told again`);
  }
}
