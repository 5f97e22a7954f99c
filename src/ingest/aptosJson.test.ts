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

describe("kinds of data this reader does not know", () => {
  it("a transaction of a new type is stored generically: a user-like one with its sender and replay protector", () => {
    const p = parseAptosTransaction({ ...userTxn(entry(`0x${ABC}::m::f`)), type: "quantum_transaction" }, 0);
    expect(p.txn.kind).toBe("unknown_transaction");
    expect(p.blockStart).toBeNull();
    expect(p.txn.user).toMatchObject({ replayProtector: { type: "sequence_number", value: 3n }, contractAddress: null });
    expect(p.unknown).toEqual([{ what: "transaction", type: "quantum_transaction" }]);
    const bare = parseAptosTransaction({ version: "6", type: "quantum_system_transaction", hash: `0x${"11".repeat(32)}` }, 0);
    expect(bare.txn.user).toBeNull();
  });

  it("a change of a new type is skipped and counted; the known changes beside it are kept", () => {
    const t = { ...userTxn(null), changes: [{ type: "write_quantum" }, { type: "write_table_item", handle: "0x1", key: "0x01", value: "0x02" }] };
    const p = parseAptosTransaction(t, 0);
    expect(p.tableItems).toHaveLength(1);
    expect(p.unknown).toEqual([{ what: "change", type: "write_quantum" }]);
  });

  it("malformed data of a known kind, or a type that is not a string, is still an error naming the version", () => {
    expect(() => parseAptosTransaction({ ...userTxn(null), hash: "0x12" }, 0)).toThrow(/version 5: hash is not 32 hex bytes/);
    expect(() => parseAptosTransaction({ ...userTxn(null), type: "quantum_transaction", sequence_number: "x" }, 0)).toThrow(/version 5: sequence_number must be a u64/);
    expect(() => parseAptosTransaction({ ...userTxn(null), type: 7 }, 0)).toThrow(IngestError);
    expect(() => parseAptosTransaction({ ...userTxn(null), changes: [{ type: "write_table_item", handle: "0x1", key: "zz" }] }, 0)).toThrow(/version 5 change #0: key is not hex bytes/);
    expect(() => parseAptosTransaction({ ...userTxn(null), changes: [7] }, 0)).toThrow(/version 5 change #0 is not an object/);
  });
});

describe("a transaction's events of event handles (docs/decisions.md §22)", () => {
  const eventsOf = (events: unknown) => parseAptosTransaction({ ...userTxn(entry("0x1::aptos_account::transfer")), events }, 0).txn.events;
  const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

  it("reads a guid, or the key of older ledgers (creation number little-endian, then the address), each with its place in events", () => {
    const got = eventsOf([
      { guid: { creation_number: "3", account_address: "0x1" }, sequence_number: "7", type: "0x1::block::NewBlockEvent", data: {} },
      { key: "0x0200000000000000" + "ab".repeat(32), sequence_number: "0", type: "0x1::coin::DepositEvent", data: {} },
    ])!;
    expect(got.map((e) => [hex(e.account), e.creationNumber, e.sequenceNumber, e.index])).toEqual([
      ["0".repeat(63) + "1", 3n, 7n, 0],
      ["ab".repeat(32), 2n, 0n, 1],
    ]);
  });

  it("leaves out module events (creation number 0 at 0x0) and events of neither form; none is no events at all", () => {
    const fee = { guid: { creation_number: "0", account_address: "0x0" }, sequence_number: "0", type: "0x1::transaction_fee::FeeStatement", data: {} };
    const handle = { guid: { creation_number: "0", account_address: "0x5" }, sequence_number: "1", type: "0x1::x::E", data: {} };
    expect(eventsOf([fee, { type: "0x1::x::Later", data: {} }, handle])!.map((e) => e.index)).toEqual([2]);
    expect(eventsOf([fee])).toBeUndefined();
    expect(eventsOf([])).toBeUndefined();
    expect(eventsOf(undefined)).toBeUndefined();
  });

  it("refuses a malformed handle or sequence number, naming the event", () => {
    expect(() => eventsOf([{ guid: { creation_number: "x", account_address: "0x1" }, sequence_number: "0" }])).toThrow(/version 5 event #0: creation_number/);
    expect(() => eventsOf([{ key: "0x01", sequence_number: "0" }])).toThrow(IngestError);
    expect(() => eventsOf([{ guid: { creation_number: "1", account_address: "0x1" }, sequence_number: "-1" }])).toThrow(/sequence_number/);
    expect(() => eventsOf([null])).toThrow(/event #0 is not an object/);
  });
});
