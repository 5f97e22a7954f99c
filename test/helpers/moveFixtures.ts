/** The Move modules of the reference fixtures (`test/fixtures/`), for decoder tests and benches. */

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { FIXTURES } from "./fixtures.js";

/** A module as the node returned it: bytecode plus the ABI the node printed. */
export interface FixtureModule {
  readonly name: string;
  readonly bytecode: Uint8Array;
  readonly abi: unknown;
}

function hexBytes(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex.startsWith("0x") ? hex.slice(2) : hex, "hex"));
}

/** The 63 version-5 modules of the genesis transaction with their 2022 ABIs. */
export function genesisModules(): FixtureModule[] {
  const txns = JSON.parse(readFileSync(resolve(FIXTURES, "genesis_transaction.json"), "utf8")) as {
    changes: { type: string; address: string; data: { bytecode: string; abi: { name: string } } }[];
  }[];
  return txns[0]!.changes
    .filter((c) => c.type === "write_module")
    .map((c) => ({ name: `${c.address}::${c.data.abi.name}`, bytecode: hexBytes(c.data.bytecode), abi: c.data.abi }));
}

/** `0x1::guid` from the current node: bytecode v9 and the full current ABI shape. */
export function guidV9(): FixtureModule {
  const m = JSON.parse(readFileSync(resolve(FIXTURES, "modules/0x1_guid_bytecode_v9.json"), "utf8")) as {
    bytecode: string;
    abi: unknown;
  };
  return { name: "0x1::guid", bytecode: hexBytes(m.bytecode), abi: m.abi };
}

/** Module payloads the node printed with `"abi": null`, from a real-node golden. */
export function goldenNullAbiBytecodes(): Uint8Array[] {
  const text = readFileSync(
    resolve(FIXTURES, "goldens/aptos_api__tests__transactions_test__test_get_txn_execute_failed_by_invalid_module_payload_bytecode.json"),
    "utf8",
  );
  return [...text.matchAll(/"bytecode":\s*"(0x[0-9a-f]*)",\s*"abi":\s*null/g)].map((m) => hexBytes(m[1]!));
}
