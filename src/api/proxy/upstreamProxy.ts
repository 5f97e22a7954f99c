/**
 * The pass-through of `serve --follow URL --proxy` (issue 34): a `/v1` route this node does not
 * serve is forwarded to the followed upstream, under the follower's API key and a request rate of
 * its own, and the upstream's answer is streamed back with its status and headers.
 *
 * Only GET, HEAD and POST are forwarded (the REST API v1 has no other method), to a path under the
 * upstream's own `/v1`: the path and query exactly as sent, with no normalisation, and a path one
 * of whose segments could name something outside it (a dot segment in any spelling, an encoded
 * separator) refused with 400. The body is streamed (at most the node's request body limit, else
 * 413) with the content headers; the client's own credentials and hop-by-hop headers stay here.
 * The deadline (`timeoutMs`) runs while the node waits on the upstream, never on the client: to
 * connect, then from the whole request sent to the answer's start (else 504), then between parts of
 * the answer (else it is cut). A 503 or 504 made here names neither the upstream nor the socket's
 * error; the log does. docs/following.md, "Passing the rest to the upstream", says what and why.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import http from "node:http";
import https from "node:https";
import { pipeline, Transform, type TransformCallback } from "node:stream";
import { RequestRate } from "../../ingest/follow/rate.js";
import type { NodeContext } from "../context.js";
import { ApiError, quote } from "../http/apiError.js";

export interface ProxyOptions {
  /** The upstream's REST API, as `--follow` names it (`https://host/v1`, or under a path: `https://host/KEY/v1`). */
  upstream: string;
  /** Sent as `Authorization: Bearer <key>` (the follower's `--api-key`). */
  apiKey: string | null;
  /** At most this many proxied requests start per second; one that would wait for its slot this long or more is answered 503. */
  maxRequestsPerSecond: number;
  /**
   * The upstream's deadline: to connect; from the whole request sent to the answer's start (else
   * 504); and for each `PROGRESS_BYTES` of the answer, or its end (else the answer is cut).
   */
  timeoutMs: number;
}

/** The methods forwarded: the REST API v1 has GET and POST routes only (HEAD is GET's). */
const FORWARDED_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "POST"]);

/**
 * Request headers passed to the upstream: what says what the body is and what answer is wanted.
 * Everything else (cookies, the client's Authorization, hop-by-hop headers, Host) stays here.
 */
const FORWARDED_REQUEST_HEADERS = ["accept", "accept-encoding", "accept-language", "content-type", "content-encoding", "content-length", "x-aptos-client"];

/**
 * Response headers never relayed: the hop-by-hop ones of RFC 9110 §7.6.1 (with `Proxy-Connection`
 * and `Keep-Alive`, which it names as used in the past); what this node sets on every response
 * itself (app.ts): its `X-Request-Id`, and its CORS headers, since its own CORS policy answers the
 * browser (`Vary` is merged with the node's own); and what would make a browser act on this node's
 * origin by the upstream's word: its cookies (`Set-Cookie`), its HTTPS policy
 * (`Strict-Transport-Security`, RFC 6797), its alternative services (`Alt-Svc`, RFC 7838) and
 * `Clear-Site-Data`.
 */
const DROPPED_RESPONSE_HEADERS = new Set([
  "connection",
  "proxy-connection",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "x-request-id",
  "set-cookie",
  "strict-transport-security",
  "alt-svc",
  "clear-site-data",
]);

/**
 * How much of an answer must come within each `timeoutMs` the node waits on it: an upstream that
 * sends less (a byte now and then) is cut, whatever the gaps between its bytes.
 */
const PROGRESS_BYTES = 16 * 1024;

/**
 * Registers the pass-through as the not-found handler of `/v1`: the router tries every route of
 * the node first, and answers a path that is too long for one of them itself (414), so only paths
 * no route takes arrive here. A method that is not forwarded, or a path of a local route under
 * another method, gets `notFound`'s answer (404 or the node's own 405), as without the proxy.
 */
export function installProxy(
  app: FastifyInstance,
  ctx: NodeContext,
  o: ProxyOptions,
  localMethods: (path: string) => string[],
  upstreamMethods: (path: string) => string[],
  notFound: (req: FastifyRequest, reply: FastifyReply) => Promise<void>,
): void {
  const metrics = ctx.metrics!;
  const base = new URL(o.upstream.replace(/\/+$/, ""));
  const secure = base.protocol === "https:";
  const mod = secure ? https : http;
  const agent = new mod.Agent({ keepAlive: true });
  const rate = new RequestRate(o.maxRequestsPerSecond);
  // http.request takes the host as a name or a bare address (`::1`, not `[::1]`).
  const host = base.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = base.port === "" ? (secure ? 443 : 80) : Number(base.port);
  const basePath = base.pathname;
  const authorization = o.apiKey ? `Bearer ${o.apiKey}` : null;
  const route = metrics.operation("proxy");
  // A request body may be as large as any other request's (`bodyLimit`), else 413.
  const bodyLimit = ctx.config.bodyLimit;
  app.addHook("onClose", (_app, done) => {
    agent.destroy();
    done();
  });

  // An operation's answer this node does not hold goes the same way (`Answer.upstream`).
  ctx.upstream = (req, reply) => {
    reply.raw.once("finish", () => route.observe(reply.statusCode, reply.elapsedTime / 1000));
    return forward(req, reply);
  };
  app.register(
    (scope, _opts, registered) => {
      // The body is not parsed here: whatever its type, it is streamed to the upstream as it comes.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser("*", (_req, _payload, done) => done(null, undefined));
      scope.setNotFoundHandler(async (req, reply) => {
        const path = req.url.split("?", 1)[0]!;
        // A path served here under another method is answered 405 here, unless the reference answers
        // this method there too and this node leaves it to the upstream (`Operation.upstreamMethods`).
        const served = localMethods(path).length > 0;
        if (!FORWARDED_METHODS.has(req.method) || (served && !upstreamMethods(path).includes(req.method))) return notFound(req, reply);
        reply.raw.once("finish", () => route.observe(reply.statusCode, reply.elapsedTime / 1000));
        return forward(req, reply);
      });
      registered();
    },
    { prefix: "/v1" },
  );

  async function forward(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    let upstream: http.ClientRequest | null = null;
    // An answer sent before the client's body has all arrived ends the connection (see `endEarly`).
    reply.raw.once("finish", () => {
      if (req.raw.complete) return;
      upstream?.destroy();
      endEarly(req);
    });
    const target = forwardedTarget(req.url);
    if (target instanceof ApiError) return refuse(req, reply, target);
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > bodyLimit) return refuse(req, reply, tooLarge(bodyLimit));
    // The wait for a slot of the node's own rate is bounded by the deadline; past it, 503 at once.
    const wait = rate.waitMs();
    if (wait >= o.timeoutMs) {
      const retryAfter = ["retry-after", String(Math.ceil(wait / 1000))];
      return refuse(req, reply, ApiError.unavailable(`the proxy's upstream request rate (${o.maxRequestsPerSecond} a second) is used up: try again later`), retryAfter);
    }
    const booked = rate.book();
    if (booked > 0) await new Promise((r) => setTimeout(r, booked));
    // A client gone while it waited gets no upstream request (one whose body never ends would stay open).
    if (reply.raw.destroyed) return reply;
    const headers: Record<string, string> = {};
    for (const h of FORWARDED_REQUEST_HEADERS) {
      const v = req.headers[h];
      if (v !== undefined) headers[h] = Array.isArray(v) ? v.join(", ") : v;
    }
    if (authorization) headers.authorization = authorization;
    const path = `${basePath}${target}`;
    // Only the log names the upstream.
    const what = `${req.method} ${base.origin}${path}`;
    return new Promise<FastifyReply>((resolve) => {
      let answered = false;
      let sent = false;
      let timer: NodeJS.Timeout | undefined;
      const answer = (r: FastifyReply | Promise<FastifyReply>) => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        resolve(r);
      };
      const late = () => {
        upstream!.destroy();
        const e = new ApiError(504, "internal_error", `the upstream did not answer within ${o.timeoutMs} ms`, null, {
          cause: new Error(`${what}: ${sent ? "no answer" : "no connection"} within ${o.timeoutMs} ms`),
        });
        answer(refuse(req, reply, e));
      };
      upstream = mod.request({ host, port, path, method: req.method, headers, agent }, (res) => {
        if (answered) return void res.destroy();
        const status = res.statusCode ?? 502;
        metrics.proxied.inc({ status_class: statusClass(status), from: "upstream" });
        reply.code(status);
        ctx.head.apply(req, reply);
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined && relayed(k, res.headers.connection)) reply.header(k, v);
        // This node's Vary (Origin) and the upstream's both hold for the answer.
        const vary = res.headers.vary;
        if (vary) reply.header("vary", `Origin, ${vary}`);
        // An answer that stops coming is cut: the client sees the connection end early.
        const relay = new StallGuard(o.timeoutMs, () => res.destroy(new Error(`${what}: the answer stalled for ${o.timeoutMs} ms`)));
        pipeline(res, relay, () => undefined);
        answer(reply.send(relay));
      });
      // The deadline runs on the upstream's time only: first to connect (a kept-alive connection is
      // there at once); then, once the whole request is written (its body as fast as the client
      // sent it, bounded by the request timeout), for the answer to start.
      timer = setTimeout(late, o.timeoutMs);
      upstream.once("socket", (socket) => {
        const connected = () => {
          if (!sent) clearTimeout(timer);
        };
        if (upstream!.reusedSocket) connected();
        else socket.once(secure ? "secureConnect" : "connect", connected);
      });
      upstream.once("finish", () => {
        sent = true;
        if (answered) return;
        clearTimeout(timer);
        timer = setTimeout(late, o.timeoutMs);
      });
      upstream.on("error", (e: Error & { code?: string }) => {
        if (answered) return;
        const cause = new Error(`${what}: ${e.code ?? e.message}`, { cause: e });
        answer(refuse(req, reply, ApiError.unavailable("the upstream could not be reached", cause)));
      });
      // A client that goes away before the answer starts takes the upstream request with it.
      reply.raw.once("close", () => {
        if (answered) return;
        upstream!.destroy();
        answer(reply);
      });
      // The body, streamed under its bound (a chunked body declares no length).
      const bounded = new BodyBound(bodyLimit);
      bounded.on("error", () => {
        upstream!.destroy();
        req.raw.unpipe(bounded);
        if (answered) return;
        answer(refuse(req, reply, tooLarge(bodyLimit)));
      });
      req.raw.pipe(bounded).pipe(upstream);
    });
  }

  /** A proxied request answered here, not by the upstream, with the error object. */
  async function refuse(req: FastifyRequest, reply: FastifyReply, e: ApiError, headers?: readonly string[]): Promise<FastifyReply> {
    metrics.proxied.inc({ status_class: statusClass(e.status), from: "node" });
    await ctx.sendError(req, reply, e, e.cause ?? e, undefined, headers);
    return reply;
  }
}

/**
 * Ends the connection of a request answered before its body has all arrived (a refusal, or the
 * upstream answering early), so that no second answer (the request timeout's 408) can follow it:
 * our side is ended at once, and the rest of the body is read and dropped until it has arrived
 * (or the request timeout ends the connection), so that the answer is not lost to a reset.
 */
function endEarly(req: FastifyRequest): void {
  const socket = req.raw.socket;
  req.raw.unpipe();
  req.raw.once("end", () => socket.destroy());
  req.raw.resume();
  socket.end();
}

/** A segment that is `.` or `..` in any spelling (`%2e`, either case), `;` parameters aside. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}(?:;.*)?$/i;

/**
 * A segment holding a backslash, or an encoded slash, backslash or percent sign: a server or a
 * gateway that decodes it, or reads `\` as `/` (as URL parsers do for http), could split it into
 * segments or decode it again into a dot segment.
 */
const SEPARATOR = /\\|%2f|%5c|%25/i;

/**
 * The part of a request target passed to the upstream after its own `/v1` path: the rest of the
 * path and the query, exactly as sent. Refused (400): a target not under `/v1/` as sent (the
 * router matches a decoded path), and a path with a segment that could name something outside
 * the upstream's `/v1` (`DOT_SEGMENT`, `SEPARATOR`), wherever it is: nothing is resolved here.
 */
function forwardedTarget(url: string): string | ApiError {
  // An absolute-form target (`GET http://host/v1/…`) names its path after the authority.
  const target = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, "") : url;
  const q = target.indexOf("?");
  const path = q === -1 ? target : target.slice(0, q);
  if (!path.startsWith("/v1/")) return ApiError.badParam(`the path ${quote(path)} is not passed to the upstream: it does not start with /v1/ as sent`);
  for (const segment of path.slice("/v1/".length).split("/")) {
    const why = DOT_SEGMENT.test(segment) ? "is a dot segment" : SEPARATOR.test(segment) ? "holds an encoded separator or a backslash" : null;
    if (why !== null) {
      return ApiError.badParam(`the path ${quote(path)} is not passed to the upstream: its segment ${quote(segment)} ${why}, which could name a path outside the upstream's /v1`);
    }
  }
  return target.slice("/v1".length);
}

function tooLarge(limit: number): ApiError {
  return new ApiError(413, "web_framework_error", `request body is larger than the limit of ${limit} bytes`);
}

/** Whether an upstream response header is relayed (not hop-by-hop, not one `Connection` lists). */
function relayed(name: string, connection: string | undefined): boolean {
  if (DROPPED_RESPONSE_HEADERS.has(name) || name.startsWith("access-control-") || name === "vary") return false;
  if (connection === undefined) return true;
  return !connection.toLowerCase().split(",").some((t) => t.trim() === name);
}

function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/** Passes a body through, failing once more than `limit` bytes went by. */
class BodyBound extends Transform {
  private seen = 0;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) cb(new Error(`request body over ${this.limit} bytes`));
    else cb(null, chunk);
  }
}

/**
 * Passes an answer through, calling `onStall` when, for `ms` of waiting on the upstream, neither
 * `PROGRESS_BYTES` more nor the end came. While the client is not reading (the relay is full) the
 * wait is the client's, not the upstream's, and does not count.
 */
class StallGuard extends Transform {
  private timer: NodeJS.Timeout | null = null;
  /** Bytes passed since the timer was last set. */
  private since = 0;
  private over = false;
  constructor(
    private readonly ms: number,
    private readonly onStall: () => void,
  ) {
    super();
    this.arm();
  }
  private arm(): void {
    this.disarm();
    this.since = 0;
    this.timer = setTimeout(this.onStall, this.ms);
  }
  private disarm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.since += chunk.length;
    if (this.since >= PROGRESS_BYTES) this.arm();
    cb(null, chunk);
    if (this.readableLength >= this.readableHighWaterMark) this.disarm();
  }
  override _read(size: number): void {
    // The client reads again: the upstream's time starts anew.
    if (this.timer === null && !this.over) this.arm();
    super._read(size);
  }
  override _flush(cb: TransformCallback): void {
    this.over = true;
    this.disarm();
    cb();
  }
  override _destroy(e: Error | null, cb: (e: Error | null) => void): void {
    this.over = true;
    this.disarm();
    cb(e);
  }
}
