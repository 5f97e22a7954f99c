/**
 * What the two event operations share (by creation number, by event handle): the page of an event
 * handle's events, each taken out of its transaction's stored text and printed as the reference's
 * `VersionedEvent` (docs/decisions.md §22).
 */
import { formatAddress } from "../../ledger/address.js";
import type { LedgerInfo } from "../../ledger/types.js";
import { withoutStack } from "../../storage/contracts/errors.js";
import type { EventRef } from "../../storage/contracts/reader.js";
import type { NodeContext } from "../context.js";
import { ApiError } from "../http/apiError.js";
import type { WireFormat } from "../http/negotiate.js";
import type { Answer } from "../http/operation.js";
import { historyNotHeld, historyPageSize } from "./history.js";

/** The reference's page size of events when none is asked for, and its largest (`max_events_page_size`). */
export const EVENTS_PAGE_SIZE = 25;
export const EVENTS_MAX_PAGE_SIZE = 100;

/** An event handle: the account and the creation number of its GUID. */
export interface HandleKey {
  account: Uint8Array;
  creationNumber: bigint;
}

/** The 410 of a handle's events from `sequence` on that this node no longer holds, or the upstream's answer with `--proxy`. */
function eventsNotHeld(ctx: NodeContext, key: HandleKey, sequence: bigint, info: LedgerInfo): Answer {
  if (ctx.upstream !== null) return { upstream: true };
  const message =
    `Events of the event handle of Address(${formatAddress(key.account)}) and creation number(${key.creationNumber}) ` +
    `from sequence number(${sequence}) have been pruned: the oldest version kept is ${info.oldestVersion}`;
  return { error: withoutStack(() => new ApiError(410, "version_pruned", message, info)), exactAt: info };
}

/**
 * The handle's events from `start` (a sequence number), else its latest `limit`, ascending by
 * sequence number. `counter` is the handle's own count of the events it emitted, where the caller
 * read it (the event handle route): with it, events asked for and none held are known missing too.
 */
export async function readHandleEvents(
  ctx: NodeContext,
  key: HandleKey,
  start: bigint | undefined,
  limit: number | undefined,
  info: LedgerInfo,
  format: WireFormat,
  counter: bigint | null = null,
): Promise<Answer> {
  if (format === "bcs") return { error: ApiError.bcsNotSupported("An event", info, "transactions and their events") };
  const count = historyPageSize(limit, EVENTS_PAGE_SIZE, EVENTS_MAX_PAGE_SIZE, info);
  const snap = await ctx.store.readEvents({ ...key, start, limit: count, maxBytes: ctx.config.transactionsPageBytes });
  if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  const { events, texts } = snap.value;
  // Sequence numbers of a handle run from 0 without a gap: where the ledger's history does not
  // reach back to version 0 (pruned, or a replica's first synced version), one asked for and not
  // held is known missing. A ledger holding all its history serves what its source gave.
  const partial = snap.info.oldestVersion > 0n;
  const first = events[0];
  if (first === undefined) {
    if (partial && counter !== null && counter > (start ?? 0n)) return eventsNotHeld(ctx, key, start ?? 0n, snap.info);
    return { body: "[]", exactAt: snap.info };
  }
  const newest = events[events.length - 1]!.sequenceNumber;
  const wanted = start ?? (newest >= BigInt(count - 1) ? newest - BigInt(count - 1) : 0n);
  if (partial && first.sequenceNumber > wanted) return eventsNotHeld(ctx, key, wanted, snap.info);
  const out: string[] = [];
  const parsed = new Map<bigint, unknown[]>();
  for (let i = 0; i < texts.length; i++) {
    const e = events[i]!;
    // A gap inside the page (not made by pruning, which takes the oldest first): the page ends before it.
    if (i > 0 && e.sequenceNumber !== events[i - 1]!.sequenceNumber + 1n) break;
    const text = texts[i];
    if (text === null || text === undefined) return historyNotHeld(ctx, e.version, snap.info);
    out.push(versionedEventJson(key, e, eventsOf(parsed, e.version, text), snap.info));
  }
  return { body: `[${out.join(",")}]`, exactAt: snap.info };
}

/** The `events` of a transaction's text, parsed once per version of the page. */
function eventsOf(parsed: Map<bigint, unknown[]>, version: bigint, text: Uint8Array): unknown[] {
  let events = parsed.get(version);
  if (events === undefined) {
    const t = JSON.parse(Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString("utf8")) as { events?: unknown };
    events = Array.isArray(t.events) ? t.events : [];
    parsed.set(version, events);
  }
  return events;
}

/**
 * The event as the reference's `VersionedEvent` prints it: `version`, `guid`, `sequence_number`,
 * `type`, `data`, each value as its transaction's text printed it. An event in the older `key`
 * form gets the GUID that key holds, which is the handle's: its creation number, and its address
 * printed as the reference prints one.
 */
function versionedEventJson(key: HandleKey, ref: EventRef, events: unknown[], info: LedgerInfo): string {
  const e = events[ref.index] as Record<string, unknown> | undefined;
  if (typeof e !== "object" || e === null) {
    throw ApiError.internal(`the event at index ${ref.index} of the transaction at version ${ref.version} is not in its text`, info);
  }
  const guid =
    e.guid !== undefined
      ? JSON.stringify(e.guid)
      : `{"creation_number":"${key.creationNumber}","account_address":"${formatAddress(key.account)}"}`;
  return `{"version":"${ref.version}","guid":${guid},"sequence_number":${JSON.stringify(e.sequence_number)},"type":${JSON.stringify(e.type)},"data":${JSON.stringify(e.data)}}`;
}
