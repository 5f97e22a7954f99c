/**
 * The pass-through of `serve --follow URL --proxy` (issue 34): a `/v1` route this node does not
 * serve is forwarded to the followed upstream, under the follower's API key and a request rate of
 * its own, and the upstream's answer is streamed back with its status and headers.
 *
 * Only GET, HEAD and POST are forwarded (the REST API v1 has no other method), with the path and
 * query as sent, the body streamed (at most the node's request body limit, else 413) and the
 * content headers; the client's own credentials and hop-by-hop headers stay here. An upstream that
 * cannot be reached answers 503, one that sends no answer within `timeoutMs` answers 504, both as
 * the JSON error object: a request never hangs on the upstream.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import http from "node:http";
import https from "node:https";
import { pipeline, Transform, type TransformCallback } from "node:stream";
import { RequestRate } from "../ingest/follow/rate.js";
import type { NodeContext } from "./context.js";
import { ApiError } from "./errors.js";

export interface ProxyOptions {
  /** The upstream's REST API, as `--follow` names it (`https://host/v1`). */
  upstream: string;
  /** Sent as `Authorization: Bearer <key>` (the follower's `--api-key`). */
  apiKey: string | null;
  /** At most this many proxied requests start per second; beyond what waits within the timeout, 503. */
  maxRequestsPerSecond: number;
  /** The upstream's answer must start (status and headers) within this, else 504; a body that then stalls this long is cut. */
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
 * and `Keep-Alive`, which it names as used in the past), and what this node sets on every response
 * itself (app.ts): its `X-Request-Id`, and its CORS headers, since its own CORS policy answers the
 * browser. `Vary` is merged with the node's own.
 */
const DROPPED_RESPONSE_HEADERS = new Set(["connection", "proxy-connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "x-request-id"]);

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
  notFound: (req: FastifyRequest, reply: FastifyReply) => Promise<void>,
): void {
  const metrics = ctx.metrics!;
  const base = new URL(o.upstream.replace(/\/+$/, ""));
  const mod = base.protocol === "https:" ? https : http;
  const agent = new mod.Agent({ keepAlive: true });
  const rate = new RequestRate(o.maxRequestsPerSecond);
  const basePath = base.pathname;
  const authorization = o.apiKey ? `Bearer ${o.apiKey}` : null;
  const route = metrics.operation("proxy");
  // A request body may be as large as any other request's (`bodyLimit`), else 413.
  const bodyLimit = ctx.config.bodyLimit;
  app.addHook("onClose", (_app, done) => {
    agent.destroy();
    done();
  });

  app.register(
    (scope, _opts, registered) => {
      // The body is not parsed here: whatever its type, it is streamed to the upstream as it comes.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser("*", (_req, _payload, done) => done(null, undefined));
      scope.setNotFoundHandler(async (req, reply) => {
        const path = req.url.split("?", 1)[0]!;
        if (!FORWARDED_METHODS.has(req.method) || localMethods(path).length > 0) return notFound(req, reply);
        reply.raw.once("finish", () => route.observe(reply.statusCode, reply.elapsedTime / 1000));
        return forward(req, reply);
      });
      registered();
    },
    { prefix: "/v1" },
  );

  async function forward(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const started = performance.now();
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > bodyLimit) return refuse(req, reply, tooLarge(bodyLimit));
    // Waiting for a slot counts against the timeout; past it the answer is 503 at once.
    const wait = rate.waitMs();
    if (wait >= o.timeoutMs) {
      const retryAfter = ["retry-after", String(Math.ceil(wait / 1000))];
      return refuse(req, reply, ApiError.unavailable(`the proxy's upstream request rate (${o.maxRequestsPerSecond} a second) is used up: try again later`), retryAfter);
    }
    const booked = rate.book();
    if (booked > 0) await new Promise((r) => setTimeout(r, booked));
    const headers: Record<string, string> = {};
    for (const h of FORWARDED_REQUEST_HEADERS) {
      const v = req.headers[h];
      if (v !== undefined) headers[h] = Array.isArray(v) ? v.join(", ") : v;
    }
    if (authorization) headers.authorization = authorization;
    const target = `${base.origin}${basePath}${req.url.slice("/v1".length)}`;
    const what = `${req.method} ${target}`;
    return new Promise<FastifyReply>((resolve) => {
      let done = false;
      const finish = (r: FastifyReply | Promise<FastifyReply>) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(r);
      };
      const upstream = mod.request(target, { method: req.method, headers, agent }, (res) => {
        const status = res.statusCode ?? 502;
        metrics.proxied.inc({ status_class: statusClass(status), from: "upstream" });
        reply.code(status);
        ctx.head.apply(req, reply);
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined && relayed(k, res.headers.connection)) reply.header(k, v);
        // This node's Vary (Origin) and the upstream's both hold for the answer.
        const vary = res.headers.vary;
        if (vary) reply.header("vary", `Origin, ${vary}`);
        // A body that makes no progress for the timeout is cut: the client sees the connection end early.
        const relay = new StallGuard(o.timeoutMs, () => res.destroy(new Error(`${what}: the answer stalled for ${o.timeoutMs} ms`)));
        pipeline(res, relay, () => undefined);
        finish(reply.send(relay));
      });
      const timer = setTimeout(() => {
        upstream.destroy();
        finish(refuse(req, reply, new ApiError(504, "internal_error", `the upstream did not answer ${what} within ${o.timeoutMs} ms`)));
      }, Math.max(1, o.timeoutMs - (performance.now() - started)));
      upstream.on("error", (e: Error & { code?: string }) => {
        if (done) return;
        finish(refuse(req, reply, ApiError.unavailable(`the upstream could not be reached for ${what}: ${e.code ?? e.message}`, e)));
      });
      // A client that goes away before the answer starts takes the upstream request with it.
      reply.raw.once("close", () => {
        if (done) return;
        upstream.destroy();
        finish(reply);
      });
      // The body, streamed under its bound (a chunked body declares no length).
      const bounded = new BodyBound(bodyLimit);
      bounded.on("error", () => {
        upstream.destroy();
        // The rest of the body is read and dropped (within the request timeout), so the connection stays usable.
        req.raw.unpipe(bounded);
        req.raw.resume();
        if (done) return;
        finish(refuse(req, reply, tooLarge(bodyLimit)));
      });
      req.raw.pipe(bounded).pipe(upstream);
    });
  }

  /** A proxied request answered here, not by the upstream, with the error object. */
  async function refuse(req: FastifyRequest, reply: FastifyReply, e: ApiError, headers?: readonly string[]): Promise<FastifyReply> {
    metrics.proxied.inc({ status_class: statusClass(e.status), from: "node" });
    await ctx.sendError(req, reply, e, e, undefined, headers);
    return reply;
  }
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

/** Passes an answer through, calling `onStall` when no chunk has come for `ms`. */
class StallGuard extends Transform {
  private readonly timer: NodeJS.Timeout;
  constructor(ms: number, onStall: () => void) {
    super();
    this.timer = setTimeout(onStall, ms);
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.timer.refresh();
    cb(null, chunk);
  }
  override _flush(cb: TransformCallback): void {
    clearTimeout(this.timer);
    cb();
  }
  override _destroy(e: Error | null, cb: (e: Error | null) => void): void {
    clearTimeout(this.timer);
    cb(e);
  }
}
