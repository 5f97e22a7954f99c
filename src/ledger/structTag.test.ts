import { describe, expect, it } from "vitest";
import { isResourceStateKeyOf, resourceStateKey } from "./stateKey.js";
import { parseStructTag, structTagString, verifyStructTag, type StructTag } from "./structTag.js";

const ONE = Buffer.from("01".padStart(64, "0"), "hex");
const tag = (text: string) => parseStructTag(text) as StructTag;

describe("struct tags", () => {
  it("prints a tag as the API prints it, whatever spelling it was parsed from", () => {
    const printed = "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>";
    for (const text of [printed, `0x${"0".repeat(63)}1::coin::CoinStore<0x01::aptos_coin::AptosCoin>`, "0x1::coin::CoinStore< 0x1::aptos_coin::AptosCoin >"]) {
      expect(structTagString(tag(text)), text).toBe(printed);
    }
    expect(structTagString(tag("0xcafe::m::Pair<u8,vector<address>>"))).toBe("0xcafe::m::Pair<u8, vector<address>>");
  });

  it("refuses text that is not a struct tag, and verifies identifiers apart", () => {
    for (const text of ["0x1::coin", "coin::Coin::X", "u64", "vector<u8>", "0x1::m::S<T0>", "0x1::m::S<&u8>", "0xzz::m::S", "0x1::m::S<", "0x1::m::S<u8>>"]) {
      expect(typeof parseStructTag(text), text).toBe("string");
    }
    expect(verifyStructTag(tag("0x1::m::S<0x1::n::T<u8>>"))).toBeNull();
    expect(verifyStructTag(tag("0x1::1m::S"))).toBe("Invalid identifier '1m'");
    expect(verifyStructTag(tag("0x1::m::S<0x1::n::_>"))).toBe("Invalid identifier '_'");
    const deep = `0x1::m::S<${"vector<".repeat(9)}u8${">".repeat(9)}>`;
    expect(verifyStructTag(tag(deep))).toMatch(/nest deeper than 8/);
  });

  it("encodes the state key as StateKey::AccessPath of Path::Resource, and knows it for the cursor", () => {
    const key = resourceStateKey(ONE, tag("0x1::m::C<u8>"));
    // tag 0, the account, the path's length, then Path::Resource: the struct tag's BCS
    const path = Buffer.concat([Buffer.from([1]), ONE, Buffer.from([1, 0x6d, 1, 0x43, 1, 1])]);
    expect(key.toString("hex")).toBe(Buffer.concat([Buffer.from([0]), ONE, Buffer.from([path.length]), path]).toString("hex"));
    expect(isResourceStateKeyOf(key, ONE)).toBe(true);
    expect(isResourceStateKeyOf(key, Buffer.alloc(32))).toBe(false);
    expect(isResourceStateKeyOf(key.subarray(0, key.length - 1), ONE)).toBe(false);
  });
});
