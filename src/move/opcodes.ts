/**
 * Operand shapes and version gates of every Move instruction (aptos-core `Opcodes`, operands from
 * `load_code`). Used only to walk code units, which carry no length prefix.
 */

/** Operand kinds. */
export const enum Op {
  INVALID = 0,
  NONE,
  /** Fixed-width little-endian immediate; width in {@link OP_WIDTH}. */
  RAW,
  BRANCH,
  CONST,
  LOCAL,
  FIELD_HANDLE,
  FIELD_INST,
  VARIANT_FIELD_HANDLE,
  VARIANT_FIELD_INST,
  CALL,
  CALL_GENERIC,
  STRUCT_DEF,
  STRUCT_DEF_INST,
  STRUCT_VARIANT_HANDLE,
  STRUCT_VARIANT_INST,
  /** Signature index. */
  VEC,
  /** Signature index then an 8-byte count. */
  VEC_N,
  PACK_CLOSURE,
  PACK_CLOSURE_GENERIC,
  CALL_CLOSURE,
}

/** Operand kind by opcode byte. */
export const OP_KIND = new Uint8Array(256);
/** Immediate width for {@link Op.RAW}. */
export const OP_WIDTH = new Uint8Array(256);
/** First binary version that has the opcode. */
export const OP_MIN_VERSION = new Uint8Array(256);

function def(first: number, last: number, kind: Op, minVersion = 1, width = 0): void {
  for (let op = first; op <= last; op++) {
    OP_KIND[op] = kind;
    OP_MIN_VERSION[op] = minVersion;
    OP_WIDTH[op] = width;
  }
}

def(0x01, 0x02, Op.NONE); // POP, RET
def(0x03, 0x05, Op.BRANCH); // BR_TRUE, BR_FALSE, BRANCH
def(0x06, 0x06, Op.RAW, 1, 8); // LD_U64
def(0x07, 0x07, Op.CONST); // LD_CONST
def(0x08, 0x09, Op.NONE); // LD_TRUE, LD_FALSE
def(0x0a, 0x0e, Op.LOCAL); // COPY_LOC .. IMM_BORROW_LOC
def(0x0f, 0x10, Op.FIELD_HANDLE); // MUT/IMM_BORROW_FIELD
def(0x11, 0x11, Op.CALL);
def(0x12, 0x13, Op.STRUCT_DEF); // PACK, UNPACK
def(0x14, 0x28, Op.NONE); // READ_REF .. NOP
def(0x29, 0x2d, Op.STRUCT_DEF); // EXISTS .. MOVE_TO
def(0x2e, 0x30, Op.NONE); // FREEZE_REF, SHL, SHR
def(0x31, 0x31, Op.RAW, 1, 1); // LD_U8
def(0x32, 0x32, Op.RAW, 1, 16); // LD_U128
def(0x33, 0x35, Op.NONE); // CAST_U8/U64/U128
def(0x36, 0x37, Op.FIELD_INST); // *_BORROW_FIELD_GENERIC
def(0x38, 0x38, Op.CALL_GENERIC);
def(0x39, 0x3f, Op.STRUCT_DEF_INST); // PACK_GENERIC .. MOVE_TO_GENERIC
def(0x40, 0x40, Op.VEC_N, 4); // VEC_PACK
def(0x41, 0x45, Op.VEC, 4); // VEC_LEN .. VEC_POP_BACK
def(0x46, 0x46, Op.VEC_N, 4); // VEC_UNPACK
def(0x47, 0x47, Op.VEC, 4); // VEC_SWAP
def(0x48, 0x48, Op.RAW, 6, 2); // LD_U16
def(0x49, 0x49, Op.RAW, 6, 4); // LD_U32
def(0x4a, 0x4a, Op.RAW, 6, 32); // LD_U256
def(0x4b, 0x4d, Op.NONE, 6); // CAST_U16/U32/U256
def(0x4e, 0x4f, Op.VARIANT_FIELD_HANDLE, 7);
def(0x50, 0x51, Op.VARIANT_FIELD_INST, 7);
// PACK_VARIANT, PACK_VARIANT_GENERIC, UNPACK_VARIANT, UNPACK_VARIANT_GENERIC, TEST_VARIANT, TEST_VARIANT_GENERIC.
// The reference gate omits UNPACK_VARIANT*, but below v7 their tables cannot exist, so the bounds
// check rejects them anyway: gating all six at v7 gives the same verdict.
for (let op = 0x52; op <= 0x57; op += 2) {
  def(op, op, Op.STRUCT_VARIANT_HANDLE, 7);
  def(op + 1, op + 1, Op.STRUCT_VARIANT_INST, 7);
}
def(0x58, 0x58, Op.PACK_CLOSURE, 8);
def(0x59, 0x59, Op.PACK_CLOSURE_GENERIC, 8);
def(0x5a, 0x5a, Op.CALL_CLOSURE, 8);
// LD_I8 .. LD_I256 (widths inferred: 1/2/4/8/16/32 bytes LE, like LD_U*).
for (const [i, w] of [1, 2, 4, 8, 16, 32].entries()) def(0x5b + i, 0x5b + i, Op.RAW, 9, w);
def(0x61, 0x67, Op.NONE, 9); // CAST_I8 .. CAST_I256, NEGATE
def(0x68, 0x68, Op.NONE, 10); // ABORT_MSG
