/**
 * A polite client of an Aptos node's REST API v1 (issue 16): keep-alive connections (Node's http
 * and https agents), a bounded request rate, and retries with exponential backoff and full jitter
 * on network errors, 5xx and 429, honouring `Retry-After`. Every answer that is not retried comes
 * back as it is: the caller decides what a 404 or 410 means.
 *
 * Every answer is bounded: its body is read as a stream, counted on the wire (compressed) and
 * decoded, and the connection is cut as soon as either passes its bound (`maxWireBytes`,
 * `maxAnswerBytes`): a failed attempt, retried like a 5xx. Nothing larger is ever buffered.
 */
import http from "node:http";
import https from "node:https";
import zlib from "node:zlib";
import { UpstreamUnavailableError } from "../../storage/contracts/errors.js";
import { RequestRate } from "./rate.js";

export interface UpstreamClientOptions {
  /** Sent as `Authorization: Bearer <key>`. */
  apiKey?: string | null;
  /** At most this many requests start per second (all callers together). */
  maxRequestsPerSecond?: number;
  /** One attempt's deadline. */
  attemptTimeoutMs?: number;
  /** Attempts of one request before it fails (unless a deadline given to `request` ends it first). */
  maxAttempts?: number;
  /** First backoff; doubled per attempt, up to `maxBackoffMs`. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** An answer's body, decoded, may be at most this many bytes (default `DEFAULT_MAX_ANSWER_BYTES`). */
  maxAnswerBytes?: number;
  /** An answer's body on the wire (compressed) may be at most this many bytes (default `DEFAULT_MAX_WIRE_BYTES`). */
  maxWireBytes?: number;
  /** Told of every retry, for the log. */
  onRetry?: (what: string, attempt: number, delayMs: number) => void;
}

export interface UpstreamResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

/**
 * Bounds with headroom over real answers: a page of 100 mainnet transactions is a few MB, the
 * modules page of 0x1 about 1-2 MB; a 50 MB page or a gzip bomb is refused.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 32 * 1024 * 1024;
export const DEFAULT_MAX_WIRE_BYTES = 32 * 1024 * 1024;

/** An answer past a size bound: the attempt is cut there and counts as failed (retried). */
export class AnswerTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AnswerTooLargeError";
  }
}

/** An attempt that did not end within its deadline: it is cut there and retried. */
class AttemptTimeoutError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "AttemptTimeoutError";
  }
}

/** The upstream could not be reached or kept failing: a typed failure kind shared with the readers. */
export { UpstreamUnavailableError };

export interface RequestOptions {
  method?: "GET" | "POST";
  /** A JSON body (POST). */
  json?: unknown;
  accept?: string;
  /** Give up retrying at this time (ms since the epoch, `Date.now()`), whatever the attempts left. */
  deadline?: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class UpstreamClient {
  readonly base: string;
  private readonly o: Required<Omit<UpstreamClientOptions, "apiKey" | "onRetry">> & Pick<UpstreamClientOptions, "onRetry">;
  private readonly apiKey: string | null;
  /** The rate bound: each start books the next slot. */
  private readonly rate: RequestRate;
  /** Requests sent (attempts included), for the benchmark's requests per 1,000 versions. */
  requests = 0;

  constructor(base: string, o: UpstreamClientOptions = {}) {
    // Accepts `https://host/v1` or `https://host/v1/`; paths below start with `/`.
    this.base = base.replace(/\/+$/, "");
    this.apiKey = o.apiKey ?? null;
    this.o = {
      maxRequestsPerSecond: o.maxRequestsPerSecond ?? 50,
      attemptTimeoutMs: o.attemptTimeoutMs ?? 30_000,
      maxAttempts: o.maxAttempts ?? 8,
      baseBackoffMs: o.baseBackoffMs ?? 200,
      maxBackoffMs: o.maxBackoffMs ?? 10_000,
      maxAnswerBytes: o.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
      maxWireBytes: o.maxWireBytes ?? DEFAULT_MAX_WIRE_BYTES,
      onRetry: o.onRetry,
    };
    this.rate = new RequestRate(this.o.maxRequestsPerSecond);
  }

  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  /** Bytes of answer bodies read on the wire, and decoded, over every attempt (the tests' check of the bounds). */
  readonly bytesRead = { wire: 0, decoded: 0 };

  /**
   * One attempt: the status, headers and body, the body read as a stream within the size bounds
   * (decoded from gzip, deflate or br here) and the whole attempt within `timeoutMs`: a timer
   * cleared when the attempt settles, not an `AbortSignal.timeout`, whose timer and weakly held
   * signal stay for the whole span after the answer (CPU a page, in GC, for nothing).
   */
  private attempt(url: URL, method: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<UpstreamResponse> {
    const { maxAnswerBytes, maxWireBytes } = this.o;
    const counted = this.bytesRead;
    return new Promise<UpstreamResponse>((resolve, reject) => {
      let settled = false;
      let req: http.ClientRequest | null = null;
      let decoder: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null = null;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        decoder?.destroy();
        req?.destroy();
        reject(e);
      };
      // Unreferenced, as `AbortSignal.timeout`'s is: the request's socket is what keeps a process waiting.
      const timer = setTimeout(() => fail(new AttemptTimeoutError(timeoutMs)), timeoutMs).unref();
      const mod = url.protocol === "https:" ? https : http;
      req = mod.request(url, { method, headers, agent: url.protocol === "https:" ? this.agents.https : this.agents.http }, (res) => {
        const status = res.statusCode ?? 0;
        const declared = Number(res.headers["content-length"]);
        if (declared > maxWireBytes) return fail(new AnswerTooLargeError(`answer larger than ${maxWireBytes} bytes (Content-Length ${declared})`));
        const encoding = String(res.headers["content-encoding"] ?? "identity").trim().toLowerCase();
        const chunks: Buffer[] = [];
        let size = 0;
        const take = (c: Buffer) => {
          size += c.length;
          counted.decoded += c.length;
          if (size > maxAnswerBytes) return fail(new AnswerTooLargeError(`answer larger than ${maxAnswerBytes} bytes (decoded)`));
          chunks.push(c);
        };
        const done = () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (v === undefined) continue;
            for (const one of Array.isArray(v) ? v : [v]) h.append(k, one);
          }
          resolve({ status, headers: h, body: Buffer.concat(chunks) });
        };
        if (encoding === "gzip" || encoding === "x-gzip") decoder = zlib.createGunzip();
        else if (encoding === "deflate") decoder = zlib.createInflate();
        else if (encoding === "br") decoder = zlib.createBrotliDecompress();
        else if (encoding !== "identity") return fail(new Error(`answer in an unknown content-encoding ${JSON.stringify(encoding).slice(0, 40)}`));
        if (decoder) {
          decoder.on("data", take);
          decoder.on("end", done);
          decoder.on("error", (e) => fail(new Error(`answer does not decode as ${encoding}: ${e.message}`)));
        }
        let wire = 0;
        res.on("data", (c: Buffer) => {
          if (settled) return;
          wire += c.length;
          counted.wire += c.length;
          if (wire > maxWireBytes) return fail(new AnswerTooLargeError(`answer larger than ${maxWireBytes} bytes (on the wire)`));
          if (decoder) decoder.write(c);
          else take(c);
        });
        res.on("end", () => (decoder ? decoder.end() : done()));
        res.on("error", (e) => fail(e));
        res.on("close", () => {
          if (!res.complete) fail(new Error("connection closed before the answer ended"));
        });
      });
      req.on("error", (e) => fail(e));
      req.end(body);
    });
  }

  /** Waits for this request's slot under the rate bound. */
  private async slot(): Promise<void> {
    const wait = this.rate.book();
    if (wait > 0) await sleep(wait);
  }

  /**
   * How messages name a request: its path under the upstream's base, never the base itself, whose
   * host or path may carry a provider's key (the base is logged once, at start).
   */
  static describe(method: string, path: string): string {
    return `${method} [upstream]${path}`;
  }

  /**
   * One request, retried on network errors, 5xx and 429; any other status is returned. The error
   * it throws names the request by `describe` and a socket failure only as unreachable: its
   * message may reach a client (`/-/healthy`); each attempt's own failure is what `onRetry` logs.
   */
  async request(path: string, r: RequestOptions = {}): Promise<UpstreamResponse> {
    const url = this.base + path;
    const what = UpstreamClient.describe(r.method ?? "GET", path);
    const headers: Record<string, string> = { accept: r.accept ?? "application/json", "accept-encoding": "gzip, deflate, br" };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (r.json !== undefined) headers["content-type"] = "application/json";
    let last = "";
    let lastSaid = "";
    for (let attempt = 1; ; attempt++) {
      await this.slot();
      let retryAfterMs: number | null = null;
      const remaining = r.deadline !== undefined ? r.deadline - Date.now() : Infinity;
      if (remaining <= 0) break;
      try {
        this.requests++;
        const res = await this.attempt(new URL(url), r.method ?? "GET", headers, r.json !== undefined ? JSON.stringify(r.json) : undefined, Math.min(this.o.attemptTimeoutMs, remaining));
        const body = res.body;
        if (res.status !== 429 && res.status < 500) return res;
        last = lastSaid = `${res.status} ${body.toString("utf8", 0, Math.min(body.length, 200))}`;
        retryAfterMs = parseRetryAfter(res.headers.get("retry-after"));
      } catch (e) {
        last = describeFetchError(e);
        lastSaid = e instanceof AttemptTimeoutError || e instanceof AnswerTooLargeError ? last : "could not be reached";
      }
      if (attempt >= this.o.maxAttempts && r.deadline === undefined) break;
      const backoff = Math.min(this.o.maxBackoffMs, this.o.baseBackoffMs * 2 ** (attempt - 1));
      // Full jitter spreads out clients retrying together; the server's Retry-After is a floor.
      const delay = Math.max(retryAfterMs ?? 0, Math.random() * backoff);
      if (r.deadline !== undefined && Date.now() + delay >= r.deadline) break;
      this.o.onRetry?.(`${what}: ${last}`, attempt, delay);
      await sleep(delay);
    }
    throw new UpstreamUnavailableError(`upstream ${what} failed: ${lastSaid || "no attempt before the deadline"}`, { cause: new Error(`${url}: ${last}`) });
  }

  /** GET a JSON answer; a status other than 200 is returned as it is, with the parsed error object. */
  async getJson(path: string, r: RequestOptions = {}): Promise<{ status: number; headers: Headers; json: unknown }> {
    const res = await this.request(path, r);
    return { status: res.status, headers: res.headers, json: parseJson(res.body, UpstreamClient.describe(r.method ?? "GET", path)) };
  }
}

/** An upstream answer that is not what the REST API v1 answers (not JSON, a wrong shape). */
/**
 * A ledger header of an upstream's answer (`chain-id`, `ledger-version`, `cursor`): the reference
 * node's `X-Aptos-*`, else the `X-NODE-*` a ledger-node sends (docs/decisions.md §4), so that a
 * ledger-node can be followed whether or not it runs with `--aptos-headers`.
 */
export function ledgerHeader(headers: Headers, name: string): string | null {
  return headers.get(`x-aptos-${name}`) ?? headers.get(`x-node-${name}`);
}

export class UpstreamGarbageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpstreamGarbageError";
  }
}

export function parseJson(body: Buffer, what: string): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch (e) {
    throw notJsonError(what, (e as Error).message, body.toString("utf8", 0, 80));
  }
}

/** The error of a body that is not JSON: `what` was asked, JSON.parse said `message`, the body starts with `head`. */
export function notJsonError(what: string, message: string, head: string): UpstreamGarbageError {
  return new UpstreamGarbageError(`${what} answered a body that is not JSON (${message}): ${JSON.stringify(head)}`);
}

/** `Retry-After` in ms: delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(v: string | null): number | null {
  if (v === null) return null;
  if (/^[0-9]+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : Math.max(0, t - Date.now());
}

function describeFetchError(e: unknown): string {
  const err = e as Error & { code?: string; cause?: { code?: string; message?: string } };
  if (e instanceof AttemptTimeoutError) return "timed out";
  if (e instanceof AnswerTooLargeError) return err.message;
  return err?.code ?? err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}
