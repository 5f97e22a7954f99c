/**
 * The strict metadata reader against its definition: a value is accepted exactly when the stock
 * @mysten/bcs reader parses it and the stock writer gives the same bytes back (what the Rust `bcs`
 * crate accepts). Valid values and mutations of them (seeded; `TEST_SEED=n` repeats a run).
 */
import { bcs } from "@mysten/bcs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { testSeed } from "../../test/helpers/seed.js";
import { AttributeKind, RuntimeModuleMetadataV1, strictParse } from "./metadata.js";

const SEED = testSeed(17_2026);

const ErrorDescription = bcs.struct("ErrorDescription", { code_name: bcs.string(), code_description: bcs.string() });
const KnownAttribute = bcs.struct("KnownAttribute", { kind: bcs.u8(), args: bcs.vector(bcs.string()) });
const Attributes = bcs.map(bcs.string(), bcs.vector(KnownAttribute));
/** The stock schema: reads anything in shape, writes canonically (keys sorted by their bytes). */
const Stock = bcs.struct("RuntimeModuleMetadataV1", {
  error_map: bcs.map(bcs.u64(), ErrorDescription),
  struct_attributes: Attributes,
  fun_attributes: Attributes,
});

/** The definition: parses, and re-serializes to the same bytes. */
function canonical(value: Uint8Array): boolean {
  try {
    const bytes = Stock.serialize(Stock.parse(value)).toBytes();
    return Buffer.from(bytes).equals(Buffer.from(value));
  } catch {
    return false;
  }
}

const attr = (kind: number, ...args: string[]) => ({ kind, args });
const valid: Uint8Array[] = [
  { error_map: new Map(), struct_attributes: new Map(), fun_attributes: new Map() },
  { error_map: new Map(), struct_attributes: new Map(), fun_attributes: new Map([["get", [attr(AttributeKind.ViewFunction)]]]) },
  {
    // u64 keys whose byte order (little-endian) is not their numeric order: 256 sorts before 1
    error_map: new Map([
      ["1", { code_name: "E_ONE", code_description: "the first" }],
      ["256", { code_name: "E_BIG", code_description: "" }],
      ["2", { code_name: "É", code_description: "\ufeffbom and ünïcode" }],
    ]),
    struct_attributes: new Map([
      ["Ev", [attr(AttributeKind.Event)]],
      ["Group", [attr(AttributeKind.ResourceGroup, "0x1::m::Scope"), attr(AttributeKind.Event)]],
    ]),
    fun_attributes: new Map([
      ["a", [attr(AttributeKind.ViewFunction)]],
      ["b", [attr(AttributeKind.LegacyViewFunction), attr(AttributeKind.Randomness, "x", "y")]],
      // names of 135, 255 and 256 bytes: their length prefixes are two bytes (87 01, ff 01, 80 02),
      // so in BCS order they come after every shorter name, and 256 before 255
      [`long_${"n".repeat(130)}`, [attr(AttributeKind.ViewFunction)]],
      ["m".repeat(255), [attr(AttributeKind.ViewFunction)]],
      ["m".repeat(256), []],
      ["z", []],
    ]),
  },
].map((md) => RuntimeModuleMetadataV1.serialize(md).toBytes());

describe("strictParse", () => {
  it("accepts canonical values, with every entry", () => {
    // the writer's order of the long names (see above)
    const names = [...strictParse(valid[2]!)!.fun_attributes.keys()].map((n) => n.length);
    expect(names).toEqual([1, 1, 1, 256, 135, 255]);
    for (const v of valid) {
      expect(canonical(v)).toBe(true);
      const md = strictParse(v);
      expect(md).not.toBeNull();
      expect(Buffer.from(Stock.serialize(md!).toBytes()).equals(Buffer.from(v))).toBe(true);
    }
  });

  it("refuses trailing bytes, a truncation, unsorted and repeated keys", () => {
    const v = valid[2]!;
    expect(strictParse(Uint8Array.from([...v, 0]))).toBeNull();
    expect(strictParse(v.subarray(0, v.length - 1))).toBeNull();
    // two fun_attributes entries `01 'a' 01 01 00` and `01 'b' ...`: the second named 'a' too
    const repeated = Uint8Array.from(v);
    const at = Buffer.from(repeated).indexOf(Buffer.from([0x01, 0x62, 0x02]));
    repeated[at + 1] = 0x61;
    expect(canonical(repeated)).toBe(false);
    expect(strictParse(repeated)).toBeNull();
  });

  it("a string length past the value reads nothing beyond its window", () => {
    // the value sits inside a larger buffer (as inside a module's bytes): its last string's
    // length is raised so that the reader would run into the bytes after it
    const v = RuntimeModuleMetadataV1.serialize({
      error_map: new Map(),
      struct_attributes: new Map(),
      fun_attributes: new Map([["get", [attr(AttributeKind.Randomness, "xy")]]]),
    }).toBytes();
    expect(strictParse(v)).not.toBeNull();
    const outer = new Uint8Array(v.length + 8).fill(0x61);
    outer.set(v);
    const inner = outer.subarray(0, v.length);
    inner[v.length - 3] = 10; // the last string, `02 'x' 'y'`, now runs 8 bytes past the value
    expect(canonical(inner)).toBe(false);
    expect(strictParse(inner)).toBeNull();
  });

  it(`agrees with parse-and-re-serialize on mutated values (4,000 cases, seed ${SEED})`, () => {
    const edit = fc.oneof(
      fc.record({ kind: fc.constant("set" as const), at: fc.nat(), byte: fc.nat(255) }),
      fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), byte: fc.nat(255) }),
      fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), byte: fc.constant(0) }),
      fc.record({ kind: fc.constant("swap" as const), at: fc.nat(), byte: fc.nat() }),
    );
    const mutation = fc.record({ seed: fc.nat(valid.length - 1), edits: fc.array(edit, { minLength: 1, maxLength: 2 }) });
    fc.assert(
      fc.property(mutation, ({ seed, edits }) => {
        const bytes = [...valid[seed]!];
        for (const e of edits) {
          const at = bytes.length === 0 ? 0 : e.at % bytes.length;
          if (e.kind === "set") bytes[at] = e.byte;
          else if (e.kind === "insert") bytes.splice(at, 0, e.byte);
          else if (e.kind === "delete") bytes.splice(at, 1);
          else {
            const to = bytes.length === 0 ? 0 : e.byte % bytes.length;
            [bytes[at], bytes[to]] = [bytes[to]!, bytes[at]!];
          }
        }
        const value = Uint8Array.from(bytes);
        expect(strictParse(value) !== null, Buffer.from(value).toString("hex")).toBe(canonical(value));
      }),
      { numRuns: 4000, seed: SEED },
    );
  });
});
