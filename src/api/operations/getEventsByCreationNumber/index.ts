/**
 * GET /v1/accounts/{address}/events/{creation_number} — the events of the event handle whose GUID
 * is the account and the creation number, ascending by sequence number: from `start` (a sequence
 * number), else the latest `limit` (default 25, at most 100), each printed as the reference's
 * `VersionedEvent` from its transaction as ingested (docs/decisions.md §22). A handle without
 * events is `[]`. If the events asked for have been pruned, the server responds with a 410.
 *
 * JSON only: BCS is answered 406 (this node holds transactions and their events as JSON).
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1/events/3?limit=10'
 */
import { accountAddressParam, defineOperation, limitParam, ref, u64Param } from "../../http/operation.js";
import { versionedEvent } from "../../schemas.js";
import { readHandleEvents } from "../events.js";

/** The query of both event operations, worded as the reference words it. */
export const eventsQuery = {
  type: "object",
  properties: {
    start: u64Param("Starting sequence number of events. If unspecified, by default will retrieve the most recent events"),
    limit: limitParam("Max number of events to retrieve. If unspecified, defaults to default page size"),
  },
} as const;

/** The path's account of both event operations, worded as the reference words it. */
export const eventsAccountParam = {
  ...accountAddressParam,
  description:
    "Hex-encoded 32 byte Aptos account, with or without a `0x` prefix, for which events are queried. This refers to the account " +
    "that events were emitted to, not the account hosting the move module that emits that event type.",
} as const;

export const getEventsByCreationNumber = defineOperation({
  operationId: "get_events_by_creation_number",
  method: "GET",
  url: "/v1/accounts/:address/events/:creation_number",
  summary: "Get events by creation number",
  description:
    "Event types are globally identifiable by an account `address` and monotonically increasing `creation_number`, one per " +
    "event type emitted to the given account. This API returns events corresponding to that that event type. " +
    "Module events (which have no event handle) are not listed. JSON only: BCS is answered 406 (this node holds transactions as JSON). " +
    "If the events asked for have been pruned, the server responds with a 410.",
  tags: ["Events"],
  params: {
    type: "object",
    required: ["address", "creation_number"],
    properties: {
      address: eventsAccountParam,
      creation_number: u64Param("Creation number corresponding to the event stream originating from the given account."),
    },
  } as const,
  query: eventsQuery,
  formats: ["json", "bcs"],
  response: { description: "The handle's events, ascending by sequence number", json: { type: "array", items: ref(versionedEvent) } },
  errors: [400, 406, 410, 500, 503],
  ledger: "latest",
  failure: ({ params }) => `Failed to find events by key ${params.creation_number}`,
  read:
    (ctx) =>
    ({ params, query }, at, format) =>
      readHandleEvents(ctx, { account: params.address, creationNumber: params.creation_number }, query.start, query.limit, at.info, format),
});
