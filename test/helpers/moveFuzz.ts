/**
 * Inputs for the Move decoder's property tests (src/move/fuzz*.test.ts): real modules to mutate, and
 * the mutations, as fast-check arbitraries and as a plain function that replays one.
 */
import fc from "fast-check";
import { buildModule } from "../../src/move/builder.js";
import { genesisModules, guidV9 } from "./moveFixtures.js";

/** Real modules of several bytecode versions, the last one built with every newer feature. */
export const seeds: Uint8Array[] = [
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

export const MAGIC = [0xa1, 0x1c, 0xeb, 0x0b];

/** A random edit of a real module: overwrite, insert or delete bytes, or poke a ULEB-sized value. */
export const mutation = fc.record({
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

export function mutate({ seed, edits }: { seed: number; edits: { kind: string; at: number; byte: number }[] }): Uint8Array {
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

/**
 * Found by the mutation property: 0xff 0xff 0xff 0x0f as a vector length inside metadata_v1 made the
 * stock @mysten/bcs reader preallocate a 268M-slot array (about 2 GB).
 */
export const hugeMetadataVectorLength = (): Uint8Array => mutate({ seed: seeds.length - 1, edits: [{ kind: "big", at: 1397593963, byte: 13 }] });
