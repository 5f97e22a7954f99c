/**
 * Parses Move type strings in the node's printed syntax (the inverse of typeString.ts), so module
 * descriptions for the builder read like the ABI they produce:
 * `u64`, `&mut vector<0x1::string::String>`, `T0`, `0x1::object::Object<T0>`,
 * `0x1::table::Table<T0, T1>` (", " between type arguments), `|u64,&signer|bool` (function types:
 * "," with no space between arguments and between results), `i8`..`i256`.
 */

/** A parsed type. Struct addresses are kept as written; the builder normalizes them. */
export type TypeExpr =
  | { readonly k: "prim"; readonly name: PrimitiveName }
  | { readonly k: "vector" | "ref" | "mutref"; readonly inner: TypeExpr }
  | { readonly k: "tparam"; readonly index: number }
  | { readonly k: "struct"; readonly address: string; readonly module: string; readonly name: string; readonly args: readonly TypeExpr[] }
  | { readonly k: "function"; readonly args: readonly TypeExpr[]; readonly results: readonly TypeExpr[] };

/** Primitive type names. */
export type PrimitiveName =
  | "bool" | "u8" | "u16" | "u32" | "u64" | "u128" | "u256" | "address" | "signer"
  | "i8" | "i16" | "i32" | "i64" | "i128" | "i256";

const PRIMITIVES = new Set<string>([
  "bool", "u8", "u16", "u32", "u64", "u128", "u256", "address", "signer",
  "i8", "i16", "i32", "i64", "i128", "i256",
]);

/**
 * Parses one type string.
 *
 * @throws SyntaxError naming the position when the text is not a type.
 */
export function parseType(text: string): TypeExpr {
  let pos = 0;
  const err = (what: string): never => {
    throw new SyntaxError(`bad Move type ${JSON.stringify(text)} at ${pos}: ${what}`);
  };
  const eat = (s: string): boolean => {
    if (text.startsWith(s, pos)) {
      pos += s.length;
      return true;
    }
    return false;
  };
  const word = (): string => {
    const m = /^[A-Za-z0-9_$]+/.exec(text.slice(pos));
    if (!m) err("expected a name");
    pos += m![0].length;
    return m![0];
  };
  const list = (sep: string, end: (c: string | undefined) => boolean): TypeExpr[] => {
    const out: TypeExpr[] = [];
    if (end(text[pos])) return out;
    out.push(type());
    while (text.startsWith(sep, pos) && !(sep === "," && text[pos + 1] === " ")) {
      pos += sep.length;
      out.push(type());
    }
    return out;
  };
  const type = (): TypeExpr => {
    if (eat("&mut ")) return { k: "mutref", inner: type() };
    if (eat("&")) return { k: "ref", inner: type() };
    if (eat("|")) {
      const args = list(",", (c) => c === "|");
      if (!eat("|")) err("expected '|'");
      const results = list(",", (c) => c === undefined || c === ">" || c === "," || c === "|");
      return { k: "function", args, results };
    }
    const w = word();
    if (w === "vector" && eat("<")) {
      const inner = type();
      if (!eat(">")) err("expected '>'");
      return { k: "vector", inner };
    }
    if (PRIMITIVES.has(w)) return { k: "prim", name: w as PrimitiveName };
    if (/^T\d+$/.test(w) && !text.startsWith("::", pos)) return { k: "tparam", index: Number(w.slice(1)) };
    if (!eat("::")) err("expected '::'");
    const module = word();
    if (!eat("::")) err("expected '::'");
    const name = word();
    let args: TypeExpr[] = [];
    if (eat("<")) {
      args = list(", ", (c) => c === ">");
      if (args.length === 0) err("empty type arguments");
      if (!eat(">")) err("expected '>'");
    }
    return { k: "struct", address: w, module, name, args };
  };
  const t = type();
  if (pos !== text.length) err("trailing text");
  return t;
}
