/**
 * Aptos runtime module metadata (`types/src/vm/module_metadata.rs`): which functions are views and
 * which structs are events. BCS via @mysten/bcs, strictly, as the Rust `bcs` crate reads it: a value
 * is accepted only if it is the canonical encoding of what it parses to, which rejects
 * non-canonical ULEBs and invalid UTF-8 (the @mysten/bcs reader refuses both), unsorted or
 * repeated map keys (checked as the maps are read, on the input's bytes) and trailing bytes (the
 * canonical size of the parsed value must be the input's size).
 *
 * This is what re-serializing the parsed value and comparing the bytes decides, at a fraction of
 * the cost: the @mysten/bcs writer was a large share of a module ABI's CPU (`metadata.test.ts`
 * checks the two against each other on mutated inputs).
 */

import { type BcsReader, BcsType, bcs, compareBcsBytes } from "@mysten/bcs";
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

/**
 * How a map's keys are read for `sortedMap`: the key, and the bytes that order it, straight from
 * the input (no re-encoding: serializing each key to compare it took an eighth of a module's ABI).
 */
interface MapKey<K> {
  read(reader: BcsReader): [K, Uint8Array];
  /** BCS order of two keys by those bytes. */
  compare(a: Uint8Array, b: Uint8Array): number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * `bcs.string()` keys, read as its reader reads them (fatal UTF-8, BOM kept), ordered by their
 * bytes without the length prefix: the serialized key is ULEB(length) then these bytes.
 */
const STRING_KEY: MapKey<string> = {
  read(reader) {
    const bytes = reader.readBytes(reader.readULEB());
    return [utf8.decode(bytes), bytes];
  },
  compare(a, b) {
    return a.length === b.length ? compareBcsBytes(a, b) : compareUleb(a.length, b.length);
  },
};

/** `bcs.u64()` keys: the decimal string its reader gives, ordered by their 8 little-endian bytes. */
const U64_KEY: MapKey<string> = {
  read(reader) {
    const bytes = reader.readBytes(8);
    return [Buffer.from(bytes.buffer, bytes.byteOffset, 8).readBigUInt64LE().toString(), bytes];
  },
  compare: compareBcsBytes,
};

/** Byte order of the ULEB128 encodings of two different numbers (they differ in some byte). */
function compareUleb(x: number, y: number): number {
  for (;;) {
    const bx = (x % 0x80) | (x >= 0x80 ? 0x80 : 0);
    const by = (y % 0x80) | (y >= 0x80 ? 0x80 : 0);
    if (bx !== by) return bx - by;
    x = Math.floor(x / 0x80);
    y = Math.floor(y / 0x80);
  }
}

/**
 * `bcs.map` whose reader refuses keys that are not strictly ascending by their BCS bytes (the
 * order the writer puts them in; a repeated key is not ascending either).
 */
function sortedMap<KI, V, VI>(keyType: BcsType<string, KI>, key: MapKey<string>, value: BcsType<V, VI>): BcsType<Map<string, V>, Map<KI, VI>> {
  const stock = bcs.map(keyType, value);
  return new BcsType<Map<string, V>, Map<KI, VI>>({
    name: stock.name,
    read: (reader) => {
      const length = reader.readULEB();
      if (length > parseLimit) throw new RangeError(`map length ${length} exceeds the input`);
      const out = new Map<string, V>();
      let previous: Uint8Array | null = null;
      for (let i = 0; i < length; i++) {
        const [k, bytes] = key.read(reader);
        if (previous && key.compare(previous, bytes) >= 0) throw new RangeError("map keys are not in ascending order");
        previous = bytes;
        out.set(k, value.read(reader));
      }
      return out;
    },
    write: (v, writer) => stock.write(v, writer),
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
const Attributes = sortedMap(bcs.string(), STRING_KEY, boundedVector(KnownAttribute));

/** BCS schema of `RuntimeModuleMetadataV1`, read strictly (see the top of this file). */
export const RuntimeModuleMetadataV1 = bcs.struct("RuntimeModuleMetadataV1", {
  error_map: sortedMap(bcs.u64(), U64_KEY, ErrorDescription),
  struct_attributes: Attributes,
  fun_attributes: Attributes,
});

type Metadata = typeof RuntimeModuleMetadataV1.$inferType;

/** Bytes of the ULEB128 encoding of `n` (a length: below 2^32). */
function ulebSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

/** Bytes of a BCS string: its UTF-8 length as a ULEB, then the UTF-8. */
function stringSize(s: string): number {
  const n = Buffer.byteLength(s, "utf8");
  return ulebSize(n) + n;
}

function attributesSize(map: Metadata["fun_attributes"]): number {
  let size = ulebSize(map.size);
  for (const [name, attrs] of map) {
    size += stringSize(name) + ulebSize(attrs.length);
    for (const a of attrs) {
      size += 1 + ulebSize(a.args.length);
      for (const arg of a.args) size += stringSize(arg);
    }
  }
  return size;
}

/** Bytes of the canonical BCS encoding of a parsed `RuntimeModuleMetadataV1`. */
export function metadataSize(md: Metadata): number {
  let size = ulebSize(md.error_map.size);
  for (const e of md.error_map.values()) size += 8 + stringSize(e.code_name) + stringSize(e.code_description);
  return size + attributesSize(md.struct_attributes) + attributesSize(md.fun_attributes);
}

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

/**
 * The metadata when `value` is the canonical encoding of it, else null. Every length and string
 * the reader took was canonical and every map ascending, so the canonical size of what it parsed
 * is the number of bytes it read: equal to the input's size only when it read all of it and no
 * more (a string length past the end reads beyond the value's window, and is refused here).
 */
export function strictParse(value: Uint8Array): Metadata | null {
  try {
    parseLimit = value.length;
    const md = RuntimeModuleMetadataV1.parse(value);
    return metadataSize(md) === value.length ? md : null;
  } catch {
    return null;
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
