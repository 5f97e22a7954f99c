/**
 * A summaries page on the wire: JSON (`TransactionSummary[]`) or BCS
 * (`vector<IndexedTransactionSummary>`), from the rows, or the JSON text a store wrote for them
 * (`WireReads`, byte for byte `summariesJson` of the rows).
 */
import { bcs } from "@mysten/bcs";
import { formatAddress } from "../../../ledger/address.js";
import type { TransactionSummary } from "../../../ledger/types.js";
import { EncodedBody } from "../../http/compression.js";
import type { WireFormat } from "../../http/negotiate.js";
import type { Answer } from "../../http/operation.js";
import { jsonSerializer } from "../../http/serialize.js";
import { ref } from "../../http/operation.js";
import { transactionSummary } from "../../schemas.js";
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

const serializePage = jsonSerializer<SummaryObject[]>({ type: "array", items: ref(transactionSummary) });

/** A summary as the response schema (`TransactionSummary`) types it. */
export interface SummaryObject {
  sender: string;
  version: string;
  transaction_hash: string;
  replay_protector: { type: "nonce"; nonce: string } | { type: "sequence_number"; sequence_number: string };
}

export function summaryObject(s: TransactionSummary): SummaryObject {
  const rp = s.replayProtector;
  return {
    sender: formatAddress(s.sender),
    version: s.version.toString(),
    transaction_hash: `0x${s.hashHex}`,
    replay_protector: rp.type === "nonce" ? { type: "nonce", nonce: rp.value.toString() } : { type: "sequence_number", sequence_number: rp.value.toString() },
  };
}

/**
 * The JSON of a page (`TransactionSummary[]`): the one definition of a summary's JSON, the response
 * schema's serializer. A store may write the same bytes in SQL (`WireReads.readSummaries`, the one
 * fast path), which `test/wireReads.test.ts` checks against this on both dialects.
 */
export function summariesJson(rows: readonly TransactionSummary[]): string {
  return serializePage(rows.map(summaryObject));
}

/**
 * The BCS of a page, `vector<IndexedTransactionSummary>` (docs/decisions.md §13), written straight into one
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
