/**
 * The Fastify app: registers every operation of the route table, renders every error as the JSON
 * error object (with the ledger headers on data operations), answers unknown routes 404, wrong
 * methods 405, and handles CORS on every response.
 */
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { pino } from "pino";
import type { LedgerStore } from "../storage/LedgerStore.js";
import { StorageUnavailableError } from "../storage/LedgerStore.js";
import { EncodedBody, sendBody } from "./compression.js";
import { defaultApiConfig, type ApiConfig } from "./config.js";
import { NodeContext, orNull } from "./context.js";
import { ApiError } from "./errors.js";
import { registerOpenApi, specTexts } from "./openapi/spec.js";
import { JSON_TYPE } from "./negotiate.js";
import { queryParamMessage } from "./params.js";
import type { RouteDef } from "./route.js";
import { routes } from "./routes/index.js";
import { sharedSchemas } from "./schemas.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Data operations send the ledger headers on errors too. */
    ledgerHeaders?: boolean;
  }
}

/** The OpenAPI formats our schemas use for documentation; validation is by type and pattern. */
const DOC_FORMATS = ["hex", "uint8", "uint16", "uint32", "uint64", "binary"];
function openApiFormats(ajv: { addFormat(name: string, format: true): unknown }): void {
  for (const f of DOC_FORMATS) ajv.addFormat(f, true);
}

export interface BuildAppOptions {
  store: LedgerStore;
  config?: Partial<ApiConfig>;
  /** pino options, or false for silence (tests). */
  logger?: boolean | object;
  /** Log every request and response (off by default: it halves the throughput of point reads). */
  logRequests?: boolean;
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
  const app = Fastify({
    // Fastify's logger only with --log-requests: a log line per request costs more than a point
    // read, and even silent its per-request bookkeeping cost a bare GET 1 µs of 10 (same-run
    // probe). Without it, errors and the node's own events go to the same pino logger directly.
    ...(opts.logRequests ? { loggerInstance: log } : { logger: false }),
    bodyLimit: config.bodyLimit,
    connectionTimeout: config.connectionTimeoutMs,
    return503OnClosing: true,
    serializerOpts: { ajv: { formats: Object.fromEntries(DOC_FORMATS.map((f) => [f, true])) } },
    ajv: {
      customOptions: { coerceTypes: true, removeAdditional: false, allErrors: false },
      plugins: [openApiFormats as never],
    },
  });

  // JSON is the only request body type (raw_item); anything else is 415.
  app.removeContentTypeParser("text/plain");
  for (const s of sharedSchemas) app.addSchema(s);
  await registerOpenApi(app, config.nodeVersion, routes);
  installCors(app, ctx);
  installErrors(app, ctx);

  for (const r of routes) {
    app.route({
      method: r.method,
      url: r.url,
      schema: r.schema,
      config: { ledgerHeaders: r.ledgerHeaders },
      handler: r.handler(ctx),
    });
  }
  installNotFound(app, routes, config);

  await app.ready();
  const texts = specTexts(app);
  ctx.spec = { json: new EncodedBody(Buffer.from(texts.json)), yaml: new EncodedBody(Buffer.from(texts.yaml)) };
  return { app, ctx };
}

/**
 * CORS: any origin, GET and POST, the ledger headers exposed. Preflights for other methods are
 * refused with 403 like the reference node. Computed once here; per request it only copies.
 */
function installCors(app: FastifyInstance, ctx: NodeContext): void {
  const expose = ctx.headers.exposed.join(", ");
  // A callback hook, not an async one: it runs on every request, and a promise per request costs.
  app.addHook("onRequest", (req, reply, done) => {
    // Vary on every response, with or without Origin: a cache must not hand a response made without
    // the CORS headers to a cross-origin caller (Fetch standard, "CORS protocol and HTTP caches").
    reply.header("vary", "Origin");
    const origin = req.headers.origin;
    if (origin !== undefined) {
      reply.header("access-control-allow-origin", origin);
      reply.header("access-control-allow-credentials", "true");
      reply.header("access-control-expose-headers", expose);
    }
    done();
  });
  app.options("/*", { schema: { hide: true } }, async (req: FastifyRequest, reply: FastifyReply) => {
    const method = String(req.headers["access-control-request-method"] ?? "").toUpperCase();
    if (method !== "" && method !== "GET" && method !== "POST") {
      throw new ApiError(403, "web_framework_error", "request-method not allowed");
    }
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
    const e = toApiError(err, req, ctx.config.bodyLimit);
    if (e.status >= 500) ctx.log.error({ reqId: req.id, err }, e.message);
    let ledger = e.ledger;
    const wantsHeaders = req.routeOptions.config?.ledgerHeaders === true;
    if (!ledger && wantsHeaders && e.status !== 503) ledger = await orNull(() => ctx.store.getLedgerInfo());
    if (ledger) reply.headers(ctx.headers.ledger(ledger));
    return sendBody(ctx.config, req, reply.code(e.status), JSON.stringify(e.body()), JSON_TYPE);
  });
}

/** Maps whatever was thrown to the one error class. */
function toApiError(err: FastifyError, req: FastifyRequest, bodyLimit: number): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof StorageUnavailableError) return ApiError.unavailable(err.message, err);
  if (err.validation && err.validation.length > 0) {
    const v = err.validation[0]!;
    if (err.validationContext === "querystring") {
      const name = v.instancePath.replace(/^\//, "") || String((v.params as { missingProperty?: string }).missingProperty ?? "");
      const raw = (req.query as Record<string, unknown>)[name];
      return ApiError.badParam(queryParamMessage(name, raw));
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
 * 404 for unknown paths, 405 when the path exists under another method (with `Allow` naming the
 * methods), in the reference's words.
 */
function installNotFound(app: FastifyInstance, table: RouteDef[], config: ApiConfig): void {
  const patterns = table.map((r) => ({
    method: r.method,
    re: new RegExp("^" + r.url.replace(/:[a-z_]+/g, "[^/]+") + "/?$"),
  }));
  app.setNotFoundHandler(async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split("?")[0]!;
    const allowed = patterns.filter((p) => p.re.test(path)).map((p) => p.method);
    const e =
      allowed.length > 0
        ? new ApiError(405, "web_framework_error", "method not allowed")
        : new ApiError(404, "web_framework_error", "not found");
    if (allowed.length > 0) reply.header("allow", allowed.join(", "));
    return sendBody(config, req, reply.code(e.status), JSON.stringify(e.body()), JSON_TYPE);
  });
}
