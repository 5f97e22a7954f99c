/**
 * GET /v1/transactions/stream — committed transactions pushed as they commit, each as
 * /transactions/by_version answers it: Server-Sent Events (`id:` the version) or NDJSON, by
 * Accept; from `start_version` (replayed from the ledger, then live with no gap), after a
 * `Last-Event-ID`, or from the next commit; filtered by sender, address, entry function, event
 * type and success (docs/decisions.md §24). Not an operation of the reference node.
 *
 * @example curl -N 'http://127.0.0.1:8080/v1/transactions/stream?sender=0x1'
 */
import { ApiError, quote } from "../../http/apiError.js";
import { defineOperation, u64Param } from "../../http/operation.js";
import { u64Of } from "../../http/params.js";
import { parseFilter } from "./filter.js";
import type { StreamFormat } from "./feed.js";
import { StreamHub } from "./stream.js";

const FORMATS: Record<string, StreamFormat> = { "text/event-stream": "sse", "application/x-ndjson": "ndjson", "*/*": "sse", "text/*": "sse", "application/*": "ndjson" };

/** The stream's format by Accept: the first media range it can serve; none named, SSE; only others, 406. */
export function streamFormat(accept: string | undefined): StreamFormat {
  if (accept === undefined || accept.trim() === "") return "sse";
  for (const range of accept.split(",")) {
    const [type = "", ...params] = range.split(";");
    if (params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(p))) continue;
    const format = FORMATS[type.trim().toLowerCase()];
    if (format) return format;
  }
  throw new ApiError(406, "web_framework_error", `the transaction stream is sent as text/event-stream or application/x-ndjson, not ${quote(accept)}: send Accept with one of them`);
}

/** `Last-Event-ID`: the version of the last event the client received. */
function lastEventId(raw: string | string[] | undefined): bigint | undefined {
  if (raw === undefined) return undefined;
  const v = Array.isArray(raw) ? raw[0]! : raw;
  const version = u64Of(v);
  if (version === null) throw ApiError.badParam(`failed to parse header \`Last-Event-ID\`: ${quote(v)} is not a ledger version (a u64, the id of the last event received)`);
  return version;
}

const filterParam = (description: string) => ({ type: "string", description }) as const;

export const streamTransactions = defineOperation({
  operationId: "stream_transactions",
  method: "GET",
  url: "/v1/transactions/stream",
  summary: "Stream transactions",
  description:
    "Committed transactions as they commit, each as /transactions/by_version answers it: Server-Sent Events (Accept: text/event-stream, " +
    "the default; each event's id is the version) or one JSON line each (Accept: application/x-ndjson). It starts at start_version " +
    "(replayed from the ledger, then live), after the version of a Last-Event-ID header, or else at the next commit. Filters combine with AND. " +
    "While nothing matches, a heartbeat (an SSE comment, an empty line) is sent. The stream ends with an `end` event " +
    '(NDJSON: a `{"stream_end":…}` line) naming the reason and the next_version to resume from. Not an operation of the Aptos node API. ' +
    "If start_version has been pruned, then a 410 will be returned.",
  tags: ["Transactions"],
  query: {
    type: "object",
    additionalProperties: false,
    properties: {
      start_version: u64Param("Ledger version to start the stream at (replayed from the ledger). If not provided, the stream starts at the next commit"),
      sender: filterParam("Only transactions sent by this account"),
      address: filterParam(
        "Only transactions that touch this address: as the sender, a secondary signer or fee payer, the address of a state change, or the account of an event handle",
      ),
      function: filterParam("Only transactions whose entry function is this one, e.g. 0x1::aptos_account::transfer"),
      event_type: filterParam("Only transactions with an event of this struct tag; without type arguments, of any instantiation of it"),
      success: { type: "boolean", description: "Only transactions that succeeded (true) or failed (false)" },
    },
  } as const,
  requestHeaders: {
    type: "object",
    properties: {
      "last-event-id": { type: "string", description: "The version of the last event received: the stream resumes after it (an EventSource sends it when it reconnects)" },
    },
  },
  formats: [],
  response: { description: "A stream of committed transactions", type: ["text/event-stream", "application/x-ndjson"] },
  errors: [400, 406, 410, 429, 500, 503],
  ledger: "latest",
  failure: "Failed to get transactions from storage",
  read: (ctx) => {
    const hub = new StreamHub(ctx);
    ctx.closing.push(() => hub.closeAll());
    return async ({ query, headers }, at) => {
      const filter = parseFilter(query);
      const after = lastEventId(headers["last-event-id"]);
      const format = streamFormat(headers.accept);
      // Last-Event-ID is where a reconnecting client left off: it wins over the URL's start_version.
      const start = after !== undefined ? after + 1n : query.start_version;
      const full = hub.refusal();
      if (full) return { error: full };
      if (start !== undefined && start <= at.info.ledgerVersion) {
        // Below the history held (pruned, or before a replica's first synced version): 410, as a read of it is.
        const snap = start < at.info.oldestVersion ? null : await ctx.store.readTransactions(start, 1);
        if (snap === null || snap.value.texts.length === 0) return { error: ApiError.versionPruned(start, snap?.info ?? at.info) };
      }
      const opened = at.info.ledgerVersion;
      return { stream: (req, reply, ledger) => hub.stream(req, reply, ledger, { format, filter, start: start ?? opened + 1n }, opened) };
    };
  },
});
