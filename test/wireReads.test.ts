/**
 * The reader's `WireReads` capability writes the API's JSON in SQL: its bytes must be what the
 * API's schema serializers write for the rows the plain reads give, on every backend that offers it.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonSerializer } from "../src/api/http/serialize.js";
import { ref } from "../src/api/http/operation.js";
import { moveModule, transactionSummary } from "../src/api/schemas.js";
import { formatAddress } from "../src/ledger/address.js";
import { moduleStateKey } from "../src/ledger/stateKey.js";
import { moduleAbi, type MoveModuleAbi } from "../src/move/abi.js";
import { openStore } from "../src/storage/open.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import type { BlockWrite, UserTxnWrite } from "../src/storage/contracts/writer.js";
import { backendFactories } from "./helpers/backends.js";
import { byteAddress } from "./helpers/store.js";
import { genesisModules } from "./helpers/moveFixtures.js";

const addr = byteAddress;
const A = addr(0xa);
const B = addr(0xb);
const U64_MAX = (1n << 64n) - 1n;
const hashOf = (v: bigint): Uint8Array => createHash("sha256").update(`txn ${v}`).digest();
const user = (replayProtector: UserTxnWrite["replayProtector"]): UserTxnWrite => ({
  sender: A,
  replayProtector,
  gasUnitPrice: 100n,
  gasUsed: 5n,
  success: true,
  contractAddress: null,
});
/** Replay protectors of A's transactions, one a version from 1: both kinds, and values past i64. */
const PROTECTORS: UserTxnWrite["replayProtector"][] = [
  { type: "sequence_number", value: 0n },
  { type: "nonce", value: 77n },
  { type: "sequence_number", value: 1n << 63n },
  { type: "nonce", value: U64_MAX },
  { type: "sequence_number", value: 12_345_678_901n },
];

function ledger(): BlockWrite[] {
  const modules = genesisModules()
    .slice(0, 8)
    .map((m, i) => ({ version: 0n, address: B, name: `m${i}`, stateKey: moduleStateKey(B, `m${i}`), bytecode: m.bytecode }));
  const last = BigInt(PROTECTORS.length);
  return [
    {
      block: { height: 0n, epoch: 0n, timestampUsec: 0n, firstVersion: 0n, lastVersion: 0n, endInfo: null },
      transactions: [{ version: 0n, kind: "genesis_transaction", hash: hashOf(0n), user: null }],
      modules: [...modules, { version: 0n, address: B, name: "junk", stateKey: moduleStateKey(B, "junk"), bytecode: Uint8Array.from([1, 2, 3]) }],
      tableItems: [],
      resources: [],
    },
    {
      block: { height: 1n, epoch: 0n, timestampUsec: 1n, firstVersion: 1n, lastVersion: last, endInfo: null },
      transactions: PROTECTORS.map((rp, i) => ({ version: BigInt(i + 1), kind: "user_transaction" as const, hash: hashOf(BigInt(i + 1)), user: user(rp) })),
      modules: [],
      tableItems: [],
      resources: [],
    },
  ];
}

const serializeSummary = jsonSerializer<object>(ref(transactionSummary));
const serializeAbi = jsonSerializer<MoveModuleAbi>(ref(moveModule));

for (const factory of backendFactories) {
  const backend = factory();
  describe(`WireReads on ${backend.name}`, () => {
    let s: Storage;
    beforeAll(async () => {
      s = await openStore(await backend.newDb());
      await s.initChain(4);
      await s.commitBlocks(ledger());
    });
    afterAll(async () => {
      await s.close();
      await backend.cleanup();
    });

    it("writes each summaries page as the TransactionSummary serializer writes the page's rows", async () => {
      const wire = s.wire!;
      expect(wire).not.toBeNull();
      for (const start of [undefined, 0n, 2n, 5n])
        for (const end of [undefined, 1n, 3n, U64_MAX])
          for (const limit of [0, 1, 2, 100]) {
            const q = { sender: A, start, end, limit };
            const what = JSON.stringify({ start: start?.toString(), end: end?.toString(), limit });
            const rows = (await s.readSummaries(q))!;
            const json = `[${rows.value.rows
              .map((r) =>
                serializeSummary({
                  sender: formatAddress(r.sender),
                  version: String(r.version),
                  transaction_hash: `0x${r.hashHex}`,
                  replay_protector: r.replayProtector.type === "nonce" ? { type: "nonce", nonce: String(r.replayProtector.value) } : { type: "sequence_number", sequence_number: String(r.replayProtector.value) },
                }),
              )
              .join(",")}]`;
            expect(await wire.readSummaries(q), what).toEqual({ info: rows.info, value: { newest: rows.value.newest, first: rows.value.rows[0]?.version ?? null, json } });
          }
    });

    it("writes each module record as the MoveModuleBytecode serializer writes the module's bytecode and ABI", async () => {
      const wire = s.wire!;
      const rows = (await s.readModules(B, undefined, null, 100, () => true))!.value.rows;
      const records = (await wire.readModules(B, undefined, null, 100, () => true))!.value.rows;
      expect(records.map((m) => m.name)).toEqual(rows.map((m) => m.name));
      expect(records.length).toBe(9);
      for (const [i, m] of records.entries()) {
        const bytecode = rows[i]!.bytecode!;
        const abi = moduleAbi(bytecode);
        const expected = `{"bytecode":"0x${Buffer.from(bytecode).toString("hex")}","abi":${abi === null ? "null" : serializeAbi(abi)}}`;
        expect(m.record ?? `{"bytecode":"0x${Buffer.from(m.bytecode!).toString("hex")}","abi":${m.abi}}`, m.name).toBe(expected);
      }
      // A module whose code was not asked for carries no code in either form.
      const bare = (await wire.readModules(B, undefined, null, 100, () => false))!.value.rows;
      expect(bare.map((m) => [m.record, m.bytecode])).toEqual(bare.map(() => [undefined, undefined]));
    });
  });
}
