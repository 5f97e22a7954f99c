import type { FastifyBaseLogger } from "fastify";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { LedgerInfo } from "../../../ledger/types.js";
import type { LedgerReader } from "../../../storage/contracts/reader.js";
import { CommitFeed, type FeedBatch, type FeedEntry, type FeedEvents, type LiveStream } from "./feed.js";

/** A ledger that grows by `step` versions of 1 KiB texts at each look of the feed. */
function growingLedger(step: number) {
  let head = -1n;
  const info = (): LedgerInfo => ({ chainId: 4, ledgerVersion: head, oldestVersion: 0n, timestampUsec: 0n, epoch: 1n, blockHeight: 0n, oldestBlockHeight: 0n });
  const text = (v: bigint) => Buffer.from(JSON.stringify({ version: String(v), pad: "x".repeat(1000) }));
  const store = {
    async getLedgerInfo() {
      head += BigInt(step);
      return info();
    },
    async readTransactions(start: bigint, limit: number) {
      const texts: Uint8Array[] = [];
      for (let v = start; v <= head && texts.length < limit; v++) texts.push(text(v));
      return { info: info(), value: { start, texts } };
    },
  } as unknown as LedgerReader;
  return { store, head: () => head };
}

const log = { info() {}, warn() {} } as unknown as FastifyBaseLogger;

/** A ledger that grows only when `commit` is called; `hold` makes the next text read wait until released. */
function steppedLedger() {
  let head = -1n;
  let oldest = 0n;
  let held: { release: () => void } | null = null;
  const info = (): LedgerInfo => ({ chainId: 4, ledgerVersion: head, oldestVersion: oldest, timestampUsec: 0n, epoch: 1n, blockHeight: 0n, oldestBlockHeight: 0n });
  const store = {
    async getLedgerInfo() {
      return info();
    },
    async readTransactions(start: bigint, limit: number) {
      const at = info();
      const texts: Uint8Array[] = [];
      // Nothing below the oldest kept version: a read from a pruned version finds no text.
      for (let v = start; v >= oldest && v <= at.ledgerVersion && texts.length < limit; v++) texts.push(Buffer.from(`{"version":"${v}"}`));
      if (held) await new Promise<void>((resolve) => (held = { release: resolve }));
      return { info: at, value: { start, texts } };
    },
  } as unknown as LedgerReader;
  return {
    store,
    commit: (n: number) => {
      head += BigInt(n);
    },
    prune: (to: bigint) => {
      oldest = to;
    },
    hold: () => {
      held = { release: () => undefined };
    },
    release: () => {
      const h = held;
      held = null;
      h?.release();
    },
  };
}

/** A database's commit signal the test tells by hand (`tell`), watched by at most one feed. */
function fakeSignal() {
  let onCommit: ((version: bigint | null) => void) | null = null;
  let onLost: ((reason: string) => void) | null = null;
  const watch = {
    live: true,
    stops: 0,
    stop() {
      watch.stops++;
      onCommit = null;
    },
  };
  const fake = {
    signal: {
      watch(cb: (version: bigint | null) => void, lost?: (reason: string) => void) {
        fake.watches++;
        onCommit = cb;
        onLost = lost ?? null;
        return watch;
      },
    },
    watches: 0,
    watch,
    /** Tells of a commit, up to `version` where given (as a PostgreSQL notice names it). */
    tell: (version: bigint | null = null) => onCommit?.(version),
    /** The signal says it cannot tell, and why. */
    lose: (reason: string) => onLost?.(reason),
    watched: () => onCommit !== null,
  };
  return fake;
}

/** A live stream without a filter that notes the versions it is handed. */
function recorder(): LiveStream & { got: bigint[]; lostAt: bigint[] } {
  const got: bigint[] = [];
  const lostAt: bigint[] = [];
  return {
    got,
    lostAt,
    filter: {},
    consider: (_b, entries) => {
      for (const e of entries) got.push(e.version);
    },
    lost() {
      lostAt.push(BigInt(got.length));
    },
  };
}

describe("the commit feed", () => {
  it("hands every commit to a joined stream once, in order, and keeps the newest 8 MiB in its ring", async () => {
    const ledger = growingLedger(700);
    const feed = new CommitFeed(ledger.store, log);
    const got: bigint[] = [];
    const stream: LiveStream = {
      filter: {},
      consider: (_b: FeedBatch, entries: readonly FeedEntry[]) => {
        for (const e of entries) got.push(e.version);
      },
      lost: () => {
        throw new Error("lost");
      },
    };
    feed.start(-1n);
    feed.join(stream);
    try {
      await expect.poll(() => feed.head, { timeout: 20_000 }).toBeGreaterThanOrEqual(20_000n);
      feed.leave(stream);
      const head = feed.head;
      expect(got).toEqual(Array.from({ length: Number(head) + 1 }, (_, i) => BigInt(i)));
      // about 1,030 bytes a text: 8 MiB hold the newest 8,000 or so, and nothing older
      const kept = feed.from(head - 8_000n, 10);
      expect(kept?.map((e) => e.version)).toEqual(Array.from({ length: 10 }, (_, i) => head - 8_000n + BigInt(i)));
      expect(feed.from(head - 9_000n, 10)).toBeNull();
      expect(feed.from(head, 10)?.map((e) => e.version)).toEqual([head]);
    } finally {
      feed.stop();
    }
  });

  it("keeps copies of the texts it reads, not views that keep the store's inflated chunks alive", async () => {
    // Each text a view into a 32 KiB buffer of its own, as a short block's chunk comes back inflated.
    const chunks = new Set<ArrayBufferLike>();
    let head = -1n;
    const info = (): LedgerInfo => ({ chainId: 4, ledgerVersion: head, oldestVersion: 0n, timestampUsec: 0n, epoch: 1n, blockHeight: 0n, oldestBlockHeight: 0n });
    const store = {
      async getLedgerInfo() {
        head += 3n;
        return info();
      },
      async readTransactions(start: bigint, limit: number) {
        const texts: Uint8Array[] = [];
        for (let v = start; v <= head && texts.length < limit; v++) {
          const chunk = Buffer.alloc(32 * 1024);
          const n = chunk.write(`{"version":"${v}"}`);
          chunks.add(chunk.buffer);
          texts.push(chunk.subarray(0, n));
        }
        return { info: info(), value: { start, texts } };
      },
    } as unknown as LedgerReader;
    const feed = new CommitFeed(store, log);
    const s = recorder();
    feed.start(-1n);
    feed.join(s);
    try {
      await expect.poll(() => feed.head, { timeout: 5_000 }).toBeGreaterThanOrEqual(30n);
      const kept = feed.from(0n, 30) ?? [];
      expect(kept.map((e) => Buffer.from(e.text).toString())).toEqual(Array.from({ length: 30 }, (_, v) => `{"version":"${v}"}`));
      expect(kept.filter((e) => chunks.has(e.text.buffer))).toEqual([]);
    } finally {
      feed.stop();
    }
  });

  describe("on fake timers", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    /** Runs `test` on a feed over a stepped ledger, started at its beginning with one recorder joined. */
    async function withFeed(
      test: (ledger: ReturnType<typeof steppedLedger>, feed: CommitFeed, s: ReturnType<typeof recorder>) => Promise<void>,
      told = false,
      o: { signal?: ReturnType<typeof fakeSignal>; events?: FeedEvents; log?: FastifyBaseLogger } = {},
    ): Promise<void> {
      vi.useFakeTimers();
      const ledger = steppedLedger();
      if (o.signal) Object.assign(ledger.store, { commitSignal: o.signal.signal });
      const feed = new CommitFeed(ledger.store, o.log ?? log, () => told, o.events);
      const s = recorder();
      feed.start(-1n);
      feed.join(s);
      try {
        await test(ledger, feed, s);
      } finally {
        feed.stop();
        feed.endSignal();
      }
    }

    it("looks at once when this process commits (woken), and otherwise at the next poll", async () => {
      await withFeed(async (ledger, feed, s) => {
        await vi.advanceTimersByTimeAsync(0);
        ledger.commit(3);
        feed.wake();
        await vi.advanceTimersByTimeAsync(1);
        expect(s.got).toEqual([0n, 1n, 2n]);
        // Not woken: the commit waits for the poll, 10 ms after the last look.
        ledger.commit(2);
        await vi.advanceTimersByTimeAsync(1);
        expect(s.got).toEqual([0n, 1n, 2n]);
        await vi.advanceTimersByTimeAsync(10);
        expect(s.got).toEqual([0n, 1n, 2n, 3n, 4n]);
        // Woken during a look: the next look follows it at once.
        ledger.hold();
        ledger.commit(1);
        await vi.advanceTimersByTimeAsync(10);
        ledger.commit(1);
        feed.wake();
        ledger.release();
        await vi.advanceTimersByTimeAsync(1);
        expect(s.got).toEqual([0n, 1n, 2n, 3n, 4n, 5n, 6n]);
      });
    });

    it("where its own writer tells it of each commit, polls only each second, for another process's commits", async () => {
      await withFeed(async (ledger, feed, s) => {
        await vi.advanceTimersByTimeAsync(0);
        ledger.commit(2);
        feed.wake();
        await vi.advanceTimersByTimeAsync(1);
        expect(s.got).toEqual([0n, 1n]);
        // Committed by another process (no wake): seen at the poll a second after the last look, not at 10 ms.
        ledger.commit(1);
        await vi.advanceTimersByTimeAsync(500);
        expect(s.got).toEqual([0n, 1n]);
        await vi.advanceTimersByTimeAsync(500);
        expect(s.got).toEqual([0n, 1n, 2n]);
      }, true);
    });

    it("told by the database's commit signal, looks at once on each signal and polls only each second; the signal is kept a minute after it stops", async () => {
      const sig = fakeSignal();
      let looks = 0;
      let signals = 0;
      await withFeed(
        async (ledger, feed, s) => {
          expect(sig.watched()).toBe(true);
          await vi.advanceTimersByTimeAsync(0);
          ledger.commit(2);
          sig.tell();
          await vi.advanceTimersByTimeAsync(1);
          expect(s.got).toEqual([0n, 1n]);
          // Nothing told: the next look is a poll a second after the last one, not 10 ms after it.
          const before = looks;
          await vi.advanceTimersByTimeAsync(990);
          expect(looks).toBe(before);
          await vi.advanceTimersByTimeAsync(20);
          expect(looks).toBe(before + 1);
          // A commit the signal missed is still found, by that poll.
          ledger.commit(1);
          await vi.advanceTimersByTimeAsync(1_000);
          expect(s.got).toEqual([0n, 1n, 2n]);
          expect(signals).toBe(1);
          // Kept a minute after the feed stops, and taken up again by a start meanwhile: a client
          // opening and closing streams in a loop does not make the node open a session each.
          feed.stop();
          await vi.advanceTimersByTimeAsync(59_000);
          expect(sig.watch.stops).toBe(0);
          feed.start(feed.head);
          expect(sig.watches).toBe(1);
          feed.stop();
          await vi.advanceTimersByTimeAsync(60_000);
          expect(sig.watch.stops).toBe(1);
          expect(sig.watched()).toBe(false);
          // The next start watches it again; closing the app ends the watch at once.
          feed.start(feed.head);
          expect(sig.watches).toBe(2);
          feed.stop();
          feed.endSignal();
          expect(sig.watch.stops).toBe(2);
        },
        false,
        { signal: sig, events: { looked: () => looks++, signalled: () => signals++ } },
      );
    });

    it("told of a version its store has not yet (a standby hearing its primary), looks after 1 ms, doubling to 10, until the store has it, then each second", async () => {
      const sig = fakeSignal();
      let looks = 0;
      await withFeed(
        async (ledger, _feed, s) => {
          await vi.advanceTimersByTimeAsync(0);
          // The primary committed versions 0 to 2; the standby has replayed only 0 when told.
          ledger.commit(1);
          sig.tell(2n);
          await vi.advanceTimersByTimeAsync(1);
          expect(s.got).toEqual([0n]);
          // Looks 1, 2, 4, 8 and then 10 ms apart: the one at 1 ms has been, then at 3, 7, 15, 25 and 35.
          const told = looks;
          await vi.advanceTimersByTimeAsync(6);
          expect(looks - told).toBe(2);
          await vi.advanceTimersByTimeAsync(28);
          expect(looks - told).toBe(5);
          ledger.commit(2);
          await vi.advanceTimersByTimeAsync(10);
          expect(s.got).toEqual([0n, 1n, 2n]);
          // Told again of a version not yet there: the waits start at 1 ms again.
          sig.tell(3n);
          await vi.advanceTimersByTimeAsync(0);
          const again = looks;
          ledger.commit(1);
          await vi.advanceTimersByTimeAsync(1);
          expect(looks - again).toBe(1);
          expect(s.got).toEqual([0n, 1n, 2n, 3n]);
          // Replayed what it was told of: back to a poll each second.
          const caughtUp = looks;
          await vi.advanceTimersByTimeAsync(990);
          expect(looks).toBe(caughtUp);
          await vi.advanceTimersByTimeAsync(20);
          expect(looks).toBe(caughtUp + 1);
        },
        false,
        { signal: sig, events: { looked: () => looks++ } },
      );
    });

    it("does not watch the signal where its own writer tells it of each commit", async () => {
      const sig = fakeSignal();
      await withFeed(async () => expect(sig.watched()).toBe(false), true, { signal: sig });
    });

    it("polls every 10 ms while the signal is not live (being set up, or lost)", async () => {
      const sig = fakeSignal();
      sig.watch.live = false;
      let looks = 0;
      await withFeed(
        async () => {
          await vi.advanceTimersByTimeAsync(0);
          const before = looks;
          await vi.advanceTimersByTimeAsync(100);
          expect(looks - before).toBeGreaterThanOrEqual(9);
        },
        false,
        { signal: sig, events: { looked: () => looks++ } },
      );
    });

    it("keeps a signal that is not live while polls find the commits (its session being opened again)", async () => {
      const sig = fakeSignal();
      await withFeed(
        async (ledger, _feed, s) => {
          await vi.advanceTimersByTimeAsync(0);
          // Lost: from the poll after, every 10 ms.
          sig.watch.live = false;
          await vi.advanceTimersByTimeAsync(1_000);
          for (let i = 0; i < 5; i++) {
            ledger.commit(1);
            await vi.advanceTimersByTimeAsync(10);
          }
          expect(s.got).toEqual([0n, 1n, 2n, 3n, 4n]);
          expect(sig.watch.stops).toBe(0);
        },
        false,
        { signal: sig },
      );
    });

    it("logs once why its signal cannot tell, however often the signal says so, and again when it tells", async () => {
      const sig = fakeSignal();
      const logged: string[] = [];
      const both = { info: (m: string) => logged.push(`info: ${m}`), warn: (m: string) => logged.push(`warn: ${m}`) } as unknown as FastifyBaseLogger;
      await withFeed(
        async (ledger, _feed, s) => {
          await vi.advanceTimersByTimeAsync(0);
          for (let i = 0; i < 5; i++) sig.lose(`the primary postgres://x@h/db: connect ECONNREFUSED (${i})`);
          expect(logged).toEqual([
            "warn: transaction streams: not told of commits (the primary postgres://x@h/db: connect ECONNREFUSED (0)); looking every 10 ms until told again",
          ]);
          sig.tell();
          expect(logged.at(-1)).toBe("info: transaction streams: told of commits again");
          ledger.commit(1);
          sig.tell(0n);
          await vi.advanceTimersByTimeAsync(1);
          expect(s.got).toEqual([0n]);
          expect(logged).toHaveLength(2);
          // A reason is cut to 300 characters: a client cannot make it long, nor can the database.
          sig.lose("x".repeat(10_000));
          expect(logged.at(-1)!.length).toBeLessThan(420);
        },
        false,
        { signal: sig, log: both },
      );
    });

    it("stops trusting a signal after two polls in a row found commits it did not tell of, and polls every 10 ms instead", async () => {
      const sig = fakeSignal();
      const warned: string[] = [];
      const warnLog = { info() {}, warn: (m: string) => warned.push(m) } as unknown as FastifyBaseLogger;
      await withFeed(
        async (ledger, _feed, s) => {
          await vi.advanceTimersByTimeAsync(0);
          // A poll finds an untold commit whose signal comes after it (a race): still trusted.
          ledger.commit(1);
          await vi.advanceTimersByTimeAsync(1_000);
          expect(s.got).toEqual([0n]);
          sig.tell();
          await vi.advanceTimersByTimeAsync(0);
          ledger.commit(1);
          await vi.advanceTimersByTimeAsync(1_000);
          expect(s.got).toEqual([0n, 1n]);
          expect(sig.watch.stops).toBe(0);
          // A second poll in a row finds commits with no signal between: the signal is stopped.
          ledger.commit(1);
          await vi.advanceTimersByTimeAsync(1_000);
          expect(s.got).toEqual([0n, 1n, 2n]);
          expect(sig.watch.stops).toBe(1);
          expect(warned).toEqual([expect.stringContaining("did not tell of commits another process made; looking every 10 ms")]);
          // From now on a commit is found within 10 ms.
          ledger.commit(1);
          await vi.advanceTimersByTimeAsync(10);
          expect(s.got).toEqual([0n, 1n, 2n, 3n]);
          // Five minutes later it listens again (a session lost without a word comes back) ...
          expect(warned[0]).toContain("listening again in 5 minutes");
          await vi.advanceTimersByTimeAsync(5 * 60_000);
          expect(sig.watches).toBe(2);
          expect(sig.watched()).toBe(true);
          // ... and a signal that misses commits again is dropped again, for twice as long.
          for (let i = 0; i < 2; i++) {
            ledger.commit(1);
            await vi.advanceTimersByTimeAsync(1_000);
          }
          expect(sig.watch.stops).toBe(2);
          expect(warned).toHaveLength(2);
          expect(warned[1]).toContain("listening again in 10 minutes");
          await vi.advanceTimersByTimeAsync(5 * 60_000);
          expect(sig.watches).toBe(2);
          await vi.advanceTimersByTimeAsync(5 * 60_000);
          expect(sig.watches).toBe(3);
        },
        false,
        { signal: sig, log: warnLog },
      );
    });

    it("hands out nothing of a look begun before a stop once it has started again elsewhere", async () => {
      await withFeed(async (ledger, feed, first) => {
        ledger.hold();
        ledger.commit(5);
        await vi.advanceTimersByTimeAsync(10);
        // The look is reading versions 0 to 4; the last stream leaves, and a new one opens at 99.
        feed.leave(first);
        feed.stop();
        const second = recorder();
        feed.start(99n);
        feed.join(second);
        ledger.release();
        await vi.advanceTimersByTimeAsync(50);
        expect(feed.head).toBe(99n);
        expect(feed.from(0n, 10)).toBeNull();
        expect([...first.got, ...second.got]).toEqual([]);
      });
    });

    it("tells its live streams they are lost when the pruner passed versions it had not read, and goes on from the oldest kept", async () => {
      await withFeed(async (ledger, feed, s) => {
        ledger.commit(3);
        await vi.advanceTimersByTimeAsync(10);
        expect(s.got).toEqual([0n, 1n, 2n]);
        // Versions 3 to 9 commit and 3 to 6 are pruned before the feed looks again.
        ledger.commit(7);
        ledger.prune(7n);
        await vi.advanceTimersByTimeAsync(10);
        expect(s.lostAt).toEqual([3n]);
        expect(feed.head).toBe(6n);
        // It goes on from 7 (kept in its ring for streams that catch up), and the lost stream is no longer fed.
        await vi.advanceTimersByTimeAsync(20);
        expect(feed.head).toBe(9n);
        expect(feed.from(7n, 10)?.map((e) => e.version)).toEqual([7n, 8n, 9n]);
        expect(s.got).toEqual([0n, 1n, 2n]);
      });
    });
  });
});
