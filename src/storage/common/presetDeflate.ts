/**
 * Raw DEFLATE (RFC 1951) of a small value with a preset dictionary, written in JavaScript: one
 * block of fixed Huffman codes (RFC 1951 §3.2.6), matches found by hash chains over the dictionary
 * and the value (zlib's lazy matching), distances within the reader's window. Any inflater given
 * the same dictionary reads it back (`inflateRawSync` with `windowBits` of the window).
 *
 * node:zlib builds and closes a stream, and feeds the whole dictionary through it, for every
 * synchronous call; for values of a hundred bytes that set-up was most of packing. Here the
 * dictionary's fixed part is hashed once (`constructor`), and each value costs its own bytes only.
 * The bytes differ from zlib's (a DEFLATE stream is not unique), never what they inflate to.
 */

const MIN_MATCH = 3;
const MAX_MATCH = 258;
const HASH_BITS = 12;
const HASH_MASK = (1 << HASH_BITS) - 1;
/** Chain links followed for one match: zlib's level 6 follows up to 128, with a shorter window. */
const MAX_CHAIN = 64;
/** A match this long is taken without looking for a longer one at the next byte (zlib's `max_lazy`). */
const MAX_LAZY = 16;
/** A match this long ends the search (zlib's `nice_length` at level 6). */
const NICE_MATCH = 128;
const END_OF_BLOCK = 256;
/** The farthest a DEFLATE match may reach back (RFC 1951). */
const MAX_WINDOW = 32_768;

/** Length symbols 257–285: the shortest length of each and its extra bits (RFC 1951 §3.2.5). */
const LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
/** Distance codes 0–29: the shortest distance of each and its extra bits. */
const DIST_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];

const reverseBits = (code: number, bits: number): number => {
  let r = 0;
  for (let i = 0; i < bits; i++) r |= ((code >> i) & 1) << (bits - 1 - i);
  return r;
};

/** The fixed literal/length code of each symbol 0–287, bit-reversed for an LSB-first stream, and its length. */
const LITERAL_CODE = new Uint16Array(288);
const LITERAL_BITS = new Uint8Array(288);
for (let s = 0; s < 288; s++) {
  const [code, bits] = s < 144 ? [0x30 + s, 8] : s < 256 ? [0x190 + s - 144, 9] : s < 280 ? [s - 256, 7] : [0xc0 + s - 280, 8];
  LITERAL_CODE[s] = reverseBits(code, bits);
  LITERAL_BITS[s] = bits;
}
/** The distance code of each distance up to `MAX_WINDOW`, and its five bits reversed. */
const DIST_CODE = new Uint8Array(MAX_WINDOW + 1);
for (let code = 0, d = 1; d < DIST_CODE.length; d++) {
  if (DIST_BASE[code + 1] !== undefined && d >= DIST_BASE[code + 1]!) code++;
  DIST_CODE[d] = code;
}
const DIST_CODE_REVERSED = Uint8Array.from(DIST_BASE, (_, code) => reverseBits(code, 5));
/** For each match length 3–258: its symbol's code, length and extra bits, as one stream of bits. */
const LENGTH_CODE = new Uint32Array(MAX_MATCH + 1);
const LENGTH_BITS = new Uint8Array(MAX_MATCH + 1);
for (let i = 0; i < LENGTH_BASE.length; i++) {
  const next = LENGTH_BASE[i + 1] ?? MAX_MATCH + 1;
  const top = i === LENGTH_BASE.length - 2 ? MAX_MATCH : next; // 227–257 use symbol 284; 258 has its own
  for (let len = LENGTH_BASE[i]!; len < top; len++) {
    const sym = 257 + i;
    LENGTH_CODE[len] = LITERAL_CODE[sym]! | ((len - LENGTH_BASE[i]!) << LITERAL_BITS[sym]!);
    LENGTH_BITS[len] = LITERAL_BITS[sym]! + LENGTH_EXTRA[i]!;
  }
}

export class PresetDeflater {
  /** The dictionary, then its per-value tail, then the value: matches look back across all three. */
  private data: Uint8Array;
  private out: Uint8Array;
  /** Newest position of each hash, and for each position the one before it with the same hash. */
  private readonly head = new Int32Array(1 << HASH_BITS);
  /** `head` after the fixed part of the dictionary: copied in for every value. */
  private readonly fixedHead = new Int32Array(1 << HASH_BITS);
  private prev: Int32Array;
  private readonly fixedLength: number;
  private bitBuffer = 0;
  private bitCount = 0;
  private outAt = 0;

  /**
   * @param fixed the dictionary's first bytes, the same for every value
   * @param window the reader's window in bytes (`1 << windowBits`): no match reaches further back
   */
  constructor(
    fixed: Uint8Array,
    private readonly window: number,
  ) {
    if (window > MAX_WINDOW || window < MIN_MATCH) throw new RangeError(`window ${window} out of range`);
    this.fixedLength = fixed.length;
    this.data = new Uint8Array(fixed.length + 1024);
    this.data.set(fixed);
    this.prev = new Int32Array(this.data.length);
    this.out = new Uint8Array(256);
    this.head.fill(-1);
    // Only the windows of three bytes wholly inside the fixed part: the ones reaching into the
    // tail are hashed with each value.
    for (let i = 0; i + MIN_MATCH <= fixed.length; i++) this.insert(i);
    this.fixedHead.set(this.head);
  }

  /**
   * The raw DEFLATE stream of `input` with the dictionary `fixed` + `tail` (a view of this object's
   * buffer, valid until the next call), or null when it would not be shorter than `input`.
   */
  deflate(tail: Uint8Array, input: Uint8Array): Uint8Array | null {
    const start = this.fixedLength + tail.length;
    const end = start + input.length;
    if (this.data.length < end) this.grow(end);
    const data = this.data;
    data.set(tail, this.fixedLength);
    data.set(input, start);
    this.head.set(this.fixedHead);
    // Worst case of fixed codes: 9 bits a byte, the block's header and its end.
    const limit = input.length;
    if (this.out.length < limit + 8) this.out = new Uint8Array(Math.max(limit + 8, this.out.length * 2));
    this.outAt = 0;
    this.bitBuffer = 0;
    this.bitCount = 0;
    this.bits(0b011, 3); // BFINAL = 1, BTYPE = 01 (fixed Huffman codes)

    for (let i = Math.max(0, this.fixedLength - MIN_MATCH + 1); i < start; i++) this.insert(i);
    let prevLength = 0;
    let prevDistance = 0;
    let literalPending = false;
    let i = start;
    while (i < end) {
      let length = 0;
      let distance = 0;
      if (prevLength < MAX_LAZY && i + MIN_MATCH <= end) {
        const found = this.longestMatch(i, end);
        length = found & 0x1ff;
        distance = found >>> 9;
      }
      if (i + MIN_MATCH <= end) this.insert(i);
      if (prevLength >= MIN_MATCH && length <= prevLength) {
        // The match found at the byte before is at least as long: take it.
        this.match(prevLength, prevDistance);
        const matchEnd = i - 1 + prevLength;
        for (let k = i + 1; k < matchEnd && k + MIN_MATCH <= end; k++) this.insert(k);
        i = matchEnd;
        prevLength = 0;
        literalPending = false;
      } else {
        if (literalPending) this.literal(data[i - 1]!);
        literalPending = true;
        prevLength = length;
        prevDistance = distance;
        i++;
      }
      if (this.outAt >= limit) return null;
    }
    if (literalPending) this.literal(data[end - 1]!);
    this.bits(LITERAL_CODE[END_OF_BLOCK]!, LITERAL_BITS[END_OF_BLOCK]!);
    if (this.bitCount > 0) this.out[this.outAt++] = this.bitBuffer & 0xff;
    return this.outAt < limit ? this.out.subarray(0, this.outAt) : null;
  }

  /** The longest match for position `i` among earlier positions in the window, as length | distance << 9. */
  private longestMatch(i: number, end: number): number {
    const data = this.data;
    const lowest = Math.max(0, i - this.window);
    const maxLength = Math.min(MAX_MATCH, end - i);
    let best = MIN_MATCH - 1;
    let bestDistance = 0;
    let chain = MAX_CHAIN;
    for (let p = this.head[this.hash(i)]!; p >= lowest && chain-- > 0; p = this.prev[p]!) {
      if (data[p + best] !== data[i + best] || data[p] !== data[i] || data[p + 1] !== data[i + 1]) continue;
      let length = 2;
      while (length < maxLength && data[p + length] === data[i + length]) length++;
      if (length > best) {
        best = length;
        bestDistance = i - p;
        if (length >= NICE_MATCH || length >= maxLength) break;
      }
    }
    return best >= MIN_MATCH ? best | (bestDistance << 9) : 0;
  }

  private hash(i: number): number {
    const d = this.data;
    return ((d[i]! << 8) ^ (d[i + 1]! << 4) ^ d[i + 2]!) & HASH_MASK;
  }

  private insert(i: number): void {
    const h = this.hash(i);
    this.prev[i] = this.head[h]!;
    this.head[h] = i;
  }

  private literal(byte: number): void {
    this.bits(LITERAL_CODE[byte]!, LITERAL_BITS[byte]!);
  }

  private match(length: number, distance: number): void {
    this.bits(LENGTH_CODE[length]!, LENGTH_BITS[length]!);
    const code = DIST_CODE[distance]!;
    // The distance code's five bits (fixed, bit-reversed), then its extra bits.
    this.bits(DIST_CODE_REVERSED[code]! | ((distance - DIST_BASE[code]!) << 5), 5 + DIST_EXTRA[code]!);
  }

  /** Appends the low `count` bits of `value` (at most 24), least significant first. */
  private bits(value: number, count: number): void {
    this.bitBuffer |= value << this.bitCount;
    this.bitCount += count;
    while (this.bitCount >= 8) {
      this.out[this.outAt++] = this.bitBuffer & 0xff;
      this.bitBuffer >>>= 8;
      this.bitCount -= 8;
    }
  }

  private grow(end: number): void {
    const data = new Uint8Array(Math.max(end, this.data.length * 2));
    data.set(this.data.subarray(0, this.fixedLength));
    this.data = data;
    const prev = new Int32Array(data.length);
    prev.set(this.prev.subarray(0, this.fixedLength));
    this.prev = prev;
  }
}
