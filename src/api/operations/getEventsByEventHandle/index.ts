/**
 * GET /v1/accounts/{address}/events/{event_handle}/{field_name} — the events of the event handle
 * held in field `field_name` of the account's resource `event_handle` (a struct tag), as read at
 * the ledger version this node holds; then as by creation number (docs/decisions.md §22). A
 * resource the account does not hold is 404 `resource_not_found`, a field it lacks 404
 * `struct_field_not_found`, a field that is not an `0x1::event::EventHandle` 400 `invalid_input`.
 * If the events asked for have been pruned, the server responds with a 410.
 *
 * JSON only: BCS is answered 406 (this node holds transactions and their events as JSON).
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1/events/0x1::block::BlockResource/new_block_events'
 */
import { formatAddress, parseAddress } from "../../../ledger/address.js";
import type { LedgerInfo } from "../../../ledger/types.js";
import { withoutStack } from "../../../storage/contracts/errors.js";
import { ApiError, clip } from "../../http/apiError.js";
import { defineOperation, identifierParam, ref, structTagParam } from "../../http/operation.js";
import { versionedEvent } from "../../schemas.js";
import { readHandleEvents, type HandleKey } from "../events.js";
import { eventsAccountParam, eventsQuery } from "../getEventsByCreationNumber/index.js";
import { resourceNotFound } from "../getAccountResource/read.js";

export const getEventsByEventHandle = defineOperation({
  operationId: "get_events_by_event_handle",
  method: "GET",
  url: "/v1/accounts/:address/events/:event_handle/:field_name",
  summary: "Get events by event handle",
  description:
    "This API uses the given account `address`, `eventHandle`, and `fieldName` to build a key that can globally identify an " +
    "event types. It then uses this key to return events emitted to the given account matching that event type. " +
    "JSON only: BCS is answered 406 (this node holds transactions as JSON). " +
    "If the events asked for have been pruned, the server responds with a 410.",
  tags: ["Events"],
  params: {
    type: "object",
    required: ["address", "event_handle", "field_name"],
    properties: {
      address: eventsAccountParam,
      event_handle: structTagParam("Name of struct to lookup event handle e.g. `0x1::account::Account`"),
      field_name: identifierParam("Name of field to lookup event handle e.g. `withdraw_events`"),
    },
  } as const,
  query: eventsQuery,
  formats: ["json", "bcs"],
  response: { description: "The handle's events, ascending by sequence number", json: { type: "array", items: ref(versionedEvent) } },
  errors: [400, 404, 406, 410, 500, 503],
  ledger: "latest",
  failure: ({ params }) => `Failed to query DB to check for ${params.event_handle}`,
  read:
    (ctx) =>
    async ({ params, query }, _at, format) => {
      const snap = await ctx.store.readResource(params.address, params.event_handle, undefined);
      if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
      const { info } = snap;
      if (snap.value === null) return { error: resourceNotFound(params.address, params.event_handle, info.ledgerVersion, info), exactAt: info };
      const fields = JSON.parse(snap.value) as Record<string, unknown> | null;
      if (typeof fields !== "object" || fields === null || !Object.hasOwn(fields, params.field_name)) {
        return { error: structFieldNotFound(params.address, params.event_handle, params.field_name, info), exactAt: info };
      }
      const handle = eventHandleOf(fields[params.field_name]);
      if (handle === null) return { error: notAnEventHandle(params.field_name, fields[params.field_name], info), exactAt: info };
      return readHandleEvents(ctx, handle.key, query.start, query.limit, info, format, handle.counter);
    },
});

/** The reference's 404 for a field the resource does not have. */
function structFieldNotFound(address: Uint8Array, type: string, field: string, info: LedgerInfo): ApiError {
  const message = `Struct Field not found by Address(${formatAddress(address)}), Struct tag(${clip(type)}), Field name(${field}) and Ledger version(${info.ledgerVersion})`;
  return withoutStack(() => new ApiError(404, "struct_field_not_found", message, info));
}

const U64_TEXT = /^[0-9]{1,20}$/;

/**
 * The handle a field's JSON holds when it is an `0x1::event::EventHandle`
 * (`{"counter", "guid": {"id": {"creation_num", "addr"}}}`), else null.
 */
function eventHandleOf(value: unknown): { key: HandleKey; counter: bigint } | null {
  const h = value as { counter?: unknown; guid?: { id?: { creation_num?: unknown; addr?: unknown } } } | null;
  const id = typeof h === "object" && h !== null && typeof h.guid === "object" && h.guid !== null ? h.guid.id : undefined;
  if (typeof id !== "object" || id === null || typeof h!.counter !== "string" || !U64_TEXT.test(h!.counter)) return null;
  const account = typeof id.addr === "string" ? parseAddress(id.addr) : null;
  if (account === null || typeof id.creation_num !== "string" || !U64_TEXT.test(id.creation_num)) return null;
  return { key: { account, creationNumber: BigInt(id.creation_num) }, counter: BigInt(h!.counter) };
}

/** The bytes of an EventHandle's BCS: its counter, its creation number and its address. */
const EVENT_HANDLE_BCS_BYTES = 8 + 8 + 32;

/**
 * The reference's 400 for a field that is not an event handle: it reads the field's BCS as one,
 * which fails at the end of a shorter value ("unexpected end of input") or with bytes left of a
 * longer one ("remaining input"). The length is known here for the values whose JSON gives it.
 */
function notAnEventHandle(field: string, value: unknown, info: LedgerInfo): ApiError {
  const size = bcsLength(value);
  const cause = size === null ? "" : size < EVENT_HANDLE_BCS_BYTES ? ": unexpected end of input" : ": remaining input";
  return ApiError.invalidInput(`Deserialization error, field(${field}) type is not a EventHandle struct${cause}`, info);
}

/**
 * The BCS length of a JSON value whose JSON tells it within what matters here (shorter or longer
 * than an event handle), else null: u8–u32 and bools are numbers and booleans of at most 4 bytes,
 * u64–u256 and addresses decimal or hex text of at most 32, bytes `0x` hex with their length.
 */
function bcsLength(value: unknown): number | null {
  if (typeof value === "number" || typeof value === "boolean") return 4;
  if (typeof value !== "string") return null;
  if (/^[0-9]{1,78}$/.test(value)) return 32;
  if (/^0x([0-9a-f]{2})*$/.test(value)) {
    const n = (value.length - 2) / 2;
    return n <= 32 ? 32 : n + 1;
  }
  return null;
}
