/**
 * The read memo's keys and bounds, both backends' (they memoize the position reads at the newest
 * version, `answerMemo.ts`).
 */

/** Bounds of a store's read memo: all of it, and one entry (key and value), in bytes. */
export const MEMO_BYTES = 8 * 1024 * 1024;
export const MEMO_ENTRY_BYTES = 4 * 1024;
/** Fixed cost counted per memo entry besides its key and value bytes. */
export const MEMO_ENTRY_OVERHEAD = 64;
/** Bytes as a memo key (one char per byte); request parameters arrive as Buffers already. */
export const memoKeyOf = (b: Uint8Array): string =>
  (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)).toString("latin1");
/**
 * The memo keys of the position reads, or null for a read that is not memoized: one at an explicit
 * version, and a table key too large for an entry (read every time: its memo key is not built).
 */
export const memoKeys = {
  tableItem: (handle: Uint8Array, key: Uint8Array, version: bigint | undefined): string | null =>
    version === undefined && key.length <= MEMO_ENTRY_BYTES ? `t|${memoKeyOf(handle)}|${memoKeyOf(key)}` : null,
  modulesVersion: (address: Uint8Array, version: bigint | undefined): string | null => (version === undefined ? `m|${memoKeyOf(address)}` : null),
  summariesVersion: (sender: Uint8Array, end: bigint | undefined): string | null => (end === undefined ? `s|${memoKeyOf(sender)}` : null),
};
/** What a memo entry counts against `MEMO_BYTES`: its key, a fixed overhead, and its value's bytes. */
export const memoEntrySize = (key: string, valueBytes: number): number => key.length + MEMO_ENTRY_OVERHEAD + valueBytes;
