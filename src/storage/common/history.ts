/**
 * The stored form of the transactions themselves (docs/decisions.md §20), the same in both
 * backends: each committed transaction's REST JSON text as the source gave it, kept in chunks of
 * consecutive versions of one block, each chunk compressed whole (node:zlib: DEFLATE, or zstd for a
 * large chunk).
 *
 * One transaction's JSON repeats its neighbours' field names, addresses and types far more than it
 * repeats itself: a chunk of about 16 KiB of text compresses several times better than each
 * transaction alone and costs a fraction of the calls, while a read of one version inflates no
 * more than that chunk (bench/RESULTS.md, "History").
 *
 * The first byte of a chunk says how the rest is stored, so stored chunks stay readable whatever is
 * added later: append codes, never change one.
 * - `DEFLATE_LINES` (1): raw DEFLATE (node:zlib) of the texts joined by `\n`. Compact JSON never
 *   holds a raw newline (JSON escapes it inside strings), so the lines are the texts.
 * - `ZSTD_LINES` (2): the same lines in zstd (node:zlib), for a chunk of `ZSTD_FROM` bytes or more:
 *   large texts (a module publication, a genesis) are mostly bytecode hex, which zstd packs a
 *   quarter smaller than DEFLATE and several times faster both ways, while on a chunk of ordinary
 *   transactions the two pack alike and DEFLATE unpacks in less time a call (bench/RESULTS.md, "History").
 */
import { constants, deflateRawSync, inflateRawSync, zstdCompressSync, zstdDecompressSync } from "node:zlib";
import type { HistoryChunk, TxnKind, TxnWrite } from "../contracts/writer.js";

const DEFLATE_LINES = 1;
const ZSTD_LINES = 2;
const NEWLINE = 0x0a;
/**
 * A DEFLATE chunk's text is about `CHUNK_TEXT_BYTES` and below `ZSTD_FROM`: inflated into one
 * buffer of 32 KiB it mostly comes back as that buffer, instead of node:zlib's 16 KiB pieces joined
 * by a copy: fewer bytes allocated outside the heap a read, so fewer collections (bench/RESULTS.md,
 * "A chunk inflated into one buffer"). A text is a view into it: one kept long is copied (the feed).
 */
const INFLATE_INTO_ONE = { chunkSize: 32 * 1024 };

/** A chunk of this many bytes of text or more is packed with zstd. */
export const ZSTD_FROM = 64 * 1024;
const ZSTD_LEVEL_1 = { params: { [constants.ZSTD_c_compressionLevel]: 1 } };

/** A chunk closes once its texts reach this many bytes (a single larger text is a chunk of its own). */
export const CHUNK_TEXT_BYTES = 16 * 1024;

/**
 * The chunks of consecutive transactions (a block's, or a parsed batch's), in version order: runs of
 * consecutive transactions that carry their text, cut at `CHUNK_TEXT_BYTES` and before each
 * transaction that starts a block (so that a chunk never spans two). A transaction without text (a
 * synthetic row of a test or benchmark) is in no chunk: its version has no history kept, and
 * nothing is made up for it.
 */
export function historyChunks(transactions: readonly TxnWrite[]): HistoryChunk[] {
  const chunks: HistoryChunk[] = [];
  let texts: string[] = [];
  let first = 0n;
  let length = 0;
  const close = () => {
    if (texts.length === 0) return;
    chunks.push({ firstVersion: first, lastVersion: first + BigInt(texts.length - 1), body: packJoined(Buffer.from(texts.join("\n"), "utf8")) });
    texts = [];
    length = 0;
  };
  let expected: bigint | null = null;
  for (const t of transactions) {
    if (t.json === undefined || (expected !== null && t.version !== expected) || BLOCK_STARTS.has(t.kind)) close();
    expected = t.version + 1n;
    if (t.json === undefined) continue;
    if (texts.length === 0) first = t.version;
    texts.push(t.json);
    // Characters, not bytes: a chunk of mostly ASCII JSON is cut about where its bytes reach the mark.
    length += t.json.length + 1;
    if (length >= CHUNK_TEXT_BYTES) close();
  }
  close();
  return chunks;
}

/** The kinds of transaction that start a block. */
const BLOCK_STARTS: ReadonlySet<TxnKind> = new Set(["genesis_transaction", "block_metadata_transaction"]);

/** The stored form of texts already joined by newlines. */
function packJoined(joined: Buffer): Buffer {
  // Level 1 of either: the larger levels save a few percent of the bytes for about half again the
  // CPU of a commit (bench/RESULTS.md, "History").
  const zstd = joined.length >= ZSTD_FROM;
  const packed = zstd ? zstdCompressSync(joined, ZSTD_LEVEL_1) : deflateRawSync(joined, { level: 1 });
  const out = Buffer.allocUnsafe(packed.length + 1);
  out[0] = zstd ? ZSTD_LINES : DEFLATE_LINES;
  packed.copy(out, 1);
  return out;
}

/**
 * The texts of a stored chunk, in version order (views into one inflated buffer): all of them, or
 * the `count` from the `from`-th on (fewer where the chunk ends), with no view made for the others.
 */
export function unpackTexts(body: Uint8Array, from = 0, count = Number.POSITIVE_INFINITY): Buffer[] {
  const code = body[0];
  if (code !== DEFLATE_LINES && code !== ZSTD_LINES) throw new Error(`transaction history chunk of unknown format ${code}`);
  const joined = code === ZSTD_LINES ? zstdDecompressSync(body.subarray(1)) : inflateRawSync(body.subarray(1), INFLATE_INTO_ONE);
  const out: Buffer[] = [];
  let at = 0;
  for (let line = 0; out.length < count; line++) {
    const end = joined.indexOf(NEWLINE, at);
    if (line >= from) out.push(joined.subarray(at, end < 0 ? joined.length : end));
    if (end < 0) break;
    at = end + 1;
  }
  return out;
}

/** The last version and the count of a read of `limit` versions from `start` on a ledger ending at `ledgerVersion`, or null: none. */
export function historyRange(start: bigint, limit: number, ledgerVersion: bigint): { end: bigint; count: number } | null {
  if (limit <= 0 || start > ledgerVersion) return null;
  const end = start + BigInt(limit - 1) < ledgerVersion ? start + BigInt(limit - 1) : ledgerVersion;
  return { end, count: Number(end - start) + 1 };
}

/** A stored chunk as the reads meet it: its first version and its packed texts. */
export interface StoredChunk {
  firstVersion: bigint;
  body: Uint8Array;
}

/**
 * The texts of versions `start`, `start + 1`, … up to `limit` of them, from the chunks that cover
 * them, in version order: it stops at the first version no chunk covers (not kept, or past the
 * ledger), so an empty list says `start` itself is not kept. It also stops, without unpacking
 * another chunk, once the texts reach `maxBytes` (the first text always comes, whatever its size).
 */
export function textsFrom(chunks: readonly StoredChunk[], start: bigint, limit: number, maxBytes = Number.POSITIVE_INFINITY): Uint8Array[] {
  const out: Uint8Array[] = [];
  let next = start;
  let bytes = 0;
  for (const c of chunks) {
    if (out.length >= limit || bytes >= maxBytes) break;
    if (c.firstVersion > next) break;
    const skip = Number(next - c.firstVersion);
    const texts = unpackTexts(c.body, skip, limit - out.length);
    for (const t of texts) {
      if (out.length > 0 && bytes + t.length > maxBytes) return out;
      out.push(t);
      bytes += t.length;
    }
    next += BigInt(texts.length);
  }
  return out;
}

/**
 * The texts of `versions` (any order, any gaps, repeats allowed: several events of one
 * transaction), each from the chunk `chunkOf` finds for it (the newest starting at or below it):
 * a chunk is unpacked once however many of the versions it holds. Null where no chunk covers a
 * version. Cut before the first whose text would bring the distinct texts past `maxBytes` (never
 * before the first): what is unpacked stays within the budget.
 */
export function textsOfVersions(
  versions: readonly bigint[],
  chunkOf: (version: bigint) => StoredChunk | null,
  maxBytes = Number.POSITIVE_INFINITY,
): Array<Uint8Array | null> {
  const unpacked = new Map<bigint, Uint8Array[]>();
  const counted = new Set<bigint>();
  const out: Array<Uint8Array | null> = [];
  let bytes = 0;
  for (const v of versions) {
    const c = chunkOf(v);
    if (c === null) {
      out.push(null);
      continue;
    }
    let texts = unpacked.get(c.firstVersion);
    if (texts === undefined) {
      if (out.length > 0 && bytes >= maxBytes) break;
      texts = unpackTexts(c.body);
      unpacked.set(c.firstVersion, texts);
    }
    const text = texts[Number(v - c.firstVersion)] ?? null;
    if (text !== null && !counted.has(v)) {
      if (out.length > 0 && bytes + text.length > maxBytes) break;
      counted.add(v);
      bytes += text.length;
    }
    out.push(text);
  }
  return out;
}
