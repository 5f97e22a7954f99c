/**
 * The balance read: the asset type parsed as the reference parses it (an address first, else a
 * coin's struct tag), then the stored resources' JSON at the version: the coin store, and the
 * primary fungible store of the paired (or named) asset, whose address is derived as the
 * framework derives it (sha3-256 of owner, metadata and the scheme byte 0xFC).
 */
import { bcs } from "@mysten/bcs";
import { createHash } from "node:crypto";
import { parseAddress } from "../../../ledger/address.js";
import { parseStructTag, structTagString } from "../../../ledger/structTag.js";
import type { NodeContext } from "../../context.js";
import { ApiError, clip, quote } from "../../http/apiError.js";
import type { WireFormat } from "../../http/negotiate.js";
import type { Answer, Position } from "../../http/operation.js";

const APTOS_COIN = "0x1::aptos_coin::AptosCoin";
/** `0xa`: the fungible asset paired with AptosCoin. */
const APT_METADATA = Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? 0x0a : 0));
/** The framework's object address schemes: derived from a named seed (0xFE), an owner's primary store (0xFC). */
const FROM_SEED = 0xfe;
const PRIMARY_STORE = 0xfc;
const FUNGIBLE_STORE = "0x1::fungible_asset::FungibleStore";
const CONCURRENT_BALANCE = "0x1::fungible_asset::ConcurrentFungibleBalance";

const sha3 = (...parts: Uint8Array[]): Uint8Array => createHash("sha3-256").update(Buffer.concat(parts)).digest();

/** The metadata address of the fungible asset a coin type is paired with. */
export function pairedMetadata(coinType: string): Uint8Array {
  return coinType === APTOS_COIN ? APT_METADATA : sha3(APT_METADATA, Buffer.from(coinType, "utf8"), Uint8Array.of(FROM_SEED));
}

/** The address of an owner's primary store of a fungible asset. */
export function primaryStore(owner: Uint8Array, metadata: Uint8Array): Uint8Array {
  return sha3(owner, metadata, Uint8Array.of(PRIMARY_STORE));
}

/** A u64 at a path of a resource's JSON value (a decimal string), or 0 where it is missing. */
function u64At(json: string | null, path: readonly string[]): bigint {
  if (json === null) return 0n;
  let v: unknown = JSON.parse(json);
  for (const key of path) v = typeof v === "object" && v !== null ? (v as Record<string, unknown>)[key] : undefined;
  return typeof v === "string" && /^[0-9]{1,20}$/.test(v) ? BigInt(v) : 0n;
}

export async function readAccountBalance(ctx: NodeContext, owner: Uint8Array, assetType: string, at: Position, format: WireFormat): Promise<Answer> {
  const version = at.version;
  // The position of the last read: a prune only raises the oldest version, so if it passed the
  // version during the reads, this one says so, and the handler answers 410 (`exactAt`).
  let exactAt = at.info;
  const resource = async (address: Uint8Array, type: string): Promise<string | null> => {
    const snap = await ctx.store.readResource(address, type, version);
    if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
    exactAt = snap.info;
    return snap.value;
  };
  let metadata = parseAddress(assetType);
  let balance = 0n;
  if (metadata === null) {
    const tag = parseStructTag(assetType);
    if (typeof tag === "string") {
      throw ApiError.badParam(`failed to parse path \`asset_type\`: failed to parse "string(AssetType)": invalid struct tag ${quote(assetType)}: ${clip(tag)}`);
    }
    const coinType = structTagString(tag);
    balance += u64At(await resource(owner, `0x1::coin::CoinStore<${coinType}>`), ["coin", "value"]);
    metadata = pairedMetadata(coinType);
  }
  const store = primaryStore(owner, metadata);
  const fungible = await resource(store, FUNGIBLE_STORE);
  if (fungible !== null) {
    const held = u64At(fungible, ["balance"]);
    // The reference reads the concurrent balance only where the store's own says 0.
    balance += held !== 0n ? held : u64At(await resource(store, CONCURRENT_BALANCE), ["balance", "value"]);
  }
  const u64 = BigInt.asUintN(64, balance);
  if (format === "bcs") return { body: Buffer.from(bcs.u64().serialize(u64).toBytes()), exactAt };
  // A bare JSON integer, as the reference sends it: printed from the bigint, exact past 2^53.
  return { body: u64.toString(), exactAt };
}
