/**
 * The page a resources request asks for: where it starts (the `start` cursor, a resource state
 * key of the account) and how many resources.
 */
import { formatAddress } from "../../../ledger/address.js";
import { isResourceStateKeyOf } from "../../../ledger/stateKey.js";
import type { ApiConfig } from "../../config.js";
import { ApiError, quote } from "../../http/apiError.js";

/** The query of a resources request, parsed. */
export interface ResourcesQuery {
  ledger_version?: bigint;
  start?: string;
  limit?: number;
}

/** Resources asked for in a page: the limit given, else the default, at most the largest. */
export function pageLimit(query: ResourcesQuery, config: ApiConfig): number {
  return Math.min(query.limit ?? config.resourcesPageSize, config.resourcesMaxPageSize);
}

/** The `start` cursor: hex (optionally 0x) of one resource state key of this account; else the 400 to send. */
export function readCursor(raw: string, address: Uint8Array): Uint8Array {
  const hex = raw.startsWith("0x") ? raw.slice(2) : raw;
  const key = /^([0-9a-fA-F]{2})+$/.test(hex) ? Buffer.from(hex, "hex") : null;
  if (key && isResourceStateKeyOf(key, address)) return key;
  if (key && key.length > 33 && key[0] === 0 && !key.subarray(1, 33).equals(Buffer.from(address))) {
    throw ApiError.badParam(
      `failed to parse parameter \`start\`: cursor ${quote(raw)} belongs to account ${formatAddress(key.subarray(1, 33))}, not ${formatAddress(address)}`,
    );
  }
  throw ApiError.badParam(
    `failed to parse parameter \`start\`: ${quote(raw)} is not a resource state key cursor (pass the X-NODE-CURSOR value of the previous page)`,
  );
}
