/**
 * A request rate bound: starts are spaced `1 / perSecond` s apart, each start booking the next
 * slot. Shared by the upstream client (the follower, the base-state service) and the proxy, each
 * with a budget of its own.
 */
export class RequestRate {
  /** When the next request may start (`performance.now()` ms). */
  private nextSlot = 0;
  private readonly gapMs: number;

  constructor(perSecond: number) {
    this.gapMs = 1000 / perSecond;
  }

  /** ms until a request asking now could start (0: at once); books nothing. */
  waitMs(): number {
    return Math.max(0, this.nextSlot - performance.now());
  }

  /** Books the next slot: the ms to wait before starting (0: at once). */
  book(): number {
    const now = performance.now();
    const at = Math.max(now, this.nextSlot);
    this.nextSlot = at + this.gapMs;
    return at - now;
  }
}
