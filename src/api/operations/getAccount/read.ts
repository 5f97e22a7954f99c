/**
 * The read of the account operation: the account's `0x1::account::Account` resource at the
 * version, in one snapshot with the ledger position, as `AccountData`. An address without one is
 * a stateless account where the chain's `DEFAULT_ACCOUNT_RESOURCE` feature is on at that version
 * (the reference then answers sequence number 0 and the address as authentication key), else 404
 * `account_not_found`.
 */
import { formatAddress, toHex } from "../../../ledger/address.js";
import type { LedgerInfo } from "../../../ledger/types.js";
import type { NodeContext } from "../../context.js";
import { ApiError } from "../../http/apiError.js";
import { withoutStack } from "../../../storage/contracts/errors.js";
import type { WireFormat } from "../../http/negotiate.js";
import type { Answer, Position } from "../../http/operation.js";

export const ACCOUNT_RESOURCE = "0x1::account::Account";
const FEATURES_RESOURCE = "0x1::features::Features";
const FRAMEWORK = Buffer.from("01".padStart(64, "0"), "hex");
/** `features::DEFAULT_ACCOUNT_RESOURCE`: accounts without an Account resource act as default ones. */
const DEFAULT_ACCOUNT_RESOURCE = 91;

/** `AccountData` as the reference writes it. */
export interface AccountData {
  sequence_number: string;
  authentication_key: string;
}

/** The reference's 404 for an address without an account at the version. */
export function accountNotFound(address: Uint8Array, version: bigint, info: LedgerInfo): ApiError {
  return withoutStack(() => new ApiError(404, "account_not_found", `Account not found by Address(${formatAddress(address)}) and Ledger version(${version})`, info));
}

/** Whether feature `flag` is on in the JSON of `0x1::features::Features` (a bit vector, low bit first). */
export function featureEnabled(featuresJson: string | null, flag: number): boolean {
  if (featuresJson === null) return false;
  const hex = (JSON.parse(featuresJson) as { features?: unknown }).features;
  if (typeof hex !== "string") return false;
  const byte = Number.parseInt(hex.slice(2 + 2 * Math.floor(flag / 8), 4 + 2 * Math.floor(flag / 8)), 16);
  return Number.isInteger(byte) && (byte & (1 << flag % 8)) !== 0;
}

/** The account's `AccountData` (JSON); BCS is refused: the node holds the Account resource as JSON only. */
export async function readAccount(ctx: NodeContext, address: Uint8Array, at: Position, format: WireFormat): Promise<Answer> {
  if (format === "bcs") return { error: ApiError.bcsNotSupported("An account's Account resource", at.info) };
  const snap = await ctx.store.readResource(address, ACCOUNT_RESOURCE, at.version);
  if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  if (snap.value !== null) {
    const account = JSON.parse(snap.value) as { sequence_number?: unknown; authentication_key?: unknown };
    return { json: { sequence_number: String(account.sequence_number), authentication_key: String(account.authentication_key) } satisfies AccountData, exactAt: snap.info };
  }
  const features = await ctx.store.readResource(FRAMEWORK, FEATURES_RESOURCE, at.version);
  if (features && featureEnabled(features.value, DEFAULT_ACCOUNT_RESOURCE)) {
    return { json: { sequence_number: "0", authentication_key: toHex(address) } satisfies AccountData, exactAt: features.info };
  }
  return { error: accountNotFound(address, at.version, snap.info), exactAt: snap.info };
}
