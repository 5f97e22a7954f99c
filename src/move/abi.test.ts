import { describe, expect, it } from "vitest";
import { moduleAbi } from "./abi.js";
import { decodeModule } from "./decoder.js";
import { genesisModules, goldenNullAbiBytecodes, guidV9 } from "../../test/helpers/moveFixtures.js";

/** Keeps only the keys (recursively) that the expected value has: the 2022 ABI shape is a subset. */
function project(expected: unknown, actual: unknown): unknown {
  if (Array.isArray(expected) && Array.isArray(actual)) return actual.map((a, i) => project(expected[i], a));
  if (expected && typeof expected === "object" && actual && typeof actual === "object" && !Array.isArray(actual)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(expected)) out[k] = project((expected as Record<string, unknown>)[k], (actual as Record<string, unknown>)[k]);
    return out;
  }
  return actual;
}

describe("moduleAbi on real modules", () => {
  const genesis = genesisModules();

  it("finds the 63 genesis modules", () => {
    expect(genesis).toHaveLength(63);
  });

  it.each(genesis.map((m) => [m.name, m] as const))("decodes genesis %s to the ABI the node printed", (_name, m) => {
    const abi = moduleAbi(m.bytecode);
    expect(abi).not.toBeNull();
    const projected = project(m.abi, abi);
    expect(projected).toEqual(m.abi);
    // Same key order too, for the keys the 2022 shape has.
    expect(JSON.stringify(projected)).toBe(JSON.stringify(m.abi));
  });

  it("fills the current-shape fields of genesis modules: v5 has no views or events", () => {
    for (const m of genesis) {
      const abi = moduleAbi(m.bytecode)!;
      for (const f of abi.exposed_functions) expect(f.is_view).toBe(false);
      for (const s of abi.structs) {
        expect(s.is_event).toBe(false);
        expect(s.is_enum).toBe(false);
        expect(s.variants).toEqual([]);
      }
    }
  });

  it("decodes 0x1::guid v9 to exactly the current node's ABI, key order included", () => {
    const m = guidV9();
    expect(decodeModule(m.bytecode)?.version).toBe(9);
    expect(JSON.stringify(moduleAbi(m.bytecode))).toBe(JSON.stringify(m.abi));
  });

  it("prints null for the node's own undecodable example", () => {
    const payloads = goldenNullAbiBytecodes();
    expect(payloads.length).toBeGreaterThan(0);
    for (const b of payloads) expect(moduleAbi(b)).toBeNull();
    expect(moduleAbi(new Uint8Array(0))).toBeNull();
  });
});
