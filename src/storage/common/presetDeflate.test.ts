import { deflateRawSync, inflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { PresetDeflater } from "./presetDeflate.js";

const fixed = Buffer.from('{"authentication_key":"0x","sequence_number":"{"coin":{"value":"', "latin1");
const tail = Buffer.from(`"0x${"ab".repeat(32)}"`, "latin1");
const inflate = (packed: Uint8Array, t: Uint8Array, windowBits = 10) =>
  inflateRawSync(packed, { windowBits, dictionary: Buffer.concat([fixed, t]) }).toString("latin1");

/** A deterministic generator: the same inputs on every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x80000000;
  };
}

describe("PresetDeflater", () => {
  it("writes a stream zlib inflates back to the input with the same dictionary", () => {
    const d = new PresetDeflater(fixed, 1024);
    const inputs = [
      `{"authentication_key":"0x${"ab".repeat(32)}","sequence_number":"4990","guid_creation_num":"0"}`,
      '{"coin":{"value":"123456789"},"frozen":false}',
      "a".repeat(600),
      "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc",
      `${"0123456789".repeat(30)}${"x".repeat(300)}${"0123456789".repeat(30)}`,
    ];
    for (const input of inputs) {
      const packed = d.deflate(tail, Buffer.from(input, "latin1"));
      expect(packed).not.toBeNull();
      expect(inflate(packed!, tail)).toBe(input);
    }
  });

  it("uses the dictionary: a value made of it packs no larger than zlib's best level packs it", () => {
    const d = new PresetDeflater(fixed, 1024);
    const input = `{"authentication_key":"0x${"ab".repeat(32)}","sequence_number":"`;
    const packed = d.deflate(tail, Buffer.from(input, "latin1"))!;
    const zlibs = deflateRawSync(input, { windowBits: 10, level: 9, dictionary: Buffer.concat([fixed, tail]) });
    expect(packed.length).toBeLessThanOrEqual(zlibs.length);
    expect(packed.length).toBeLessThan(input.length / 8);
    expect(inflate(packed, tail)).toBe(input);
  });

  it("gives null when the stream would not be shorter than the input", () => {
    const d = new PresetDeflater(fixed, 1024);
    expect(d.deflate(tail, Buffer.from("1"))).toBeNull();
    expect(d.deflate(tail, Buffer.alloc(0))).toBeNull();
  });

  it("keeps every match within the reader's window, however long the value", () => {
    const d = new PresetDeflater(fixed, 1024);
    const next = random(7);
    // Repeats 900–1,200 bytes apart: a deflater with a larger window would reach them.
    const block = Buffer.from(Array.from({ length: 1100 }, () => 97 + Math.floor(next() * 26)));
    const input = Buffer.concat([block, block, block, Buffer.from("end")]);
    const packed = d.deflate(tail, input)!;
    expect(inflate(packed, tail, 10)).toBe(input.toString("latin1"));
  });

  it("round-trips random values of every size and owner, one deflater for all (its state reset each time)", () => {
    const d = new PresetDeflater(fixed, 1024);
    const next = random(1);
    const alphabet = '{}":,0123456789abcdefx_';
    let packedCount = 0;
    const wrong: number[] = [];
    for (let n = 0; n < 2_000; n++) {
      const owner = Buffer.from(Array.from({ length: 32 }, () => Math.floor(next() * 256)));
      const t = Buffer.from(`"0x${owner.toString("hex")}"`, "latin1");
      const size = Math.floor(next() ** 3 * 5_000);
      const chars: string[] = [];
      while (chars.length < size) {
        const r = next();
        if (r < 0.1) chars.push(`"0x${owner.toString("hex")}"`);
        else if (r < 0.2) chars.push('"sequence_number":"');
        else chars.push(alphabet[Math.floor(next() * alphabet.length)]!);
      }
      const input = Buffer.from(chars.join("").slice(0, size), "latin1");
      const packed = d.deflate(t, input);
      if (packed === null) continue;
      packedCount++;
      if (packed.length >= input.length || inflate(packed, t) !== input.toString("latin1")) wrong.push(n);
    }
    expect(wrong).toEqual([]);
    expect(packedCount).toBeGreaterThan(1_500);
  });
});
