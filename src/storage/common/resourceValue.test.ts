import { describe, expect, it } from "vitest";
import { packResourceValue, unpackResourceValue } from "./resourceValue.js";

const owner = Buffer.from("00c7483171f448ec8cc5146375f7c87b4b254bd43d9ad9ce8c99832a99c65895", "hex");
const other = Buffer.from("a2c526b07cb9eddecaaa1b3d281c0833834e8367e0a1435e84638ea87cfcef98", "hex");
const account = (seq: number, addr = owner) =>
  `{"authentication_key":"0x${addr.toString("hex")}","sequence_number":"${seq}","guid_creation_num":"0"}`;

describe("resource value storage form", () => {
  it("gives back the exact JSON text, whatever it holds", () => {
    const values = [
      account(4990),
      account(0, other),
      "null",
      "{}",
      '{"coin":{"value":"123456789"},"frozen":false,"deposit_events":{"counter":"3","guid":{"id":{"addr":"0x1","creation_num":"2"}}}}',
      JSON.stringify({ name: "ünïcødé ✓ 𝄞", bytes: "0x" + "ff".repeat(300) }),
      JSON.stringify({ big: "x".repeat(70_000) }),
    ];
    for (const json of values) expect(unpackResourceValue(owner, packResourceValue(owner, json))).toBe(json);
  });

  it("stores an account resource in a fraction of its JSON: the owner's address is in the dictionary", () => {
    const json = account(4990);
    const packed = packResourceValue(owner, json);
    expect(packed[0]).toBe(1);
    expect(json.length).toBe(140);
    expect(packed.length).toBeLessThanOrEqual(24);
  });

  it("keeps a value DEFLATE would not shrink as its raw bytes", () => {
    const packed = packResourceValue(owner, "1");
    expect([...packed]).toEqual([0, 0x31]);
    expect(unpackResourceValue(owner, packed)).toBe("1");
  });

  it("reads rows earlier builds wrote: the JSON text itself, and values node:zlib packed", () => {
    expect(unpackResourceValue(owner, account(7))).toBe(account(7));
    // Packed by node:zlib, as builds before the JavaScript deflater did (bytes one of them wrote).
    expect(unpackResourceValue(owner, Buffer.from("01c3e9148a4dc6e615731c7e3150aa0500", "hex"))).toBe(account(7));
    expect(unpackResourceValue(owner, Buffer.from("01c38c08432363135333730b4ba55a1dd4f8d6c11ba5c6b8838162576204a311281c6b01", "hex"))).toBe(
      `{"coin":{"value":"123456789"},"frozen":false,"deposit_events":{"counter":"3","guid":{"id":{"addr":"0x${owner.toString("hex")}","creation_num":"2"}}}}`,
    );
  });

  it("refuses an unknown format code and bytes packed for another owner rather than guess", () => {
    expect(() => unpackResourceValue(owner, Buffer.of(9, 1, 2))).toThrow(/unknown format code 9/);
    const packed = packResourceValue(owner, account(1));
    let read: string | undefined;
    try {
      read = unpackResourceValue(other, packed);
    } catch {
      read = undefined;
    }
    expect(read).not.toBe(account(1));
  });
});
