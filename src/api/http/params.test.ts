import { describe, expect, it } from "vitest";
import { ApiError } from "./apiError.js";
import { addressPath } from "./params.js";

const one = Buffer.alloc(32);
one[31] = 1;

describe("addressPath", () => {
  it("parses every spelling of an address to the same 32 bytes, again when asked again", () => {
    for (const text of ["0x1", "0".repeat(63) + "1", "0x0001", "0x" + "0".repeat(63) + "1", "0x1"]) {
      expect(Buffer.from(addressPath("address", text)).equals(one)).toBe(true);
    }
    const upper = addressPath("address", "0xABCDEF");
    expect(Buffer.from(addressPath("address", "0xabcdef")).equals(Buffer.from(upper))).toBe(true);
  });

  it("still answers right after more distinct addresses than it keeps", () => {
    const first = addressPath("address", "0x2");
    for (let i = 0; i < 10_000; i++) {
      const a = addressPath("address", "0x" + (i + 16).toString(16));
      expect(a[31]).toBe((i + 16) & 0xff);
    }
    expect(Buffer.from(addressPath("address", "0x2")).equals(Buffer.from(first))).toBe(true);
    expect(addressPath("address", "0x2")[31]).toBe(2);
  });

  it("refuses bad text with a 400 naming it, every time it is sent", () => {
    for (let i = 0; i < 2; i++) {
      const e = (() => {
        try {
          addressPath("table_handle", "0xZZ");
        } catch (err) {
          return err;
        }
      })();
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).status).toBe(400);
      expect((e as ApiError).message).toBe(
        "failed to parse path `table_handle`: failed to parse \"string(Address)\": Invalid account address: Hex characters are invalid: Invalid character 'Z' at position 62",
      );
    }
  });
});
