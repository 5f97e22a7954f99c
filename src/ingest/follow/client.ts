/**
 * A polite client of an Aptos node's REST API v1 (issue 16): Node's own fetch (undici, keep-alive
 * connections), a bounded request rate, and retries with exponential backoff and full jitter on
 * network errors, 5xx and 429, honouring `Retry-After`. Every answer that is not retried comes back
 * as it is: the caller decides what a 404 or 410 means.
 */

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
  /** Told of every retry, for the log. */
  onRetry?: (what: string, attempt: number, delayMs: number) => void;
}

export interface UpstreamResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

/** The upstream could not be reached or kept failing (network, 5xx, 429) past the attempts or deadline. */
export class UpstreamUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpstreamUnavailableError";
  }
}

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
  /** When the next request may start (the rate bound): each start books the next slot. */
  private nextSlot = 0;
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
      onRetry: o.onRetry,
    };
  }

  /** Waits for this request's slot under the rate bound. */
  private async slot(): Promise<void> {
    const gap = 1000 / this.o.maxRequestsPerSecond;
    const now = performance.now();
    const at = Math.max(now, this.nextSlot);
    this.nextSlot = at + gap;
    if (at > now) await sleep(at - now);
  }

  /** One request, retried on network errors, 5xx and 429; any other status is returned. */
  async request(path: string, r: RequestOptions = {}): Promise<UpstreamResponse> {
    const url = this.base + path;
    const what = `${r.method ?? "GET"} ${url}`;
    const headers: Record<string, string> = { accept: r.accept ?? "application/json" };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (r.json !== undefined) headers["content-type"] = "application/json";
    let last = "";
    for (let attempt = 1; ; attempt++) {
      await this.slot();
      let retryAfterMs: number | null = null;
      const remaining = r.deadline !== undefined ? r.deadline - Date.now() : Infinity;
      if (remaining <= 0) break;
      try {
        this.requests++;
        const res = await fetch(url, {
          method: r.method ?? "GET",
          headers,
          ...(r.json !== undefined ? { body: JSON.stringify(r.json) } : {}),
          signal: AbortSignal.timeout(Math.min(this.o.attemptTimeoutMs, remaining)),
        });
        const body = Buffer.from(await res.arrayBuffer());
        if (res.status !== 429 && res.status < 500) return { status: res.status, headers: res.headers, body };
        last = `${res.status} ${body.toString("utf8", 0, Math.min(body.length, 200))}`;
        retryAfterMs = parseRetryAfter(res.headers.get("retry-after"));
      } catch (e) {
        last = describeFetchError(e);
      }
      if (attempt >= this.o.maxAttempts && r.deadline === undefined) break;
      const backoff = Math.min(this.o.maxBackoffMs, this.o.baseBackoffMs * 2 ** (attempt - 1));
      // Full jitter spreads out clients retrying together; the server's Retry-After is a floor.
      const delay = Math.max(retryAfterMs ?? 0, Math.random() * backoff);
      if (r.deadline !== undefined && Date.now() + delay >= r.deadline) break;
      this.o.onRetry?.(`${what}: ${last}`, attempt, delay);
      await sleep(delay);
    }
    throw new UpstreamUnavailableError(`upstream ${what} failed: ${last || "no attempt before the deadline"}`);
  }

  /** GET a JSON answer; a status other than 200 is returned as it is, with the parsed error object. */
  async getJson(path: string, r: RequestOptions = {}): Promise<{ status: number; headers: Headers; json: unknown }> {
    const res = await this.request(path, r);
    return { status: res.status, headers: res.headers, json: parseJson(res.body, `${r.method ?? "GET"} ${this.base}${path}`) };
  }
}

/** An upstream answer that is not what the REST API v1 answers (not JSON, a wrong shape). */
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
    throw new UpstreamGarbageError(`${what} answered a body that is not JSON (${(e as Error).message}): ${JSON.stringify(body.toString("utf8", 0, 80))}`);
  }
}

/** `Retry-After` in ms: delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(v: string | null): number | null {
  if (v === null) return null;
  if (/^[0-9]+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : Math.max(0, t - Date.now());
}

function describeFetchError(e: unknown): string {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err?.name === "TimeoutError") return "timed out";
  return err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}
