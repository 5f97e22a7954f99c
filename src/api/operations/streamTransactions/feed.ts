/**
 * The commits a process's streams are fed from (docs/decisions.md §24): while any stream is open,
 * the feed looks at its own store's ledger position every 10 ms and reads what was committed since
 * (by this process's writer, another process, or a primary a standby replays), in version order.
 * Each new transaction is handed to every live stream in the same turn, and kept in a ring of the
 * newest ones, from which a stream that is catching up reads without a store read.
 */
import type { FastifyBaseLogger } from "fastify";
import type { LedgerReader } from "../../../storage/contracts/reader.js";
import { factsOf, type TransactionFacts } from "./filter.js";

/** How often the feed looks for commits while a stream is open. */
const POLL_MS = 10;
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

/** What the feed tells a live stream. */
export interface LiveStream {
  /** Transactions committed after every one it was given before, in version order, handed over in one turn. */
  consider(entries: readonly FeedEntry[]): void;
  /** The feed cannot go on from the stream's next version (pruned before it was read). */
  lost(): void;
}

export class CommitFeed {
  /** The newest version handed to the live streams; -1 before the first look. */
  head = -1n;
  private ring: FeedEntry[] = [];
  private ringBytes = 0;
  private readonly live = new Set<LiveStream>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private failing = false;

  constructor(
    private readonly store: LedgerReader,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Starts looking from `version` (the position a first stream opened at), unless already running. */
  start(version: bigint): void {
    if (this.running) return;
    this.running = true;
    this.head = version;
    this.schedule(0);
  }

  /** Stops looking (no stream is open); the ring is dropped, since the next start may be far ahead. */
  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.ring = [];
    this.ringBytes = 0;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Hands every later transaction to `s`, from the next the feed reads. */
  join(s: LiveStream): void {
    this.live.add(s);
  }

  leave(s: LiveStream): void {
    this.live.delete(s);
  }

  /** The ring's transactions from `version` on (at most `max`), or null when the ring does not hold `version`. */
  from(version: bigint, max: number): FeedEntry[] | null {
    const first = this.ring[0];
    if (first === undefined || version < first.version || version > this.head) return null;
    const i = Number(version - first.version);
    return this.ring.slice(i, i + max);
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.look().then(
        (more) => this.schedule(more ? 0 : POLL_MS),
        () => this.schedule(POLL_MS),
      );
    }, ms);
  }

  /** One look: reads what was committed past `head` (a turn's worth); true when there is more. */
  private async look(): Promise<boolean> {
    let info: Awaited<ReturnType<LedgerReader["getLedgerInfo"]>>;
    let snap: Awaited<ReturnType<LedgerReader["readTransactions"]>>;
    try {
      info = await this.store.getLedgerInfo(true);
      if (info === null || info.ledgerVersion <= this.head || !this.running) return false;
      const count = Number(info.ledgerVersion - this.head > BigInt(READ_VERSIONS) ? BigInt(READ_VERSIONS) : info.ledgerVersion - this.head);
      snap = await this.store.readTransactions(this.head + 1n, count, READ_BYTES);
      if (this.failing) this.log.info("transaction streams: the store reads again");
      this.failing = false;
    } catch (e) {
      if (!this.failing) this.log.warn({ err: e }, "transaction streams: reading new commits failed; the streams wait and it tries again");
      this.failing = true;
      return false;
    }
    if (!this.running || snap === null) return false;
    const texts = snap.value.texts;
    if (texts.length === 0) {
      // Pruned past the feed before it read them: the live streams cannot go on without a gap.
      if (snap.info.oldestVersion > this.head + 1n) {
        for (const s of [...this.live]) s.lost();
        this.live.clear();
        this.ring = [];
        this.ringBytes = 0;
        this.head = snap.info.oldestVersion - 1n;
        return true;
      }
      return false;
    }
    const start = this.head + 1n;
    const entries = texts.map((t, i) => new FeedEntry(start + BigInt(i), t));
    this.head = start + BigInt(texts.length - 1);
    for (const e of entries) this.keep(e);
    for (const s of this.live) s.consider(entries);
    return this.head < snap.info.ledgerVersion;
  }

  private keep(e: FeedEntry): void {
    this.ring.push(e);
    this.ringBytes += e.text.byteLength;
    let drop = 0;
    while (this.ringBytes > RING_BYTES && drop < this.ring.length - 1) this.ringBytes -= this.ring[drop++]!.text.byteLength;
    if (drop > 0) this.ring.splice(0, drop);
  }
}
