/**
 * The read of the single-resource operation: its value at the version in one snapshot with the
 * ledger position. The type comes parsed, verified and printed as stored (`structTagPath`): a
 * text that is not a struct tag was a 400 before any read.
 */
import { formatAddress } from "../../../ledger/address.js";
import type { LedgerInfo } from "../../../ledger/types.js";
import type { NodeContext } from "../../context.js";
import { ApiError, clip } from "../../http/apiError.js";
import { withoutStack } from "../../../storage/contracts/errors.js";
import type { WireFormat } from "../../http/negotiate.js";
import type { Answer, Position } from "../../http/operation.js";

/** The reference's 404 for a resource the account does not hold at the version. */
export function resourceNotFound(address: Uint8Array, type: string, version: bigint, info: LedgerInfo): ApiError {
  return withoutStack(
    () => new ApiError(404, "resource_not_found", `Resource not found by Address(${formatAddress(address)}), Struct tag(${clip(type)}) and Ledger version(${version})`, info),
  );
}

/** A resource as the reference's JSON writes it: its type, then its value. */
export function resourceJson(type: string, json: string): string {
  return `{"type":${JSON.stringify(type)},"data":${json}}`;
}

/** The resource's JSON (`MoveResource`); BCS is refused: this node holds resource values as JSON only. */
export async function readAccountResource(ctx: NodeContext, address: Uint8Array, type: string, at: Position, format: WireFormat): Promise<Answer> {
  if (format === "bcs") return { error: ApiError.bcsNotSupported(`Resource ${clip(type)}`, at.info) };
  const snap = await ctx.store.readResource(address, type, at.version);
  if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  if (snap.value === null) return { error: resourceNotFound(address, type, at.version, snap.info), exactAt: snap.info };
  return { body: resourceJson(type, snap.value), exactAt: snap.info };
}
