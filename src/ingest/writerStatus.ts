/**
 * Whether the writers of a serving process (the devnet, the built-in pruner, a follower) are
 * failing, for the log and for `GET /v1/-/healthy` (503 with the reason while one is). A writer
 * reports every attempt; a failure is logged each time with its count, and the first success after
 * failures is logged as the recovery, so an operator sees both ends of an outage. A writer that
 * stopped for good (a follower's permanent stop) stays reported until the process restarts.
 */

export interface WriterFailure {
  /** Which writer: "devnet", "pruner". */
  writer: string;
  /** The last error's message (names the database path when the store does). */
  message: string;
  /** Failed attempts in a row. */
  attempts: number;
  /** When the first of them failed (ms since the epoch). */
  sinceMs: number;
  /** The writer stopped and is not tried again. */
  stopped?: boolean;
}

/** The part of a pino logger this needs. */
export interface StatusLog {
  error(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export class WriterStatus {
  private readonly failures = new Map<string, WriterFailure>();

  constructor(private readonly log: StatusLog | null = null) {}

  /** A write of `writer` committed; `what` says what, for the recovery line. */
  ok(writer: string, what = ""): void {
    const f = this.failures.get(writer);
    if (!f) return;
    this.failures.delete(writer);
    this.log?.info(
      { writer, failedAttempts: f.attempts, failingForMs: Date.now() - f.sinceMs },
      `${writer}: writing works again after ${f.attempts} failed attempt${f.attempts === 1 ? "" : "s"}${what ? `; ${what}` : ""}`,
    );
  }

  /** A write of `writer` failed; it will be tried again (`retry` says when, for the log). */
  failed(writer: string, e: unknown, retry = "it is tried again"): WriterFailure {
    const message = e instanceof Error ? e.message : String(e);
    const prev = this.failures.get(writer);
    const f: WriterFailure = { writer, message, attempts: (prev?.attempts ?? 0) + 1, sinceMs: prev?.sinceMs ?? Date.now() };
    this.failures.set(writer, f);
    this.log?.error({ writer, attempts: f.attempts, err: e }, `${writer}: writing failed (attempt ${f.attempts}): ${message}; ${retry}`);
    return f;
  }

  /** `writer` stopped for good on `e`: it is not tried again, and stays reported as failing. */
  stopped(writer: string, e: unknown): WriterFailure {
    const message = e instanceof Error ? e.message : String(e);
    const prev = this.failures.get(writer);
    const f: WriterFailure = { writer, message, attempts: (prev?.attempts ?? 0) + 1, sinceMs: Date.now(), stopped: true };
    this.failures.set(writer, f);
    this.log?.error({ writer, stopped: true, err: e }, `${writer}: stopped: ${message}; not tried again (the node serves what it holds)`);
    return f;
  }

  /** How `writer` is failing now, or null when its last attempt succeeded. */
  failure(writer: string): WriterFailure | null {
    return this.failures.get(writer) ?? null;
  }

  /** A writer that stopped, else the first writer failing now; null when every writer's last attempt succeeded. */
  get failing(): WriterFailure | null {
    let first: WriterFailure | null = null;
    for (const f of this.failures.values()) {
      if (f.stopped) return f; // a stop outlasts any passing failure: named first
      first ??= f;
    }
    return first;
  }

  /** The health check's text for a failing writer. */
  static describe(f: WriterFailure): string {
    if (f.stopped) return `the ${f.writer} stopped and is not tried again: ${f.message}`;
    const secs = ((Date.now() - f.sinceMs) / 1000).toFixed(1);
    return `the ${f.writer} is failing to write: ${f.attempts} attempt${f.attempts === 1 ? "" : "s"} in a row over ${secs}s, last: ${f.message}`;
  }
}
