/**
 * A bounded little-endian byte reader for the Move binary format. Every read checks the bound
 * first; any failure throws the single {@link MALFORMED} sentinel, which the decoder turns into
 * `null` at its one entry point (no exception ever leaves `decodeModule`).
 */

/** Thrown (never exported past the decoder) on any malformed input. */
export const MALFORMED: Error = new Error("malformed Move binary");

/** Fails the current decode. */
export function fail(): never {
  throw MALFORMED;
}

/** A cursor over `buf[pos..end)`. */
export class Reader {
  constructor(
    readonly buf: Uint8Array,
    public pos: number,
    public end: number,
  ) {}

  /** True once the cursor has reached the end of its window. */
  atEnd(): boolean {
    return this.pos >= this.end;
  }

  /** One raw byte. */
  u8(): number {
    if (this.pos >= this.end) fail();
    return this.buf[this.pos++]!;
  }

  /** Skips `n` raw bytes (fixed-width operands). */
  skip(n: number): void {
    if (this.end - this.pos < n) fail();
    this.pos += n;
  }

  /** A little-endian u32. */
  u32(): number {
    if (this.end - this.pos < 4) fail();
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 4;
    return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16)) + b[p + 3]! * 0x1000000;
  }

  /**
   * A ULEB128 value that must be at most `max` (as `read_uleb_internal`): rejects truncation,
   * u64 overflow and the non-canonical form (a final zero byte after at least one byte).
   * Values above 2^53 lose precision, which is harmless: every `max` we pass is far below that,
   * except {@link ulebU64}, which only needs the bytes consumed.
   */
  uleb(max: number): number {
    const b = this.buf;
    let p = this.pos;
    if (p >= this.end) fail();
    const first = b[p++]!;
    if (first < 0x80) {
      this.pos = p;
      if (first > max) fail();
      return first;
    }
    let value = first & 0x7f;
    let mul = 128;
    let shift = 7;
    for (;;) {
      if (p >= this.end) fail();
      const byte = b[p++]!;
      const cur = byte & 0x7f;
      if (shift === 63 && cur > 1) fail();
      value += cur * mul;
      if (byte < 0x80) {
        if (byte === 0) fail();
        break;
      }
      shift += 7;
      if (shift > 63) fail();
      mul *= 128;
    }
    this.pos = p;
    if (value > max) fail();
    return value;
  }

  /** A ULEB128 anywhere in the u64 range (closure masks); the value itself is not needed. */
  ulebU64(): void {
    this.uleb(Number.MAX_VALUE);
  }
}
