/**
 * Pre-serialized JSON of module records, `{"bytecode":"0x…","abi":{…}}`, keyed by the bytecode's
 * content hash: a module is decoded and printed once, then every page is a string join.
 */
import { AbiCache } from "../move/abiCache.js";
import type { ModuleEntry } from "../ledger/types.js";

const MAX_RECORDS = 20_000;
const records = new Map<string, string>();
const abis = new AbiCache(MAX_RECORDS);

export function moduleRecordJson(m: ModuleEntry): string {
  let s = records.get(m.codeHash);
  if (s === undefined) {
    const hex = Buffer.from(m.bytecode.buffer, m.bytecode.byteOffset, m.bytecode.byteLength).toString("hex");
    s = `{"bytecode":"0x${hex}","abi":${abis.json(m.codeHash, m.bytecode)}}`;
    if (records.size >= MAX_RECORDS) records.delete(records.keys().next().value!);
    records.set(m.codeHash, s);
  }
  return s;
}
