/**
 * GET /v1/-/healthy — the health check for load balancers, as the reference node answers it. Not
 * one of the six operations of the interface document (hidden from `/v1/spec`).
 *
 * - Without `duration_secs` it is a liveness check: 200 `{"message":"aptos-node:ok"}` whenever the
 *   ledger can be read and holds a block.
 * - With `duration_secs=N` it is a readiness check: 200 only when the newest block's chain
 *   timestamp is at most N seconds behind this machine's clock; otherwise 503
 *   `health_check_failed`, naming the block's age and N.
 * - `duration_secs` must be an integer from 0 to 4294967295 (u32, as the reference node): anything
 *   else is 400 `web_framework_error`.
 * - An empty or unreadable ledger answers 503.
 * - So does a node whose writer (devnet, pruner) failed its last attempt, whose database file was
 *   deleted or replaced while open, whose store failed a read in the last 30 s, or whose database
 *   turned out corrupt: 503 `health_check_failed` with the reason. The checks are in memory or one
 *   stat call, so the check stays cheap.
 *
 * JSON only; the ledger headers are sent on the 200 and on the 503 of a stale ledger.
 *
 * @example curl 'http://127.0.0.1:8080/v1/-/healthy?duration_secs=30'
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import { WriterStatus } from "../../ingest/writerStatus.js";
import { sendBody } from "../compression.js";
import { ledgerHeaderSchemas } from "../headers.js";
import { JSON_TYPE } from "../negotiate.js";
import { errorResponses, type RouteDef } from "../route.js";

export interface GetHealthyQuery {
  duration_secs?: string;
}

/** `HealthCheckSuccess` of the reference node (its message names the reference node). */
export interface GetHealthyResponse {
  message: "aptos-node:ok";
}

const U32_MAX = 4294967295;

/** How long a failed storage read keeps the node unhealthy (a corrupt database: until restart). */
const STORAGE_FAILURE_MS = 30_000;

export const getHealthy: RouteDef = {
  method: "GET",
  url: "/v1/-/healthy",
  ledgerHeaders: true,
  schema: {
    operationId: "healthy",
    summary: "Check basic node health",
    description:
      "By default this endpoint just checks that it can get the latest ledger info and then returns 200. " +
      "If the duration_secs param is provided, this endpoint will return a 200 if the following condition is true: " +
      "`server_latest_ledger_info_timestamp >= server_current_time_timestamp - duration_secs`; otherwise 503.",
    tags: ["General"],
    hide: true,
    querystring: {
      type: "object",
      properties: {
        // A string here so that the handler, not the schema, words the 400 (name, value and bound).
        duration_secs: {
          type: "string",
          format: "uint32",
          description: "Threshold in seconds that the server can be behind to be considered healthy",
        },
      },
    },
    response: {
      200: {
        description: "The node is healthy",
        headers: ledgerHeaderSchemas(false),
        content: {
          "application/json": {
            schema: { type: "object", required: ["message"], properties: { message: { type: "string" } } },
          },
        },
      },
      ...errorResponses([400, 500, 503]),
    },
  } as RouteDef["schema"],
  handler: (ctx) =>
    async function getHealthyHandler(req: FastifyRequest, reply: FastifyReply) {
      // 1. validate
      const maxAgeSecs = durationSecs((req.query as GetHealthyQuery).duration_secs);
      // 2. resolve: the latest ledger (503 when empty or unreadable)
      const info = await ctx.ledger();
      // 2b. storage and writer health: the ledger reads fine but nothing new can be stored
      const fileProblem = ctx.store.fileProblem?.() ?? null;
      if (fileProblem) throw new ApiError(503, "health_check_failed", fileProblem, info);
      const sf = ctx.storageFailure;
      if (sf && (sf.corrupt || Date.now() - sf.atMs < STORAGE_FAILURE_MS)) {
        const what = sf.corrupt ? "the database is corrupt" : `a storage read failed ${((Date.now() - sf.atMs) / 1000).toFixed(1)}s ago`;
        throw new ApiError(503, "health_check_failed", `${what}: ${sf.message}`, info);
      }
      const failing = ctx.writer?.failing;
      if (failing) throw new ApiError(503, "health_check_failed", WriterStatus.describe(failing), info);
      // 3. read: compare the newest block's chain time with the wall clock
      if (maxAgeSecs !== undefined) {
        const nowUsec = BigInt(Date.now()) * 1000n;
        const ageUsec = nowUsec - info.timestampUsec;
        if (ageUsec > BigInt(maxAgeSecs) * 1_000_000n) {
          throw new ApiError(
            503,
            "health_check_failed",
            `The latest ledger info timestamp is ${info.timestampUsec}us, ${formatSecs(ageUsec)}s old, ` +
              `which is beyond the allowed skew (${maxAgeSecs}s).`,
            info,
          );
        }
      }
      // 4. encode
      reply.headers(ctx.headers.ledger(info));
      const body: GetHealthyResponse = { message: "aptos-node:ok" };
      return sendBody(ctx.config, req, reply, JSON.stringify(body), JSON_TYPE);
    },
};

function durationSecs(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(raw) || Number(raw) > U32_MAX) {
    throw ApiError.badParam(
      `failed to parse parameter \`duration_secs\`: ${JSON.stringify(raw)} is not an integer from 0 to ${U32_MAX}`,
    );
  }
  return Number(raw);
}

/** Microseconds as seconds with three decimals. */
function formatSecs(usec: bigint): string {
  const ms = usec / 1000n;
  const sign = ms < 0n ? "-" : "";
  const abs = ms < 0n ? -ms : ms;
  return `${sign}${abs / 1000n}.${(abs % 1000n).toString().padStart(3, "0")}`;
}
