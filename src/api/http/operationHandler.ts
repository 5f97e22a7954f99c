/**
 * The one handler every operation runs through, in the reference node's order, the same for all
 * (docs/decisions.md §18):
 * 1. validate: parse the input the route schemas checked, each property by the kind its schema
 *    names (`$ref: "Address#"` to bytes, `"U64#"` to bigint), and negotiate the wire format (403
 *    for JSON from a BCS-only operation);
 * 2. resolve the version: read the ledger position, with what the operation's `resolve` reads in
 *    the same snapshot, and judge the requested versions against it (`refusedVersions`: 404 above
 *    the newest, 410 below the oldest kept);
 * 3. read: the page the page cache holds under the operation's `pageKey` (`Pages.cached`), else its `read`;
 * 4. encode: the operation's `encode`, in the negotiated format (a page is offered to the cache);
 * 5. send: check the versions again against the position the answer is exact for, then send it
 *    with the ledger headers, its content type and, when asked for, compressed.
 * Version resolution is where the store may answer in the calling turn (`Pages.positions`):
 * a memoized position and a cached page are sent without a promise. Store failures become the one
 * error class here, whichever step they happen in, and an error of the class is sent from here too.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler, preValidationHookHandler } from "fastify";
import { parseHexBytes } from "../../ledger/address.js";
import type { LedgerInfo } from "../../ledger/types.js";
import { EncodedBody } from "./compression.js";
import type { NodeContext, RouteConfig } from "../context.js";
import { ApiError, quote } from "./apiError.js";
import { after, type NowOrLater } from "../pages/nowOrLater.js";
import { acceptType, BCS_TYPE, JSON_ANSWER_TYPE, namedType, type WireFormat } from "./negotiate.js";
import { sendsLedgerHeaders, type AnyOperation, type Answer, type Input, type Position } from "./operation.js";
import { addressPath, checkDecimalQuery, hashPath, identifierPath, paramKind, type ParamKind, structTagPath, u64Path, u64Query } from "./params.js";
import { jsonSerializer } from "./serialize.js";
import { sharedSchemas } from "../schemas.js";

/** Versions a request names: the one to read at, and bounds that must not have been pruned. */
export interface RequestedVersions {
  at: bigint | undefined;
  bounds: ReadonlyArray<bigint | undefined>;
}

/**
 * Judges the requested versions against a ledger position: 404 for `at` above the newest
 * version, 410 for any of them below the oldest kept (docs/decisions.md §9), null when they stand. Used
 * before the read, and again after it against the position the answer is exact for (a prune may
 * have passed them). Returned, not thrown: a request for a pruned version is a common answer, and
 * a throw costs more than the rest of it (see `Answer.error`).
 */
export function refusedVersions(info: LedgerInfo, requested: RequestedVersions): ApiError | null {
  const { at, bounds } = requested;
  if (at !== undefined) {
    if (at > info.ledgerVersion) return ApiError.versionNotFound(at, info);
    if (at < info.oldestVersion) return ApiError.versionPruned(at, info);
  }
  for (const bound of bounds) {
    if (bound !== undefined && bound < info.oldestVersion) return ApiError.versionPruned(bound, info);
  }
  return null;
}

const NO_BOUNDS: ReadonlyArray<bigint | undefined> = Object.freeze([]);
const NO_VERSIONS: RequestedVersions = { at: undefined, bounds: NO_BOUNDS };

/** The input of an operation that declares none. */
const NOTHING = Object.freeze({});

/** The reader of the versions an operation's request names (`Operation.ledger`), by its parameter names. */
export function versionsReader(versions: { at?: string; bounds?: readonly string[] } | null): (query: Record<string, bigint | undefined>) => RequestedVersions {
  if (versions === null) return () => NO_VERSIONS;
  const { at, bounds = [] } = versions;
  return (query) => {
    const version = at ? query[at] : undefined;
    if (bounds.length === 0) return { at: version, bounds: NO_BOUNDS };
    const values: Array<bigint | undefined> = [];
    for (let i = 0; i < bounds.length; i++) values.push(query[bounds[i]!]);
    return { at: version, bounds: values };
  };
}

/** The kind of each property of an input schema, as parsing goes by them. */
function propertyKinds(schema: unknown): Array<[string, ParamKind]> {
  const props = (resolveRef(schema) as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  return Object.entries(props).map(([name, p]) => [name, paramKind(p)]);
}

/** A shared schema by its `$ref`, or the schema itself. */
function resolveRef(schema: unknown): unknown {
  const ref = (schema as { $ref?: string } | undefined)?.$ref;
  return ref ? sharedSchemas.find((s) => `${s.$id}#` === ref) : schema;
}

/** Parses one input property (`name`: for the error message) from what the schema checked. */
type PropertyParser = (name: string, value: unknown) => unknown;

const PARSERS: Record<ParamKind, PropertyParser> = {
  address: (name, v) => addressPath(name, v as string),
  u64: (name, v) => u64Query(name, v as string),
  hash: (name, v) => hashPath(name, v as string),
  "struct-tag": (name, v) => structTagPath(name, v as string),
  identifier: (name, v) => identifierPath(name, v as string),
  hex: (name, v) => {
    const bytes = parseHexBytes(v as string);
    if (!bytes) {
      throw ApiError.badParam(
        `parse request payload error: ${name}: decode hex-encoded string(${quote(v)}) failed: expected an optional 0x and an even number of hex digits`,
      );
    }
    return bytes;
  },
  cursor: (_name, v) => v,
  u16: (_name, v) => v,
  "as-is": (_name, v) => v,
};

/** A path's u64 (a version in the path) is refused in the path's words. */
const PATH_PARSERS: Record<ParamKind, PropertyParser> = { ...PARSERS, u64: (name, v) => u64Path(name, v as string) };

/** The parser of one input object (path, query or body): each property by its kind; an absent one stays undefined. */
export function inputParser(kinds: Array<[string, ParamKind]>, by: Record<ParamKind, PropertyParser> = PARSERS): (raw: unknown) => Record<string, unknown> {
  if (kinds.length === 0) return () => NOTHING;
  const names = kinds.map(([name]) => name);
  const parsers = kinds.map(([, kind]) => by[kind]);
  return (raw) => {
    const values = (raw ?? {}) as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const v = values[name];
      out[name] = v === undefined ? undefined : parsers[i]!(name, v);
    }
    return out;
  };
}

/**
 * The operation route's one onRequest hook: stamps the request's arrival (the duration metrics
 * count from it) and checks that u16 query values are decimal digits only, as Rust's `u16` parses
 * them (ajv's coercion would take `1e2` or ` 25`). The query is parsed before the hooks run and
 * holds the values as sent; the schema coerces them later. A route-level hook in place of an
 * app-wide one and a preValidation hook: each hook kind a request runs costs it a hook runner and
 * its closures.
 */
export function arrivalHook(op: AnyOperation): onRequestHookHandler {
  const decimals = propertyKinds(op.query)
    .filter(([, kind]) => kind === "u16")
    .map(([name]) => name);
  if (decimals.length === 0) return stampArrival;
  return function arrivedWithDecimals(req, _reply, done) {
    req.startedAt = performance.now();
    try {
      const query = req.query as Record<string, unknown>;
      for (const name of decimals) checkDecimalQuery(name, query[name]);
    } catch (e) {
      done(e as Error);
      return;
    }
    done();
  };
}

/** Stamps the request's arrival, for the duration metrics (an onRequest hook). */
export function stampArrival(req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  req.startedAt = performance.now();
  done();
}

/**
 * Strict body types before the schema's coercion: body properties the schema types as strings
 * must be JSON strings (ajv would take `{"key": 11}` as the text "11", and raw_item would read its
 * digits as hex). A preValidation hook (the body is parsed by then); undefined for a route
 * without a body.
 */
export function strictBody(op: AnyOperation): preValidationHookHandler | undefined {
  const bodySchema = resolveRef(op.body) as { properties?: Record<string, { type?: string }> } | undefined;
  const strings = Object.entries(bodySchema?.properties ?? {})
    .filter(([, p]) => p.type === "string")
    .map(([n]) => n);
  if (strings.length === 0) return undefined;
  return (req, _reply, done) => {
    const body = req.body;
    if (typeof body === "object" && body !== null && !Array.isArray(body)) {
      for (const name of strings) {
        const v = (body as Record<string, unknown>)[name];
        if (v !== undefined && typeof v !== "string") {
          done(ApiError.badParam(`parse request payload error: ${name}: expected a JSON string, got ${v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`}`));
          return;
        }
      }
    }
    done();
  };
}

/** Whether two positions answer the same: the same newest and oldest versions. */
function samePosition(a: LedgerInfo, b: LedgerInfo): boolean {
  return a === b || (a.ledgerVersion === b.ledgerVersion && a.oldestVersion === b.oldestVersion);
}

/** The operation's Fastify handler. */
export function operationHandler(op: AnyOperation, ctx: NodeContext) {
  const read = op.read(ctx);
  const encode = op.encode ? op.encode(ctx) : null;
  const pageKey = op.pageKey?.(ctx);
  const { resolve } = op;
  const parseParams = inputParser(propertyKinds(op.params), PATH_PARSERS);
  const parseQuery = inputParser(propertyKinds(op.query));
  const parseBody = inputParser(propertyKinds(op.body));
  const serialize = op.response.json ? jsonSerializer(op.response.json) : JSON.stringify;
  const requestedVersions = versionsReader(typeof op.ledger === "object" ? op.ledger : null);
  const jsonAllowed = op.formats.includes("json");
  const ledgerHeaders = sendsLedgerHeaders(op);
  // The route's config as the app registers it (app.ts), held here: Fastify builds
  // `req.routeOptions` anew on each read. Read from the request where the app has no metrics.
  const route: RouteConfig | undefined = ctx.metrics ? { ledgerHeaders, metrics: ctx.metrics.operation(op.operationId) } : undefined;
  // Each step runs in the same turn as the one before while the store answers at once
  // (`Pages.positions`): a memoized read is answered without a promise per step.
  return function handleOperation(req: FastifyRequest, reply: FastifyReply): NowOrLater<undefined> {
    let done: NowOrLater<undefined>;
    try {
      done = steps(req, reply);
    } catch (e) {
      return failed(req, reply, e);
    }
    return done instanceof Promise ? done.catch((e: unknown) => failed(req, reply, e)) : done;
  };

  function steps(req: FastifyRequest, reply: FastifyReply): NowOrLater<undefined> {
    // 1. validate
    const input: Input<unknown, unknown, unknown> = {
      params: parseParams(req.params) as never,
      query: parseQuery(req.query) as never,
      body: parseBody(req.body) as never,
      headers: req.headers,
    };
    const format = negotiate(req.headers.accept);
    if (op.ledger === "none") return readAndSend(req, reply, input, format, NO_VERSIONS, null, null);
    if (op.ledger === "latest-or-empty") {
      return after(ctx.readLedgerOrNull(), (info) => readAndSend(req, reply, input, format, NO_VERSIONS, { info }, null));
    }
    // 2. resolve the version
    const requested = requestedVersions(input.query as Record<string, bigint | undefined>);
    return after(resolveVersion(input, requested.at, format, req.ip), (at): NowOrLater<undefined> => {
      const refused = refusedVersions(at.info, requested);
      if (refused) return ctx.sendError(req, reply, refused, refused, route);
      // 3. read: the page the cache holds, else the operation's read
      if (pageKey === undefined) return readAndSend(req, reply, input, format, requested, at, null);
      const key = pageKey(input, at, format);
      const page = ctx.pages.cached(key, at.info);
      if (page) return send(req, reply, format, requested, at.info, { body: page.body, cursor: page.meta.cursor }, null, false);
      return readAndSend(req, reply, input, format, requested, at, key);
    });
  }

  /**
   * The position to read at: the ledger position with what the operation's `resolve` reads in the
   * same snapshot (`Position.found`), or the position alone for an operation without one.
   * `client`: the address of the client asking (`NodeContext.readWithBase`).
   */
  function resolveVersion(input: Input<unknown, unknown, unknown>, version: bigint | undefined, format: WireFormat, client: string): NowOrLater<Position<unknown>> {
    const what = () => failureText(input);
    if (resolve === undefined) {
      return after(ctx.readLedger(what, true), (info) => ({ info: nonEmpty(info), version: version ?? nonEmpty(info).ledgerVersion, found: undefined }));
    }
    const found = ctx.readSnapshot(() => resolve(ctx.pages.positions, input, version, format, ctx), what, client);
    return after(found, (f) => ({ info: f.info, version: version ?? f.info.ledgerVersion, found: f }));
  }

  /**
   * An error of the one class thrown by a step (a store failure, an operation's refusal of its
   * input) is sent from here, not through Fastify's error path (its error hooks and an async error
   * handler, which cost a request more). Errors that are common answers are not thrown at all
   * (`refusedVersions`, `Answer.error`). Anything else goes to the app's error handler, which maps
   * it to the class first; all of them are sent with `NodeContext.sendError`.
   */
  function failed(req: FastifyRequest, reply: FastifyReply, e: unknown): NowOrLater<undefined> {
    if (!(e instanceof ApiError)) throw e;
    return ctx.sendError(req, reply, e, e, route);
  }

  // 3. read (a store failure mapped to the one error class) and 4. encode
  function readAndSend(
    req: FastifyRequest,
    reply: FastifyReply,
    input: Input<unknown, unknown, unknown>,
    format: WireFormat,
    requested: RequestedVersions,
    at: { info: LedgerInfo | null } | null,
    key: string | null,
  ): NowOrLater<undefined> {
    const info = at?.info ?? null;
    const value = ctx.readWithBase(
      () => read(input, at, format),
      (e) => {
        throw ctx.storageError(e, () => failureText(input), info);
      },
      req.ip,
    );
    return after(value, (v) => send(req, reply, format, requested, info, encode ? encode(v, format, input, at) : (v as Answer), key, true));
  }

  // 5. check the versions again against the position the answer is exact for, and send
  function send(
    req: FastifyRequest,
    reply: FastifyReply,
    format: WireFormat,
    requested: RequestedVersions,
    at: LedgerInfo | null,
    answer: Answer,
    key: string | null,
    read: boolean,
  ): NowOrLater<undefined> {
    const refused = answer.error ?? (answer.exactAt ? refusedVersions(answer.exactAt, requested) : null);
    if (refused) return ctx.sendError(req, reply, refused, refused, route);
    if (answer.upstream && ctx.upstream) return ctx.upstream(req, reply).then(() => undefined);
    const exactAt = answer.exactAt ?? at;
    // A page read at another position than the key's (a block or a prune came in between) may not
    // be the page of this key: sent, not cached.
    if (key !== null && exactAt !== null && at !== null && samePosition(exactAt, at)) ctx.pages.offer(key, answer);
    const ledger = ledgerHeaders && exactAt ? ctx.headers.ledger(exactAt) : undefined;
    if (answer.stream) {
      answer.stream(req, reply, ledger ?? []);
      return undefined;
    }
    // Made for this request: a page read (not the cache's), or a body that is not one the app holds (the spec, an asset).
    const made = read && (key !== null || !(answer.body instanceof EncodedBody));
    const more = answer.cursor ? ctx.headers.cursor(answer.cursor) : undefined;
    if (answer.headers) {
      const own = more ?? [];
      for (const name in answer.headers) own.push(name, answer.headers[name]!);
      return sendBody(req, reply, format, answer, ledger, own, made);
    }
    return sendBody(req, reply, format, answer, ledger, more, made);
  }

  function sendBody(
    req: FastifyRequest,
    reply: FastifyReply,
    format: WireFormat,
    answer: Answer,
    ledger: readonly string[] | undefined,
    more: readonly string[] | undefined,
    made: boolean,
  ): undefined {
    let body = answer.body;
    if (body === undefined) body = serialize(answer.json);
    ctx.compression.send(req, reply, 200, body, answer.type ?? (format === "bcs" ? BCS_TYPE : JSON_ANSWER_TYPE), ledger, more, route?.metrics, made);
    return undefined;
  }

  function negotiate(accept: string | undefined): WireFormat {
    // An operation with a type of its own (the explorer) or JSON only ignores Accept, as the reference.
    if (jsonAllowed || op.formats.length === 0) return op.formats.length > 1 ? acceptType(accept) : "json";
    if (namedType(accept) === "json") {
      throw new ApiError(
        403,
        "api_disabled",
        `${op.summary} is not allowed with Accept: application/json. Only BCS is supported as an AcceptType: send Accept: application/x-bcs`,
      );
    }
    return "bcs";
  }

  function failureText(input: Input<unknown, unknown, unknown>): string {
    return typeof op.failure === "string" ? op.failure : op.failure(input);
  }
}

/** The position, or the 503 of an empty ledger. */
function nonEmpty(info: LedgerInfo | null): LedgerInfo {
  if (!info) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  return info;
}
