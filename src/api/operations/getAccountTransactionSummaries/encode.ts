/**
 * A summaries page on the wire: JSON (`TransactionSummary[]`) or BCS
 * (`vector<IndexedTransactionSummary>`), from the rows, or the JSON text a store wrote for them.
 */
import { bcs } from "@mysten/bcs";
import { formatAddress } from "../../../ledger/address.js";
import type { TransactionSummary } from "../../../ledger/types.js";
import { EncodedBody } from "../../compression.js";
import type { WireFormat } from "../../negotiate.js";
import type { Answer } from "../../operation.js";
import type { SummariesRead } from "./read.js";

/** BCS lengths (ULEB128). */
const ULEB = bcs.uleb128();

/** The page of `read` in `format`, with its first version (a cached copy serves until it is pruned) and the position it was read in. */
export function encodeSummariesPage({ page, info }: SummariesRead, format: WireFormat): Answer {
  if ("json" in page) return { body: new EncodedBody(Buffer.from(page.json, "latin1")), firstVersion: page.first, exactAt: info };
  const rows = page.rows;
  const body = new EncodedBody(format === "bcs" ? summariesBcs(rows) : Buffer.from(summariesJson(rows), "latin1"));
  return { body, firstVersion: rows[0]?.version ?? null, exactAt: info };
}

/**
 * The JSON of a page (`TransactionSummary[]`), in one pass: every value is hex or decimal digits,
 * so nothing is escaped, and the sender is formatted once. Byte for byte what the response
 * schema's serializer writes, without the objects it needs and its per-string escaping.
 */
export function summariesJson(rows: readonly TransactionSummary[]): string {
  let out = "[";
  let sender: Uint8Array | null = null;
  let head = "";
  for (let i = 0; i < rows.length; i++) {
    const s = rows[i]!;
    if (s.sender !== sender) {
      sender = s.sender;
      head = `{"sender":"${formatAddress(sender)}","version":"`;
    }
    const rp = s.replayProtector;
    out +=
      (i === 0 ? head : `,${head}`) +
      s.version +
      '","transaction_hash":"0x' +
      s.hashHex +
      (rp.type === "nonce" ? '","replay_protector":{"type":"nonce","nonce":"' : '","replay_protector":{"type":"sequence_number","sequence_number":"') +
      rp.value +
      '"}}';
  }
  return out + "]";
}

/**
 * The BCS of a page, `vector<IndexedTransactionSummary>` (DECISIONS §12), written straight into one
 * buffer: the variant `V1` (0), the sender's 32 bytes, the version (u64), the hash (a byte vector),
 * the replay protector (`Nonce` 0 or `SequenceNumber` 1, then a u64).
 */
export function summariesBcs(rows: readonly TransactionSummary[]): Buffer {
  const count = ULEB.serialize(rows.length).toBytes();
  let size = count.length;
  for (const s of rows) size += 1 + 32 + 8 + ULEB.serialize(s.hashHex.length / 2).toBytes().length + s.hashHex.length / 2 + 1 + 8;
  const out = Buffer.allocUnsafe(size);
  out.set(count, 0);
  let at = count.length;
  for (const s of rows) {
    out[at++] = 0;
    out.set(s.sender, at);
    at = out.writeBigUInt64LE(s.version, at + 32);
    const hashBytes = s.hashHex.length / 2;
    const hashLength = ULEB.serialize(hashBytes).toBytes();
    out.set(hashLength, at);
    at += hashLength.length;
    at += out.write(s.hashHex, at, hashBytes, "hex");
    out[at++] = s.replayProtector.type === "nonce" ? 0 : 1;
    at = out.writeBigUInt64LE(s.replayProtector.value, at);
  }
  return out;
}
