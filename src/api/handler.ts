/**
 * The one handler every operation runs through, in the same steps for all (STYLE rule 3):
 * 1. validate: parse the input the route schemas checked (addresses to bytes, u64 to bigint) and
 *    negotiate the wire format (403 for JSON from a BCS-only operation);
 * 2. resolve: read the ledger position and judge the requested versions against it
 *    (`refusedVersions`: 404 above the newest, 410 below the oldest kept);
 * 3. read: the operation's own handler;
 * 4. check the versions again against the position the answer is exact for, then send it with
 *    the ledger headers, its content type and, when asked for, compressed.
 * Store failures become the one error class here, whichever step they happen in, and an error of
 * the class is sent from here too.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import fastJson from "fast-json-stringify";
import { parseHexBytes } from "../ledger/address.js";
import type { LedgerInfo } from "../ledger/types.js";
import type { NodeContext } from "./context.js";
import { ApiError, quote } from "./errors.js";
import { acceptType, BCS_TYPE, JSON_TYPE, namedType, type WireFormat } from "./negotiate.js";
import { sendsLedgerHeaders, type AnyOperation, type Answer, type Input, type ObjectSchema, type Position } from "./operation.js";
import { addressPath, checkDecimalQuery, QUERY_KINDS, u64Query } from "./params.js";
import { sharedSchemas } from "./schemas.js";
import { after, guard, type Later } from "./later.js";

/** Versions a request names: the one to read at, and bounds that must not have been pruned. */
export interface RequestedVersions {
  at: bigint | undefined;
  bounds: ReadonlyArray<bigint | undefined>;
}

/**
 * Judges the requested versions against a ledger position: 404 for `at` above the newest
 * version, 410 for any of them below the oldest kept (DECISIONS §8), null when they stand. Used
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

function requestedVersions(versions: { at?: string; bounds?: readonly string[] }, query: Record<string, bigint | undefined>): RequestedVersions {
  const bounds = versions.bounds;
  return { at: versions.at ? query[versions.at] : undefined, bounds: bounds ? bounds.map((n) => query[n]) : NO_BOUNDS };
}

/** How one input property is parsed after the schema checked it. */
type PropertyKind = "address" | "u64" | "hex" | "as-is";

function propertyKinds(schema: unknown): Array<[string, PropertyKind]> {
  const props = (resolveRef(schema) as ObjectSchema | undefined)?.properties ?? {};
  return Object.entries(props).map(([name, p]) => {
    const property = p as { $ref?: string; type?: string; format?: string };
    if (property.$ref === "Address#") return [name, "address"];
    if (property.$ref === "U64#") return [name, "u64"];
    if (property.type === "string" && property.format === "hex") return [name, "hex"];
    return [name, "as-is"];
  });
}

/** A shared schema by its `$ref`, or the schema itself. */
function resolveRef(schema: unknown): unknown {
  const ref = (schema as { $ref?: string } | undefined)?.$ref;
  return ref ? sharedSchemas.find((s) => `${s.$id}#` === ref) : schema;
}

function parseObject(kinds: Array<[string, PropertyKind]>, raw: unknown): Record<string, unknown> {
  const values = (raw ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [name, kind] of kinds) {
    const v = values[name];
    if (v === undefined) continue;
    switch (kind) {
      case "address":
        out[name] = addressPath(name, v as string);
        break;
      case "u64":
        out[name] = u64Query(name, v as string);
        break;
      case "hex": {
        const bytes = parseHexBytes(v as string);
        if (!bytes) {
          throw ApiError.badParam(
            `parse request payload error: ${name}: decode hex-encoded string(${quote(v)}) failed: expected an optional 0x and an even number of hex digits`,
          );
        }
        out[name] = bytes;
        break;
      }
      default:
        out[name] = v;
    }
  }
  return out;
}

/** Shared schemas by id, for the response serializers' `$ref`s. */
const REFERENCED = Object.fromEntries(sharedSchemas.map((s) => [s.$id, s]));
/** Formats our schemas name for documentation only. */
const DOC_FORMATS = Object.fromEntries(["hex", "uint8", "uint16", "uint32", "uint64", "binary"].map((f) => [f, true]));

/** A serializer compiled from a response schema (its `$ref`s to the shared schemas resolved). */
export function jsonSerializer<T>(schema: object): (value: T) => string {
  return fastJson(schema as fastJson.AnySchema, { schema: REFERENCED, ajv: { formats: DOC_FORMATS } } as fastJson.Options) as (value: T) => string;
}

/**
 * Strict input types before the schema's coercion: u16 query values decimal digits only, and body
 * properties the schema types as strings must be JSON strings (ajv would take `{"key": 11}` as the
 * text "11", and raw_item would read its digits as hex). Undefined for a route with neither.
 */
export function strictInput(op: AnyOperation) {
  const query = (op.query as ObjectSchema | undefined)?.properties ?? {};
  const decimals = Object.keys(query).filter((n) => QUERY_KINDS[n] === "u16");
  const bodySchema = resolveRef(op.body) as { properties?: Record<string, { type?: string }> } | undefined;
  const strings = Object.entries(bodySchema?.properties ?? {})
    .filter(([, p]) => p.type === "string")
    .map(([n]) => n);
  if (decimals.length === 0 && strings.length === 0) return undefined;
  return (req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    try {
      const query = req.query as Record<string, unknown>;
      for (const name of decimals) checkDecimalQuery(name, query[name]);
      const body = req.body;
      if (typeof body === "object" && body !== null && !Array.isArray(body)) {
        for (const name of strings) {
          const v = (body as Record<string, unknown>)[name];
          if (v !== undefined && typeof v !== "string") {
            throw ApiError.badParam(`parse request payload error: ${name}: expected a JSON string, got ${v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`}`);
          }
        }
      }
      done();
    } catch (e) {
      done(e as Error);
    }
  };
}

/** The operation's Fastify handler. */
export function operationHandler(op: AnyOperation, ctx: NodeContext) {
  const handle = op.handler(ctx);
  const paramKinds = propertyKinds(op.params);
  const queryKinds = propertyKinds(op.query);
  const bodyKinds = propertyKinds(op.body);
  const serialize = op.response.json ? jsonSerializer(op.response.json) : JSON.stringify;
  const versions = typeof op.ledger === "object" ? op.ledger : null;
  const jsonAllowed = op.formats.includes("json");
  const ledgerHeaders = sendsLedgerHeaders(op);
  const position = op.position;
  // The last JSON answer and its text: an operation that answers with the same object again
  // (the gas estimate between blocks) is serialized once.
  let lastJson: unknown;
  let lastText = "";
  // Each step runs in the same turn as the one before while the store answers at once
  // (`Storage.immediate`): a memoized read is answered without a promise per step.
  return function handleOperation(req: FastifyRequest, reply: FastifyReply): Later<undefined> {
    let done: Later<undefined>;
    try {
      done = steps(req, reply);
    } catch (e) {
      return failed(req, reply, e);
    }
    return done instanceof Promise ? done.catch((e: unknown) => failed(req, reply, e)) : done;
  };

  function steps(req: FastifyRequest, reply: FastifyReply): Later<undefined> {
    // 1. validate
    const input: Input<unknown, unknown, unknown> = {
      params: (paramKinds.length > 0 ? parseObject(paramKinds, req.params) : NOTHING) as never,
      query: (queryKinds.length > 0 ? parseObject(queryKinds, req.query) : NOTHING) as never,
      body: (bodyKinds.length > 0 ? parseObject(bodyKinds, req.body) : NOTHING) as never,
    };
    const format = negotiate(req.headers.accept);
    // 2. resolve
    const requested = versions ? requestedVersions(versions, input.query as Record<string, bigint | undefined>) : NO_VERSIONS;
    if (op.ledger === "none") return after(read(input, null, format), (answer) => send(req, reply, format, requested, null, answer));
    const snapshot = ctx.readPosition(position ? () => position(ctx.reads, input, requested.at, format, ctx) : null, () => failureText(input));
    return after(snapshot, ({ info, value }): Later<undefined> => {
      const refused = refusedVersions(info, requested);
      if (refused) return ctx.sendError(req, reply, refused);
      const at: Position<unknown> = { info, version: requested.at ?? info.ledgerVersion, found: value };
      // 3. read
      return after(read(input, at, format), (answer) => send(req, reply, format, requested, at, answer));
    });
  }

  /**
   * An error of the one class thrown by a step (a store failure, a handler's refusal of its input)
   * is sent from here, not through Fastify's error path (its error hooks and an async error
   * handler): the missing-key row of bench:scale at 10M versions, then a thrown 404, went 86 -> 82
   * µs of server CPU a request (medians of 5 alternating rounds, lower in each round). Errors that
   * are common answers are not thrown at all (`refusedVersions`, `Answer.error`). Anything else
   * goes to the app's error handler, which maps it to the class first; all of them are sent with
   * `NodeContext.sendError`.
   */
  function failed(req: FastifyRequest, reply: FastifyReply, e: unknown): Later<undefined> {
    if (!(e instanceof ApiError)) throw e;
    return ctx.sendError(req, reply, e);
  }

  function read(input: Input<unknown, unknown, unknown>, at: Position<unknown> | null, format: WireFormat): Later<Answer> {
    return guard(
      () => handle(input, at as Position<unknown>, format),
      (e) => {
        throw ctx.storageError(e, () => failureText(input), at?.info ?? null);
      },
    );
  }

  // 4. check the versions again against the position the answer is exact for, and send
  function send(
    req: FastifyRequest,
    reply: FastifyReply,
    format: WireFormat,
    requested: RequestedVersions,
    at: Position<unknown> | null,
    answer: Answer,
  ): Later<undefined> {
    const refused = answer.error ?? (answer.exactAt ? refusedVersions(answer.exactAt, requested) : null);
    if (refused) return ctx.sendError(req, reply, refused);
    const exactAt = answer.exactAt ?? at?.info;
    if (ledgerHeaders && exactAt) reply.headers(ctx.headers.ledger(exactAt));
    if (answer.cursor) reply.headers(ctx.headers.cursor(answer.cursor));
    if (answer.headers) reply.headers(answer.headers);
    let body = answer.body;
    if (body === undefined) {
      if (answer.json !== lastJson) {
        lastText = serialize(answer.json);
        lastJson = answer.json;
      }
      body = lastText;
    }
    ctx.compression.send(req, reply, body, answer.type ?? (format === "bcs" ? BCS_TYPE : JSON_TYPE));
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
