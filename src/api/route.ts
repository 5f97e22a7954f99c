/**
 * One operation = one `RouteDef` in `routes/`. The route table is the single source of truth: the
 * app registers these, and the OpenAPI document is generated from the same schemas.
 */
import type { FastifyReply, FastifyRequest, FastifySchema } from "fastify";
import type { Awaitable } from "./context.js";
import type { NodeContext } from "./context.js";

/**
 * A handler answers synchronously when the store does (see `Awaitable`), else with a promise; it
 * sends through `sendBody` and returns the reply either way.
 */
export type Handler = (req: FastifyRequest, reply: FastifyReply) => Awaitable<unknown>;

export interface RouteDef {
  method: "GET" | "POST";
  /** Path with Fastify parameters, e.g. `/v1/accounts/:address/modules`. */
  url: string;
  /** Data operations carry the ledger headers on every response, errors included. */
  ledgerHeaders: boolean;
  schema: FastifySchema & { operationId: string; summary: string; description: string; tags: string[] };
  handler: (ctx: NodeContext) => Handler;
}

/** Error responses as the OpenAPI document lists them. */
export function errorResponses(statuses: number[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of statuses) out[String(s)] = { description: ERROR_TEXT[s] ?? "Error", $ref: "AptosError#" };
  return out;
}

const ERROR_TEXT: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  410: "Gone: the requested ledger version has been pruned",
  500: "Internal Server Error",
  503: "Service Unavailable",
};
