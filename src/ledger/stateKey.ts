/**
 * State keys of modules and resources, encoded as the reference node stores them (BCS, with
 * `@mysten/bcs`), so that our module and resource order and cursors are exactly its own
 * (docs/decisions.md §11):
 *
 *   StateKey::AccessPath (variant 0) { address: 32 bytes, path: vector<u8> }
 *   path = BCS(Path::Code(ModuleId { address, name })) or BCS(Path::Resource(StructTag))
 *
 * Within one account this orders modules by name length, then bytewise.
 */
import { bcs, type BcsType } from "@mysten/bcs";

/**
 * The most bytes of one state item the reference writes, its key and value together
 * (`max_bytes_per_write_op` of its gas schedule): no table key is longer (docs/following.md, "The replica's
 * base state, decided").
 */
export const MAX_STATE_ITEM_BYTES = 1 << 20;
import type { StructTag, TypeTag } from "./structTag.js";

const AccountAddress = bcs.bytes(32);

/** move-core-types `TypeTag`, its variants in their BCS order. */
type TypeTagInput =
  | { bool: true }
  | { u8: true }
  | { u64: true }
  | { u128: true }
  | { address: true }
  | { signer: true }
  | { vector: TypeTagInput }
  | { struct: StructTagInput }
  | { u16: true }
  | { u32: true }
  | { u256: true };
interface StructTagInput {
  address: Uint8Array;
  module: string;
  name: string;
  type_args: TypeTagInput[];
}

// biome-ignore lint/suspicious/noExplicitAny: a recursive BCS type is declared before it exists; its shape is TypeTagInput
const TypeTagBcs: BcsType<any, any> = bcs.enum("TypeTag", {
  bool: null,
  u8: null,
  u64: null,
  u128: null,
  address: null,
  signer: null,
  vector: bcs.lazy(() => TypeTagBcs),
  struct: bcs.lazy(() => StructTagBcs),
  u16: null,
  u32: null,
  u256: null,
});
const StructTagBcs = bcs.struct("StructTag", { address: AccountAddress, module: bcs.string(), name: bcs.string(), type_args: bcs.vector(TypeTagBcs) });
const ModuleIdBcs = bcs.struct("ModuleId", { address: AccountAddress, name: bcs.string() });
const PathBcs = bcs.enum("Path", { Code: ModuleIdBcs, Resource: StructTagBcs, ResourceGroup: StructTagBcs });
const StateKeyBcs = bcs.enum("StateKey", { AccessPath: bcs.struct("AccessPath", { address: AccountAddress, path: bcs.byteVector() }) });

function typeTagInput(t: TypeTag): TypeTagInput {
  if (t.k === "prim") return { [t.name]: true } as TypeTagInput;
  if (t.k === "vector") return { vector: typeTagInput(t.inner) };
  return { struct: structTagInput(t.tag) };
}

function structTagInput(tag: StructTag): StructTagInput {
  return { address: tag.address, module: tag.module, name: tag.name, type_args: tag.args.map(typeTagInput) };
}

function accessPathKey(address: Uint8Array, path: Uint8Array): Uint8Array {
  return StateKeyBcs.serialize({ AccessPath: { address, path } }).toBytes();
}

/** The state key of module `address::name`. */
export function moduleStateKey(address: Uint8Array, name: string): Uint8Array {
  return accessPathKey(address, PathBcs.serialize({ Code: { address, name } }).toBytes());
}

/** The state key of resource `tag` of `address`. */
export function resourceStateKey(address: Uint8Array, tag: StructTag): Buffer {
  const key = accessPathKey(address, PathBcs.serialize({ Resource: structTagInput(tag) }).toBytes());
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength);
}

/** `type`'s value of `bytes`, or null unless `bytes` is exactly its canonical encoding. */
// biome-ignore lint/suspicious/noExplicitAny: any BCS type; what it takes is what it parsed
function parseExactly<T>(type: BcsType<T, any>, bytes: Uint8Array): T | null {
  let value: T;
  try {
    value = type.parse(bytes);
  } catch {
    return null;
  }
  // trailing bytes, non-canonical lengths or text that is not UTF-8 do not survive the round trip
  return Buffer.from(type.serialize(value).toBytes()).equals(Buffer.from(bytes)) ? value : null;
}

/** The account and the decoded path of an access-path state key, or null unless it is exactly one. */
function accessPath(key: Uint8Array): { address: Uint8Array; path: Record<string, unknown> } | null {
  const outer = parseExactly(StateKeyBcs, key);
  if (!outer) return null;
  const path = parseExactly(PathBcs, outer.AccessPath.path);
  return path && { address: outer.AccessPath.address, path: path as Record<string, unknown> };
}

/**
 * Decodes a module state key; returns null unless it is exactly one well-formed module key of
 * its own account (used to validate the `start` cursor).
 */
export function parseModuleStateKey(key: Uint8Array): { address: Uint8Array; name: string } | null {
  const found = accessPath(key);
  const code = found?.path.Code as { address: Uint8Array; name: string } | undefined;
  if (!found || !code || code.name.length === 0 || !Buffer.from(code.address).equals(Buffer.from(found.address))) return null;
  return { address: Uint8Array.from(found.address), name: code.name };
}

/** Whether `key` is a resource state key of `address` (the `start` cursor of a resources page). */
export function isResourceStateKeyOf(key: Uint8Array, address: Uint8Array): boolean {
  const found = accessPath(key);
  return found !== null && found.path.Resource !== undefined && Buffer.from(found.address).equals(Buffer.from(address));
}
