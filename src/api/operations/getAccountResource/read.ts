/**
 * The read of the single-resource operation: the resource type parsed and verified as the
 * reference does (a text that is not a struct tag is a 400, never a lookup), then its value at
 * the version in one snapshot with the ledger position.
 */
import { formatAddress } from "../../../ledger/address.js";
import { parseStructTag, structTagString, verifyStructTag } from "../../../ledger/structTag.js";
import type { LedgerInfo } from "../../../ledger/types.js";
import type { NodeContext } from "../../context.js";
import { ApiError, clip, quote, withoutStack } from "../../errors.js";
import type { WireFormat } from "../../negotiate.js";
import type { Answer, Position } from "../../operation.js";

/**
 * The resource type as stored (the struct tag as the API prints it), from the path's text in any
 * spelling the reference takes; else the reference's 400: a parse failure of the path parameter,
 * or `invalid_input` for a tag that parses but does not verify.
 */
export function resourceTypeParam(raw: string): string {
  const tag = parseStructTag(raw);
  if (typeof tag === "string") {
    throw ApiError.badParam(`failed to parse path \`resource_type\`: failed to parse "string(MoveStructTag)": invalid struct tag ${quote(raw)}: ${clip(tag)}`);
  }
  const invalid = verifyStructTag(tag);
  if (invalid) throw ApiError.invalidInput(`'resource_type' invalid: ${clip(invalid)}`, null);
  return structTagString(tag);
}

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
export async function readAccountResource(ctx: NodeContext, address: Uint8Array, rawType: string, at: Position, format: WireFormat): Promise<Answer> {
  const type = resourceTypeParam(rawType);
  if (format === "bcs") return { error: ApiError.bcsNotSupported(`Resource ${clip(type)}`, at.info) };
  const snap = await ctx.store.readResource(address, type, at.version);
  if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  if (snap.value === null) return { error: resourceNotFound(address, type, at.version, snap.info), exactAt: snap.info };
  return { body: resourceJson(type, snap.value), exactAt: snap.info };
}
