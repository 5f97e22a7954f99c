/** The recorded ledger the event tests read, and the recorded events as the reference's VersionedEvent prints them. */
import { readFileSync } from "node:fs";
import { ChainBuilder } from "./chain.js";
import { FIXTURES } from "./fixtures.js";

type Json = Record<string, unknown>;

/** The recorded genesis (version 0) and the block after it (versions 1 to 3), as one ledger. */
export function recordedLedger(): { chain: ChainBuilder; txns: Json[] } {
  const genesis = (JSON.parse(readFileSync(`${FIXTURES}genesis_transaction.json`, "utf8")) as Json[])[0]!;
  const block = JSON.parse(
    readFileSync(`${FIXTURES}transactions/aptos_api__tests__transactions_test__test_get_transactions_output_user_transaction_with_entry_function_payload.json`, "utf8"),
  ) as Json[];
  const chain = new ChainBuilder();
  chain.txns.push(genesis, ...block);
  chain.version = 4n;
  chain.height = 2n;
  return { chain, txns: [genesis, ...block] };
}

/**
 * A recorded event as the reference's VersionedEvent: its transaction's version first, then the
 * event's own fields; one in the `key` form with the GUID its key spells (8 bytes of creation
 * number little-endian, then the address, printed without leading zeros).
 */
export function versioned(version: string, e: Json): string {
  let guid = e.guid;
  if (guid === undefined) {
    const key = Buffer.from((e.key as string).slice(2), "hex");
    const address = key.subarray(8).toString("hex").replace(/^0+(?=.)/, "");
    guid = { creation_number: key.readBigUInt64LE(0).toString(), account_address: `0x${address}` };
  }
  return JSON.stringify({ version, guid, sequence_number: e.sequence_number, type: e.type, data: e.data });
}
