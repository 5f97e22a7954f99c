/**
 * Property tests: whatever the bytes, `moduleAbi` returns null or an ABI and never throws. 12,000
 * generated cases in total, seeded (`TEST_SEED=n` repeats a run; the seed is in each test's name
 * and fast-check prints it with a counterexample). No timings: a runaway allocation is caught by
 * the peak memory of a process of its own instead (`fuzz.integration.test.ts`).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { moduleAbi } from "./abi.js";
import { hugeMetadataVectorLength, MAGIC, mutate, mutation } from "../../test/helpers/moveFuzz.js";
import { testSeed } from "../../test/helpers/seed.js";

const SEED = testSeed(5_2026);

/** Runs the decoder and checks the outcome: null, or a named ABI that survives a JSON round trip. */
function check(input: Uint8Array): boolean {
  const abi = moduleAbi(input);
  expect(abi === null || typeof abi.name === "string", "null or an ABI with a name").toBe(true);
  expect(abi === null ? null : JSON.parse(JSON.stringify(abi))).toEqual(abi);
  return true;
}

describe("decoder properties", () => {
  it(`random bytes: null, no throw (3,000 cases, seed ${SEED})`, () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), (b) => check(b)), { numRuns: 3000, seed: SEED });
  });

  it(`random bytes after a valid header: null or ABI, no throw (3,000 cases, seed ${SEED})`, () => {
    const header = fc.record({
      version: fc.constantFrom(5, 6, 7, 8, 9, 10, 11, 0x0a000007, 0x0a000009),
      body: fc.uint8Array({ maxLength: 512 }),
    });
    fc.assert(
      fc.property(header, ({ version, body }) => {
        const v = [version & 0xff, (version >>> 8) & 0xff, (version >>> 16) & 0xff, version >>> 24];
        return check(Uint8Array.from([...MAGIC, ...v, ...body]));
      }),
      { numRuns: 3000, seed: SEED },
    );
  });

  it(`random mutations of real modules: null or ABI, no throw (6,000 cases, seed ${SEED})`, () => {
    fc.assert(fc.property(mutation, (m) => check(mutate(m))), { numRuns: 6000, seed: SEED });
  });

  it("regression: a huge BCS vector length in view metadata is refused before allocating", () => {
    const abi = moduleAbi(hugeMetadataVectorLength());
    expect(abi?.exposed_functions.every((f) => !f.is_view)).toBe(true);
  });

  it("a large hostile input neither throws nor overflows the stack: 1 MB of nested vector tokens and of zero bytes", () => {
    const sig = new Uint8Array(1 << 20).fill(0x0a);
    sig.set([...MAGIC, 6, 0, 0, 0, 1, 0x05, 0, 0x80, 0x80, 0x40]);
    check(sig);
    check(new Uint8Array(1 << 20));
  });
});
