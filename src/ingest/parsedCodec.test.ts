import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FIXTURES } from "../../test/helpers/fixtures.js";
import { parseAptosTransaction, type ParsedTxn } from "./aptosJson.js";
import { DEVNET_ACCOUNTS, DevnetChain, defaultDevnetChainOptions } from "./devnet/chain.js";
import { decodeParsed, encodeParsed } from "./parsedCodec.js";
import { plain } from "../../test/helpers/plain.js";
import { unpackTexts } from "../storage/common/history.js";
import { packResourceValue } from "../storage/common/resourceValue.js";

/** Through the flat form and a postMessage's structured clone, as the parsing thread hands them over. */
const handedOver = (txns: ParsedTxn[]) => decodeParsed(structuredClone(encodeParsed(txns)));

describe("parsed transactions in flat form (the import's parsing thread to the importer)", () => {
  it("gives back the genesis and devnet blocks' transactions field for field", () => {
    const genesis = JSON.parse(readFileSync(`${FIXTURES}genesis_transaction.json`, "utf8"))[0];
    const chain = new DevnetChain(
      { version: 1n, height: 1n, epoch: 1n, sequence: Array.from({ length: DEVNET_ACCOUNTS }, () => 0n), upgrades: 0 },
      defaultDevnetChainOptions,
    );
    const json: unknown[] = [genesis];
    for (let b = 0; b < 60; b++) json.push(...chain.nextBlock(1_700_000_000_000_000n + BigInt(b) * 1_000_000n));
    const txns = json.map((t, i) => parseAptosTransaction(t, i));
    expect(txns.filter((t) => t.modules.length > 0).length).toBeGreaterThan(1);
    expect(txns.some((t) => t.tableItems.some((i) => i.value === null))).toBe(true);
    expect(plain(handedOver(txns))).toEqual(plain(txns));
  });

  it("keeps what is rare: unknown kinds, a source's ABI, deletions, a nonce, end-of-block flags", () => {
    const address = "0x" + "ab".repeat(32);
    const unknownTxn = {
      version: "7",
      type: "some_future_transaction",
      hash: "0x" + "01".repeat(32),
      sender: address,
      replay_protection_nonce: "18446744073709551615",
      changes: [
        { type: "delete_module", address, module: `${address}::gone` },
        { type: "write_module", address, data: { bytecode: "0x00", abi: { address, name: "future", friends: [] } } },
        { type: "delete_resource", address, resource: "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>" },
        { type: "write_resource", address, data: { type: "0x1::a::B", data: { x: "ünï" } } },
        { type: "delete_table_item", handle: address, key: "0x", data: null },
        { type: "new_change_kind" },
      ],
    };
    const epilogue = { version: "8", type: "block_epilogue_transaction", block_end_info: { block_gas_limit_reached: true, block_output_limit_reached: false } };
    const txns = [parseAptosTransaction(unknownTxn, 0), parseAptosTransaction(epilogue, 1)];
    expect(txns[0]!.unknown.map((u) => u.what)).toEqual(["transaction", "module", "change"]);
    expect(plain(handedOver(txns))).toEqual(plain(txns));
  });

  it("with a packer, carries each resource value in its stored form instead of its text, deletions kept (the follower's page thread)", () => {
    const address = "0x" + "cd".repeat(32);
    const json = {
      version: "9",
      type: "state_checkpoint_transaction",
      hash: "0x" + "02".repeat(32),
      changes: [
        { type: "write_resource", address, data: { type: "0x1::account::Account", data: { sequence_number: "3" } } },
        { type: "delete_resource", address, resource: "0x1::a::Gone" },
        { type: "write_resource", address, data: { type: "0x1::a::B", data: { x: "ünï" } } },
      ],
    };
    const txns = [parseAptosTransaction(json, 0)];
    const packed = decodeParsed(structuredClone(encodeParsed(txns, packResourceValue)));
    const texts = txns[0]!.resources.map((r) => r.json);
    expect(texts.map((t) => typeof t)).toEqual(["string", "object", "string"]);
    const owner = txns[0]!.resources[0]!.address;
    expect(plain(packed[0]!.resources.map((r) => r.json))).toEqual(plain(texts.map((t) => (typeof t === "string" ? packResourceValue(owner, t) : null))));
    expect(plain({ ...packed[0], resources: [] })).toEqual(plain({ ...txns[0], resources: [] }));
    expect(plain(packed[0]!.resources.map((r) => [r.version, r.address, r.type]))).toEqual(plain(txns[0]!.resources.map((r) => [r.version, r.address, r.type])));
  });
});

describe("parsed transactions with their texts packed where they were parsed", () => {
  it("carries each text in the history chunk that ends with its block's run, never across a block, and the chunks unpack to the texts", () => {
    const chain = DevnetChain.fresh(defaultDevnetChainOptions);
    const json: unknown[] = [...chain.genesis()];
    for (let b = 0; b < 40; b++) json.push(...chain.nextBlock(1_700_000_000_000_000n + BigInt(b) * 1_000_000n));
    const txns = json.map((t, i) => parseAptosTransaction(t, i));
    const got = decodeParsed(structuredClone(encodeParsed(txns, null, true)));
    expect(got.every((p) => p.txn.json === undefined)).toBe(true);
    const chunks = got.flatMap((p) => (p.history ? [p.history] : []));
    // Every version in exactly one chunk, in order; a chunk ends at the transaction that carries it.
    let next = 0n;
    for (const c of chunks) {
      expect(c.firstVersion).toBe(next);
      next = c.lastVersion + 1n;
      const texts = unpackTexts(c.body).map((t) => t.toString("utf8"));
      expect(texts).toEqual(txns.slice(Number(c.firstVersion), Number(c.lastVersion) + 1).map((p) => p.txn.json));
      // No chunk holds a block's start after its first transaction.
      expect(txns.slice(Number(c.firstVersion) + 1, Number(c.lastVersion) + 1).some((p) => p.blockStart !== null)).toBe(false);
    }
    expect(next).toBe(BigInt(txns.length));
    // Everything else as without packing.
    const plainOf = (ps: ParsedTxn[]) => plain(ps.map(({ history: _h, ...p }) => ({ ...p, txn: { ...p.txn, json: undefined } })));
    expect(plainOf(got)).toEqual(plainOf(txns));
  });
});
