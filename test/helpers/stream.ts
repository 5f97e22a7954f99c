/**
 * A client of GET /v1/transactions/stream for tests: a plain HTTP request whose body is parsed as it
 * arrives (Server-Sent Events or NDJSON), so a test can wait for the next events of a stream that
 * does not end.
 */
import { type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, request } from "node:http";

export interface StreamEvent {
  /** SSE `id:` (the version); NDJSON: the line's `version`. */
  id?: string;
  /** SSE `event:`; `end` for the stream's last event (NDJSON: a `stream_end` line). */
  event?: string;
  /** The event's data as sent (an SSE event's data lines, an NDJSON line). */
  data: string;
}

export interface StreamClient {
  status: number;
  headers: IncomingHttpHeaders;
  /** The client end's port (to find which process serves the stream). */
  localPort: number;
  /** Every event so far, in order. */
  readonly events: StreamEvent[];
  /** The transactions' events only (not the end event). */
  readonly transactions: StreamEvent[];
  /** Heartbeats so far (SSE comments, empty NDJSON lines). */
  heartbeats: number;
  /** The raw body so far. */
  body(): string;
  /** Resolves when the response has ended or its connection closed. */
  readonly closed: Promise<void>;
  /** Waits until `cond` holds of the client (checked after every chunk). */
  until(cond: (c: StreamClient) => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): void;
}

export interface StreamOptions {
  accept?: string;
  headers?: Record<string, string>;
}

/** Opens `url` (the stream's URL with its query) and resolves once the response's head arrived. */
export function openStream(url: string, o: StreamOptions = {}): Promise<StreamClient> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.accept !== undefined) headers.accept = o.accept;
  return new Promise((resolve, reject) => {
    const req: ClientRequest = request(url, { headers, agent: false }, (res: IncomingMessage) => resolve(client(req, res)));
    req.on("error", reject);
    req.end();
  });
}

function client(req: ClientRequest, res: IncomingMessage): StreamClient {
  const ndjson = String(res.headers["content-type"] ?? "").startsWith("application/x-ndjson");
  let raw = "";
  let pending = "";
  const waiters = new Set<() => void>();
  const closed = new Promise<void>((resolve) => {
    res.on("close", resolve);
    res.on("error", () => resolve());
    req.on("error", () => resolve());
  });
  const c: StreamClient = {
    status: res.statusCode ?? 0,
    headers: res.headers,
    localPort: res.socket.localPort ?? 0,
    events: [],
    get transactions() {
      return this.events.filter((e) => e.event === undefined);
    },
    heartbeats: 0,
    body: () => raw,
    closed,
    until(cond, what, timeoutMs = 20_000) {
      if (cond(c)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!cond(c)) return;
          done();
          resolve();
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`stream: ${what} did not happen within ${timeoutMs} ms (${c.events.length} events, ${c.heartbeats} heartbeats; body ends ${JSON.stringify(raw.slice(-300))})`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        void closed.then(check);
      });
    },
    close: () => req.destroy(),
  };
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  res.setEncoding("utf8");
  res.on("data", (chunk: string) => {
    raw += chunk;
    pending += chunk;
    if (ndjson) {
      let i = pending.indexOf("\n");
      while (i >= 0) {
        const line = pending.slice(0, i);
        pending = pending.slice(i + 1);
        if (line === "") c.heartbeats++;
        else if (line.startsWith('{"stream_end":')) c.events.push({ event: "end", data: line });
        else c.events.push({ id: String((JSON.parse(line) as { version: string }).version), data: line });
        i = pending.indexOf("\n");
      }
    } else {
      let i = pending.indexOf("\n\n");
      while (i >= 0) {
        const block = pending.slice(0, i);
        pending = pending.slice(i + 2);
        const e: StreamEvent = { data: "" };
        const data: string[] = [];
        let comment = false;
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) comment = true;
          else if (line.startsWith("id: ")) e.id = line.slice(4);
          else if (line.startsWith("event: ")) e.event = line.slice(7);
          else if (line.startsWith("data: ")) data.push(line.slice(6));
        }
        if (data.length > 0) {
          e.data = data.join("\n");
          c.events.push(e);
        } else if (comment) c.heartbeats++;
        i = pending.indexOf("\n\n");
      }
    }
    notify();
  });
  void closed.then(notify);
  return c;
}

/** The versions of a stream's transactions, as numbers. */
export const versionsOf = (c: StreamClient): number[] => c.transactions.map((e) => Number(e.id));

/** The versions `from` to `to`, both included. */
export const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
