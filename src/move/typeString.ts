/**
 * `MoveType` display of a signature token (api/types `bytecode.rs` `new_move_type` then
 * `move_types.rs` Display): `&mut u64`, `vector<u8>`, `0x1::object::Object<T0>` (", " between
 * type arguments), `T0`, `|u64,&signer|bool` (no spaces, abilities not shown), `i8`..`i256`.
 */

import { Tok } from "./format.js";
import type { CompiledModule, SigToken } from "./types.js";

const PRIMITIVES: Record<number, string> = {
  [Tok.BOOL]: "bool",
  [Tok.U8]: "u8",
  [Tok.U16]: "u16",
  [Tok.U32]: "u32",
  [Tok.U64]: "u64",
  [Tok.U128]: "u128",
  [Tok.U256]: "u256",
  [Tok.ADDRESS]: "address",
  [Tok.SIGNER]: "signer",
  [Tok.I8]: "i8",
  [Tok.I16]: "i16",
  [Tok.I32]: "i32",
  [Tok.I64]: "i64",
  [Tok.I128]: "i128",
  [Tok.I256]: "i256",
};

/**
 * A printer of tokens of module `m`. `addr(i)` formats address identifier `i`. Struct names are
 * `{address of the handle's own module}::{module}::{name}` and cached per handle.
 */
export function typeString(m: CompiledModule, addr: (i: number) => string): (tok: SigToken) => string {
  const structNames: (string | undefined)[] = [];
  const structName = (i: number): string => {
    let s = structNames[i];
    if (s === undefined) {
      const h = m.structHandles[i]!;
      const mh = m.moduleHandles[h.module]!;
      s = `${addr(mh.address)}::${m.identifier(mh.name)}::${m.identifier(h.name)}`;
      structNames[i] = s;
    }
    return s;
  };
  // Nesting is at most 256 deep (checked by the decoder), so recursion is safe.
  const print = (tok: SigToken): string => {
    if (typeof tok === "number") return PRIMITIVES[tok]!;
    switch (tok.k) {
      case "vector":
        return `vector<${print(tok.inner)}>`;
      case "ref":
        return `&${print(tok.inner)}`;
      case "mutref":
        return `&mut ${print(tok.inner)}`;
      case "tparam":
        return `T${tok.index}`;
      case "struct":
        return tok.args.length === 0 ? structName(tok.handle) : `${structName(tok.handle)}<${tok.args.map(print).join(", ")}>`;
      case "function":
        return `|${tok.args.map(print).join(",")}|${tok.results.map(print).join(",")}`;
    }
  };
  return print;
}
