/**
 * How the error answers are logged (docs/operating.md, "Logging of errors"). The node's own faults (a bug, the
 * store failing) at error, with their cause and its stack; an answer a client caused or the
 * upstream could not help (4xx, and the 502–504 of an upstream, a rate limit or a replica's base
 * state) in one line without a stack, every client-supplied text in it clipped. Each status and
 * error code is logged at most `LINES_PER_WINDOW` times a window; the rest are only counted, and a
 * line at the window's end (or at close) says how many, so no client sets the log's volume.
 */
import type { FastifyBaseLogger } from "fastify";
import { type ApiError, clip } from "../http/apiError.js";

/** Lines logged per status and error code in one window; the rest are counted in a summary line. */
export const LINES_PER_WINDOW = 5;
/** How long a window lasts from the first error of its status and code. */
export const WINDOW_MS = 60_000;
/**
 * What a client-caused line quotes at most, in characters: the message, the request's path and
 * query, and the cause's messages. Even with every character escaped as `\uXXXX` a line stays
 * under 4 KiB.
 */
const MESSAGE_MAX = 240;
const URL_MAX = 120;
const CAUSE_MAX = 240;

/** What a line names of the request. */
export interface ErrorRequest {
  id: string;
  method: string;
  url: string;
}

interface Window {
  logged: number;
  suppressed: number;
  timer: NodeJS.Timeout;
}

export class ErrorLog {
  /** The open window of each `status error_code`: bounded by the statuses times the closed list of codes. */
  private readonly windows = new Map<string, Window>();

  constructor(private readonly log: FastifyBaseLogger) {}

  /** Logs `e`, answered to `req`, unless its window's lines are used up (`cause`: what a fault logs as `err`). */
  note(req: ErrorRequest, e: ApiError, cause: unknown = e): void {
    const key = `${e.status} ${e.errorCode}`;
    let w = this.windows.get(key);
    if (w === undefined) {
      const opened: Window = { logged: 0, suppressed: 0, timer: setTimeout(() => this.close(key, opened), WINDOW_MS).unref() };
      this.windows.set(key, opened);
      w = opened;
    }
    if (w.logged >= LINES_PER_WINDOW) {
      w.suppressed++;
      return;
    }
    w.logged++;
    if (e.fault) {
      this.log.error({ reqId: req.id, status: e.status, errorCode: e.errorCode, err: cause }, e.message);
      return;
    }
    const line: Record<string, unknown> = { reqId: req.id, status: e.status, errorCode: e.errorCode, method: req.method, url: clip(req.url, URL_MAX) };
    const why = causes(e.cause, e.message);
    if (why) line.cause = clip(why, CAUSE_MAX);
    this.log[e.status >= 500 || e.status === 429 ? "warn" : "info"](line, clip(e.message, MESSAGE_MAX));
  }

  /** Ends every window now, with the summary line of each that suppressed lines (the node is closing). */
  flush(): void {
    for (const [key, w] of this.windows) {
      clearTimeout(w.timer);
      this.close(key, w);
    }
  }

  private close(key: string, w: Window): void {
    if (this.windows.get(key) === w) this.windows.delete(key);
    if (w.suppressed === 0) return;
    const [status, errorCode] = key.split(" ");
    this.log.warn({ status: Number(status), errorCode, suppressed: w.suppressed }, `${key}: suppressed ${w.suppressed} more (ledger_node_http_errors_total counts every one)`);
  }
}

/**
 * The messages of `cause` and the causes it names, outermost first (at most three), but those
 * `message` already quotes (an error's message often ends with its cause's).
 */
function causes(cause: unknown, message: string): string {
  const parts: string[] = [];
  for (let c = cause, i = 0; c instanceof Error && i < 3; c = c.cause, i++) if (!message.includes(c.message)) parts.push(clip(c.message, CAUSE_MAX));
  return parts.join(": ");
}
