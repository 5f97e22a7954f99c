/**
 * The read of the table item operation (docs/decisions.md §23), in the reference's order once the
 * position is resolved: the key type's layout from the modules held at the version, the JSON key
 * encoded by it (a 400 `invalid_input` with the ledger headers when either fails), the item read
 * by those bytes exactly as `raw_item` reads it (404 `table_item_not_found`), then the value: its
 * stored bytes in BCS, or in JSON decoded by the value type's layout, where a value that does not
 * decode as the type named is a 400 naming the type (the reference answers 500).
 */
import { LRUCache } from "lru-cache";
import { formatAddress, parseAddress } from "../../../ledger/address.js";
import { MAX_STATE_ITEM_BYTES } from "../../../ledger/stateKey.js";
import type { TypeExpr } from "../../../ledger/typeParser.js";
import type { LedgerInfo } from "../../../ledger/types.js";
import { moduleAbi, type MoveModuleAbi, type MoveStructAbi } from "../../../move/abi.js";
import { isObject, LayoutError, resolveLayout, type EnumSupport, type ModuleStructs, type MoveLayout } from "../../../move/layout.js";
import { decodeBcsValue, encodeJsonValue, ValueError } from "../../../move/valueCodec.js";
import { withoutStack } from "../../../storage/contracts/errors.js";
import type { NodeContext } from "../../context.js";
import { ApiError, clip, quote } from "../../http/apiError.js";
import type { WireFormat } from "../../http/negotiate.js";
import type { Answer, Position } from "../../http/operation.js";
import type { TableItemTypes } from "./request.js";

/** The key as the reference's messages print it: its JSON, compact. */
export function keyText(key: unknown): string {
  return clip(JSON.stringify(key) ?? "null");
}

/** The reference's 404 for a key the table does not hold at the version. */
export function tableItemNotFound(handle: Uint8Array, key: unknown, version: bigint, info: LedgerInfo): ApiError {
  return withoutStack(
    () =>
      new ApiError(
        404,
        "table_item_not_found",
        `Table Item not found by Table handle(${formatAddress(handle)}), Table key(${keyText(key)}) and Ledger version(${version})`,
        info,
      ),
  );
}

/** Structs by module, parsed from the module's ABI text once per code hash. */
export type StructsCache = LRUCache<string, readonly MoveStructAbi[]>;

export function structsCache(): StructsCache {
  return new LRUCache<string, readonly MoveStructAbi[]>({ max: 512 });
}

/** The structs of the modules held at `version`, from the store. */
function moduleStructs(ctx: NodeContext, cache: StructsCache, version: bigint): ModuleStructs {
  return async (address, name) => {
    const snap = await ctx.store.readModule(address, name, version);
    const module = snap?.value;
    if (!module) return null;
    const known = cache.get(module.codeHash);
    if (known) return known;
    let abi: MoveModuleAbi | null = module.abi !== undefined ? (JSON.parse(module.abi) as MoveModuleAbi | null) : null;
    if (module.abi === undefined) {
      const code = module.bytecode ?? (await ctx.store.getModuleCode(module.codeHash));
      abi = code ? moduleAbi(code) : null;
    }
    // a module the node's deserializer refuses has no ABI: none of its structs can be laid out
    const structs = abi?.structs ?? [];
    cache.set(module.codeHash, structs);
    return structs;
  };
}

/**
 * A type's layout at the version. A key type `0x1::object::Object<T>` is laid out as an address
 * without a module read, as the reference does for a JSON key.
 */
async function layoutOf(ctx: NodeContext, cache: StructsCache, type: TypeExpr, version: bigint, enums: EnumSupport): Promise<MoveLayout> {
  if (enums === "refused" && type.k === "struct") {
    // (the address parsed when the request was checked)
    if (isObject({ address: parseAddress(type.address)!, module: type.module, name: type.name })) return { k: "address" };
  }
  return resolveLayout(type, moduleStructs(ctx, cache, version), enums);
}

/** The table item as the answer: JSON decoded by the value type, or the stored bytes in BCS. */
export async function readTableItem(
  ctx: NodeContext,
  cache: StructsCache,
  handle: Uint8Array,
  key: unknown,
  valueType: string,
  types: TableItemTypes,
  at: Position<unknown>,
  format: WireFormat,
): Promise<Answer> {
  let keyBytes: Uint8Array;
  try {
    const layout = await layoutOf(ctx, cache, types.key, at.version, "refused");
    keyBytes = encodeJsonValue(layout, key, MAX_STATE_ITEM_BYTES);
  } catch (e) {
    if (e instanceof LayoutError || e instanceof ValueError) throw ApiError.invalidInput(clip(e.message, 300), at.info);
    throw e;
  }
  const snap = await ctx.store.readTableItem(handle, keyBytes, at.version);
  if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  const { info, value } = snap;
  if (value === null) return { error: tableItemNotFound(handle, key, at.version, info), exactAt: info };
  if (format === "bcs") return { body: Buffer.from(value.buffer, value.byteOffset, value.byteLength), exactAt: info };
  try {
    const layout = await layoutOf(ctx, cache, types.value, at.version, "variants");
    return { body: decodeBcsValue(layout, value), exactAt: info };
  } catch (e) {
    // The client named a type the stored value is not (or one the modules do not define): bad
    // input, a 400 naming it, where the reference answers 500 (docs/decisions.md §23).
    if (e instanceof LayoutError || e instanceof ValueError) {
      throw ApiError.invalidInput(`Failed to deserialize table item retrieved from DB as value_type ${quote(valueType)}: ${clip(e.message, 300)}`, info);
    }
    throw e;
  }
}
