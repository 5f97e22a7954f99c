/**
 * A port of the Move module deserializer (aptos-core `deserializer.rs`) plus its bounds checker
 * (`check_bounds.rs`), for binary versions 1 through 10. It accepts exactly what
 * `CompiledModule::deserialize` accepts (which is what makes the node print an ABI rather than
 * `null`), keeps only what the ABI needs, and rejects everything else with `null`.
 *
 * Safety: every count and index is checked against the input window or the table it indexes
 * before it is used; records are read one at a time from a window bounded by the table size, so
 * memory stays proportional to the input, and every loop advances the cursor, so time is linear.
 */

import {
  ACCESS_SPECIFIER_COUNT_MAX,
  ACQUIRES_COUNT_MAX,
  APTOS_VERSION_MASK,
  ATTRIBUTE_COUNT_MAX,
  BYTECODE_COUNT_MAX,
  CONSTANT_SIZE_MAX,
  FIELD_COUNT_MAX,
  FIELD_OFFSET_MAX,
  FLAG_DEPRECATED_PUBLIC,
  FLAG_ENTRY,
  FLAG_NATIVE,
  IDENTIFIER_SIZE_MAX,
  LOCAL_INDEX_MAX,
  METADATA_KEY_SIZE_MAX,
  METADATA_VALUE_SIZE_MAX,
  MOVE_MAGIC,
  SIGNATURE_SIZE_MAX,
  SIGNATURE_TOKEN_DEPTH_MAX,
  STRUCT_DECLARED,
  STRUCT_DECLARED_VARIANTS,
  STRUCT_NATIVE,
  TABLE_COUNT_MAX,
  TABLE_INDEX_MAX,
  TABLE_OFFSET_MAX,
  TYPE_PARAMETER_COUNT_MAX,
  TYPE_PARAMETER_INDEX_MAX,
  Table,
  Tok,
  VARIANT_COUNT_MAX,
  VARIANT_OFFSET_MAX,
  VERSION_MAX,
  VIS_DEPRECATED_SCRIPT,
  VIS_FRIEND,
  VIS_PRIVATE,
  VIS_PUBLIC,
} from "./format.js";
import { OP_KIND, OP_MIN_VERSION, OP_WIDTH, Op } from "./opcodes.js";
import { Reader, fail } from "./reader.js";
import type {
  CompiledModule,
  FieldDef,
  FunctionDef,
  FunctionHandle,
  MetadataEntry,
  ModuleHandle,
  SigToken,
  StructDef,
  StructHandle,
} from "./types.js";

/**
 * Deserializes and bounds-checks a Move module.
 *
 * @param bytes - the module bytecode as stored on chain.
 * @returns the decoded module, or `null` when the node's deserializer or bounds checker would
 *   reject it. Never throws.
 */
export function decodeModule(bytes: Uint8Array): CompiledModule | null {
  try {
    return new Decoder(bytes).decode();
  } catch {
    return null;
  }
}

/** Where an ability set is read; only matters for the version-1 legacy encodings. */
const enum AbilityPos {
  FunctionTypeParams,
  StructTypeParams,
  StructHandle,
}

/** A partially built signature token on the explicit stack (`TypeBuilder` in the reference). */
interface Frame {
  /** 0 saturated, 1 vector, 2 reference, 3 mutable reference, 4 struct instantiation, 5 function. */
  kind: number;
  tok: SigToken;
  handle: number;
  arity: number;
  args: SigToken[];
  results: SigToken[];
  abilities: number;
}

/** Identifier characters: `_`, `$` (v9+ only), ASCII letters and digits. 1 = valid, 2 = `$`. */
const IDENT_CHAR = new Uint8Array(256);
for (let c = 0; c < 128; c++) {
  if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f) {
    IDENT_CHAR[c] = 1;
  }
}
IDENT_CHAR[0x24] = 2;
const SELF_IDENT = [0x3c, 0x53, 0x45, 0x4c, 0x46, 0x3e]; // "<SELF>"

class Decoder {
  private readonly b: Uint8Array;
  private version = 0;
  private maxTp = -1;

  private identStart: number[] = [];
  private identLen: number[] = [];
  private identCache: (string | undefined)[] = [];
  private addrStart: number[] = [];
  private moduleHandles: ModuleHandle[] = [];
  private structHandles: StructHandle[] = [];
  private functionHandles: FunctionHandle[] = [];
  private signatures: SigToken[][] = [];
  private sigMaxTp: number[] = [];
  private constantCount = 0;
  private functionInstSig: number[] = [];
  private structDefs: StructDef[] = [];
  private structDefInstSig: number[] = [];
  private fieldHandleCount = 0;
  private fieldInstSig: number[] = [];
  private friends: ModuleHandle[] = [];
  private metadata: MetadataEntry[] = [];
  private variantFieldHandleCount = 0;
  private variantFieldInstSig: number[] = [];
  private structVariantHandleCount = 0;
  private structVariantInstSig: number[] = [];
  private functionDefs: FunctionDef[] = [];

  constructor(bytes: Uint8Array) {
    this.b = bytes;
  }

  decode(): CompiledModule {
    const b = this.b;
    const r = new Reader(b, 0, b.length);
    if (b.length < 4 || b[0] !== MOVE_MAGIC[0] || b[1] !== MOVE_MAGIC[1] || b[2] !== MOVE_MAGIC[2] || b[3] !== MOVE_MAGIC[3]) {
      fail();
    }
    r.pos = 4;
    const version = (r.u32() & ~APTOS_VERSION_MASK) >>> 0;
    if (version === 0 || version > VERSION_MAX) fail();
    this.version = version;

    // Table headers: kind, offset, size; then contents, contiguous from offset 0, no empty or
    // repeated table (`check_tables`).
    const tableCount = r.uleb(TABLE_COUNT_MAX);
    const tables: { kind: number; offset: number; size: number }[] = [];
    for (let i = 0; i < tableCount; i++) {
      const kind = r.u8();
      if (kind < Table.MODULE_HANDLES || kind > Table.STRUCT_VARIANT_INST || kind === 0x09) fail();
      const offset = r.uleb(TABLE_OFFSET_MAX);
      const size = r.uleb(TABLE_OFFSET_MAX);
      tables.push({ kind, offset, size });
    }
    tables.sort((x, y) => x.offset - y.offset);
    let contentLen = 0;
    const seen = new Set<number>();
    for (const t of tables) {
      if (t.offset !== contentLen || t.size === 0) fail();
      contentLen += t.size;
      if (contentLen > TABLE_OFFSET_MAX || seen.has(t.kind)) fail();
      seen.add(t.kind);
    }
    const base = r.pos;
    if (contentLen > b.length - base) fail();
    const tail = new Reader(b, base + contentLen, b.length);
    const selfHandle = tail.uleb(TABLE_INDEX_MAX);

    const windows = new Map<number, Reader>();
    for (const t of tables) {
      if (t.kind === Table.METADATA && version < 5) fail();
      if (t.kind === Table.FRIEND_DECLS && version < 2) fail();
      if (t.kind >= Table.VARIANT_FIELD_HANDLES && version < 7) fail();
      windows.set(t.kind, new Reader(b, base + t.offset, base + t.offset + t.size));
    }
    const each = (kind: Table, record: (r: Reader) => void): void => {
      const w = windows.get(kind);
      if (w) while (!w.atEnd()) record(w);
    };

    // Tables are independent byte ranges, so they are read in dependency order: every index is
    // then checked against an already-complete table as soon as it is read.
    each(Table.IDENTIFIERS, (w) => this.identifier(w));
    each(Table.ADDRESS_IDENTIFIERS, (w) => {
      this.addrStart.push(w.pos);
      w.skip(32);
    });
    each(Table.MODULE_HANDLES, (w) => this.moduleHandles.push(this.moduleHandle(w)));
    each(Table.STRUCT_HANDLES, (w) => this.structHandles.push(this.structHandle(w)));
    each(Table.SIGNATURES, (w) => this.signature(w));
    each(Table.CONSTANT_POOL, (w) => {
      this.token(w);
      w.skip(w.uleb(CONSTANT_SIZE_MAX));
      this.constantCount++;
    });
    each(Table.FUNCTION_HANDLES, (w) => this.functionHandles.push(this.functionHandle(w)));
    each(Table.FUNCTION_INST, (w) => {
      index(w, this.functionHandles.length);
      this.functionInstSig.push(index(w, this.signatures.length));
    });
    each(Table.STRUCT_DEFS, (w) => this.structDefs.push(this.structDef(w)));
    each(Table.STRUCT_DEF_INST, (w) => {
      index(w, this.structDefs.length);
      this.structDefInstSig.push(index(w, this.signatures.length));
    });
    each(Table.FIELD_HANDLES, (w) => {
      const owner = this.structDefs[index(w, this.structDefs.length)]!;
      if (w.uleb(FIELD_OFFSET_MAX) >= (owner.kind === "declared" ? owner.fields.length : 0)) fail();
      this.fieldHandleCount++;
    });
    each(Table.FIELD_INST, (w) => {
      index(w, this.fieldHandleCount);
      this.fieldInstSig.push(index(w, this.signatures.length));
    });
    each(Table.FRIEND_DECLS, (w) => this.friends.push(this.moduleHandle(w)));
    each(Table.METADATA, (w) => {
      const key = blob(w, METADATA_KEY_SIZE_MAX);
      this.metadata.push({ key, value: blob(w, METADATA_VALUE_SIZE_MAX) });
    });
    each(Table.VARIANT_FIELD_HANDLES, (w) => {
      const owner = this.structDefs[index(w, this.structDefs.length)]!;
      const field = w.uleb(FIELD_OFFSET_MAX);
      const n = w.uleb(VARIANT_COUNT_MAX);
      for (let i = 0; i < n; i++) {
        const v = w.uleb(VARIANT_OFFSET_MAX);
        if (v >= owner.variants.length || field >= owner.variants[v]!.fields.length) fail();
      }
      this.variantFieldHandleCount++;
    });
    each(Table.VARIANT_FIELD_INST, (w) => {
      index(w, this.variantFieldHandleCount);
      this.variantFieldInstSig.push(index(w, this.signatures.length));
    });
    each(Table.STRUCT_VARIANT_HANDLES, (w) => {
      const owner = this.structDefs[index(w, this.structDefs.length)]!;
      if (w.uleb(VARIANT_OFFSET_MAX) >= owner.variants.length) fail();
      this.structVariantHandleCount++;
    });
    each(Table.STRUCT_VARIANT_INST, (w) => {
      index(w, this.structVariantHandleCount);
      this.structVariantInstSig.push(index(w, this.signatures.length));
    });
    each(Table.FUNCTION_DEFS, (w) => this.functionDefs.push(this.functionDef(w)));

    if (this.moduleHandles.length === 0 || selfHandle >= this.moduleHandles.length) fail();
    return this.result(selfHandle);
  }

  private result(selfHandle: number): CompiledModule {
    const { b, identStart, identLen, identCache, addrStart } = this;
    return {
      version: this.version,
      selfHandle,
      moduleHandles: this.moduleHandles,
      structHandles: this.structHandles,
      functionHandles: this.functionHandles,
      signatures: this.signatures,
      identifier(i: number): string {
        let s = identCache[i];
        if (s === undefined) {
          const start = identStart[i]!;
          // Validated identifiers are ASCII, so one char per byte.
          s = String.fromCharCode.apply(null, b.subarray(start, start + identLen[i]!) as unknown as number[]);
          identCache[i] = s;
        }
        return s;
      },
      address(i: number): Uint8Array {
        const start = addrStart[i]!;
        return b.subarray(start, start + 32);
      },
      structDefs: this.structDefs,
      functionDefs: this.functionDefs,
      friends: this.friends,
      metadata: this.metadata,
    };
  }

  /** `load_identifier` + `Identifier::is_valid` (and no `$` before v9). */
  private identifier(w: Reader): void {
    const len = w.uleb(IDENTIFIER_SIZE_MAX);
    const start = w.pos;
    w.skip(len);
    const b = this.b;
    const dollar = this.version >= 9 ? 2 : 1;
    let ok = false;
    if (len > 0) {
      const c0 = b[start]!;
      if (c0 === 0x3c) {
        ok = len >= 6;
        for (let i = 0; ok && i < 6; i++) ok = b[start + i] === SELF_IDENT[i];
        if (ok && len > 6) {
          ok = len > 7 && b[start + 6] === 0x5f;
          for (let i = start + 7; ok && i < start + len; i++) ok = b[i]! >= 0x30 && b[i]! <= 0x39;
        }
      } else {
        const letter = (c0 >= 0x41 && c0 <= 0x5a) || (c0 >= 0x61 && c0 <= 0x7a);
        ok = letter || ((c0 === 0x5f || (c0 === 0x24 && dollar === 2)) && len > 1);
        for (let i = start + 1; ok && i < start + len; i++) {
          const k = IDENT_CHAR[b[i]!]!;
          ok = k !== 0 && k <= dollar;
        }
      }
    }
    if (!ok) fail();
    this.identStart.push(start);
    this.identLen.push(len);
  }

  private moduleHandle(w: Reader): ModuleHandle {
    return { address: index(w, this.addrStart.length), name: index(w, this.identStart.length) };
  }

  /** `load_ability_set`: a ULEB <= 0xF from v2, a legacy kind byte in v1. */
  private abilities(w: Reader, pos: AbilityPos): number {
    if (this.version >= 2) return w.uleb(0xf);
    const byte = w.u8();
    if (pos === AbilityPos.StructHandle) {
      if (byte === 1) return 0x4 | 0x8;
      if (byte === 2) return 0x1 | 0x2 | 0x4;
      fail();
    }
    let set: number;
    if (byte === 1) set = 0;
    else if (byte === 2) set = 0x1 | 0x2;
    else if (byte === 3) set = 0x8;
    else fail();
    return pos === AbilityPos.FunctionTypeParams ? set | 0x4 : set;
  }

  private structHandle(w: Reader): StructHandle {
    const module = index(w, this.moduleHandles.length);
    const name = index(w, this.identStart.length);
    const abilities = this.abilities(w, AbilityPos.StructHandle);
    const n = w.uleb(TYPE_PARAMETER_COUNT_MAX);
    const typeParams: { constraints: number; isPhantom: boolean }[] = [];
    for (let i = 0; i < n; i++) {
      const constraints = this.abilities(w, AbilityPos.StructTypeParams);
      const isPhantom = this.version >= 3 ? w.uleb(1) === 1 : false;
      typeParams.push({ constraints, isPhantom });
    }
    return { module, name, abilities, typeParams };
  }

  private signature(w: Reader): void {
    const n = w.uleb(SIGNATURE_SIZE_MAX);
    const toks: SigToken[] = [];
    let maxTp = -1;
    for (let i = 0; i < n; i++) {
      toks.push(this.token(w));
      if (this.maxTp > maxTp) maxTp = this.maxTp;
    }
    this.signatures.push(toks);
    this.sigMaxTp.push(maxTp);
  }

  /**
   * `load_signature_token` with the bounds checker's `check_type` folded in (struct handle in
   * range, type-argument count equal to the handle's). Sets `maxTp` to the largest type-parameter
   * index seen (-1 when none). Same explicit stack and depth limit as the reference.
   */
  private token(w: Reader): SigToken {
    this.maxTp = -1;
    const first = this.next(w);
    if (first.kind === 0) return first.tok;
    const stack: Frame[] = [first];
    for (;;) {
      if (stack.length > SIGNATURE_TOKEN_DEPTH_MAX) fail();
      const top = stack[stack.length - 1]!;
      if (top.kind !== 0) {
        stack.push(this.next(w));
        continue;
      }
      stack.pop();
      const parent = stack.pop();
      if (parent === undefined) return top.tok;
      stack.push(apply(parent, top.tok));
    }
  }

  private next(w: Reader): Frame {
    const code = w.u8();
    const v = this.version;
    switch (code) {
      case Tok.BOOL:
      case Tok.U8:
      case Tok.U64:
      case Tok.U128:
      case Tok.ADDRESS:
      case Tok.SIGNER:
        return saturated(code);
      case Tok.U16:
      case Tok.U32:
      case Tok.U256:
        if (v < 6) fail();
        return saturated(code);
      case Tok.I8:
      case Tok.I16:
      case Tok.I32:
      case Tok.I64:
      case Tok.I128:
      case Tok.I256:
        if (v < 9) fail();
        return saturated(code);
      case Tok.VECTOR:
        return frame(1);
      case Tok.REFERENCE:
        return frame(2);
      case Tok.MUTABLE_REFERENCE:
        return frame(3);
      case Tok.STRUCT: {
        const handle = index(w, this.structHandles.length);
        if (this.structHandles[handle]!.typeParams.length !== 0) fail();
        return saturated({ k: "struct", handle, args: [] });
      }
      case Tok.STRUCT_INST: {
        const handle = index(w, this.structHandles.length);
        const arity = w.uleb(TYPE_PARAMETER_COUNT_MAX);
        if (arity === 0 || this.structHandles[handle]!.typeParams.length !== arity) fail();
        const f = frame(4);
        f.handle = handle;
        f.arity = arity;
        return f;
      }
      case Tok.TYPE_PARAMETER: {
        const i = w.uleb(TYPE_PARAMETER_INDEX_MAX);
        if (i > this.maxTp) this.maxTp = i;
        return saturated({ k: "tparam", index: i });
      }
      case Tok.FUNCTION: {
        if (v < 8) fail();
        const abilities = this.abilities(w, AbilityPos.StructTypeParams);
        const argc = w.uleb(TYPE_PARAMETER_COUNT_MAX);
        const resc = w.uleb(TYPE_PARAMETER_COUNT_MAX);
        if (argc + resc === 0) return saturated({ k: "function", abilities, args: [], results: [] });
        const f = frame(5);
        f.abilities = abilities;
        f.arity = argc;
        f.handle = resc;
        return f;
      }
      default:
        return fail();
    }
  }

  private functionHandle(w: Reader): FunctionHandle {
    const module = index(w, this.moduleHandles.length);
    const name = index(w, this.identStart.length);
    const params = index(w, this.signatures.length);
    const returns = index(w, this.signatures.length);
    const n = w.uleb(TYPE_PARAMETER_COUNT_MAX);
    const typeParams: number[] = [];
    for (let i = 0; i < n; i++) typeParams.push(this.abilities(w, AbilityPos.FunctionTypeParams));
    if (this.sigMaxTp[params]! >= n || this.sigMaxTp[returns]! >= n) fail();
    if (this.version >= 7) this.accessSpecifiers(w);
    if (this.version >= 8) {
      const count = w.uleb(ATTRIBUTE_COUNT_MAX);
      for (let i = 0; i < count; i++) {
        const a = w.u8();
        if (a !== 1 && a !== 2) fail(); // PERSISTENT, MODULE_LOCK
      }
    }
    return { module, name, params, returns, typeParams };
  }

  /**
   * `load_access_specifiers`: parsed to get past them. The reference bounds checker does not
   * check their indices, so neither do we (only their ULEB maxima).
   */
  private accessSpecifiers(w: Reader): void {
    if (!option(w)) return;
    const count = w.uleb(ACCESS_SPECIFIER_COUNT_MAX);
    for (let i = 0; i < count; i++) {
      const kind = w.u8();
      if (kind !== 1 && kind !== 2) fail(); // Reads, Writes
      const negated = w.u8();
      if (negated !== 1 && negated !== 2) fail();
      switch (w.u8()) {
        case 1: // ANY
          break;
        case 2: // AT_ADDRESS
        case 3: // IN_MODULE
        case 4: // RESOURCE
          w.uleb(TABLE_INDEX_MAX);
          break;
        case 5: // RESOURCE_INSTANTIATION
          w.uleb(TABLE_INDEX_MAX);
          w.uleb(TABLE_INDEX_MAX);
          break;
        default:
          fail();
      }
      switch (w.u8()) {
        case 1: // ANY
          break;
        case 2: // LITERAL
          w.uleb(TABLE_INDEX_MAX);
          break;
        case 3: // PARAMETER
          w.uleb(LOCAL_INDEX_MAX);
          if (option(w)) w.uleb(TABLE_INDEX_MAX);
          break;
        default:
          fail();
      }
    }
  }

  private structDef(w: Reader): StructDef {
    const handle = index(w, this.structHandles.length);
    const tpCount = this.structHandles[handle]!.typeParams.length;
    const flag = w.u8();
    if (flag === STRUCT_NATIVE) return { handle, kind: "native", fields: [], variants: [] };
    if (flag === STRUCT_DECLARED) return { handle, kind: "declared", fields: this.fields(w, tpCount), variants: [] };
    if (flag !== STRUCT_DECLARED_VARIANTS || this.version < 7) fail();
    const n = w.uleb(VARIANT_COUNT_MAX);
    const variants: { name: number; fields: FieldDef[] }[] = [];
    for (let i = 0; i < n; i++) {
      const name = index(w, this.identStart.length);
      variants.push({ name, fields: this.fields(w, tpCount) });
    }
    if (n === 0) fail(); // ZERO_VARIANTS_ERROR
    return { handle, kind: "variants", fields: [], variants };
  }

  private fields(w: Reader, tpCount: number): FieldDef[] {
    const n = w.uleb(FIELD_COUNT_MAX);
    const fields: FieldDef[] = [];
    for (let i = 0; i < n; i++) {
      const name = index(w, this.identStart.length);
      const type = this.token(w);
      if (this.maxTp >= tpCount) fail();
      fields.push({ name, type });
    }
    return fields;
  }

  /** `load_function_def` with `check_function_def` / `check_code` folded in. */
  private functionDef(w: Reader): FunctionDef {
    const handle = index(w, this.functionHandles.length);
    const v = this.version;
    let flags = w.u8();
    let vis: number;
    let isEntry = false;
    if (v === 1) {
      vis = flags & FLAG_DEPRECATED_PUBLIC ? VIS_PUBLIC : VIS_PRIVATE;
      flags &= ~FLAG_DEPRECATED_PUBLIC;
    } else {
      vis = flags;
      if (v < 5 && vis === VIS_DEPRECATED_SCRIPT) {
        vis = VIS_PUBLIC;
        isEntry = true;
      } else if (vis !== VIS_PRIVATE && vis !== VIS_PUBLIC && vis !== VIS_FRIEND) {
        fail();
      }
      flags = w.u8();
      if (v >= 5 && flags & FLAG_ENTRY) {
        isEntry = true;
        flags &= ~FLAG_ENTRY;
      }
    }
    const acquires = w.uleb(ACQUIRES_COUNT_MAX);
    for (let i = 0; i < acquires; i++) index(w, this.structDefs.length);
    const isNative = (flags & FLAG_NATIVE) !== 0;
    if (isNative) flags &= ~FLAG_NATIVE;
    else this.code(w, this.functionHandles[handle]!);
    if (flags !== 0) fail(); // INVALID_FLAG_BITS
    const visibility = vis === VIS_PUBLIC ? "public" : vis === VIS_FRIEND ? "friend" : "private";
    return { handle, visibility, isEntry, isNative };
  }

  /** Walks one code unit instruction by instruction, checking every operand. */
  private code(w: Reader, fh: FunctionHandle): void {
    const locals = index(w, this.signatures.length);
    const localsCount = this.signatures[locals]!.length + this.signatures[fh.params]!.length;
    if (localsCount > LOCAL_INDEX_MAX) fail();
    const tpCount = fh.typeParams.length;
    const sigMaxTp = this.sigMaxTp;
    if (sigMaxTp[locals]! >= tpCount) fail();
    const count = w.uleb(BYTECODE_COUNT_MAX);
    const v = this.version;
    const nSig = this.signatures.length;
    for (let n = 0; n < count; n++) {
      const op = w.u8();
      const kind = OP_KIND[op]!;
      if (kind === Op.INVALID || OP_MIN_VERSION[op]! > v) fail();
      switch (kind) {
        case Op.NONE:
          break;
        case Op.RAW:
          w.skip(OP_WIDTH[op]!);
          break;
        case Op.BRANCH:
          if (w.uleb(TABLE_INDEX_MAX) >= count) fail();
          break;
        case Op.LOCAL:
          if (w.uleb(LOCAL_INDEX_MAX) >= localsCount) fail();
          break;
        case Op.CONST:
          index(w, this.constantCount);
          break;
        case Op.FIELD_HANDLE:
          index(w, this.fieldHandleCount);
          break;
        case Op.VARIANT_FIELD_HANDLE:
          index(w, this.variantFieldHandleCount);
          break;
        case Op.CALL:
        case Op.PACK_CLOSURE:
          index(w, this.functionHandles.length);
          if (kind === Op.PACK_CLOSURE) w.ulebU64();
          break;
        case Op.STRUCT_DEF:
          index(w, this.structDefs.length);
          break;
        case Op.STRUCT_VARIANT_HANDLE:
          index(w, this.structVariantHandleCount);
          break;
        case Op.FIELD_INST:
          instTp(w, this.fieldInstSig, sigMaxTp, tpCount);
          break;
        case Op.VARIANT_FIELD_INST:
          instTp(w, this.variantFieldInstSig, sigMaxTp, tpCount);
          break;
        case Op.CALL_GENERIC:
        case Op.PACK_CLOSURE_GENERIC:
          instTp(w, this.functionInstSig, sigMaxTp, tpCount);
          if (kind === Op.PACK_CLOSURE_GENERIC) w.ulebU64();
          break;
        case Op.STRUCT_DEF_INST:
          instTp(w, this.structDefInstSig, sigMaxTp, tpCount);
          break;
        case Op.STRUCT_VARIANT_INST:
          instTp(w, this.structVariantInstSig, sigMaxTp, tpCount);
          break;
        case Op.VEC:
        case Op.VEC_N:
        case Op.CALL_CLOSURE:
          if (sigMaxTp[index(w, nSig)]! >= tpCount) fail();
          if (kind === Op.VEC_N) w.skip(8);
          break;
        default:
          fail();
      }
    }
  }
}

/** A table index: a ULEB <= 65535 that must also be below `length`. */
function index(w: Reader, length: number): number {
  const i = w.uleb(TABLE_INDEX_MAX);
  if (i >= length) fail();
  return i;
}

/** An instantiation index whose signature's type parameters must fit the function's. */
function instTp(w: Reader, instSig: readonly number[], sigMaxTp: readonly number[], tpCount: number): void {
  if (sigMaxTp[instSig[index(w, instSig.length)]!]! >= tpCount) fail();
}

/** `SerializedOption`: 0x1 none, 0x2 some. */
function option(w: Reader): boolean {
  const byte = w.u8();
  if (byte === 1) return false;
  if (byte === 2) return true;
  return fail();
}

/** A ULEB length (<= max) then that many bytes, as a view into the input. */
function blob(w: Reader, max: number): Uint8Array {
  const len = w.uleb(max);
  const start = w.pos;
  w.skip(len);
  return w.buf.subarray(start, start + len);
}

function saturated(tok: SigToken): Frame {
  return { kind: 0, tok, handle: 0, arity: 0, args: [], results: [], abilities: 0 };
}

function frame(kind: number): Frame {
  return { kind, tok: 0, handle: 0, arity: 0, args: [], results: [], abilities: 0 };
}

/** `TypeBuilder::apply`: feeds one finished token to the constructor below it. */
function apply(f: Frame, tok: SigToken): Frame {
  switch (f.kind) {
    case 1:
      return saturated({ k: "vector", inner: tok });
    case 2:
      return saturated({ k: "ref", inner: tok });
    case 3:
      return saturated({ k: "mutref", inner: tok });
    case 4:
      f.args.push(tok);
      return f.args.length >= f.arity ? saturated({ k: "struct", handle: f.handle, args: f.args }) : f;
    default: {
      // Function: `arity` holds the argument count, `handle` the result count.
      if (f.args.length < f.arity) f.args.push(tok);
      else f.results.push(tok);
      if (f.args.length === f.arity && f.results.length === f.handle) {
        return saturated({ k: "function", abilities: f.abilities, args: f.args, results: f.results });
      }
      return f;
    }
  }
}
