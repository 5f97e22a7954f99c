import { describe, expect, it } from "vitest";
import { addressError, formatAddress, parseAddress } from "./address.js";

const bytes = (hex: string) => Buffer.from(hex.padStart(64, "0"), "hex");

describe("addresses out: to_hex_literal (docs/decisions.md §6)", () => {
  it("strips leading zero digits, nibble by nibble, and prints 0x0 for zero", () => {
    expect(formatAddress(bytes("00"))).toBe("0x0");
    expect(formatAddress(bytes("01"))).toBe("0x1");
    expect(formatAddress(bytes("0a"))).toBe("0xa");
    expect(formatAddress(bytes("10"))).toBe("0x10");
    expect(formatAddress(bytes("0a11ce"))).toBe("0xa11ce");
    const long = "0" + "7d7e".repeat(15) + "abc";
    expect(long).toHaveLength(64);
    expect(formatAddress(bytes(long))).toBe("0x" + long.slice(1));
    expect(formatAddress(bytes(long))).toHaveLength(65);
    expect(formatAddress(bytes("f".repeat(64)))).toBe("0x" + "f".repeat(64));
  });

  it("reads a view into a larger buffer at its own offset", () => {
    const big = Buffer.concat([Buffer.from("ffff", "hex"), bytes("0b0b"), Buffer.from("ee", "hex")]);
    expect(formatAddress(big.subarray(2, 34))).toBe("0xb0b");
  });
});

describe("addresses in (docs/decisions.md §1)", () => {
  it("accepts 0x and 1..64 digits (either case), or exactly 64 bare digits", () => {
    for (const t of ["0x1", "0x001", "0x" + "0".repeat(63) + "1", "0".repeat(63) + "1"]) {
      expect(Buffer.from(parseAddress(t)!).equals(bytes("01")), t).toBe(true);
    }
    expect(Buffer.from(parseAddress("0xA11CE")!).equals(bytes("a11ce"))).toBe(true);
  });

  it("refuses 1, 01, x1, 00x1, 0X1, 0x, 65 digits and non-hex", () => {
    for (const t of ["1", "01", "x1", "00x1", "0X1", "0x", "", "0x" + "1".repeat(65), "1".repeat(65), "1".repeat(63), "0xg", "xyz"]) {
      expect(parseAddress(t), t).toBeNull();
    }
  });

  it("says why in the reference's words for a bad character, counting from the padded start", () => {
    expect(addressError("xyz")).toBe("Hex characters are invalid: Invalid character 'x' at position 61");
    expect(addressError("0X1")).toBe("Hex characters are invalid: Invalid character 'X' at position 62");
    expect(addressError("00x1")).toBe("Hex characters are invalid: Invalid character 'x' at position 62");
    expect(addressError("01")).toContain('"01"');
    expect(addressError("0x" + "1".repeat(65))).toContain("too long");
    expect(addressError("0x")).toContain("too short");
  });
});
