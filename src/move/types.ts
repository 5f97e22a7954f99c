/**
 * The decoded, bounds-checked view of a Move module: just the parts the ABI needs, with every
 * index already proven in range. Produced by `decodeModule` (decoder.ts).
 */

/** Ability bit set: copy 0x1, drop 0x2, store 0x4, key 0x8. */
export type AbilityBits = number;

/** A signature token. Primitive tokens are their serialized code (see `Tok` in format.ts). */
export type SigToken =
  | number
  | { readonly k: "ref" | "mutref" | "vector"; readonly inner: SigToken }
  | { readonly k: "struct"; readonly handle: number; readonly args: readonly SigToken[] }
  | { readonly k: "tparam"; readonly index: number }
  | {
      readonly k: "function";
      readonly abilities: AbilityBits;
      readonly args: readonly SigToken[];
      readonly results: readonly SigToken[];
    };

/** `ModuleHandle` and friend declarations. */
export interface ModuleHandle {
  readonly address: number;
  readonly name: number;
}

/** `StructHandle`. */
export interface StructHandle {
  readonly module: number;
  readonly name: number;
  readonly abilities: AbilityBits;
  readonly typeParams: readonly { readonly constraints: AbilityBits; readonly isPhantom: boolean }[];
}

/** `FunctionHandle` (access specifiers and attributes are validated and dropped). */
export interface FunctionHandle {
  readonly module: number;
  readonly name: number;
  readonly params: number;
  readonly returns: number;
  readonly typeParams: readonly AbilityBits[];
}

/** A field of a struct or of an enum variant; the type is inline. */
export interface FieldDef {
  readonly name: number;
  readonly type: SigToken;
}

/** `StructDefinition`. `kind` follows the field-information flag. */
export interface StructDef {
  readonly handle: number;
  readonly kind: "native" | "declared" | "variants";
  readonly fields: readonly FieldDef[];
  readonly variants: readonly { readonly name: number; readonly fields: readonly FieldDef[] }[];
}

/** `FunctionDefinition` without its code (the code is walked and checked, not kept). */
export interface FunctionDef {
  readonly handle: number;
  readonly visibility: "private" | "public" | "friend";
  readonly isEntry: boolean;
  readonly isNative: boolean;
}

/** A metadata entry; key and value are views into the input. */
export interface MetadataEntry {
  readonly key: Uint8Array;
  readonly value: Uint8Array;
}

/** A deserialized and bounds-checked module. */
export interface CompiledModule {
  /** Binary format version, Aptos mask bits cleared. */
  readonly version: number;
  readonly selfHandle: number;
  readonly moduleHandles: readonly ModuleHandle[];
  readonly structHandles: readonly StructHandle[];
  readonly functionHandles: readonly FunctionHandle[];
  readonly signatures: readonly (readonly SigToken[])[];
  /** Identifier `i` as a string (validated ASCII; materialized on demand and cached). */
  identifier(i: number): string;
  /** Address identifier `i`: a 32-byte view into the input. */
  address(i: number): Uint8Array;
  readonly structDefs: readonly StructDef[];
  readonly functionDefs: readonly FunctionDef[];
  readonly friends: readonly ModuleHandle[];
  readonly metadata: readonly MetadataEntry[];
}
