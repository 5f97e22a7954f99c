/**
 * One operation = one `Operation` object in `routes/`: its route, the schemas of its input, the
 * wire formats and statuses it answers with, and a handler that gets parsed, typed input and a
 * resolved ledger position and returns what to send. Everything every operation shares (parsing,
 * negotiation, version resolution, ledger headers, content type, compression, error mapping) is
 * done once, by `operationHandler` in `handler.ts`; the OpenAPI document and each operation's
 * status list come from these same objects (`routeSchema`).
 */
import type { LedgerInfo } from "../ledger/types.js";
import type { Snapshot } from "../storage/reader.js";
import type { EncodedBody } from "./compression.js";
import type { NodeContext } from "./context.js";
import type { ApiError } from "./errors.js";
import { ledgerHeaderSchemas } from "./headers.js";
import type { Later, PositionReads } from "./later.js";
import type { WireFormat } from "./negotiate.js";

// ---------------------------------------------------------------------------------------------
// Input schemas and the types they parse to
// ---------------------------------------------------------------------------------------------

/** A path or query parameter holding an account address or table handle: parsed to 32 bytes. */
export const addressParam = (description: string) => ({ $ref: "Address#", description }) as const;
/** A u64 query parameter (a version): parsed to a bigint. */
export const u64Param = (description: string) => ({ $ref: "U64#", description }) as const;
/** A page size: an integer from 0 to 65535, decimal digits only (as the reference's u16 parse). */
export const limitParam = (description: string) =>
  ({ type: "integer", format: "uint16", minimum: 0, maximum: 65535, description }) as const;
/** A paging cursor (the X-NODE-CURSOR of the previous page): the operation parses it. */
export const cursorParam = (description: string) => ({ $ref: "StateKeyWrapper#", description }) as const;

/** A reference to a shared schema (see `schemas.ts`), carrying that schema's type. */
export interface SchemaRef<S> {
  readonly $ref: string;
  /** Type only: the referenced schema. */
  readonly schema?: S;
}
export function ref<S extends { $id: string }>(schema: S): SchemaRef<S> {
  return { $ref: `${schema.$id}#` };
}

/** What a property schema parses to: addresses and hex bytes as bytes, u64 as bigint. */
type ParsedValue<P> = P extends { $ref: "Address#" }
  ? Uint8Array
  : P extends { $ref: "U64#" }
    ? bigint
    : P extends { type: "integer" }
      ? number
      : P extends { type: "string"; format: "hex" }
        ? Uint8Array
        : P extends { type: "string" } | { $ref: string }
          ? string
          : never;

type RequiredKeys<S> = S extends { required: readonly (infer R)[] } ? R : never;

/** The parsed form of an object schema (params, query, body): required keys required, the rest optional. */
export type Parsed<S> =
  S extends SchemaRef<infer T>
    ? Parsed<T>
    : S extends { properties: infer P }
      ? { [K in keyof P as K extends RequiredKeys<S> ? K : never]: ParsedValue<P[K]> } & {
          [K in keyof P as K extends RequiredKeys<S> ? never : K]?: ParsedValue<P[K]>;
        }
      : Record<string, never>;

export interface ObjectSchema {
  readonly type: "object";
  readonly required?: readonly string[];
  readonly properties: Readonly<Record<string, object>>;
}

// ---------------------------------------------------------------------------------------------
// The operation
// ---------------------------------------------------------------------------------------------

/** The ledger position a handler reads at: the ledger as resolved, and the version to read. */
export interface Position<T = undefined> {
  info: LedgerInfo;
  /** `ledger_version` when the request names one, else the newest version. */
  version: bigint;
  /** What the operation's `position` read returned with the ledger position, in one snapshot. */
  found: T;
}

/** What a handler returns; the wrapper adds the headers, content type and compression. */
export interface Answer {
  /** A JSON value, serialized by the operation's response schema. */
  json?: unknown;
  /** A body already in the negotiated format (a cached page, BCS bytes, a document). */
  body?: string | Buffer | EncodedBody;
  /** Content type of `body` when it is neither JSON nor BCS (the explorer page and its assets). */
  type?: string;
  /** The X-NODE-CURSOR of the next page, or null on the last page (paged operations). */
  cursor?: string | null;
  /** Other response headers particular to the operation. */
  headers?: Record<string, string>;
  /**
   * The ledger position the answer is exact for, when it differs from the resolved one (a prune
   * cut into the read): the requested versions are checked against it and its headers are sent.
   */
  exactAt?: LedgerInfo;
  /**
   * The answer is this error (sent as every error is, with `NodeContext.sendError`): for an
   * operation whose error is a common answer, such as the 404 of a missing table item. Thrown (and
   * rethrown by the wrapper's store-failure mapping) it cost far more: the missing-key row of
   * bench:scale at 10M went 85 -> 57 µs of server CPU a request when the 404 was returned instead
   * (5 alternating rounds, lower in each); a perf profile of the thrown path showed V8 iterating
   * stack frames although the error was caught and had no stack trace.
   */
  error?: ApiError;
}

/** The parsed input of a request. */
export interface Input<P, Q, B> {
  params: Parsed<P>;
  query: Parsed<Q>;
  body: Parsed<B>;
}

/** Which ledger an operation reads. */
export type LedgerUse =
  /** Not the ledger (the spec), or on its own terms (`/v1/info` answers an empty ledger too). */
  | "none"
  /** The newest ledger position (503 while the ledger is empty). */
  | "latest"
  /** `at`: the version to read (`ledger_version`); `bounds`: versions that must not be pruned. */
  | { at?: string; bounds?: readonly string[] };

export interface Operation<P = unknown, Q = unknown, B = unknown, T = undefined> {
  operationId: string;
  method: "GET" | "POST";
  /** Path with Fastify parameters, e.g. `/v1/accounts/:address/modules`. */
  url: string;
  summary: string;
  /** The OpenAPI description; data operations end with the 410 note. */
  description: string;
  tags: string[];
  /** Served but left out of the OpenAPI document (not one of the interface's operations). */
  hidden?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The wire formats, chosen by Accept (JSON when it names neither). An operation without JSON
   * answers 403 to an Accept that asks for JSON. `[]`: the operation sets its own `type`.
   */
  formats: readonly WireFormat[];
  /** The 200's description and its JSON schema (which also serializes `json` answers). */
  response: { description: string; json?: object; type?: string };
  /** The error statuses it can answer with, for the OpenAPI document. */
  errors: readonly number[];
  ledger: LedgerUse;
  /** Sends X-NODE-CURSOR (cursor paging). */
  paged?: boolean;
  /** What a failing store read is reported as (500/503): "Failed to get modules from storage". */
  failure: string | ((input: Input<P, Q, B>) => string);
  /**
   * The read that fixes the ledger position, in one snapshot with what it reads (`Position.found`);
   * the newest ledger info when absent. `version` is the requested `at` version, if any; `format`
   * and `ctx` say what the handler will read, for a read that may bring it along.
   */
  position?: (reads: PositionReads, input: Input<P, Q, B>, version: bigint | undefined, format: WireFormat, ctx: NodeContext) => Later<Snapshot<T> | null>;
  /**
   * Makes the handler for one app (per-app state such as memos lives in this closure). It gets the
   * parsed input, the resolved position (not given to `ledger: "none"` operations, which read on
   * their own terms) and the negotiated format.
   */
  handler: (ctx: NodeContext) => (input: Input<P, Q, B>, at: Position<T>, format: WireFormat) => Later<Answer>;
}

/** Types an operation from its own schemas: `Input` follows `params`, `query` and `body`. */
export function defineOperation<P = undefined, Q = undefined, B = undefined, T = undefined>(op: Operation<P, Q, B, T>): Operation<P, Q, B, T> {
  return op;
}

/** Any operation, as the route table holds them. */
// biome-ignore lint/suspicious/noExplicitAny: the table holds operations of every input type; each is type-checked where it is defined
export type AnyOperation = Operation<any, any, any, any>;

// ---------------------------------------------------------------------------------------------
// The route schema (validation and OpenAPI) of an operation
// ---------------------------------------------------------------------------------------------

const ERROR_TEXT: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  410: "Gone: the requested ledger version has been pruned",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

const CONTENT_TYPE: Record<WireFormat, string> = { json: "application/json", bcs: "application/x-bcs" };

/** Whether the operation's answers carry the ledger headers (errors included). */
export function sendsLedgerHeaders(op: AnyOperation): boolean {
  return op.ledger !== "none";
}

/** The Fastify route schema: validation of the input, and the operation as OpenAPI describes it. */
export function routeSchema(op: AnyOperation): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const f of op.formats) {
    content[CONTENT_TYPE[f]] = { schema: f === "json" ? (op.response.json ?? { type: "object" }) : { type: "string", format: "binary" } };
  }
  if (op.response.type) content[op.response.type] = { schema: { type: "string" } };
  const ok: Record<string, unknown> = { description: op.response.description, content };
  if (sendsLedgerHeaders(op)) ok.headers = ledgerHeaderSchemas(op.paged === true);
  const response: Record<string, unknown> = { 200: ok };
  for (const s of op.errors) response[String(s)] = { description: ERROR_TEXT[s] ?? "Error", $ref: "AptosError#" };
  return {
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: op.tags,
    ...(op.hidden ? { hide: true } : {}),
    ...(op.params ? { params: op.params } : {}),
    ...(op.query ? { querystring: op.query } : {}),
    ...(op.body ? { body: op.body } : {}),
    response,
  };
}
