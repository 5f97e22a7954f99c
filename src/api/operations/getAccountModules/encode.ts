/**
 * The modules page on the wire: JSON, each module's record (its bytecode as hex and its ABI) as the
 * read joined them (`ModuleRecords.join`), closed after the last one the page takes; BCS, a map from
 * `"<address>::<name>"` to bytecode. A page is cut early when its body would pass the byte budget.
 */
import { bcs } from "@mysten/bcs";
import { formatAddress } from "../../../ledger/address.js";
import type { ModuleEntry } from "../../../ledger/types.js";
import { EncodedBody } from "../../http/compression.js";
import { closeJoined } from "../../pages/moduleRecords.js";
import type { WireFormat } from "../../http/negotiate.js";
import type { Answer } from "../../http/operation.js";
import type { ModulesRead } from "./read.js";

const moduleMapBcs = bcs.vector(bcs.tuple([bcs.string(), bcs.byteVector()]));

/**
 * The page of `read` (a page and one more module) in `format`, with the cursor of the next page
 * (the state key of its first module, hex) and the position it was read in.
 *
 * @param budget - bytes a page's body may reach before it is cut (always at least one module).
 */
export function encodeModulesPage(budget: number, address: Uint8Array, read: ModulesRead, format: WireFormat): Answer {
  const { rows, limit } = read;
  const count = Math.min(rows.length, limit);
  let taken = 0;
  let body: EncodedBody;
  if (format === "json") {
    // the JSON of the first n records is `ends[n - 1] + 1` bytes with its closing bracket
    const joined = read.records!;
    while (taken < count && (taken === 0 || joined.ends[taken]! + 2 <= budget)) taken++;
    body = new EncodedBody(closeJoined(joined, taken));
  } else {
    let size = 2;
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
