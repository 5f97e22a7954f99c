/**
 * The open streams of one app (docs/decisions.md §24). A stream first replays from its start (the
 * feed's ring, else the store, a page at a time, waiting for its client to take each), and in the
 * turn it reaches the feed's newest version it joins the feed, so the seam has no gap and no
 * duplicate. Live, a client that has not taken `streamBufferBytes` of what earlier turns wrote
 * when the next event comes is ended as slow; in replay, one that takes nothing for a heartbeat
 * interval is. Either way the last event names the version to resume from.
 */
import type { ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { NodeContext } from "../../context.js";
import { ApiError } from "../../http/apiError.js";
import { CommitFeed, type FeedBatch, FeedEntry, type LiveStream, type StreamFormat, selectionOf } from "./feed.js";
import { matches, type StreamFilter } from "./filter.js";

/** Versions one replay read takes from the store. */
const REPLAY_VERSIONS = 100;
const REPLAY_BYTES = 1024 * 1024;
/** How long an ended stream's last bytes may take to leave before its connection is closed. */
const END_GRACE_MS = 2_000;

export type EndReason = "slow_client" | "shutdown" | "pruned";

export interface StreamRequest {
  format: StreamFormat;
  filter: StreamFilter;
  /** The first version the stream may send. */
  start: bigint;
}

const CONTENT_TYPE: Record<StreamFormat, string> = { sse: "text/event-stream; charset=utf-8", ndjson: "application/x-ndjson" };
/** SSE: clients reconnect a second after a lost connection (sending Last-Event-ID). */
const SSE_OPEN = Buffer.from("retry: 1000\n\n");
const HEARTBEAT: Record<StreamFormat, Buffer> = { sse: Buffer.from(":\n\n"), ndjson: Buffer.from("\n") };

export class StreamHub {
  readonly feed: CommitFeed;
  /** In the order of their last writes (`wrote`), oldest first: the heartbeat sweep visits only those due. */
  private readonly open = new Set<TransactionStream>();
  /** Open streams by client (`req.ip`), each under `maxStreamsPerClient`. */
  private readonly perClient = new Map<string, number>();
  private sweeper: NodeJS.Timeout | null = null;
  private closing = false;
  /** Whether the last replay read failed: the log says so once, not once a stream. */
  private replayFailing = false;

  constructor(readonly ctx: NodeContext) {
    this.feed = new CommitFeed(ctx.store, ctx.log, () => ctx.commitsTold, {
      looked: () => ctx.metrics?.streamFeedLooks.inc(),
      signalled: () => ctx.metrics?.streamCommitSignals.inc(),
    });
    ctx.commits.on("commit", () => {
      ctx.metrics?.streamCommitsTold.inc();
      this.feed.wake();
    });
  }

  /**
   * The 503 of a node that holds its most streams or is closing, counted, else null. Asked before
   * a stream's first read, to spare it, and again where the stream opens, in the same turn: the
   * reads of requests at once may all finish before any of them opens.
   */
  refusal(): ApiError | null {
    if (!this.closing && this.open.size < this.ctx.config.maxStreams) return null;
    this.ctx.metrics?.streamsRefused.inc({ reason: "node_full" });
    const message = this.closing
      ? "the node is shutting down: try again later, at another node"
      : `too many transaction streams are open (at most ${this.ctx.config.maxStreams}): try again later`;
    return new ApiError(503, "internal_error", message, null, { headers: ["retry-after", "1"] });
  }

  /** Takes over the reply and streams on it from `r.start`; `ledgerHeaders`: those of the position it opened at. */
  stream(req: FastifyRequest, reply: FastifyReply, ledgerHeaders: readonly string[], r: StreamRequest, openedAt: bigint): void {
    // Counted here, where the stream opens in the same turn, so that no number of requests at once passes the bounds.
    const full = this.refusal();
    if (full) {
      void this.ctx.sendError(req, reply, full);
      return;
    }
    const client = req.ip;
    const held = this.perClient.get(client) ?? 0;
    const cap = this.ctx.config.maxStreamsPerClient;
    if (held >= cap) {
      this.ctx.metrics?.streamsRefused.inc({ reason: "client_share" });
      const message = `this client has ${held} transaction streams open, the most one client may (${cap}): close one, or try again later`;
      void this.ctx.sendError(req, reply, new ApiError(429, "web_framework_error", message, null, { headers: ["retry-after", "1"] }));
      return;
    }
    reply.hijack();
    const res = reply.raw;
    const head = this.ctx.head.start(req, false);
    head.push(...ledgerHeaders, "content-type", CONTENT_TYPE[r.format], "cache-control", "no-cache", "x-accel-buffering", "no", "connection", "close");
    // The body ends with the connection, not chunked: each event is then one write to the socket,
    // where Node's chunked encoding made four and a cork (docs/decisions.md §24).
    res.removeHeader("transfer-encoding");
    res.writeHead(200, head);
    this.ctx.metrics?.operation("stream_transactions").observe(200, (performance.now() - req.startedAt) / 1000);
    if (req.method === "HEAD") {
      // The head a GET would get, and no body: no stream opens (Node sends nothing of a HEAD's body, so one would never end).
      res.end();
      return;
    }
    // A stream is idle between events by nature: the connection's idle timeout does not apply (heartbeats keep proxies' open).
    req.raw.socket.setTimeout(0);
    if (r.format === "sse") res.write(SSE_OPEN);
    else res.flushHeaders();
    const s = new TransactionStream(this, res, r, client);
    this.open.add(s);
    this.perClient.set(client, held + 1);
    this.ctx.metrics?.streamsOpen.set(this.open.size);
    this.feed.start(openedAt);
    this.sweep();
    res.on("close", () => s.closed());
    void s.replay();
  }

  /** Forgets a stream that ended or whose client left. */
  remove(s: TransactionStream, reason: EndReason | "client_closed"): void {
    if (!this.open.delete(s)) return;
    const held = this.perClient.get(s.client)! - 1;
    if (held === 0) this.perClient.delete(s.client);
    else this.perClient.set(s.client, held);
    this.feed.leave(s);
    this.ctx.metrics?.streamsOpen.set(this.open.size);
    this.ctx.metrics?.streamsEnded.inc({ reason });
    if (this.open.size === 0) {
      this.feed.stop();
      if (this.sweeper) clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  /** `s` wrote: it moves to the end of the order of last writes. */
  wrote(s: TransactionStream): void {
    if (this.open.delete(s)) this.open.add(s);
  }

  /** Notes how a replay read went; a failure is logged once until one succeeds. */
  replayRead(err: unknown): void {
    if (err === null) {
      this.replayFailing = false;
      return;
    }
    if (!this.replayFailing) this.ctx.log.warn({ err }, "transaction streams: a replay read failed; the streams that read end so that their clients resume");
    this.replayFailing = true;
  }

  /** Ends every stream (the app is closing); no new one opens. */
  closeAll(): void {
    this.closing = true;
    for (const s of [...this.open]) s.end("shutdown");
    this.feed.endSignal();
  }

  /** The heartbeat sweep runs while a stream is open. */
  private sweep(): void {
    if (this.sweeper) return;
    const every = this.ctx.config.streamHeartbeatMs;
    this.sweeper = setInterval(() => {
      const quietSince = performance.now() - every;
      // A stream that sends a heartbeat moves to the end, where the walk stops as it meets it again.
      for (const s of this.open) if (!s.heartbeat(quietSince)) break;
    }, Math.max(50, Math.min(every / 2, 1_000)));
    this.sweeper.unref();
  }
}

class TransactionStream implements LiveStream {
  readonly filter: StreamFilter;
  /** Streams with the same filter and format take the same frames of a look (`FeedBatch.select`). */
  private readonly selection: string;
  /** The next version this stream has not looked at (live: the feed's, once it has joined). */
  private next: bigint;
  private joined = false;
  private ended = false;
  private lastWrite = performance.now();

  constructor(
    private readonly hub: StreamHub,
    private readonly res: ServerResponse,
    private readonly r: StreamRequest,
    /** Whose stream this is (`req.ip`). */
    readonly client: string,
  ) {
    this.next = r.start;
    this.filter = r.filter;
    this.selection = `${r.format} ${JSON.stringify(r.filter)}`;
  }

  /** Catches up to the feed's newest version, then joins it. */
  async replay(): Promise<void> {
    const { feed, ctx } = this.hub;
    const bound = ctx.config.streamBufferBytes;
    try {
      while (!this.ended) {
        if (this.next > feed.head) {
          feed.join(this);
          this.joined = true;
          return;
        }
        let entries = feed.from(this.next, REPLAY_VERSIONS);
        if (entries === null) {
          const snap = await ctx.store.readTransactions(this.next, REPLAY_VERSIONS, REPLAY_BYTES);
          this.hub.replayRead(null);
          if (this.ended) return;
          const texts = snap?.value.texts ?? [];
          if (texts.length === 0) {
            // Nothing kept at `next` though the feed has passed it: pruned while the stream was behind.
            this.end("pruned");
            return;
          }
          const start = this.next;
          entries = texts.map((t, i) => new FeedEntry(start + BigInt(i), t));
        }
        for (const e of entries) {
          if (e.version < this.next) continue;
          this.next = e.version + 1n;
          if (matches(this.r.filter, () => e.facts())) this.send(e);
        }
        if (this.res.writableLength > bound && !(await this.drained())) {
          this.end("slow_client");
          return;
        }
      }
    } catch (e) {
      this.hub.replayRead(e);
      this.end("shutdown");
    }
  }

  /**
   * Waits for the client to take what is buffered: false when it takes nothing for a heartbeat
   * interval, or leaves. The socket tells (`write` writes to it, so the response never does).
   */
  private drained(): Promise<boolean> {
    const socket = this.res.socket;
    if (socket === null) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        socket.off("drain", onDrain);
        this.res.off("close", onClose);
        resolve(ok && !this.ended);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => done(false), this.hub.ctx.config.streamHeartbeatMs);
      socket.on("drain", onDrain);
      this.res.on("close", onClose);
    });
  }

  consider(batch: FeedBatch, entries: readonly FeedEntry[]): void {
    if (this.ended) return;
    const through = batch.entries.at(-1)?.version ?? -1n;
    // A replay's last page may have reached past the feed's head (the store had newer commits): the
    // feed's next look hands those over again, and they are not sent twice.
    const unseen = entries.length > 0 && entries[0]!.version >= this.next ? entries : entries.filter((e) => e.version >= this.next);
    if (through >= this.next) this.next = through + 1n;
    const pick = (e: FeedEntry) => matches(this.r.filter, () => e.facts());
    const sel = unseen === entries ? batch.select(this.selection, this.r.format, entries, pick) : selectionOf(unseen.filter(pick), this.r.format);
    if (sel === null) return;
    // What is still buffered now was written in earlier turns (writes of one turn leave together
    // after it): the client has not taken it. Still holding a buffer's worth when the next event
    // comes, it is too slow to follow the chain.
    if (this.res.writableLength > this.hub.ctx.config.streamBufferBytes) {
      this.end("slow_client", sel.first);
      return;
    }
    this.out(sel.frames);
    this.wrote(sel.count);
  }

  /**
   * Writes to the socket itself: the head is out and the body is not chunked, so the response's
   * own write would add only its cork and its uncork on the next tick, for one buffer each time:
   * a quarter of a heartbeat's user time (bench/RESULTS.md, "Devices kept").
   */
  private out(b: Buffer): void {
    const socket = this.res.socket;
    if (socket) socket.write(b);
    else this.res.write(b);
  }

  lost(): void {
    this.end("pruned");
  }

  private send(e: FeedEntry): void {
    this.out(e.frame(this.r.format));
    this.wrote(1);
  }

  private wrote(events: number): void {
    this.lastWrite = performance.now();
    this.hub.wrote(this);
    this.hub.ctx.metrics?.streamEventsSent.inc(events);
  }

  /** Sends a heartbeat if nothing was written since `quietSince`; false when something was (the stream is not due). */
  heartbeat(quietSince: number): boolean {
    if (this.lastWrite > quietSince) return false;
    this.out(HEARTBEAT[this.r.format]);
    this.lastWrite = performance.now();
    this.hub.wrote(this);
    return true;
  }

  /**
   * Ends the stream with its last event, naming the version to resume from: `at`, else the next
   * it has not looked at (live, the one after the feed's newest).
   */
  end(reason: EndReason, at?: bigint): void {
    if (this.ended) return;
    this.ended = true;
    this.hub.remove(this, reason);
    // Live, the stream has looked at everything the feed read (a keyed stream is handed only what has its key).
    const next = at ?? (this.joined && this.hub.feed.head >= this.next ? this.hub.feed.head + 1n : this.next);
    const end = { reason, next_version: String(next) };
    this.res.end(this.r.format === "sse" ? `event: end\ndata: ${JSON.stringify(end)}\n\n` : `${JSON.stringify({ stream_end: end })}\n`);
    // A client that does not read would hold the connection: destroyed once the grace has passed,
    // unless the last bytes left (then the connection closes as its body ends).
    const cut = setTimeout(() => this.res.destroy(), END_GRACE_MS).unref();
    this.res.once("finish", () => clearTimeout(cut));
  }

  /** The connection closed (the client left, or `end` closed it). */
  closed(): void {
    if (this.ended) return;
    this.ended = true;
    this.hub.remove(this, "client_closed");
  }
}
