/**
 * The fairness bound of a replica's base-state fetches (docs/following.md, "The replica's base state,
 * decided"): each client (its address) starts at most `perClientPerSecond` new fetches a second,
 * from a token bucket as deep as one second's share, and has at most as many running at once;
 * at most `concurrent` fetches run at once over all clients. A fetch past either is refused
 * before the upstream is asked, so one client's burst of keys spends its own share, however slow
 * the upstream, and leaves the rest of the budget to the others.
 */
import { LRUCache } from "lru-cache";
import { FetchRefusedError, withoutStack } from "../../storage/contracts/errors.js";

export interface FetchSharesOptions {
  /** New fetches a client may start a second (and have running at once). */
  perClientPerSecond: number;
  /** Fetches running at once, all clients together. */
  concurrent: number;
}

/** Clients whose buckets are kept (least recently seen go first: a client back after that starts full). */
const CLIENTS_KEPT = 10_000;

interface Bucket {
  tokens: number;
  /** When `tokens` was counted (`performance.now()` ms). */
  at: number;
  /** The client's fetches running. */
  running: number;
}

export class FetchShares {
  private readonly clients = new LRUCache<string, Bucket>({ max: CLIENTS_KEPT });
  private running = 0;

  constructor(readonly o: FetchSharesOptions) {}

  /** Fetches running now. */
  get inFlight(): number {
    return this.running;
  }

  /**
   * Admits a new fetch for `client` and returns its release (call it once the fetch settles), or
   * throws `FetchRefusedError`. A null client is the node's own (the gas estimator's fixed keys):
   * counted, never refused.
   */
  admit(client: string | null): () => void {
    if (client !== null) {
      const rate = this.o.perClientPerSecond;
      const now = performance.now();
      let bucket = this.clients.get(client);
      if (bucket) {
        bucket.tokens = Math.min(rate, bucket.tokens + ((now - bucket.at) / 1000) * rate);
        bucket.at = now;
      } else {
        bucket = { tokens: rate, at: now, running: 0 };
        this.clients.set(client, bucket);
      }
      if (bucket.tokens < 1 || bucket.running >= rate) {
        const after = Math.max(1, Math.ceil((1 - bucket.tokens) / rate));
        throw refused(
          "client",
          after,
          `Per IP rate limit exceeded. Limit: ${rate} fetches of state from the upstream per second (state this node has not stored yet); retry after ${after} s`,
        );
      }
      if (this.running >= this.o.concurrent) {
        throw refused("node", 1, `the node's fetches of state from the upstream are all in use (at most ${this.o.concurrent} at once): retry after 1 s`);
      }
      bucket.tokens -= 1;
      bucket.running++;
    }
    const mine = client === null ? null : this.clients.get(client)!;
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      if (mine) mine.running--;
    };
  }
}

/** A refusal is an answer a client can provoke at will: made without capturing a stack trace. */
function refused(scope: "client" | "node", retryAfterSec: number, message: string): FetchRefusedError {
  return withoutStack(() => new FetchRefusedError(scope, retryAfterSec, message));
}
