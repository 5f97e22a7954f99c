import { bcs } from "@mysten/bcs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatAddress } from "../../../ledger/address.js";
import type { TransactionSummary } from "../../../ledger/types.js";
import { summariesBcs, summariesJson } from "./encode.js";

/** The BCS form as the BCS library writes it. */
const summaryBcs = bcs.enum("IndexedTransactionSummary", {
  V1: bcs.struct("V1", {
    sender: bcs.fixedArray(32, bcs.u8()),
    version: bcs.u64(),
    transaction_hash: bcs.byteVector(),
    replay_protector: bcs.enum("ReplayProtector", { Nonce: bcs.u64(), SequenceNumber: bcs.u64() }),
  }),
});

const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const summary = (sender: Uint8Array) =>
  fc.record({
    sender: fc.constant(sender),
    version: u64,
    // hex as the stores read it: lowercase, any even length (the BCS form is a byte vector)
    hashHex: fc.uint8Array({ minLength: 0, maxLength: 200 }).map((b) => Buffer.from(b).toString("hex")),
    replayProtector: fc.oneof(fc.record({ type: fc.constant("nonce" as const), value: u64 }), fc.record({ type: fc.constant("sequence_number" as const), value: u64 })),
  });
const pages = fc.uint8Array({ minLength: 32, maxLength: 32 }).chain((sender) => fc.array(summary(sender), { maxLength: 150 }));

describe("summaries pages", () => {
  it("JSON: each summary as the reference prints it, the replay protector tagged by its kind", () => {
    fc.assert(
      fc.property(pages, (rows: TransactionSummary[]) => {
        const objects = rows.map((s) => ({
          sender: formatAddress(s.sender),
          version: s.version.toString(),
          transaction_hash: `0x${s.hashHex}`,
          replay_protector:
            s.replayProtector.type === "nonce"
              ? { type: "nonce", nonce: s.replayProtector.value.toString() }
              : { type: "sequence_number", sequence_number: s.replayProtector.value.toString() },
        }));
        expect(JSON.parse(summariesJson(rows))).toEqual(objects);
      }),
    );
  });

  it("BCS: byte for byte what the BCS library writes", () => {
    fc.assert(
      fc.property(pages, (rows: TransactionSummary[]) => {
        const expected = bcs
          .vector(summaryBcs)
          .serialize(
            rows.map((s) => ({
              V1: {
                sender: Array.from(s.sender),
                version: s.version,
                transaction_hash: Buffer.from(s.hashHex, "hex"),
                replay_protector: s.replayProtector.type === "nonce" ? { Nonce: s.replayProtector.value } : { SequenceNumber: s.replayProtector.value },
              },
            })),
          )
          .toBytes();
        expect(Buffer.from(summariesBcs(rows)).equals(Buffer.from(expected))).toBe(true);
      }),
    );
  });
});
