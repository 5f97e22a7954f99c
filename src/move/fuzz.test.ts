/**
 * Property tests: whatever the bytes, `moduleAbi` returns null or an ABI and never throws. 12,000
 * generated cases in total, seeded (`TEST_SEED=n` repeats a run; the seed is in each test's name
 * and fast-check prints it with a counterexample). No timings: a runaway allocation is caught by
 * the peak memory of a process of its own instead.
 */
import fc from "fast-check";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { moduleAbi } from "./abi.js";
import { buildModule } from "./builder.js";
import { genesisModules, guidV9 } from "../../test/helpers/moveFixtures.js";
import { testSeed } from "../../test/helpers/seed.js";

const SEED = testSeed(5_2026);

/** Runs the decoder and checks the outcome shape. */
function check(input: Uint8Array): boolean {
  const abi = moduleAbi(input);
  if (abi !== null) {
    expect(typeof abi.name).toBe("string");
    expect(JSON.parse(JSON.stringify(abi))).toEqual(abi);
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
    // Found by the mutation property: 0xff 0xff 0xff 0x0f as a vector length inside metadata_v1
    // made the stock @mysten/bcs reader preallocate a 268M-slot array (150 ms, ~2 GB).
    const input = mutate({ seed: seeds.length - 1, edits: [{ kind: "big", at: 1397593963, byte: 13 }] });
    const abi = moduleAbi(input);
    expect(abi?.exposed_functions.every((f) => !f.is_view)).toBe(true);
    // The same decode (the built dist/, as `npm test` builds it) in a process of its own, whose
    // peak memory shows any preallocation: the stock reader's array raised it by ~260 MB.
    const built = new URL("../../dist/move/abi.js", import.meta.url);
    expect(existsSync(built), `${built.pathname} is missing: run \`npm run build\` first (npm test does)`).toBe(true);
    const script = `import { moduleAbi } from ${JSON.stringify(built.href)};
      const input = Buffer.from(process.argv[1], "hex");
      const before = process.resourceUsage().maxRSS;
      const abi = moduleAbi(input);
      const grewKb = process.resourceUsage().maxRSS - before;
      console.log(JSON.stringify({ views: abi.exposed_functions.map((f) => f.is_view), grewKb }));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script, Buffer.from(input).toString("hex")], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { views: boolean[]; grewKb: number };
    expect(out.views).toEqual(abi!.exposed_functions.map((f) => f.is_view));
    expect(out.grewKb, "peak memory growth of one decode (KB)").toBeLessThan(64 * 1024);
  });

  it("a large hostile input neither throws nor overflows the stack: 1 MB of nested vector tokens and of zero bytes", () => {
    const sig = new Uint8Array(1 << 20).fill(0x0a);
    sig.set([...MAGIC, 6, 0, 0, 0, 1, 0x05, 0, 0x80, 0x80, 0x40]);
    check(sig);
    check(new Uint8Array(1 << 20));
  });
});
