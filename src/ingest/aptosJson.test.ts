import { describe, expect, it } from "vitest";
import { IngestError, parseAptosTransaction } from "./aptosJson.js";

/** A user transaction in the REST JSON form with this payload. */
function userTxn(payload: unknown, nonce?: string): Record<string, unknown> {
  return {
    version: "5",
    type: "user_transaction",
    sender: "0x" + "12".repeat(32),
    sequence_number: nonce === undefined ? "3" : "18446744073709551615",
    replay_protection_nonce: nonce ?? null,
    gas_unit_price: "100",
    gas_used: "7",
    success: true,
    payload,
    changes: [],
  };
}

const contractOf = (payload: unknown, nonce?: string) => parseAptosTransaction(userTxn(payload, nonce), 0).txn.user!.contractAddress;
const entry = (fn: unknown) => ({ type: "entry_function_payload", function: fn, type_arguments: [], arguments: [] });
const ABC = "0".repeat(61) + "abc";

describe("a user transaction's use-case address (aptos-core parse_use_case)", () => {
  it("an entry function counts by its module address (special addresses too; the estimator makes them Platform)", () => {
    expect(contractOf(entry("0xabc::game::play"))).toBe(ABC);
    expect(contractOf(entry("0x1::aptos_account::transfer"))).toBe("0".repeat(63) + "1");
  });

  it("a multisig payload with a nonce is a V2 payload: it counts by its entry function", () => {
    const multisig = { type: "multisig_payload", multisig_address: "0x4", transaction_payload: entry("0xabc::game::play") };
    expect(contractOf(multisig, "9")).toBe(ABC);
    // Without a nonce it is taken as the legacy Multisig payload, which is Others.
    expect(contractOf(multisig)).toBeNull();
    // A V2 multisig without an executable is Others.
    expect(contractOf({ type: "multisig_payload", multisig_address: "0x4", transaction_payload: null }, "9")).toBeNull();
  });

  it("scripts and other payloads are Others", () => {
    expect(contractOf({ type: "script_payload", code: { bytecode: "0x00" }, type_arguments: [], arguments: [] })).toBeNull();
    expect(contractOf({ type: "module_bundle_payload", modules: [] })).toBeNull();
    expect(contractOf(undefined)).toBeNull();
  });

  it("an entry function id that is not address::module::name is an error naming the version", () => {
    for (const fn of ["0xzz::m::f", "0xabc::m", 42]) {
      expect(() => contractOf(entry(fn))).toThrow(IngestError);
      expect(() => contractOf(entry(fn))).toThrow("version 5: payload function is not an entry function id");
    }
  });
});
