import { bcs } from "@mysten/bcs";

/** ULEB128, as BCS writes lengths and the Move format its indices. */
const ULEB = bcs.uleb128();

/** A growable byte buffer for the Move binary format. */
export class Writer {
  private buf = new Uint8Array(256);
  private len = 0;

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  /** Number of bytes written. */
  get length(): number {
    return this.len;
  }

  u8(v: number): this {
    this.reserve(1);
    this.buf[this.len++] = v & 0xff;
    return this;
  }

  u32(v: number): this {
    this.reserve(4);
    for (let i = 0; i < 4; i++) this.buf[this.len++] = Math.floor(v / 2 ** (8 * i)) & 0xff;
    return this;
  }

  /** Canonical ULEB128 of a non-negative safe integer. */
  uleb(v: number): this {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`ULEB value ${v} is not a non-negative integer`);
    return this.bytes(ULEB.serialize(v).toBytes());
  }

  bytes(b: Uint8Array | readonly number[]): this {
    this.reserve(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }

  /** A copy of the written bytes. */
  toBytes(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}
