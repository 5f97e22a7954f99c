/**
 * Property tests: whatever the bytes, `moduleAbi` returns null or an ABI, never throws, and
 * finishes in time linear in the input. 12,000 generated cases in total.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { abiJson, moduleAbi } from "./abi.js";
import { buildModule } from "./builder.js";
import { genesisModules, guidV9 } from "../../test/helpers/moveFixtures.js";

/** Runs the decoder and checks the outcome shape and the time taken. */
function check(input: Uint8Array): boolean {
  const start = performance.now();
  const abi = moduleAbi(input);
  const ms = performance.now() - start;
  if (ms > 500) throw new Error(`decode of ${input.length} bytes took ${ms.toFixed(1)} ms`);
  if (abi !== null) {
    expect(typeof abi.name).toBe("string");
    expect(JSON.parse(abiJson(input))).toEqual(abi);
  }
  return true;
}

const seeds: Uint8Array[] = [
  guidV9().bytecode,
  ...genesisModules().slice(0, 8).map((m) => m.bytecode),
  buildModule(
    {
      address: "0xcafe",
      name: "seed",
      friends: ["0x1::coin"],
      structs: [
        { name: "S", abilities: ["key"], typeParams: [{ phantom: true }], fields: [{ name: "v", type: "vector<0x1::string::String>" }] },
        { name: "E", variants: [{ name: "A" }, { name: "B", fields: [{ name: "f", type: "|u64|bool" }] }], event: true },
      ],
      functions: [
        { name: "v", view: true, typeParams: [{ constraints: ["copy"] }], params: ["&mut 0xcafe::seed::S<T0>", "i64"], returns: ["u64"] },
        { name: "e", entry: true, visibility: "private", params: ["&signer"] },
      ],
    },
    { version: 9 },
  ),
];

const MAGIC = [0xa1, 0x1c, 0xeb, 0x0b];

/** A random edit of a real module: overwrite, insert or delete bytes, or poke a ULEB-sized value. */
const mutation = fc.record({
  seed: fc.nat({ max: seeds.length - 1 }),
  edits: fc.array(
    fc.record({
      kind: fc.constantFrom("set", "insert", "delete", "big"),
      at: fc.nat(),
      byte: fc.nat({ max: 255 }),
    }),
    { minLength: 1, maxLength: 4 },
  ),
});

function mutate({ seed, edits }: { seed: number; edits: { kind: string; at: number; byte: number }[] }): Uint8Array {
  const b = [...seeds[seed]!];
  for (const e of edits) {
    const at = e.at % (b.length + 1);
    if (e.kind === "set" && at < b.length) b[at] = e.byte;
    else if (e.kind === "insert") b.splice(at, 0, e.byte);
    else if (e.kind === "delete") b.splice(at, 1);
    else if (e.kind === "big") b.splice(at, 1, 0xff, 0xff, 0xff, 0x0f); // a huge count or index
  }
  return Uint8Array.from(b);
}

describe("decoder properties", () => {
  it("random bytes: null, no throw (3,000 cases)", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), (b) => check(b)), { numRuns: 3000 });
  });

  it("random bytes after a valid header: null or ABI, no throw (3,000 cases)", () => {
    const header = fc.record({
      version: fc.constantFrom(5, 6, 7, 8, 9, 10, 11, 0x0a000007, 0x0a000009),
      body: fc.uint8Array({ maxLength: 512 }),
    });
    fc.assert(
      fc.property(header, ({ version, body }) => {
        const v = [version & 0xff, (version >>> 8) & 0xff, (version >>> 16) & 0xff, version >>> 24];
        return check(Uint8Array.from([...MAGIC, ...v, ...body]));
      }),
      { numRuns: 3000 },
    );
  });

  it("random mutations of real modules: null or ABI, no throw (6,000 cases)", () => {
    fc.assert(fc.property(mutation, (m) => check(mutate(m))), { numRuns: 6000 });
  });

  it("regression: a huge BCS vector length in view metadata is refused before allocating", () => {
    // Found by the mutation property: 0xff 0xff 0xff 0x0f as a vector length inside metadata_v1
    // made the stock @mysten/bcs reader preallocate a 268M-slot array (150 ms, ~2 GB).
    const input = mutate({ seed: seeds.length - 1, edits: [{ kind: "big", at: 1397593963, byte: 13 }] });
    const start = performance.now();
    const abi = moduleAbi(input);
    expect(performance.now() - start).toBeLessThan(50);
    expect(abi?.exposed_functions.every((f) => !f.is_view)).toBe(true);
  });

  it("a large hostile input stays linear: 1 MB of nested vector tokens and of zero bytes", () => {
    const sig = new Uint8Array(1 << 20).fill(0x0a);
    sig.set([...MAGIC, 6, 0, 0, 0, 1, 0x05, 0, 0x80, 0x80, 0x40]);
    check(sig);
    check(new Uint8Array(1 << 20));
  });
});
