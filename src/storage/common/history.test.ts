import { describe, expect, it } from "vitest";
import type { TxnWrite } from "../contracts/writer.js";
import { CHUNK_TEXT_BYTES, historyChunks, textsFrom, unpackTexts, ZSTD_FROM } from "./history.js";

/** A compact JSON text of about `bytes` characters, its own for `version`. */
const text = (version: number, bytes: number) => JSON.stringify({ version: String(version), payload: `0x${"ab".repeat(Math.max(0, bytes >> 1))}${version.toString(16)}` });
const txn = (version: number, bytes: number): TxnWrite => ({ version: BigInt(version), kind: "user_transaction", hash: new Uint8Array(32), user: null, json: text(version, bytes) });

describe("transaction history chunks", () => {
  it("unpack to their texts byte for byte in every size: a chunk of small texts, one past the 32 KiB inflate buffer, one packed with zstd", () => {
    const sizes = [...Array.from({ length: 40 }, () => 900), 40 * 1024, ZSTD_FROM * 2, 700];
    const txns = sizes.map((bytes, v) => txn(v, bytes));
    const chunks = historyChunks(txns);
    const inflated = (c: (typeof chunks)[number]) => unpackTexts(c.body).reduce((n, t) => n + t.length + 1, 0) - 1;
    expect(chunks.some((c) => c.body[0] === 2)).toBe(true);
    expect(chunks.some((c) => c.body[0] === 1 && inflated(c) > 32 * 1024)).toBe(true);
    expect(chunks.some((c) => c.body[0] === 1 && inflated(c) >= CHUNK_TEXT_BYTES && inflated(c) < 32 * 1024)).toBe(true);
    const unpacked = chunks.flatMap((c) => unpackTexts(c.body).map((t) => Buffer.from(t).toString("utf8")));
    expect(unpacked).toEqual(txns.map((t) => t.json));
    // Any run of them, across chunks, from the chunks that cover it.
    const stored = chunks.map((c) => ({ firstVersion: c.firstVersion, body: c.body }));
    const run = textsFrom(stored, 17n, 30).map((t) => Buffer.from(t).toString("utf8"));
    expect(run).toEqual(txns.slice(17, 43).map((t) => t.json));
  });
});
