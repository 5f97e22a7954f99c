/**
 * Constants of the Move binary format (aptos-core `file_format_common.rs`), limited to what the
 * decoder and the builder need.
 */

/** `A1 1C EB 0B`. */
export const MOVE_MAGIC = [0xa1, 0x1c, 0xeb, 0x0b] as const;
/** Aptos sets these bits in the version word for v7+; readers clear them. */
export const APTOS_VERSION_MASK = 0x0a000000;
/** Highest version the node's deserializer accepts. */
export const VERSION_MAX = 10;

/** Table kinds (`TableType`). */
export const enum Table {
  MODULE_HANDLES = 0x01,
  STRUCT_HANDLES = 0x02,
  FUNCTION_HANDLES = 0x03,
  FUNCTION_INST = 0x04,
  SIGNATURES = 0x05,
  CONSTANT_POOL = 0x06,
  IDENTIFIERS = 0x07,
  ADDRESS_IDENTIFIERS = 0x08,
  STRUCT_DEFS = 0x0a,
  STRUCT_DEF_INST = 0x0b,
  FUNCTION_DEFS = 0x0c,
  FIELD_HANDLES = 0x0d,
  FIELD_INST = 0x0e,
  FRIEND_DECLS = 0x0f,
  METADATA = 0x10,
  VARIANT_FIELD_HANDLES = 0x11,
  VARIANT_FIELD_INST = 0x12,
  STRUCT_VARIANT_HANDLES = 0x13,
  STRUCT_VARIANT_INST = 0x14,
}

/** Serialized signature-token codes (`SerializedType`). */
export const enum Tok {
  BOOL = 0x01,
  U8 = 0x02,
  U64 = 0x03,
  U128 = 0x04,
  ADDRESS = 0x05,
  REFERENCE = 0x06,
  MUTABLE_REFERENCE = 0x07,
  STRUCT = 0x08,
  TYPE_PARAMETER = 0x09,
  VECTOR = 0x0a,
  STRUCT_INST = 0x0b,
  SIGNER = 0x0c,
  U16 = 0x0d,
  U32 = 0x0e,
  U256 = 0x0f,
  FUNCTION = 0x10,
  I8 = 0x11,
  I16 = 0x12,
  I32 = 0x13,
  I64 = 0x14,
  I128 = 0x15,
  I256 = 0x16,
}

/** Limits (`file_format_common.rs`). */
export const TABLE_COUNT_MAX = 255;
export const TABLE_OFFSET_MAX = 0xffff_ffff;
export const TABLE_INDEX_MAX = 65535;
export const BYTECODE_COUNT_MAX = 65535;
export const LOCAL_INDEX_MAX = 255;
export const IDENTIFIER_SIZE_MAX = 255;
export const CONSTANT_SIZE_MAX = 65535;
export const METADATA_KEY_SIZE_MAX = 1023;
export const METADATA_VALUE_SIZE_MAX = 65535;
export const SIGNATURE_SIZE_MAX = 255;
export const ACQUIRES_COUNT_MAX = 255;
export const FIELD_COUNT_MAX = 255;
export const FIELD_OFFSET_MAX = 255;
export const VARIANT_COUNT_MAX = 127;
export const VARIANT_OFFSET_MAX = 127;
export const TYPE_PARAMETER_COUNT_MAX = 255;
/** 65536 per the constant, but the index is a u16, so 65536 itself fails the conversion. */
export const TYPE_PARAMETER_INDEX_MAX = 65535;
export const ACCESS_SPECIFIER_COUNT_MAX = 64;
export const SIGNATURE_TOKEN_DEPTH_MAX = 256;
export const ATTRIBUTE_COUNT_MAX = 16;

/** Function-definition flag bits. */
export const FLAG_DEPRECATED_PUBLIC = 0x1;
export const FLAG_NATIVE = 0x2;
export const FLAG_ENTRY = 0x4;

/** Visibility bytes. */
export const VIS_PRIVATE = 0;
export const VIS_PUBLIC = 1;
export const VIS_DEPRECATED_SCRIPT = 2;
export const VIS_FRIEND = 3;

/** Struct-definition field-information flags. */
export const STRUCT_NATIVE = 0x1;
export const STRUCT_DECLARED = 0x2;
export const STRUCT_DECLARED_VARIANTS = 0x3;
