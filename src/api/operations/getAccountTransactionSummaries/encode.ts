/**
 * A summaries page on the wire: JSON (`TransactionSummary[]`) or BCS
 * (`vector<IndexedTransactionSummary>`), from the rows, or the JSON text a store wrote for them.
 */
import { formatAddress } from "../../../ledger/address.js";
import type { TransactionSummary } from "../../../ledger/types.js";
import { EncodedBody } from "../../compression.js";
import type { WireFormat } from "../../negotiate.js";
import type { Answer } from "../../operation.js";
import type { SummariesRead } from "./read.js";

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
 * The BCS of a page, `vector<IndexedTransactionSummary>` (docs/decisions.md §13), written straight into one
 * buffer: the variant `V1` (0), the sender's 32 bytes, the version (u64), the hash (a byte vector),
 * the replay protector (`Nonce` 0 or `SequenceNumber` 1, then a u64).
 */
export function summariesBcs(rows: readonly TransactionSummary[]): Buffer {
  let size = ulebLength(rows.length);
  for (const s of rows) size += 1 + 32 + 8 + ulebLength(s.hashHex.length / 2) + s.hashHex.length / 2 + 1 + 8;
  const out = Buffer.allocUnsafe(size);
  let at = writeUleb(out, 0, rows.length);
  for (const s of rows) {
    out[at++] = 0;
    out.set(s.sender, at);
    at = out.writeBigUInt64LE(s.version, at + 32);
    const hashBytes = s.hashHex.length / 2;
    at = writeUleb(out, at, hashBytes);
    at += out.write(s.hashHex, at, hashBytes, "hex");
    out[at++] = s.replayProtector.type === "nonce" ? 0 : 1;
    at = out.writeBigUInt64LE(s.replayProtector.value, at);
  }
  return out;
}

function ulebLength(n: number): number {
  let bytes = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    bytes++;
  }
  return bytes;
}

function writeUleb(out: Buffer, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  out[at++] = n;
  return at;
}
