/**
 * The modules page on the wire: JSON, the concatenation of each module's record (`ModuleRecords`:
 * its bytecode as hex and its ABI, encoded once per code hash); BCS, a map from
 * `"<address>::<name>"` to bytecode. A page is cut early when its body would pass the byte budget.
 */
import { bcs } from "@mysten/bcs";
import { formatAddress } from "../../../ledger/address.js";
import type { ModuleEntry } from "../../../ledger/types.js";
import { EncodedBody } from "../../compression.js";
import type { ModuleRecords } from "../../moduleRecords.js";
import type { WireFormat } from "../../negotiate.js";
import type { Answer } from "../../operation.js";
import type { ModulesRead } from "./read.js";

const moduleMapBcs = bcs.vector(bcs.tuple([bcs.string(), bcs.byteVector()]));
const OPEN = Buffer.from("[");
const COMMA = Buffer.from(",");
const CLOSE = Buffer.from("]");

/**
 * The page of `read` (a page and one more module) in `format`, with the cursor of the next page
 * (the state key of its first module, hex) and the position it was read in.
 *
 * @param budget - bytes a page's body may reach before it is cut (always at least one module).
 */
export function encodeModulesPage(records: ModuleRecords, budget: number, address: Uint8Array, read: ModulesRead, format: WireFormat): Answer {
  const { rows, limit } = read;
  const count = Math.min(rows.length, limit);
  let size = 2;
  let taken = 0;
  let body: EncodedBody;
  if (format === "json") {
    const parts: Buffer[] = [OPEN];
    for (; taken < count; taken++) {
      const json = moduleRecord(records, rows[taken]!, read.records![taken]);
      if (taken > 0 && size + json.length + 1 > budget) break;
      if (taken > 0) parts.push(COMMA);
      parts.push(json);
      size += json.length + 1;
    }
    parts.push(CLOSE);
    body = new EncodedBody(Buffer.concat(parts));
  } else {
    for (; taken < count; taken++) {
      const module = rows[taken]!;
      const add = module.bytecode!.length + module.name.length + 80;
      if (taken > 0 && size + add > budget) break;
      size += add;
    }
    body = new EncodedBody(moduleMap(address, rows, taken));
  }
  const next = rows[taken];
  return { body, cursor: next ? Buffer.from(next.stateKey).toString("hex") : null, exactAt: read.info };
}

/** A module's JSON record: the one read held, else the store's, else built from its code. */
function moduleRecord(records: ModuleRecords, module: ModuleEntry, held: Buffer | undefined): Buffer {
  if (held !== undefined) return held;
  if (module.record !== undefined) return records.written(module.codeHash, module.record);
  return records.record(module.codeHash, module.bytecode!, module.abi);
}

/** The BCS map of the first `count` modules, ordered by the BCS bytes of its keys (each serialized once). */
function moduleMap(address: Uint8Array, rows: ModuleEntry[], count: number): Buffer {
  const owner = formatAddress(address);
  const entries: Array<{ id: string; key: Buffer; bytes: Uint8Array }> = [];
  for (let i = 0; i < count; i++) {
    const id = `${owner}::${rows[i]!.name}`;
    entries.push({ id, key: Buffer.from(bcs.string().serialize(id).toBytes()), bytes: rows[i]!.bytecode! });
  }
  entries.sort((a, b) => Buffer.compare(a.key, b.key));
  return Buffer.from(moduleMapBcs.serialize(entries.map((e) => [e.id, e.bytes] as [string, Uint8Array])).toBytes());
}
