/**
 * The Fastify app: registers every operation of the route table, renders every error as the JSON
 * error object (with the ledger headers on data operations), answers unknown routes 404, wrong
 * methods 405, and handles CORS on every response.
 */
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { pino } from "pino";
import { typedKind } from "../storage/contracts/errors.js";
import { EncodedBody } from "./http/compression.js";
import { defaultApiConfig, type ApiConfig } from "./config.js";
import { NodeContext, type ApiStore } from "./context.js";
import { arrivalHook, operationHandler, stampArrival, strictBody } from "./http/operationHandler.js";
import { ApiError, clip } from "./http/apiError.js";
import { NodeMetrics, type OperationMetrics } from "./observability/metrics.js";
import { registerOpenApi, specTexts } from "./openapi/spec.js";
import { JSON_ANSWER_TYPE } from "./http/negotiate.js";
import { paramKinds, pathParamMessage, queryParamMessage, type ParamKind } from "./http/params.js";
import { installProxy, type ProxyOptions } from "./proxy/upstreamProxy.js";
import { requestId } from "./observability/requestId.js";
import { routeSchema, sendsLedgerHeaders, type AnyOperation } from "./http/operation.js";
import { operations } from "./operations/index.js";
import { DOC_FORMATS, sharedSchemas } from "./schemas.js";
import { answerRawEvents, capConnections, clientErrorHandler } from "./http/transport.js";

declare module "fastify" {
  interface FastifyRequest {
    /** performance.now() when the request arrived (the routes' onRequest hooks), for the duration metrics. */
    startedAt: number;
  }
  interface FastifyContextConfig {
    /** Data operations send the ledger headers on errors too. */
    ledgerHeaders?: boolean;
    /** The request metrics of the route's operation. */
    metrics?: OperationMetrics;
    /** What each query parameter holds (from the route's schema), for the 400 of a value the schema refused. */
    queryKinds?: Record<string, ParamKind>;
    pathKinds?: Record<string, ParamKind>;
  }
}

/** Lets the request validator accept the documentation-only formats (`DOC_FORMATS`). */
function openApiFormats(ajv: { addFormat(name: string, format: true): unknown }): void {
  for (const f of Object.keys(DOC_FORMATS)) ajv.addFormat(f, true);
}

export interface BuildAppOptions {
  /** The ledger's reads and the page strategy's (a `Storage` is both). */
  store: ApiStore;
  config?: Partial<ApiConfig>;
  /** pino options, or false for silence (tests). */
  logger?: boolean | object;
  /** Log every request and response (off by default: it halves the throughput of point reads). */
  logRequests?: boolean;
  /** Pass the `/v1` routes this node does not serve to this upstream (`serve --follow URL --proxy`). */
  proxy?: ProxyOptions;
}

/** pino with options, or silent. */
function createLogger(opts: boolean | object): FastifyBaseLogger {
  if (opts === false) return pino({ level: "silent" });
  return pino(opts === true ? {} : opts);
}

export async function buildApp(opts: BuildAppOptions): Promise<{ app: FastifyInstance; ctx: NodeContext }> {
  const config = defaultApiConfig(opts.config);
  const log = createLogger(opts.logger ?? false);
  const ctx = new NodeContext(opts.store, config, log);
  let openConnections = () => 0;
  const metrics = new NodeMetrics({ store: opts.store, pages: ctx.pages.cache, openConnections: () => openConnections() });
  ctx.metrics = metrics;
  ctx.onStorageError = (status) => metrics.storageErrors.inc({ status: String(status) });
  // Node refuses a headers timeout longer than the request timeout.
  const headersTimeout = config.requestTimeoutMs > 0 ? Math.min(config.headersTimeoutMs, config.requestTimeoutMs) : config.headersTimeoutMs;
  const badRequest = metrics.operation("bad_request");
  const app = Fastify({
    // Fastify's logger only with --log-requests: a log line per request costs more than a point
    // read, and even silent its per-request bookkeeping costs every request. Without it, errors
    // and the node's own events go to the same pino logger directly.
    ...(opts.logRequests ? { loggerInstance: log } : { logger: false }),
    genReqId: requestId,
    // `req.ip`, the client a replica's base-state fetches are counted against: the peer, or behind
    // the operator's proxies the right-most forwarded address that is not one of them.
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    bodyLimit: config.bodyLimit,
    connectionTimeout: config.connectionTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout,
      requestTimeout: config.requestTimeoutMs,
      // Node checks the two timeouts on this interval (30 s by default, which would let a slow
      // body outlive a short timeout many times over); the check walks the open requests only.
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor((config.requestTimeoutMs || 4_000) / 4))),
      // Node answers an HTTP/1.1 request without Host with an empty 400 of its own; the routes do not
      // read Host, and the reference node (hyper) serves such requests, so they are served.
      requireHostHeader: false,
    },
    clientErrorHandler: clientErrorHandler(metrics, log, config.requestTimeoutMs, headersTimeout),
    // Route parameters are addresses (66 characters at most): longer ones reach the handler, which
    // answers 400 quoting the start of the value, instead of the router's own 414.
    routerOptions: { maxParamLength: 1_000 },
    frameworkErrors: (err, req, reply) => {
      // A bad percent-encoding in the path (FST_ERR_BAD_URL), or an overlong parameter: no route
      // ran, so the reply is written directly, in the error object.
      const status = err.code === "FST_ERR_MAX_PARAM_LENGTH" ? 414 : 400;
      const message =
        err.code === "FST_ERR_BAD_URL"
          ? `failed to parse the request path: invalid percent-encoding in ${JSON.stringify(clip(req.raw.url ?? ""))}`
          : `failed to parse the request path: ${clip(err.message)}`;
      const e = new ApiError(status, "web_framework_error", message);
      const body = JSON.stringify(e.body());
      badRequest.observe(status, 0);
      ctx.noteError(req, e);
      reply.raw.writeHead(status, { "content-type": JSON_ANSWER_TYPE, "content-length": Buffer.byteLength(body), "x-request-id": req.id });
      reply.raw.end(body);
    },
    return503OnClosing: true,
    serializerOpts: { ajv: { formats: DOC_FORMATS } },
    ajv: {
      customOptions: { coerceTypes: true, removeAdditional: false, allErrors: false },
      plugins: [openApiFormats as never],
    },
  });
  openConnections = capConnections(app.server, config.maxConnections, metrics, log);
  answerRawEvents(app.server);

  // Declared up front so that every request object has the same shape.
  app.decorateRequest("startedAt", 0);
  // JSON is the only request body type (raw_item); anything else is 415.
  app.removeContentTypeParser("text/plain");
  for (const s of sharedSchemas) app.addSchema(s);
  await registerOpenApi(app, config.nodeVersion, operations);
  installCors(app, ctx);
  installErrors(app, ctx);
  // The errors not logged in the last window are said when the node closes.
  app.addHook("onClose", async () => ctx.errorLog.flush());
  // Open streams would hold the close until their clients left: ended first (docs/decisions.md §24).
  app.addHook("preClose", async () => {
    for (const close of ctx.closing) close();
  });

  for (const op of operations) {
    app.route({
      method: op.method,
      url: op.url,
      schema: routeSchema(op),
      config: { ledgerHeaders: sendsLedgerHeaders(op), metrics: metrics.operation(op.operationId), queryKinds: paramKinds(op.query), pathKinds: paramKinds(op.params) },
      onRequest: arrivalHook(op),
      preValidation: strictBody(op),
      handler: operationHandler(op, ctx),
    });
  }
  if (config.metricsOnApiPort) {
    const m = metrics.operation("metrics");
    app.get("/metrics", { schema: { hide: true }, config: { metrics: m }, onRequest: stampArrival, onResponse: observe(m) }, async (req, reply) => {
      ctx.head.apply(req, reply);
      return reply.header("content-type", metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  }
  const localMethods = localRouteMethods(operations);
  const notFound = notFoundHandler(localMethods, ctx, metrics);
  if (opts.proxy) installProxy(app, ctx, opts.proxy, localMethods, localRouteMethods(operations, (op) => op.upstreamMethods ?? []), notFound);
  app.setNotFoundHandler(notFound);

  await app.ready();
  const texts = specTexts(app);
  ctx.spec = { json: new EncodedBody(Buffer.from(texts.json)), yaml: new EncodedBody(Buffer.from(texts.yaml)) };
  return { app, ctx };
}

/**
 * An onResponse hook that counts the request and its time by status, for the routes that do not
 * send through `Compression.send` (the preflight, /metrics); the operations are counted there,
 * which costs a request less than a hook of its own.
 */
function observe(m: OperationMetrics) {
  return (_req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    m.observe(reply.statusCode, reply.elapsedTime / 1000);
    done();
  };
}

/**
 * CORS: GET and POST, the ledger headers exposed (the request's headers on every response:
 * `ResponseHead`). Preflights for other methods are refused with 403 like the reference node.
 */
function installCors(app: FastifyInstance, ctx: NodeContext): void {
  const preflight = ctx.metrics!.operation("preflight");
  app.options("/*", { schema: { hide: true }, onResponse: observe(preflight) }, async (req: FastifyRequest, reply: FastifyReply) => {
    const method = String(req.headers["access-control-request-method"] ?? "").toUpperCase();
    if (method !== "" && method !== "GET" && method !== "POST") {
      throw new ApiError(403, "web_framework_error", "request-method not allowed");
    }
    ctx.head.apply(req, reply);
    // A preflight's answer also depends on the method and headers it asks about.
    reply.header("vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
    reply.header("access-control-allow-methods", "GET, POST");
    const asked = req.headers["access-control-request-headers"];
    if (asked) reply.header("access-control-allow-headers", asked);
    reply.header("access-control-max-age", "86400");
    return reply.code(200).send();
  });
}

function installErrors(app: FastifyInstance, ctx: NodeContext): void {
  app.setErrorHandler(async (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    await ctx.sendError(req, reply, toApiError(err, req, ctx.config.bodyLimit), err);
    return reply;
  });
}

/** Maps whatever was thrown to the one error class. */
function toApiError(err: FastifyError, req: FastifyRequest, bodyLimit: number): ApiError {
  if (err instanceof ApiError) return err;
  if (typedKind(err) === "unavailable") return ApiError.storageUnavailable(err.message, err);
  if (err.validation && err.validation.length > 0) {
    const v = err.validation[0]!;
    if (err.validationContext === "querystring") {
      if (v.keyword === "additionalProperties") {
        const unknown = String((v.params as { additionalProperty?: string }).additionalProperty);
        const known = Object.keys(req.routeOptions.config?.queryKinds ?? {}).join(", ");
        return ApiError.badParam(`failed to parse query: unknown parameter ${JSON.stringify(clip(unknown))}: this route takes ${known}`);
      }
      const name = v.instancePath.replace(/^\//, "") || String((v.params as { missingProperty?: string }).missingProperty ?? "");
      const raw = (req.query as Record<string, unknown>)[name];
      return ApiError.badParam(queryParamMessage(name, req.routeOptions.config?.queryKinds?.[name], raw));
    }
    if (err.validationContext === "params") {
      const name = v.instancePath.replace(/^\//, "");
      const raw = (req.params as Record<string, unknown>)[name];
      return ApiError.badParam(pathParamMessage(name, req.routeOptions.config?.pathKinds?.[name], raw));
    }
    if (err.validationContext === "body") {
      const where = v.instancePath ? v.instancePath.slice(1) : "body";
      return ApiError.badParam(`parse request payload error: ${where} ${v.message ?? "is invalid"}`);
    }
    return ApiError.badParam(`failed to parse ${err.validationContext ?? "request"}: ${v.instancePath} ${v.message ?? ""}`.trim());
  }
  switch (err.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError(413, "web_framework_error", `request body is larger than the limit of ${bodyLimit} bytes`);
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ApiError(415, "web_framework_error", `unsupported Content-Type ${JSON.stringify(req.headers["content-type"] ?? "")}: send application/json`);
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return ApiError.badParam("parse request payload error: the body is empty; send a JSON object");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return ApiError.badParam(`parse request payload error: ${err.message}`);
  }
  if (typeof err.statusCode === "number" && err.statusCode >= 400 && err.statusCode < 500) {
    return new ApiError(err.statusCode, "web_framework_error", err.message);
  }
  return ApiError.internal("internal error", null, err);
}

/**
 * The methods of the operations whose route matches `path` (none: a path the node does not serve).
 * The match is exact, like the router's: `/v1/info/` matches nothing.
 */
function localRouteMethods(table: AnyOperation[], methodsOf: (op: AnyOperation) => readonly string[] = (op) => [op.method]): (path: string) => string[] {
  const patterns = table.map((r) => ({
    methods: methodsOf(r),
    re: new RegExp("^" + r.url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[a-z_]+/g, "[^/]+") + "$"),
  }));
  return (path) => patterns.filter((p) => p.re.test(path)).flatMap((p) => p.methods);
}

/**
 * 404 for unknown paths, 405 when the path exists under another method (with `Allow` naming the
 * methods), in the reference's words: `/v1/info/` is 404 as on the reference node, not a 405 for
 * a route it does not name.
 */
function notFoundHandler(localMethods: (path: string) => string[], ctx: NodeContext, metrics: NodeMetrics) {
  const notFound = metrics.operation("not_found");
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const path = req.url.split("?")[0]!;
    const allowed = localMethods(path);
    const e =
      allowed.length > 0
        ? new ApiError(405, "web_framework_error", "method not allowed")
        : new ApiError(404, "web_framework_error", "not found");
    // No route, so no onResponse hook: counted here, with the time until the handler ran.
    notFound.observe(e.status, reply.elapsedTime > 0 ? reply.elapsedTime / 1000 : 0);
    ctx.noteError(req, e);
    ctx.compression.send(req, reply, e.status, JSON.stringify(e.body()), JSON_ANSWER_TYPE, allowed.length > 0 ? ["allow", allowed.join(", ")] : undefined);
  };
}
