/**
 * An account's resources page, written once above the dialects: a dialect reads the account's
 * live resources at a version (their types and packed values, in any order); the page is the
 * ones from the `start` state key on, in the reference's state-key order (`resourceStateKey`),
 * and only the page's values are unpacked.
 */
import { resourceStateKey } from "../../ledger/stateKey.js";
import { parseStructTag } from "../../ledger/structTag.js";
import type { ResourceEntry } from "../contracts/reader.js";
import { unpackResourceValue } from "./resourceValue.js";

/** A live resource as a dialect reads it: its type and its stored (packed) value. */
export interface StoredResource {
  type: string;
  value: Buffer | string;
}

/** A stored type that does not parse as a struct tag (never written by the importer) sorts last, by its text. */
const UNPARSED = Buffer.from([0xff]);

function stateKeyOf(address: Uint8Array, type: string): Buffer {
  const tag = parseStructTag(type);
  return typeof tag === "string" ? Buffer.concat([UNPARSED, Buffer.from(type, "utf8")]) : resourceStateKey(address, tag);
}

/** Up to `limit` of `stored` from state key `start` (inclusive), in state-key order, unpacked. */
export function resourcesPage(address: Uint8Array, stored: StoredResource[], start: Uint8Array | null, limit: number): ResourceEntry[] {
  const from = start ? Buffer.from(start) : null;
  const keyed = stored.map((r) => ({ key: stateKeyOf(address, r.type), r })).filter((k) => from === null || Buffer.compare(k.key, from) >= 0);
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  return keyed.slice(0, limit).map(({ r }) => ({ type: r.type, json: unpackResourceValue(address, r.value) }));
}
