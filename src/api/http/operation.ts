/**
 * One operation = one folder in `operations/`, its `index.ts` one `Operation` object: its route,
 * the schemas of its input, the wire formats and statuses it answers with, the store read that
 * resolves its version (`resolve`), its page cache key (`pageKey`), its `read` and its `encode`.
 * Everything every operation shares (parsing, negotiation, version resolution, the page cache,
 * ledger headers, content type, compression, error mapping) is done once, by `operationHandler`
 * in `operationHandler.ts`; the OpenAPI document and each operation's status list come from these same
 * objects (`routeSchema`).
 */
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { LedgerInfo } from "../../ledger/types.js";
import type { EncodedBody } from "./compression.js";
import type { NodeContext } from "../context.js";
import type { ApiError } from "./apiError.js";
import { ledgerHeaderSchemas } from "./ledgerHeaders.js";
import type { NowOrLater, PositionReads } from "../pages/nowOrLater.js";

export type { PositionReads };
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
/** A resource type in a path: parsed, verified and printed as the type is stored (`structTagPath`). */
export const structTagParam = (description: string) => ({ $ref: "MoveStructTag#", description }) as const;
/** A Move identifier in a path (a module name): checked (`identifierPath`). */
export const identifierParam = (description: string) => ({ $ref: "IdentifierWrapper#", description }) as const;
/** A 32-byte hash in a path (a transaction's): parsed to its bytes (`hashPath`). */
export const hashParam = (description: string) => ({ $ref: "HashValue#", description }) as const;
/** A paging cursor (the X-NODE-CURSOR of the previous page): the operation parses it. */
export const cursorParam = (description: string) => ({ $ref: "StateKeyWrapper#", description }) as const;

/** The account of an account's route, worded as the reference words it. */
export const accountAddressParam = addressParam("Address of account with or without a 0x prefix");
/** The path of a route under `/accounts/{address}` with no other path parameter. */
export const accountPathParams = { type: "object", required: ["address"], properties: { address: accountAddressParam } } as const;
/** The path of a route under `/tables/{table_handle}`, worded as the reference words it. */
export const tableHandlePathParams = {
  type: "object",
  required: ["table_handle"],
  properties: { table_handle: addressParam("Table handle hex encoded 32-byte string") },
} as const;
/** The version of an account's state to read, worded as the reference words it. */
export const stateVersionParam = u64Param("Ledger version to get state of account. If not provided, it will be the latest version");
/** The query of an account's state read at one version. */
export const stateVersionQuery = { type: "object", properties: { ledger_version: stateVersionParam } } as const;
/** The query of a paged read of an account's state: its version, the cursor and the page size (`limit`: its description). */
export const pagedStateQuery = (limit: string) =>
  ({
    type: "object",
    properties: {
      ledger_version: stateVersionParam,
      start: cursorParam(
        "Cursor specifying where to start for pagination. Use the cursor provided by the X-NODE-CURSOR header in the response from the previous page.",
      ),
      limit: limitParam(limit),
    },
  }) as const;

/** A reference to a shared schema (see `schemas.ts`), carrying that schema's type. */
export interface SchemaRef<S> {
  readonly $ref: string;
  /** Type only: the referenced schema. */
  readonly schema?: S;
}
export function ref<S extends { $id: string }>(schema: S): SchemaRef<S> {
  return { $ref: `${schema.$id}#` };
}

/** What a property schema parses to: addresses, hashes and hex bytes as bytes, u64 as bigint. */
type ParsedValue<P> = P extends { $ref: "Address#" } | { $ref: "HashValue#" }
  ? Uint8Array
  : P extends { $ref: "U64#" }
    ? bigint
    : P extends { type: "integer" }
      ? number
      : P extends { type: "boolean" }
        ? boolean
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

/** The ledger position an operation reads at: the ledger as resolved, and the version to read. */
export interface Position<T = undefined> {
  info: LedgerInfo;
  /** `ledger_version` when the request names one, else the newest version. */
  version: bigint;
  /**
   * What the operation's `resolve` read returned with the ledger position, in one snapshot;
   * undefined when the position alone resolved the request (no `resolve`).
   */
  found: T | undefined;
}

/** The position an operation of `ledger: "latest-or-empty"` reads at: null for an empty or unreadable ledger. */
export interface MaybePosition {
  info: LedgerInfo | null;
}

/** What an operation's `encode` returns; the handler adds the headers, content type and compression. */
export interface Answer {
  /** A JSON value, serialized by the operation's response schema. */
  json?: unknown;
  /** A body already in the negotiated format (a page, BCS bytes, a document). */
  body?: string | Buffer | EncodedBody;
  /** Content type of `body` when it is neither JSON nor BCS (the explorer page and its assets). */
  type?: string;
  /** The X-NODE-CURSOR of the next page, or null on the last page (paged operations). */
  cursor?: string | null;
  /**
   * The first version a page holds (null: an empty page): a cached copy of the page serves while
   * the ledger's oldest version is at or below it, and is read again once pruning passes it.
   */
  firstVersion?: bigint | null;
  /** Other response headers particular to the operation. */
  headers?: Record<string, string>;
  /**
   * The ledger position the answer is exact for, when it differs from the resolved one (a prune
   * cut into the read): the requested versions are checked against it and its headers are sent.
   */
  exactAt?: LedgerInfo;
  /**
   * The answer is this error (sent as every error is, with `NodeContext.sendError`): for an
   * operation whose error is a common answer, such as the 404 of a missing table item. Returned,
   * not thrown: a throw makes V8 walk the stack frames even when the error is caught, which costs
   * more than the rest of such a request (bench/results/archive.md).
   */
  error?: ApiError;
  /**
   * The answer is a stream the operation writes itself (the live transaction stream): called with
   * the ledger headers of the resolved position once the handler would send a body.
   */
  stream?: (req: FastifyRequest, reply: FastifyReply, ledgerHeaders: readonly string[]) => void;
  /**
   * The answer is the upstream's (`NodeContext.upstream`, `--proxy`): what was asked is not held
   * here, such as a replica's history before its first synced version. Only set where it is set.
   */
  upstream?: true;
}

/** The parsed input of a request. */
export interface Input<P, Q, B> {
  params: Parsed<P>;
  query: Parsed<Q>;
  body: Parsed<B>;
  /** The request's headers (an operation that reads one: the stream's `Last-Event-ID`, its Accept). */
  headers: IncomingHttpHeaders;
}

/** Which ledger an operation reads. */
export type LedgerUse =
  /** Not the ledger (the spec documents). */
  | "none"
  /** The newest ledger position, or none (`/v1/info` answers an empty or unreadable ledger too). */
  | "latest-or-empty"
  /** The newest ledger position (503 while the ledger is empty). */
  | "latest"
  /** `at`: the version to read (`ledger_version`); `bounds`: versions that must not be pruned. */
  | { at?: string; bounds?: readonly string[] };

/** The position an operation's `read` gets, by its `ledger`. */
export type PositionOf<L extends LedgerUse, T> = L extends "none" ? null : L extends "latest-or-empty" ? MaybePosition : Position<T>;

export interface Operation<P = unknown, Q = unknown, B = unknown, L extends LedgerUse = LedgerUse, T = undefined, R = Answer> {
  operationId: string;
  method: "GET" | "POST";
  /** Path with Fastify parameters, e.g. `/v1/accounts/:address/modules`. */
  url: string;
  summary: string;
  /** The OpenAPI description; data operations end with the 410 note. */
  description: string;
  tags: readonly string[];
  /** Served but left out of the OpenAPI document (not one of the interface's operations). */
  hidden?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** Request headers the operation reads, as a JSON schema of an object with their lowercase names (for the document; the operation parses them). */
  requestHeaders?: Record<string, unknown>;
  /**
   * The wire formats, chosen by Accept (JSON when it names neither). An operation without JSON
   * answers 403 to an Accept that asks for JSON. `[]`: the operation sets its own `type`.
   */
  formats: readonly WireFormat[];
  /** The 200's description and its JSON schema (which also serializes `json` answers). */
  response: { description: string; json?: object; type?: string | readonly string[] };
  /** The error statuses it can answer with, for the OpenAPI document. */
  errors: readonly number[];
  ledger: L;
  /**
   * Methods the reference also answers on this path and this node does not serve (the POST of
   * `/v1/transactions`, a submission): passed to the upstream with `--proxy`, else 405 here.
   */
  upstreamMethods?: readonly "POST"[];
  /** Sends X-NODE-CURSOR (cursor paging). */
  paged?: boolean;
  /** What a failing store read is reported as (500/503): "Failed to get modules from storage". */
  failure: string | ((input: Input<P, Q, B>) => string);
  /**
   * Version resolution's store read: fixes the ledger position in one snapshot with what it reads
   * (`Position.found`); the position alone when absent. `version` is the requested `at` version,
   * if any. It only passes the store's answer on: the store may give it in the calling turn.
   */
  resolve?: (
    reads: PositionReads,
    input: Input<P, Q, B>,
    version: bigint | undefined,
    format: WireFormat,
    ctx: NodeContext,
  ) => NowOrLater<(T & { info: LedgerInfo }) | null>;
  /**
   * Makes the page cache key of a request's answer, by the resolved position: everything the encoded
   * answer depends on. An answer found under it is sent without `read` and `encode`; one read is
   * offered under it when it is exact for the resolved position.
   */
  pageKey?: (ctx: NodeContext) => (input: Input<P, Q, B>, at: Position<T>, format: WireFormat) => string;
  /**
   * Makes the read for one app (per-app state such as memos lives in this closure): what the
   * answer is made of, read at the resolved position (one store call; `null` for `ledger: "none"`).
   * A plain value, or a promise when it reads the store.
   */
  read: (ctx: NodeContext) => (input: Input<P, Q, B>, at: PositionOf<L, T>, format: WireFormat) => R | Promise<R>;
  /**
   * Makes the encoding for one app: the read's value as the answer, in the negotiated format
   * (JSON and BCS). Absent: the read's value is the answer.
   */
  encode?: (ctx: NodeContext) => (value: R, format: WireFormat, input: Input<P, Q, B>, at: PositionOf<L, T>) => Answer;
}

/** Types an operation from its own schemas: `Input` follows `params`, `query` and `body`. */
export function defineOperation<P = undefined, Q = undefined, B = undefined, const L extends LedgerUse = LedgerUse, T = undefined, R = Answer>(
  op: Operation<P, Q, B, L, T, R>,
): Operation<P, Q, B, L, T, R> {
  return op;
}

/** Any operation, as the route table holds them. */
// biome-ignore lint/suspicious/noExplicitAny: the table holds operations of every input type; each is type-checked where it is defined
export type AnyOperation = Operation<any, any, any, any, any, any>;

// ---------------------------------------------------------------------------------------------
// The route schema (validation and OpenAPI) of an operation
// ---------------------------------------------------------------------------------------------

const ERROR_TEXT: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  406: "Not Acceptable: the format asked for is not available for this answer",
  410: "Gone: the requested ledger version has been pruned",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

const CONTENT_TYPE: Record<WireFormat, string> = { json: "application/json", bcs: "application/x-bcs" };

/** Whether the operation's answers carry the ledger headers (errors included). */
export function sendsLedgerHeaders(op: AnyOperation): boolean {
  return op.ledger !== "none" && op.ledger !== "latest-or-empty";
}

/** The Fastify route schema: validation of the input, and the operation as OpenAPI describes it. */
export function routeSchema(op: AnyOperation): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const f of op.formats) {
    content[CONTENT_TYPE[f]] = { schema: f === "json" ? (op.response.json ?? { type: "object" }) : { type: "string", format: "binary" } };
  }
  for (const type of [op.response.type ?? []].flat()) content[type] = { schema: { type: "string" } };
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
    ...(op.requestHeaders ? { headers: op.requestHeaders } : {}),
    ...(op.body ? { body: op.body } : {}),
    response,
  };
}
