/**
 * The page a modules request asks for: where it starts (the `start` cursor), how many modules,
 * and the one cache key it is kept under.
 */
import { formatAddress, toHex } from "../../../ledger/address.js";
import { parseModuleStateKey } from "../../../ledger/stateKey.js";
import type { ApiConfig } from "../../config.js";
import { ApiError, quote } from "../../http/apiError.js";
import type { WireFormat } from "../../http/negotiate.js";

/** The query of a modules request, parsed. */
export interface ModulesQuery {
  ledger_version?: bigint;
  start?: string;
  limit?: number;
}

/** Modules asked for in a page: the limit given, else the default, at most the largest. */
export function pageLimit(query: ModulesQuery, config: ApiConfig): number {
  return Math.min(query.limit ?? config.modulesPageSize, config.modulesMaxPageSize);
}

/**
 * The cache key of a modules page: the request (format, account, cursor, page size) and `name`,
 * what its content depends on: the version of the account's newest module change (every page of
 * the account is the same at every version with the same newest change), or, for the page cache's
 * memory of requests (`PageCache.firstAsk`), the requested version. The cursor is keyed as sent: a
 * cursor the read refuses never leaves a page under its key.
 */
export function modulesPageKey(address: Uint8Array, query: ModulesQuery, limit: number, format: WireFormat, name: string): string {
  return `modules|${format}|${toHex(address)}|${name}|${query.start ?? "-"}|${limit}`;
}

/** The `start` cursor: hex (optionally 0x) of one module state key of this account; else the 400 to send. */
export function readCursor(raw: string, address: Uint8Array): Uint8Array | ApiError {
  const hex = raw.startsWith("0x") ? raw.slice(2) : raw;
  const key = /^([0-9a-fA-F]{2})+$/.test(hex) ? parseModuleStateKey(Buffer.from(hex, "hex")) : null;
  if (!key) {
    return ApiError.badParam(
      `failed to parse parameter \`start\`: ${quote(raw)} is not a module state key cursor (pass the X-NODE-CURSOR value of the previous page)`,
    );
  }
  if (!Buffer.from(key.address).equals(Buffer.from(address))) {
    return ApiError.badParam(
      `failed to parse parameter \`start\`: cursor ${quote(raw)} belongs to account ${formatAddress(key.address)}, not ${formatAddress(address)}`,
    );
  }
  return Buffer.from(hex, "hex");
}
