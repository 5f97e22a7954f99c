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
import { WriterStatus } from "../../../ingest/writerStatus.js";
import { ApiError } from "../../http/apiError.js";
import { defineOperation, type Answer } from "../../http/operation.js";

const U32_MAX = 4294967295;

/** The answer of a healthy node. */
const HEALTHY: Answer = { json: { message: "aptos-node:ok" } };

/** How long a failed storage read keeps the node unhealthy (a corrupt database: until restart). */
const STORAGE_FAILURE_MS = 30_000;

export const getHealthy = defineOperation({
  operationId: "healthy",
  method: "GET",
  url: "/v1/-/healthy",
  summary: "Check basic node health",
  description:
    "By default this endpoint just checks that it can get the latest ledger info and then returns 200. " +
    "If the duration_secs param is provided, this endpoint will return a 200 if the following condition is true: " +
    "`server_latest_ledger_info_timestamp >= server_current_time_timestamp - duration_secs`; otherwise 503.",
  tags: ["General"],
  hidden: true,
  query: {
    type: "object",
    properties: {
      // A string here so that the handler, not the schema, words the 400 (name, value and bound).
      duration_secs: { type: "string", format: "uint32", description: "Threshold in seconds that the server can be behind to be considered healthy" },
    },
  } as const,
  formats: ["json"],
  response: {
    description: "The node is healthy",
    json: { type: "object", required: ["message"], properties: { message: { type: "string" } } },
  },
  errors: [400, 500, 503],
  ledger: "latest",
  failure: "Failed to check the node's health",
  read: (ctx) =>
    function getHealthy({ query }, { info }): Answer {
      const maxAgeSecs = durationSecs(query.duration_secs);
      // storage and writer health: the ledger reads fine but nothing new can be stored
      const fileProblem = ctx.store.fileProblem?.() ?? null;
      if (fileProblem) throw new ApiError(503, "health_check_failed", fileProblem, info);
      const failure = ctx.storageFailure;
      if (failure && (failure.corrupt || Date.now() - failure.atMs < STORAGE_FAILURE_MS)) {
        const what = failure.corrupt ? "the database is corrupt" : `a storage read failed ${((Date.now() - failure.atMs) / 1000).toFixed(1)}s ago`;
        throw new ApiError(503, "health_check_failed", `${what}: ${failure.message}`, info);
      }
      const failing = ctx.writer?.failing;
      if (failing) throw new ApiError(503, "health_check_failed", WriterStatus.describe(failing), info);
      // readiness: the newest block's chain time against the wall clock
      if (maxAgeSecs !== undefined) {
        const ageUsec = BigInt(Date.now()) * 1000n - info.timestampUsec;
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
      return HEALTHY;
    },
});

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
