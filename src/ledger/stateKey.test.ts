import { describe, expect, it } from "vitest";
import { moduleStateKey, parseModuleStateKey } from "./stateKey.js";

const CAFE = Buffer.from("cafe".padStart(64, "0"), "hex");

describe("module state keys", () => {
  it("encode StateKey::AccessPath of Path::Code(ModuleId), as the reference stores them", () => {
    const key = Buffer.from(moduleStateKey(CAFE, "bank"));
    // Path::Code (0), the ModuleId's address, the name's length and bytes
    const path = Buffer.concat([Buffer.from([0]), CAFE, Buffer.from([4]), Buffer.from("bank")]);
    expect(key.toString("hex")).toBe(Buffer.concat([Buffer.from([0]), CAFE, Buffer.from([path.length]), path]).toString("hex"));
    expect(parseModuleStateKey(key)).toEqual({ address: Uint8Array.from(CAFE), name: "bank" });
  });

  it("take back exactly the keys they make: no trailing byte, no overlong length, no other account's module", () => {
    const key = Buffer.from(moduleStateKey(CAFE, "bank"));
    expect(parseModuleStateKey(Buffer.concat([key, Buffer.from([0])]))).toBeNull();
    expect(parseModuleStateKey(key.subarray(0, key.length - 1))).toBeNull();
    // the path's length (70) written in two bytes instead of one
    const overlong = Buffer.concat([key.subarray(0, 33), Buffer.from([0x80 | key[33]!, 0x00]), key.subarray(34)]);
    expect(parseModuleStateKey(overlong)).toBeNull();
    const other = Buffer.from(key);
    other[36] = 0xff; // the ModuleId's address, not the key's
    expect(parseModuleStateKey(other)).toBeNull();
    expect(parseModuleStateKey(Buffer.from("00ff", "hex"))).toBeNull();
  });
});
