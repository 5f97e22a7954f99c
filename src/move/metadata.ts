/**
 * Aptos runtime module metadata (`types/src/vm/module_metadata.rs`): which functions are views and
 * which structs are events. BCS via @mysten/bcs, strictly: a value is accepted only if it
 * re-serializes to exactly the same bytes, which rejects non-canonical ULEBs, unsorted or repeated
 * map keys, invalid UTF-8 and trailing bytes, as the Rust `bcs` crate does.
 */

import { BcsType, bcs } from "@mysten/bcs";
import type { CompiledModule } from "./types.js";

/** Metadata key of `RuntimeModuleMetadataV1`. */
export const APTOS_METADATA_KEY_V1 = "aptos::metadata_v1";

/** `KnownAttributeKind` values used by the ABI. */
export const enum AttributeKind {
  LegacyViewFunction = 0,
  ViewFunction = 1,
  ResourceGroup = 2,
  ResourceGroupMember = 3,
  Event = 4,
  Randomness = 5,
}

/** Byte length of the value being parsed: no vector in it can have more elements. */
let parseLimit = 0;

/**
 * `bcs.vector` that refuses a length above the input size before reading: the stock reader
 * preallocates `new Array(length)` from the untrusted ULEB (every element here is >= 1 byte).
 */
function boundedVector<T, I>(type: BcsType<T, I>): BcsType<T[], Iterable<I> & { length: number }> {
  const stock = bcs.vector(type);
  return new BcsType<T[], Iterable<I> & { length: number }>({
    name: stock.name,
    read: (reader) => {
      const length = reader.readULEB();
      if (length > parseLimit) throw new RangeError(`vector length ${length} exceeds the input`);
      const out: T[] = [];
      for (let i = 0; i < length; i++) out.push(type.read(reader));
      return out;
    },
    write: (value, writer) => stock.write(value, writer),
  });
}

const ErrorDescription = bcs.struct("ErrorDescription", {
  code_name: bcs.string(),
  code_description: bcs.string(),
});
const KnownAttribute = bcs.struct("KnownAttribute", {
  kind: bcs.u8(),
  args: boundedVector(bcs.string()),
});
const Attributes = bcs.map(bcs.string(), boundedVector(KnownAttribute));

/** BCS schema of `RuntimeModuleMetadataV1`. */
export const RuntimeModuleMetadataV1 = bcs.struct("RuntimeModuleMetadataV1", {
  error_map: bcs.map(bcs.u64(), ErrorDescription),
  struct_attributes: Attributes,
  fun_attributes: Attributes,
});

/** The attribute-derived ABI flags of one module. */
export interface ModuleAttributes {
  /** Function names with a (legacy) view attribute. */
  readonly views: ReadonlySet<string>;
  /** Struct names with the event attribute. */
  readonly events: ReadonlySet<string>;
}

const NONE: ModuleAttributes = { views: new Set(), events: new Set() };
const KEY_V1 = new TextEncoder().encode(APTOS_METADATA_KEY_V1);

/**
 * `get_metadata_from_compiled_code` reduced to what the ABI reads: the first `metadata_v1` entry,
 * strictly decoded (a failure means no attributes, with no fallback to v0); version-5 modules
 * have their attributes cleared; `metadata_v0` never carries attributes.
 */
export function moduleAttributes(m: CompiledModule): ModuleAttributes {
  if (m.version <= 5) return NONE;
  const entry = m.metadata.find((e) => equalBytes(e.key, KEY_V1));
  if (!entry) return NONE;
  const md = strictParse(entry.value);
  if (!md) return NONE;
  const views = new Set<string>();
  const events = new Set<string>();
  for (const [name, attrs] of md.fun_attributes) {
    if (attrs.some((a) => a.kind === AttributeKind.ViewFunction || a.kind === AttributeKind.LegacyViewFunction)) {
      views.add(name);
    }
  }
  for (const [name, attrs] of md.struct_attributes) {
    if (attrs.some((a) => a.kind === AttributeKind.Event)) events.add(name);
  }
  return { views, events };
}

function strictParse(value: Uint8Array): typeof RuntimeModuleMetadataV1.$inferType | null {
  try {
    parseLimit = value.length;
    const md = RuntimeModuleMetadataV1.parse(value);
    return equalBytes(RuntimeModuleMetadataV1.serialize(md).toBytes(), value) ? md : null;
  } catch {
    return null;
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
