/**
 * The commits a process's streams are fed from (docs/decisions.md §24): while any stream is open,
 * the feed looks at its own store's ledger position at once when it is told of a commit (by this
 * process's writers, or else by the database's commit signal, whoever committed), every second
 * while it is told, every 10 ms while nothing tells it (a hot standby without its primary's
 * signal), and soon again while its store has not yet the version a signal named (a standby
 * replaying it: `AWAITED_FIRST_MS`), and reads what was committed since (by this process's
 * writer, another process, or a primary a standby replays), in version order.
 * What one look read is handed in one turn to the live streams that may want it: every stream
 * without a key filter, and the streams found by the keys of each transaction (its sender,
 * function, event types, addresses), so a transaction costs nothing for the streams it cannot
 * match. It is kept in a ring of the newest ones, from which a stream catching up reads without a
 * store read.
 */
import type { FastifyBaseLogger } from "fastify";
import type { LedgerReader } from "../../../storage/contracts/reader.js";
import { FeedSignal } from "./feedSignal.js";
import { factsOf, keyOf, keysOf, type StreamFilter, type TransactionFacts } from "./filter.js";

/** How often the feed looks for commits while a stream is open. */
const POLL_MS = 10;
/**
 * How often it looks while it is told of each commit (`wake`): by this process's own writer, for a
 * commit by another process such as an `import` beside it; by the database's signal, for one it
 * missed. A look that finds nothing still wakes the process, and at 10 ms that was most of an idle
 * node's CPU.
 */
const TOLD_POLL_MS = 1_000;
/**
 * Told of a version its store has not yet (a standby hears its primary before it replays), the
 * feed looks again after 1 ms, doubling up to `POLL_MS`: replay takes a millisecond or two, which
 * a first wait of 10 ms would add to every delivery.
 */
const AWAITED_FIRST_MS = 1;
/** Versions one feed read takes (a burst is read in turns of this many). */
const READ_VERSIONS = 1_000;
const READ_BYTES = 8 * 1024 * 1024;
/** Bytes of transaction text the ring keeps. */
const RING_BYTES = 8 * 1024 * 1024;

export type StreamFormat = "sse" | "ndjson";

const NEWLINE = /[\r\n]/g;

/** One committed transaction: its text, and what streams make of it (made once, shared by all). */
export class FeedEntry {
  private known: TransactionFacts | undefined;
  private sse: Buffer | undefined;
  private ndjson: Buffer | undefined;

  constructor(
    readonly version: bigint,
    readonly text: Uint8Array,
  ) {}

  facts(): TransactionFacts {
    this.known ??= factsOf(this.text);
    return this.known;
  }

  /** The transaction as one SSE event (`id:` its version) or one NDJSON line. */
  frame(format: StreamFormat): Buffer {
    if (format === "sse") {
      this.sse ??= Buffer.concat([Buffer.from(`id: ${this.version}\ndata: `), oneLine(this.text), SSE_END]);
      return this.sse;
    }
    this.ndjson ??= Buffer.concat([oneLine(this.text), NDJSON_END]);
    return this.ndjson;
  }
}

/**
 * The texts copied into one buffer of their own size. A stored text is a view into its chunk's
 * inflated buffer (32 KiB, however little of it a short block fills), which the ring would keep
 * alive: the copies make what the ring holds the bytes it counts.
 */
function ownCopies(texts: readonly Uint8Array[]): Uint8Array[] {
  const joined = Buffer.concat(texts);
  let at = 0;
  return texts.map((t) => {
    at += t.byteLength;
    return joined.subarray(at - t.byteLength, at);
  });
}

const SSE_END = Buffer.from("\n\n");
const NDJSON_END = Buffer.from("\n");

/**
 * The text on one line: a line break in JSON can only be whitespace between tokens (inside strings
 * it is escaped), so it is replaced by a space and the JSON stays the same value.
 */
function oneLine(text: Uint8Array): Uint8Array {
  const b = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  if (b.indexOf(10) < 0 && b.indexOf(13) < 0) return b;
  return Buffer.from(b.toString("utf8").replace(NEWLINE, " "));
}

/** What a stream takes of one look: its frames as one buffer, how many, and the first one's version. */
export interface Selection {
  frames: Buffer;
  count: number;
  first: bigint;
}

/**
 * What one look read, in version order. The streams with the same filter and format take the same
 * selection of it, made once: one buffer each writes.
 */
export class FeedBatch {
  private readonly selections = new Map<string, Selection | null>();

  constructor(readonly entries: readonly FeedEntry[]) {}

  /** The frames of `entries` that `pick` keeps, for every stream of selection `id` (its filter and format), or null when none is kept. */
  select(id: string, format: StreamFormat, entries: readonly FeedEntry[], pick: (e: FeedEntry) => boolean): Selection | null {
    let sel = this.selections.get(id);
    if (sel !== undefined) return sel;
    sel = selectionOf(entries.filter(pick), format);
    this.selections.set(id, sel);
    return sel;
  }
}

/** The frames of `kept` as one buffer, or null when there are none. */
export function selectionOf(kept: readonly FeedEntry[], format: StreamFormat): Selection | null {
  if (kept.length === 0) return null;
  const frames = kept.map((e) => e.frame(format));
  return { frames: frames.length === 1 ? frames[0]! : Buffer.concat(frames), count: kept.length, first: kept[0]!.version };
}

/** What the feed does, for the metrics. */
export interface FeedEvents {
  /** A look at the store's ledger position. */
  looked?(): void;
  /** The database's commit signal told of a commit. */
  signalled?(): void;
}

/** What the feed tells a live stream. */
export interface LiveStream {
  readonly filter: StreamFilter;
  /**
   * A look's transactions, all committed after every one handed over before: `entries` are those
   * of `batch` the stream may want (all of them, in version order, for a stream without a key).
   */
  consider(batch: FeedBatch, entries: readonly FeedEntry[]): void;
  /** The feed cannot go on from the stream's next version (pruned before it was read). */
  lost(): void;
}

export class CommitFeed {
  /** The newest version handed to the live streams; -1 before the first look. */
  head = -1n;
  /** The ring: `ring[oldest..]`, the entries before `oldest` dropped and cut off now and then. */
  private ring: FeedEntry[] = [];
  private oldest = 0;
  private ringBytes = 0;
  /** The live streams without a key filter, and those with one by their key (`keyOf`). */
  private readonly unkeyed = new Set<LiveStream>();
  private readonly keyed = new Map<string, Set<LiveStream>>();
  /** The next look, while running; null while running means a look is under way. */
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private failing = false;
  /** A commit came during the look under way: the next one comes at once. */
  private woken = false;
  /** Looks in a row that found the store short of the version the signal named. */
  private awaitedLooks = 0;
  /** Counts starts and stops: a look begun before a stop hands nothing out after it. */
  private generation = 0;
  /** The database's commit signal, where this process's writer tells nothing. */
  private readonly signal: FeedSignal;

  constructor(
    private readonly store: LedgerReader,
    private readonly log: FastifyBaseLogger,
    /** Whether this process's writer wakes the feed after each of its commits (read at each look). */
    private readonly told: () => boolean = () => false,
    private readonly events: FeedEvents = {},
  ) {
    const signalled = () => {
      this.events.signalled?.();
      this.wake();
    };
    this.signal = new FeedSignal(store.commitSignal, log, () => !told(), signalled, store.kind === "sqlite" ? "file system" : "database", POLL_MS);
  }

  /** Starts looking from `version` (the position a first stream opened at), unless already running. */
  start(version: bigint): void {
    if (this.running) return;
    this.running = true;
    this.generation++;
    this.head = version;
    this.awaitedLooks = 0;
    this.signal.start();
    this.schedule(0, true);
  }

  /** Stops looking (no stream is open); the ring is dropped, since the next start may be far ahead. */
  stop(): void {
    this.running = false;
    this.generation++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.signal.stop();
    this.clearRing();
  }

  /** Stops watching the database's signal now (the app closes). */
  endSignal(): void {
    this.signal.end();
  }

  private clearRing(): void {
    this.ring = [];
    this.oldest = 0;
    this.ringBytes = 0;
  }

  /** Hands every later transaction to `s`, from the next the feed reads. */
  join(s: LiveStream): void {
    const key = keyOf(s.filter);
    if (key === null) {
      this.unkeyed.add(s);
      return;
    }
    const streams = this.keyed.get(key);
    if (streams === undefined) this.keyed.set(key, new Set([s]));
    else streams.add(s);
  }

  leave(s: LiveStream): void {
    const key = keyOf(s.filter);
    if (key === null) {
      this.unkeyed.delete(s);
      return;
    }
    const streams = this.keyed.get(key);
    streams?.delete(s);
    if (streams?.size === 0) this.keyed.delete(key);
  }

  /** The ring's transactions from `version` on (at most `max`), or null when the ring does not hold `version`. */
  from(version: bigint, max: number): FeedEntry[] | null {
    const first = this.ring[this.oldest];
    if (first === undefined || version < first.version || version > this.head) return null;
    const i = this.oldest + Number(version - first.version);
    return this.ring.slice(i, i + max);
  }

  /** This process committed: look now instead of at the next poll (after the look under way, if one is). */
  wake(): void {
    if (!this.running) return;
    if (this.timer === null) {
      this.woken = true;
      return;
    }
    clearTimeout(this.timer);
    this.schedule(0, true);
  }

  /** The next look in `ms`; `told`: it was told of, or goes on reading, rather than a poll. */
  private schedule(ms: number, told: boolean): void {
    if (!this.running) return;
    const generation = this.generation;
    this.timer = setTimeout(() => {
      this.timer = null;
      const poll = !told && !this.woken;
      this.woken = false;
      this.events.looked?.();
      this.look(generation, poll).then(
        (more) => this.afterLook(generation, more),
        () => this.afterLook(generation, false),
      );
    }, ms);
  }

  private afterLook(generation: number, more: boolean): void {
    if (generation !== this.generation) return;
    if (more || this.woken) this.schedule(0, true);
    else if (this.signal.awaited > this.head) this.schedule(Math.min(POLL_MS, AWAITED_FIRST_MS * 2 ** this.awaitedLooks++), true);
    else {
      this.awaitedLooks = 0;
      this.schedule(this.told() || this.signal.live ? TOLD_POLL_MS : POLL_MS, false);
    }
  }

  /** One look: reads what was committed past `head` (a turn's worth); true when there is more. `poll`: nothing told of it. */
  private async look(generation: number, poll: boolean): Promise<boolean> {
    let info: Awaited<ReturnType<LedgerReader["getLedgerInfo"]>>;
    let snap: Awaited<ReturnType<LedgerReader["readTransactions"]>>;
    try {
      info = await this.store.getLedgerInfo(true);
      if (info === null || info.ledgerVersion <= this.head || generation !== this.generation) return false;
      if (poll) this.signal.foundUntold();
      const count = Number(info.ledgerVersion - this.head > BigInt(READ_VERSIONS) ? BigInt(READ_VERSIONS) : info.ledgerVersion - this.head);
      snap = await this.store.readTransactions(this.head + 1n, count, READ_BYTES);
      if (this.failing) this.log.info("transaction streams: the store reads again");
      this.failing = false;
    } catch (e) {
      if (!this.failing) this.log.warn({ err: e }, "transaction streams: reading new commits failed; the streams wait and it tries again");
      this.failing = true;
      return false;
    }
    if (generation !== this.generation || snap === null) return false;
    const texts = snap.value.texts;
    if (texts.length === 0) {
      // Pruned past the feed before it read them: the live streams cannot go on without a gap.
      if (snap.info.oldestVersion > this.head + 1n) {
        for (const s of [...this.unkeyed, ...[...this.keyed.values()].flatMap((set) => [...set])]) s.lost();
        this.unkeyed.clear();
        this.keyed.clear();
        this.clearRing();
        this.head = snap.info.oldestVersion - 1n;
        return true;
      }
      return false;
    }
    const start = this.head + 1n;
    const entries = ownCopies(texts).map((t, i) => new FeedEntry(start + BigInt(i), t));
    this.head = start + BigInt(texts.length - 1);
    for (const e of entries) this.keep(e);
    this.handOut(new FeedBatch(entries));
    return this.head < snap.info.ledgerVersion;
  }

  /**
   * Gives each live stream the transactions of `batch` it may want, in version order: all of them
   * to the streams without a key, and to those with one the transactions that have their key.
   */
  private handOut(batch: FeedBatch): void {
    for (const s of this.unkeyed) s.consider(batch, batch.entries);
    if (this.keyed.size === 0) return;
    const byKey = new Map<string, FeedEntry[]>();
    for (const e of batch.entries) {
      for (const key of keysOf(e.facts())) {
        if (!this.keyed.has(key)) continue;
        const entries = byKey.get(key);
        if (entries === undefined) byKey.set(key, [e]);
        else if (entries.at(-1) !== e) entries.push(e);
      }
    }
    for (const [key, entries] of byKey) for (const s of this.keyed.get(key) ?? []) s.consider(batch, entries);
  }

  private keep(e: FeedEntry): void {
    this.ring.push(e);
    this.ringBytes += e.text.byteLength;
    while (this.ringBytes > RING_BYTES && this.oldest < this.ring.length - 1) this.ringBytes -= this.ring[this.oldest++]!.text.byteLength;
    // Cut the dropped ones off once they are half the array: each entry is moved about once, and
    // at most as many bytes again as the ring keeps wait to be released.
    if (this.oldest > 1024 && this.oldest * 2 > this.ring.length) {
      this.ring = this.ring.slice(this.oldest);
      this.oldest = 0;
    }
  }
}
