/**
 * The one store test suite every `Storage` backend must pass (see `src/storage/contracts/reader.ts`, `writer.ts`, `followBase.ts`):
 * `storeSuite(factory)` runs it against one backend; `store.test.ts` runs it for every entry of
 * `everyMajorBackendFactories`. It talks to the store only through the interface, over a real database.
 *
 * The shared ledger (`HISTORY`, 4 blocks, versions 0..9):
 *
 *   block 0  v0    genesis: A::coin=c0, A::b=b0, table k1=10, resource R=n0
 *   block 1  v1-4  meta, v2 user A seq 0 (coin=c2, k1=11, k2=20, R=n1),
 *                  v3 user B nonce 77 (A::zz, A::Ab, B::x), v4 epilogue (gas limit reached)
 *   block 2  v5-7  meta, v6 user A seq 1 (delete A::b, delete k1, delete R, A::aa), v7 checkpoint
 *   block 3  v8-9  meta, v9 user A seq 2 (A::b again, k1=12, k3 written twice at v9)
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import type { BlockInfo } from "../src/ledger/types.js";
import { moduleStateKey } from "../src/ledger/stateKey.js";
import { parseStructTag, type StructTag } from "../src/ledger/structTag.js";
import { resourceStateKey } from "../src/ledger/stateKey.js";
import type { BlockWrite, TxnKind, UserTxnWrite } from "../src/storage/contracts/writer.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { openStore } from "../src/storage/open.js";
import { appModuleBytecode, frameworkModules } from "../src/ingest/devnet/modules.js";
import { moduleAbiJson } from "../src/move/abi.js";
import { genesisModules } from "./helpers/moveFixtures.js";
import type { Backend } from "./helpers/backends.js";
import { prng, testSeed } from "./helpers/seed.js";
import { byteAddress, tableItem, modulesAt, summariesAt } from "./helpers/store.js";

const U64_MAX = (1n << 64n) - 1n;
const MODULE_HISTORY_SEED = testSeed(17_2026);

const addr = byteAddress;
const A = addr(0xa);
const B = addr(0xb);
const NOBODY = addr(0xee);
const H = addr(0x7);
const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);
const K1 = bytes(1);
const K2 = bytes(2);
const K3 = bytes(3);
const R = "0x1::account::Account";
const hashOf = (v: bigint): Uint8Array => createHash("sha256").update(`txn ${v}`).digest();
const code = (tag: number): Uint8Array => bytes(0xa1, 0x1c, 0xeb, 0x0b, tag);
const sha = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

/** A transaction's JSON text as a source gives it: one of its own per version, with text JSON escapes (a newline, a quote) and a non-ASCII character. */
const txnJson = (version: bigint, kind: TxnKind): string =>
  JSON.stringify({ version: String(version), hash: `0x${Buffer.from(hashOf(version)).toString("hex")}`, memo: 'ü "quoted"\nnext line', type: kind });
function txn(version: bigint, kind: TxnKind, user: UserTxnWrite | null = null) {
  return { version, kind, hash: hashOf(version), user, json: txnJson(version, kind) };
}
/** The texts of a transactions read, as strings. */
const textsOf = (texts: readonly Uint8Array[] | undefined): string[] => (texts ?? []).map((t) => Buffer.from(t).toString("utf8"));
/** What `txnJson` gave for versions `from`..`to` of `HISTORY`. */
const historyTexts = (from: number, to: number): string[] =>
  HISTORY.flatMap((b) => b.transactions).filter((t) => t.version >= BigInt(from) && t.version <= BigInt(to)).map((t) => t.json!);
/** Contract addresses as the importer gives them (64 lowercase hex digits): the stores keep them as addresses. */
const CONTRACT_A = "0".repeat(63) + "a";
const CONTRACT_1 = "0".repeat(63) + "1";

function user(sender: Uint8Array, rp: UserTxnWrite["replayProtector"], gasUnitPrice: bigint, gasUsed: bigint, contractAddress: string | null = null): UserTxnWrite {
  return { sender, replayProtector: rp, gasUnitPrice, gasUsed, success: true, contractAddress };
}
const seq = (value: bigint) => ({ type: "sequence_number" as const, value });
const mod = (version: bigint, address: Uint8Array, name: string, bytecode: Uint8Array | null) => ({
  version,
  address,
  name,
  stateKey: moduleStateKey(address, name),
  bytecode,
});
const item = (version: bigint, key: Uint8Array, value: Uint8Array | null) => ({ version, handle: H, key, value });
const res = (version: bigint, json: string | null) => ({ version, address: A, type: R, json });

function block(height: bigint, epoch: bigint, ts: bigint, first: bigint, last: bigint, endInfo: BlockInfo["endInfo"] = null): BlockInfo {
  return { height, epoch, timestampUsec: ts, firstVersion: first, lastVersion: last, endInfo };
}

const HISTORY: BlockWrite[] = [
  {
    block: block(0n, 0n, 0n, 0n, 0n),
    transactions: [txn(0n, "genesis_transaction")],
    modules: [mod(0n, A, "coin", code(0)), mod(0n, A, "b", code(1))],
    tableItems: [item(0n, K1, bytes(10))],
    resources: [res(0n, '{"n":0}')],
  },
  {
    block: block(1n, 1n, 1_000_000n, 1n, 4n, { blockGasLimitReached: true, blockOutputLimitReached: false }),
    transactions: [
      txn(1n, "block_metadata_transaction"),
      txn(2n, "user_transaction", user(A, seq(0n), 100n, 10n, CONTRACT_A)),
      txn(3n, "user_transaction", user(B, { type: "nonce", value: 77n }, 150n, 20n)),
      txn(4n, "block_epilogue_transaction"),
    ],
    modules: [mod(2n, A, "coin", code(2)), mod(3n, A, "zz", code(3)), mod(3n, A, "Ab", code(4)), mod(3n, B, "x", code(5))],
    tableItems: [item(2n, K1, bytes(11)), item(2n, K2, bytes(20))],
    resources: [res(2n, '{"n":1}')],
  },
  {
    block: block(2n, 1n, 2_000_000n, 5n, 7n),
    transactions: [
      txn(5n, "block_metadata_transaction"),
      txn(6n, "user_transaction", user(A, seq(1n), 200n, 30n, CONTRACT_1)),
      txn(7n, "state_checkpoint_transaction"),
    ],
    modules: [mod(6n, A, "b", null), mod(6n, A, "aa", code(6))],
    tableItems: [item(6n, K1, null)],
    resources: [res(6n, null)],
  },
  {
    block: block(3n, 2n, 3_000_000n, 8n, 9n),
    transactions: [txn(8n, "block_metadata_transaction"), txn(9n, "user_transaction", user(A, seq(2n), 300n, 40n))],
    modules: [mod(9n, A, "b", code(7))],
    tableItems: [item(9n, K1, bytes(12)), item(9n, K3, bytes(30)), item(9n, K3, bytes(31))],
    resources: [],
  },
];

/** Module names of A at a version, in the store's order. */
async function moduleNames(s: Storage, version: bigint, address = A, start: Uint8Array | null = null, limit = 100) {
  return (await modulesAt(s, address, version, start, limit)).map((m) => m.name);
}
async function summaryVersions(s: Storage, q: Partial<Parameters<typeof summariesAt>[1]>) {
  const rows = await summariesAt(s, { sender: A, ledgerVersion: 9n, limit: 100, ...q });
  return rows.map((r) => r.version);
}
const hex = (b: Uint8Array | null): string | null => (b ? Buffer.from(b).toString("hex") : null);

/** Everything readable at `version` (to compare before and after a prune). */
async function snapshot(s: Storage, version: bigint) {
  return {
    modules: await Promise.all((await modulesAt(s, A, version, null, 100)).map(async (m) => [m.name, hex(await s.getModuleCode(m.codeHash))])),
    modulesB: await moduleNames(s, version, B),
    items: [await tableItem(s, H, K1, version), await tableItem(s, H, K2, version), await tableItem(s, H, K3, version)].map(hex),
    resource: await s.getResource(A, R, version),
  };
}

export function storeSuite(factory: () => Backend): void {
  const backend = factory();

  describe(`Storage contract on ${backend.name}`, () => {
    const opened: Storage[] = [];
    async function fresh(chainId: number | null = 4, blocks: BlockWrite[] = []): Promise<Storage> {
      const s = await openStore(await backend.newDb());
      opened.push(s);
      if (chainId !== null) await s.initChain(chainId);
      for (const b of blocks) await s.commitBlock(b);
      return s;
    }
    afterAll(async () => {
      for (const s of opened) await s.close().catch(() => undefined);
      await backend.cleanup();
    });

    let h: Storage; // HISTORY, never pruned
    beforeAll(async () => {
      h = await fresh(4, HISTORY);
    });

    it("reports its kind", () => {
      expect(h.kind).toBe(backend.kind);
    });

    it("stores the chain id once and refuses a different one", async () => {
      const s = await fresh(null);
      expect(await s.getChainId()).toBeNull();
      await s.initChain(7);
      await s.initChain(7);
      expect(await s.getChainId()).toBe(7);
      await expect(s.initChain(8)).rejects.toThrow(/chain id 7, not 8/);
      expect(await s.getChainId()).toBe(7);
    });

    it("answers an empty ledger with nothing", async () => {
      const s = await fresh(4);
      expect(await s.getLedgerInfo()).toBeNull();
      expect(await s.readTableItem(H, K1, undefined)).toBeNull();
      expect(await s.readTableItem(H, K1, 0n)).toBeNull();
      expect(await s.readModulesVersion(A, undefined)).toBeNull();
      expect(await s.readSummariesVersion(A, undefined)).toBeNull();
      expect(await modulesAt(s, A, 0n, null, 10)).toEqual([]);
      expect(await tableItem(s, H, K1, 0n)).toBeNull();
      expect(await s.getResource(A, R, 0n)).toBeNull();
      expect(await summariesAt(s, { sender: A, ledgerVersion: 0n, limit: 10 })).toEqual([]);
      expect(await s.getBlockByVersion(0n)).toBeNull();
      expect(await s.getBlockByHeight(0n)).toBeNull();
      expect(await s.getFirstBlockAtOrAfter(0n)).toBeNull();
      expect(await s.getUserTxnGas(0n, 100n)).toEqual([]);
      expect(await s.getFingerprints(0n, 100n)).toEqual([]);
    });

    it("stores a transaction of a kind the reader does not know, and a module with its source's ABI, and serves them", async () => {
      const undecodable = bytes(0xa1, 0x1c, 0xeb, 0x0b, 0x7f, 0, 0, 0);
      const upstreamAbi = '{"address":"0xa","name":"later","friends":[],"exposed_functions":[],"structs":[]}';
      const s = await fresh(4, HISTORY.slice(0, 1));
      await s.commitBlock({
        block: block(1n, 1n, 1_000_000n, 1n, 4n),
        transactions: [
          txn(1n, "block_metadata_transaction"),
          // A user-like transaction of a new type between two known ones, and one without a sender.
          txn(2n, "unknown_transaction", user(B, seq(5n), 100n, 10n)),
          txn(3n, "unknown_transaction"),
          txn(4n, "state_checkpoint_transaction"),
        ],
        modules: [{ ...mod(2n, A, "later", undecodable), upstreamAbi }],
        tableItems: [],
        resources: [],
      });
      expect((await s.getFingerprints(1n, 4n)).map((f) => f.kind)).toEqual([
        "block_metadata_transaction",
        "unknown_transaction",
        "unknown_transaction",
        "state_checkpoint_transaction",
      ]);
      expect((await s.getBlockByVersion(3n))?.firstVersion).toBe(1n);
      expect((await summariesAt(s, { sender: B, ledgerVersion: 4n, limit: 10 })).map((r) => r.version)).toEqual([2n]);
      // Only user transactions count for the gas estimate, as on the reference node.
      expect(await s.getUserTxnGas(1n, 4n)).toEqual([]);
      const page = await s.readModules(A, 4n, null, 100, () => true);
      const later = page?.value.rows.find((m) => m.name === "later");
      expect(later?.abi).toBe(upstreamAbi);
    });

    it("commits a block atomically: a failing block leaves nothing visible", async () => {
      const s = await fresh(4, HISTORY.slice(0, 1));
      const before = await s.getLedgerInfo();
      const bad: BlockWrite = {
        ...HISTORY[1]!,
        // v3 twice: the second insert violates the version key after everything else was written
        transactions: [...HISTORY[1]!.transactions.slice(0, 3), txn(3n, "block_epilogue_transaction")],
      };
      await expect(s.commitBlock(bad)).rejects.toThrow();
      expect(await s.getLedgerInfo()).toEqual(before);
      expect(await s.getBlockByHeight(1n)).toBeNull();
      expect(await s.getBlockByVersion(2n)).toBeNull();
      expect(await s.getFingerprints(1n, 10n)).toEqual([]);
      expect(await s.getUserTxnGas(0n, 10n)).toEqual([]);
      expect(await moduleNames(s, 4n)).toEqual(["b", "coin"]);
      expect(hex(await tableItem(s, H, K1, 4n))).toBe("0a");
      expect(await tableItem(s, H, K2, 4n)).toBeNull();
      expect(await s.getResource(A, R, 4n)).toBe('{"n":0}');
      // nothing half-written blocks the correct block
      await s.commitBlock(HISTORY[1]!);
      expect((await s.getLedgerInfo())?.ledgerVersion).toBe(4n);
      expect(await moduleNames(s, 4n)).toEqual(["b", "Ab", "zz", "coin"]);
    });

    it("commits several blocks at once: all of them or none", async () => {
      const probe = await fresh(4);
      await probe.commitBlocks(HISTORY.slice(0, 1));
      const bad: BlockWrite = { ...HISTORY[3]!, transactions: [HISTORY[3]!.transactions[0]!, txn(8n, "user_transaction")] };
      await expect(probe.commitBlocks([HISTORY[1]!, HISTORY[2]!, bad])).rejects.toThrow();
      expect((await probe.getLedgerInfo())?.ledgerVersion).toBe(0n);
      expect(await probe.getBlockByHeight(1n)).toBeNull();
      expect(hex(await tableItem(probe, H, K1, 9n))).toBe("0a");
      await probe.commitBlocks(HISTORY.slice(1));
      for (const v of [0n, 3n, 6n, 9n]) expect(await snapshot(probe, v)).toEqual(await snapshot(h, v));
      expect(await probe.getLedgerInfo()).toEqual(await h.getLedgerInfo());
    });

    it("keeps the ledger position of the newest block", async () => {
      expect(await h.getLedgerInfo()).toEqual({
        chainId: 4,
        ledgerVersion: 9n,
        oldestVersion: 0n,
        timestampUsec: 3_000_000n,
        epoch: 2n,
        blockHeight: 3n,
        oldestBlockHeight: 0n,
      });
      const s = await fresh(9, HISTORY.slice(0, 2));
      expect(await s.getLedgerInfo()).toMatchObject({ chainId: 9, ledgerVersion: 4n, blockHeight: 1n, epoch: 1n, timestampUsec: 1_000_000n });
    });

    it("reads modules at every version: written, overwritten, deleted, written again", async () => {
      const at = async (v: bigint) =>
        Promise.all((await modulesAt(h, A, v, null, 100)).map(async (m) => `${m.name}=${hex(await h.getModuleCode(m.codeHash))!.slice(-2)}`));
      expect(await at(0n)).toEqual(["b=01", "coin=00"]);
      expect(await at(1n)).toEqual(["b=01", "coin=00"]);
      expect(await at(2n)).toEqual(["b=01", "coin=02"]);
      expect(await at(3n)).toEqual(["b=01", "Ab=04", "zz=03", "coin=02"]);
      expect(await at(6n)).toEqual(["Ab=04", "aa=06", "zz=03", "coin=02"]);
      expect(await at(8n)).toEqual(["Ab=04", "aa=06", "zz=03", "coin=02"]);
      expect(await at(9n)).toEqual(["b=07", "Ab=04", "aa=06", "zz=03", "coin=02"]);
      expect(await at(U64_MAX)).toEqual(await at(9n));
      const [m] = await modulesAt(h, A, 9n, null, 1);
      expect(m!.stateKey).toEqual(Buffer.from(moduleStateKey(A, "b")));
      expect(m!.codeHash).toBe(sha(code(7)));
      expect(await moduleNames(h, 9n, B)).toEqual(["x"]);
      expect(await moduleNames(h, 2n, B)).toEqual([]);
      expect(await moduleNames(h, 9n, NOBODY)).toEqual([]);
    });

    it("orders modules by state key and pages from an inclusive start key", async () => {
      // shorter names first, then bytewise ("Ab" < "aa": 0x41 < 0x61), not by locale
      expect(await moduleNames(h, 9n, A, null, 2)).toEqual(["b", "Ab"]);
      expect(await moduleNames(h, 9n, A, moduleStateKey(A, "aa"), 2)).toEqual(["aa", "zz"]);
      expect(await moduleNames(h, 9n, A, moduleStateKey(A, "ab"), 100)).toEqual(["zz", "coin"]);
      expect(await moduleNames(h, 9n, A, moduleStateKey(A, "coin"), 100)).toEqual(["coin"]);
      expect(await moduleNames(h, 9n, A, moduleStateKey(A, "zzzzz"), 100)).toEqual([]);
      // a start key of a module deleted at that version skips it, the rest follows
      expect(await moduleNames(h, 6n, A, moduleStateKey(A, "b"), 100)).toEqual(["Ab", "aa", "zz", "coin"]);
    });

    it("reads table items and resources at every version, deletions as null", async () => {
      const k1 = await Promise.all([0n, 1n, 2n, 5n, 6n, 8n, 9n, U64_MAX].map(async (v) => hex(await tableItem(h, H, K1, v))));
      expect(k1).toEqual(["0a", "0a", "0b", "0b", null, null, "0c", "0c"]);
      expect(await tableItem(h, H, K2, 1n)).toBeNull();
      expect(hex(await tableItem(h, H, K2, 2n))).toBe("14");
      expect(hex(await tableItem(h, H, K3, 9n))).toBe("1f"); // written twice at v9: the last wins
      expect(await tableItem(h, NOBODY, K1, 9n)).toBeNull();
      expect(await tableItem(h, H, bytes(1, 0), 9n)).toBeNull();
      const r = await Promise.all([0n, 1n, 2n, 5n, 6n, 9n].map((v) => h.getResource(A, R, v)));
      expect(r).toEqual(['{"n":0}', '{"n":0}', '{"n":1}', '{"n":1}', null, null]);
      expect(await h.getResource(A, R + "2", 2n)).toBeNull();
      expect(await h.getResource(B, R, 2n)).toBeNull();
    });

    it("reads a resource with the ledger position of the same snapshot, at a version or at the newest, deletions as null", async () => {
      const at = await Promise.all([0n, 2n, 5n, 6n, 9n].map(async (v) => (await h.readResource(A, R, v))?.value));
      expect(at).toEqual(['{"n":0}', '{"n":1}', '{"n":1}', null, null]);
      const newest = await h.readResource(A, R, undefined);
      expect(newest?.info.ledgerVersion).toBe(9n);
      expect(newest?.value).toBeNull();
      expect((await h.readResource(B, R, 2n))?.value).toBeNull();
      expect((await h.readResource(A, `${R}2`, 2n))?.value).toBeNull();
    });

    it("pages an account's resources in state-key order from an inclusive start key, with the version of its newest resource change", async () => {
      const T = (name: string) => `0x1::m::${name}`;
      const r = (version: bigint, type: string, json: string | null) => ({ version, address: B, type, json });
      const s = await fresh(4, [
        { block: block(0n, 0n, 0n, 0n, 0n), transactions: [txn(0n, "genesis_transaction")], modules: [], tableItems: [], resources: [r(0n, T("Zed"), '{"z":0}'), r(0n, T("Ab"), '{"a":0}'), r(0n, "0x1::m::C<u8>", '{"c":8}')] },
        { block: block(1n, 0n, 1n, 1n, 1n), transactions: [txn(1n, "block_metadata_transaction")], modules: [], tableItems: [], resources: [r(1n, T("Ab"), '{"a":1}'), r(1n, T("Zed"), null), r(1n, "0x1::a::B", '{"b":1}')] },
        { block: block(2n, 0n, 2n, 2n, 2n), transactions: [txn(2n, "block_metadata_transaction")], modules: [], tableItems: [], resources: [r(2n, T("Ab"), '{"a":2}')] },
      ]);
      const page = async (v: bigint | undefined, start: Uint8Array | null, limit: number) => (await s.readResources(B, v, start, limit))!.value;
      const key = (type: string) => resourceStateKey(B, parseStructTag(type) as StructTag);
      // the state key orders by the path's length first (shorter module and struct names), then bytewise
      const at0 = await page(0n, null, 100);
      expect(at0.rows.map((x) => [x.type, x.json])).toEqual([
        ["0x1::m::C<u8>", '{"c":8}'],
        [T("Ab"), '{"a":0}'],
        [T("Zed"), '{"z":0}'],
      ]);
      expect(at0.changed).toBe(0n);
      const at1 = await page(1n, null, 100);
      expect(at1.rows.map((x) => x.type)).toEqual(["0x1::a::B", "0x1::m::C<u8>", T("Ab")]);
      expect(at1.changed).toBe(1n);
      expect((await page(undefined, null, 2)).rows.map((x) => [x.type, x.json])).toEqual([["0x1::a::B", '{"b":1}'], ["0x1::m::C<u8>", '{"c":8}']]);
      expect((await page(undefined, null, 0)).changed).toBe(2n);
      expect((await page(2n, key(T("Ab")), 100)).rows.map((x) => [x.type, x.json])).toEqual([[T("Ab"), '{"a":2}']]);
      // a start key no resource has (never written, or deleted at that version) starts at the next
      expect((await page(1n, key(T("B")), 100)).rows.map((x) => x.type)).toEqual(["0x1::m::C<u8>", T("Ab")]);
      expect((await page(1n, key(T("Zed")), 100)).rows).toEqual([]);
      expect((await page(0n, key(T("Zed")), 100)).rows.map((x) => x.type)).toEqual([T("Zed")]);
      const none = await s.readResources(A, 1n, null, 100);
      expect(none?.value).toEqual({ changed: null, rows: [] });
      expect(none?.info.ledgerVersion).toBe(2n);
    });

    it("reads one module by name with its bytecode and ABI text, at every version, deletions as null", async () => {
      const names = async (v: bigint | undefined) =>
        Promise.all(["coin", "b", "aa", "nope"].map(async (n) => {
          const snap = await h.readModule(A, n, v);
          return snap?.value ? [n, hex(snap.value.bytecode ?? null), snap.value.abi] : [n, null];
        }));
      expect(await names(0n)).toEqual([["coin", hex(code(0)), "null"], ["b", hex(code(1)), "null"], ["aa", null], ["nope", null]]);
      expect(await names(6n)).toEqual([["coin", hex(code(2)), "null"], ["b", null], ["aa", hex(code(6)), "null"], ["nope", null]]);
      const newest = await h.readModule(A, "b", undefined);
      expect(newest?.info.ledgerVersion).toBe(9n);
      expect(hex(newest?.value?.bytecode ?? null)).toBe(hex(code(7)));
      expect(newest?.value?.codeHash).toBe(sha(code(7)));
      expect((await h.readModule(B, "coin", 9n))?.value).toBeNull();
    });

    it("reads a table item with the ledger position of the same snapshot, at a version or at the newest", async () => {
      const info = (await h.getLedgerInfo())!;
      const latest = await h.readTableItem(H, K1, undefined);
      expect(latest?.info).toEqual(info);
      expect(hex(latest!.value)).toBe("0c");
      // every version reads what the plain versioned read gives, with the same position beside it
      for (const v of [0n, 1n, 2n, 5n, 6n, 8n, 9n]) {
        for (const k of [K1, K2, K3, bytes(1, 0)]) {
          const snap = await h.readTableItem(H, k, v);
          expect(snap?.info).toEqual(info);
          expect(hex(snap!.value)).toBe(hex(await tableItem(h, H, k, v)));
        }
      }
      // a version past the ledger still answers (the caller turns it into 404), past i64 too
      expect(hex((await h.readTableItem(H, K1, U64_MAX))!.value)).toBe("0c");
      expect((await h.readTableItem(NOBODY, K1, undefined))!.value).toBeNull();
    });

    it("answers every read anew after another connection commits or prunes (no stale repeat of an earlier answer)", async () => {
      const db = await backend.newDb();
      const reader = await openStore(db);
      const writer = await openStore(db);
      opened.push(reader, writer);
      await writer.initChain(4);
      await writer.commitBlocks(HISTORY.slice(0, 2));
      // every read twice, so a store that keeps answers has kept them
      const reads = async () => {
        const out = [];
        for (let i = 0; i < 2; i++) {
          out.push({
            info: await reader.getLedgerInfo(),
            item: hex((await reader.readTableItem(H, K1, undefined))!.value),
            modules: (await reader.readModulesVersion(A, undefined))!.value,
            summaries: (await reader.readSummariesVersion(A, undefined))!.value,
            itemAt2: hex((await reader.readTableItem(H, K1, 2n))!.value),
          });
        }
        expect(out[1]).toEqual(out[0]);
        return out[0]!;
      };
      expect(await reads()).toMatchObject({ item: "0b", modules: 3n, summaries: 2n, itemAt2: "0b", info: { ledgerVersion: 4n } });
      await writer.commitBlocks(HISTORY.slice(2));
      expect(await reads()).toMatchObject({ item: "0c", modules: 9n, summaries: 9n, itemAt2: "0b", info: { ledgerVersion: 9n, oldestVersion: 0n } });
      await writer.prune({ oldestVersion: 5n, oldestBlockHeight: 2n });
      expect(await reads()).toMatchObject({ item: "0c", modules: 9n, summaries: 9n, info: { oldestVersion: 5n } });
    });

    it("with a memo lag, answers another connection's commit once the lag has passed, and a fresh ledger read at once", async () => {
      const LAG_MS = 40;
      // The lag is measured on performance.now(): faked here, moved past the lag below.
      vi.useFakeTimers({ toFake: ["performance"] });
      onTestFinished(() => void vi.useRealTimers());
      const db = await backend.newDb();
      const reader = await openStore(db, { memoLagMs: LAG_MS });
      const writer = await openStore(db);
      opened.push(reader, writer);
      await writer.initChain(4);
      await writer.commitBlocks(HISTORY.slice(0, 2));
      const reads = async () => ({
        info: (await reader.getLedgerInfo())?.ledgerVersion,
        item: hex((await reader.readTableItem(H, K1, undefined))!.value),
        modules: (await reader.readModulesVersion(A, undefined))!.value,
        summaries: (await reader.readSummariesVersion(A, undefined))!.value,
      });
      expect(await reads()).toEqual({ info: 4n, item: "0b", modules: 3n, summaries: 2n });
      await writer.commitBlocks(HISTORY.slice(2));
      // asked fresh, the position is the database's at once
      expect((await reader.getLedgerInfo(true))?.ledgerVersion).toBe(9n);
      await writer.prune({ oldestVersion: 5n, oldestBlockHeight: 2n });
      vi.advanceTimersByTime(LAG_MS + 10);
      expect(await reads()).toEqual({ info: 9n, item: "0c", modules: 9n, summaries: 9n });
      expect((await reader.getLedgerInfo())?.oldestVersion).toBe(5n);
      // a read the memo does not hold goes to the database even within the lag
      await writer.commitBlock({
        block: block(4n, 2n, 4_000_000n, 10n, 10n),
        transactions: [txn(10n, "block_metadata_transaction")],
        modules: [],
        tableItems: [item(10n, K2, bytes(0x21))],
        resources: [],
      });
      const k2 = (await reader.readTableItem(H, K2, undefined))!;
      expect({ version: k2.info.ledgerVersion, value: hex(k2.value) }).toEqual({ version: 10n, value: "21" });
      // and, having seen version 10, the reader answers nothing older from its memo
      expect((await reader.getLedgerInfo())?.ledgerVersion).toBe(10n);
      expect((await reader.readTableItem(H, K1, undefined))!.info.ledgerVersion).toBe(10n);
    });

    it("answers every read with a Promise, a memoized one too, and the ledger position as a plain value", async () => {
      const db = await backend.newDb();
      const writer = await openStore(db);
      const reader = await openStore(db, { memoLagMs: 60_000 });
      opened.push(reader, writer);
      await writer.initChain(4);
      await writer.commitBlocks(HISTORY.slice(0, 2));
      for (let round = 0; round < 2; round++) {
        // the second round is answered from the memo where the store keeps one
        const reads = [
          reader.getLedgerInfo(),
          reader.readTableItem(H, K1, undefined),
          reader.readModulesVersion(A, undefined),
          reader.readSummariesVersion(A, 3n),
        ] as const;
        for (const r of reads) expect(r).toBeInstanceOf(Promise);
        const [info, item, modules, summaries] = await Promise.all(reads);
        // the same position, field by field, whichever object each read built
        for (const snap of [item, modules, summaries]) expect(snap?.info).toEqual(info);
      }
    });

    it("names the version of an account's newest module write or deletion, beside the ledger position", async () => {
      const info = (await h.getLedgerInfo())!;
      const at = async (v: bigint | undefined, a = A) => {
        const snap = (await h.readModulesVersion(a, v))!;
        expect(snap.info).toEqual(info);
        return snap.value;
      };
      // A's modules change at v0, v2, v3, v6 (a deletion counts) and v9
      expect(await Promise.all([0n, 1n, 2n, 3n, 5n, 6n, 8n, 9n, U64_MAX, undefined].map((v) => at(v)))).toEqual([
        0n, 0n, 2n, 3n, 3n, 6n, 6n, 9n, 9n, 9n,
      ]);
      expect(await at(2n, B)).toBeNull();
      expect(await at(undefined, B)).toBe(3n);
      expect(await at(undefined, NOBODY)).toBeNull();
    });

    it("names the version of an account's newest transaction at or below an end and the ledger", async () => {
      const info = (await h.getLedgerInfo())!;
      const newest = async (end: bigint | undefined, sender = A) => {
        const snap = (await h.readSummariesVersion(sender, end))!;
        expect(snap.info).toEqual(info);
        return snap.value;
      };
      expect(await Promise.all([undefined, U64_MAX, 9n, 8n, 6n, 5n, 2n, 1n, 0n].map((e) => newest(e)))).toEqual([
        9n, 9n, 9n, 6n, 6n, 2n, 2n, null, null,
      ]);
      expect(await newest(undefined, B)).toBe(3n);
      expect(await newest(undefined, NOBODY)).toBeNull();
    });

    it("pages transaction summaries forward, backward, by limit and below the ledger version", async () => {
      expect(await summaryVersions(h, {})).toEqual([2n, 6n, 9n]);
      expect(await summaryVersions(h, { limit: 2 })).toEqual([6n, 9n]);
      expect(await summaryVersions(h, { limit: 0 })).toEqual([]);
      expect(await summaryVersions(h, { start: 3n })).toEqual([6n, 9n]);
      expect(await summaryVersions(h, { start: 2n, limit: 1 })).toEqual([2n]);
      expect(await summaryVersions(h, { start: 0n, ledgerVersion: 6n })).toEqual([2n, 6n]);
      expect(await summaryVersions(h, { start: 3n, end: 2n })).toEqual([6n, 9n]); // end ignored with start
      expect(await summaryVersions(h, { start: 10n })).toEqual([]);
      expect(await summaryVersions(h, { start: U64_MAX })).toEqual([]);
      expect(await summaryVersions(h, { end: 6n })).toEqual([2n, 6n]);
      expect(await summaryVersions(h, { end: 8n, limit: 1 })).toEqual([6n]);
      expect(await summaryVersions(h, { end: 100n, ledgerVersion: 6n })).toEqual([2n, 6n]);
      expect(await summaryVersions(h, { end: U64_MAX })).toEqual([2n, 6n, 9n]);
      expect(await summaryVersions(h, { ledgerVersion: 5n })).toEqual([2n]);
      expect(await summaryVersions(h, { sender: NOBODY })).toEqual([]);
      const [s6] = await summariesAt(h, { sender: A, start: 6n, ledgerVersion: 9n, limit: 1 });
      expect(s6).toEqual({ sender: Buffer.from(A), version: 6n, hashHex: Buffer.from(hashOf(6n)).toString("hex"), replayProtector: seq(1n) });
      const [sb] = await summariesAt(h, { sender: B, ledgerVersion: 9n, limit: 10 });
      expect(sb?.replayProtector).toEqual({ type: "nonce", value: 77n });
    });

    it("reads a summaries page with the ledger position and the newest version of the same snapshot, as the separate reads give them", async () => {
      const bounds = [undefined, 0n, 1n, 2n, 3n, 5n, 6n, 8n, 9n, 10n, U64_MAX];
      const agree = async (s: Storage) => {
        const info = await s.getLedgerInfo(true);
        for (const sender of [A, B, NOBODY])
          for (const start of bounds)
            for (const end of bounds)
              for (const limit of [0, 1, 2, 100]) {
                const q = { sender, start, end, limit };
                const expected = {
                  info,
                  value: {
                    newest: (await s.readSummariesVersion(sender, start === undefined ? end : undefined))!.value,
                    rows: await summariesAt(s, { ...q, ledgerVersion: info!.ledgerVersion }),
                  },
                };
                const what = JSON.stringify({ start: start?.toString(), end: end?.toString(), limit });
                expect(await s.readSummaries(q), what).toEqual(expected);
              }
      };
      await agree(h);
      const s = await fresh(4, HISTORY);
      await s.prune({ oldestVersion: 5n, oldestBlockHeight: 2n });
      await agree(s);
      expect((await s.readSummaries({ sender: A, limit: 10 }))?.value.rows.map((r) => r.version)).toEqual([6n, 9n]);
      const empty = await fresh(4);
      expect(await empty.readSummaries({ sender: A, limit: 10 })).toBeNull();
    });

    it("reads a module page with the ledger position and the changed version of the same snapshot, as the separate reads give them", async () => {
      const starts = [null, moduleStateKey(A, "b"), moduleStateKey(A, "aa"), moduleStateKey(A, "zzzz")];
      const agree = async (s: Storage) => {
        const info = (await s.getLedgerInfo(true))!;
        for (const address of [A, B, NOBODY])
          for (const version of [undefined, info.oldestVersion, 6n, 8n, 9n, U64_MAX])
            for (const start of starts)
              for (const limit of [1, 2, 100]) {
                const expected = {
                  info,
                  value: {
                    changed: (await s.readModulesVersion(address, version))!.value,
                    rows: await modulesAt(s, address, version ?? info.ledgerVersion, start, limit),
                  },
                };
                expect(await s.readModules(address, version, start, limit), `${version} ${limit}`).toEqual(expected);
              }
      };
      await agree(h);
      const s = await fresh(4, HISTORY);
      await s.prune({ oldestVersion: 5n, oldestBlockHeight: 2n });
      await agree(s);
      expect((await s.readModules(A, undefined, null, 100))?.value.rows.map((m) => m.name)).toEqual(["b", "Ab", "aa", "zz", "coin"]);
      expect(await (await fresh(4)).readModules(A, undefined, null, 10)).toBeNull();
    });

    it("reads with a page the bytecode of the modules its caller asks for, and of no other", async () => {
      const s = await fresh(4, HISTORY);
      const listed = (await s.readModules(A, undefined, null, 100))!.value.rows;
      const skipped = listed[1]!.codeHash;
      const asked: string[] = [];
      const wanted = (hash: string) => {
        asked.push(hash);
        return hash !== skipped;
      };
      const page = (await s.readModules(A, undefined, null, 100, wanted))!.value.rows;
      expect(page.map((m) => m.name)).toEqual(listed.map((m) => m.name));
      expect(asked.sort()).toEqual(listed.map((m) => m.codeHash).sort());
      const withCode = page.filter((m) => m.codeHash !== skipped);
      const without = page.filter((m) => m.codeHash === skipped);
      expect(without.map((m) => m.bytecode)).toEqual(without.map(() => undefined));
      expect(without.length).toBeGreaterThan(0);
      const stored = await Promise.all(withCode.map(async (m) => Buffer.from((await s.getModuleCode(m.codeHash))!)));
      expect(withCode.map((m) => Buffer.from(m.bytecode!))).toEqual(stored);
    });

    it("keeps each module's ABI text with its code (`moduleAbiJson` of the bytecode), whichever way the code was written", async () => {
      // Real modules (the genesis framework, the devnet's builder) and bytes that do not decode.
      const codes = [...genesisModules().slice(0, 12).map((m) => m.bytecode), ...frameworkModules(), appModuleBytecode(0), appModuleBytecode(3), code(9)];
      const write = (at: bigint, first: number, count: number) => codes.slice(first, first + count).map((c, i) => mod(at, B, `m${first + i}`, c));
      const s = await fresh(4);
      await s.commitBlock({ block: block(0n, 0n, 0n, 0n, 0n), transactions: [txn(0n, "genesis_transaction")], modules: write(0n, 0, 8), tableItems: [], resources: [] });
      const more = [1n, 2n].map((v) => ({ block: block(v, 0n, v, v, v), transactions: [txn(v, "block_metadata_transaction")], modules: write(v, v === 1n ? 8 : 14, v === 1n ? 6 : codes.length), tableItems: [], resources: [] }));
      await s.commitBlocks(more);
      // The same code again under another name: stored once, the same text.
      await s.commitBlock({ block: block(3n, 0n, 3n, 3n, 3n), transactions: [txn(3n, "block_metadata_transaction")], modules: [mod(3n, B, "again", codes[0]!)], tableItems: [], resources: [] });
      await s.writeBaseState({ what: "modules:a", fetchedAt: 3n, modules: [mod(3n, A, "based", codes[1]!)], tableItems: [], resources: [] });
      const listed = [...(await s.readModules(B, undefined, null, 100, () => true))!.value.rows, ...(await s.readModules(A, undefined, null, 100, () => true))!.value.rows];
      expect(listed.length).toBe(codes.length + 2);
      for (const m of listed) {
        expect(m.abi, m.name).toBe(moduleAbiJson(m.bytecode!));
      }
      expect(listed.filter((m) => m.abi === "null").map((m) => m.name)).toEqual([`m${codes.length - 1}`]);
      // Read without bytecode: no ABI either (it comes with the code).
      for (const m of (await s.readModules(B, undefined, null, 100))!.value.rows) expect(m.abi, m.name).toBeUndefined();
    });

    it("reads a summaries page exact for its position while another connection commits", async () => {
      const db = await backend.newDb();
      const writer = await openStore(db);
      const reader = await openStore(db);
      opened.push(writer, reader);
      await writer.initChain(4);
      for (const [i, b] of HISTORY.entries()) {
        await writer.commitBlock(b);
        const page = await reader.readSummaries({ sender: A, limit: 100 });
        expect(page?.info.ledgerVersion).toBe(b.block.lastVersion);
        const sent = HISTORY.slice(0, i + 1).flatMap((w) => w.transactions.filter((t) => t.user?.sender === A).map((t) => t.version));
        expect(page?.value.rows.map((r) => r.version)).toEqual(sent);
        expect(page?.value.newest).toBe(sent.at(-1) ?? null);
      }
    });

    it("keeps each transaction's JSON text and reads it back by version range and by hash, with the position of the same snapshot", async () => {
      const all = await h.readTransactions(0n, 100);
      expect(all?.info).toMatchObject({ ledgerVersion: 9n, oldestVersion: 0n });
      expect(all?.value.start).toBe(0n);
      expect(textsOf(all?.value.texts)).toEqual(historyTexts(0, 9));
      // a range inside one block, across blocks, past the ledger's end, and past the ledger
      expect(textsOf((await h.readTransactions(2n, 2))?.value.texts)).toEqual(historyTexts(2, 3));
      expect(textsOf((await h.readTransactions(3n, 4))?.value.texts)).toEqual(historyTexts(3, 6));
      expect(textsOf((await h.readTransactions(8n, 5))?.value.texts)).toEqual(historyTexts(8, 9));
      expect((await h.readTransactions(10n, 5))?.value.texts).toEqual([]);
      expect((await h.readTransactions(U64_MAX, 1))?.value.texts).toEqual([]);
      expect((await h.readTransactions(0n, 0))?.value.texts).toEqual([]);

      const byHash = await h.readTransactionByHash(hashOf(6n));
      expect(byHash?.info.ledgerVersion).toBe(9n);
      expect(byHash?.value?.start).toBe(6n);
      expect(textsOf(byHash?.value?.texts)).toEqual(historyTexts(6, 6));
      expect((await h.readTransactionByHash(hashOf(10n)))?.value).toBeNull();

      // a block of texts larger than one chunk holds (history.ts cuts chunks at 16 KiB), read whole and from inside
      const big: BlockWrite = {
        block: block(4n, 2n, 4_000_000n, 10n, 49n),
        transactions: Array.from({ length: 40 }, (_, i) => {
          const version = 10n + BigInt(i);
          return { ...txn(version, i === 0 ? "block_metadata_transaction" : "user_transaction"), json: JSON.stringify({ version: String(version), pad: "x".repeat(900 + i) }) };
        }),
        modules: [],
        tableItems: [],
        resources: [],
      };
      const s = await fresh(4, [...HISTORY, big]);
      const bigTexts = big.transactions.map((t) => t.json!);
      expect(textsOf((await s.readTransactions(0n, 100))?.value.texts)).toEqual([...historyTexts(0, 9), ...bigTexts]);
      expect(textsOf((await s.readTransactions(27n, 15))?.value.texts)).toEqual(bigTexts.slice(17, 32));
      expect(textsOf((await s.readTransactionByHash(hashOf(48n)))?.value?.texts)).toEqual([bigTexts[38]]);
      // A byte budget cuts the read after the texts that fit, never before the first.
      const budget = Buffer.byteLength(bigTexts[3]!) + Buffer.byteLength(bigTexts[4]!) + 10;
      expect(textsOf((await s.readTransactions(13n, 30, budget))?.value.texts)).toEqual(bigTexts.slice(3, 5));
      expect(textsOf((await s.readTransactions(13n, 30, 1))?.value.texts)).toEqual(bigTexts.slice(3, 4));
    });

    it("pages an account's sequence-number transactions by sequence number, with their texts, orderless ones left out", async () => {
      const page = async (sender: Uint8Array, start: bigint | undefined, limit: number) => {
        const snap = await h.readAccountTransactions({ sender, start, limit });
        expect(snap?.info.ledgerVersion).toBe(9n);
        return { versions: snap?.value.versions, firstSequence: snap?.value.firstSequence, texts: textsOf(snap?.value.texts as Uint8Array[]) };
      };
      const of = (...vs: number[]) => vs.flatMap((v) => historyTexts(v, v));
      expect(await page(A, undefined, 10)).toEqual({ versions: [2n, 6n, 9n], firstSequence: 0n, texts: of(2, 6, 9) });
      expect(await page(A, undefined, 2)).toEqual({ versions: [6n, 9n], firstSequence: 1n, texts: of(6, 9) });
      expect(await page(A, 0n, 2)).toEqual({ versions: [2n, 6n], firstSequence: 0n, texts: of(2, 6) });
      expect(await page(A, 1n, 1)).toEqual({ versions: [6n], firstSequence: 1n, texts: of(6) });
      expect(await page(A, 3n, 5)).toEqual({ versions: [], firstSequence: null, texts: [] });
      expect(await page(A, U64_MAX, 5)).toEqual({ versions: [], firstSequence: null, texts: [] });
      // B sent one orderless transaction only; NOBODY nothing
      expect(await page(B, undefined, 10)).toEqual({ versions: [], firstSequence: null, texts: [] });
      expect(await page(NOBODY, 0n, 10)).toEqual({ versions: [], firstSequence: null, texts: [] });
    });

    it("pages an event handle's events by sequence number with their transactions' texts, within a byte budget, pruned with the transactions", async () => {
      // Handle (A, 2) emits one event in each of versions 2, 6 and 9 (two in 9), beside a handle (A, 3) and (B, 2).
      const ev = (account: Uint8Array, creationNumber: bigint, sequenceNumber: bigint, index: number) => ({ account, creationNumber, sequenceNumber, index });
      const withEvents: Record<string, ReturnType<typeof ev>[]> = {
        "2": [ev(A, 2n, 0n, 1), ev(A, 3n, 0n, 2)],
        "6": [ev(A, 2n, 1n, 0), ev(B, 2n, 0n, 1)],
        "9": [ev(A, 2n, 2n, 0), ev(A, 2n, 3n, 3)],
      };
      const blocks = HISTORY.map((b) => ({ ...b, transactions: b.transactions.map((t) => (withEvents[String(t.version)] ? { ...t, events: withEvents[String(t.version)] } : t)) }));
      const s = await fresh(4, blocks);
      const page = async (account: Uint8Array, creationNumber: bigint, start: bigint | undefined, limit: number, maxBytes?: number) => {
        const snap = await s.readEvents({ account, creationNumber, start, limit, ...(maxBytes === undefined ? {} : { maxBytes }) });
        expect(snap?.info.ledgerVersion).toBe(9n);
        return { events: snap?.value.events.map((e) => [e.sequenceNumber, e.version, e.index]), texts: textsOf(snap?.value.texts as Uint8Array[]) };
      };
      const of = (...vs: number[]) => vs.flatMap((v) => historyTexts(v, v));
      expect(await page(A, 2n, 0n, 10)).toEqual({ events: [[0n, 2n, 1], [1n, 6n, 0], [2n, 9n, 0], [3n, 9n, 3]], texts: of(2, 6, 9, 9) });
      expect(await page(A, 2n, 1n, 2)).toEqual({ events: [[1n, 6n, 0], [2n, 9n, 0]], texts: of(6, 9) });
      expect(await page(A, 2n, undefined, 3)).toEqual({ events: [[1n, 6n, 0], [2n, 9n, 0], [3n, 9n, 3]], texts: of(6, 9, 9) });
      expect(await page(A, 3n, undefined, 10)).toEqual({ events: [[0n, 2n, 2]], texts: of(2) });
      expect(await page(B, 2n, 0n, 10)).toEqual({ events: [[0n, 6n, 1]], texts: of(6) });
      for (const [account, creation, start] of [[A, 2n, 4n], [A, 2n, U64_MAX], [A, 4n, 0n], [NOBODY, 2n, 0n], [A, U64_MAX, 0n]] as const) {
        expect(await page(account, creation, start, 10)).toEqual({ events: [], texts: [] });
      }
      expect(await page(A, 2n, 0n, 0)).toEqual({ events: [], texts: [] });
      // The budget counts a transaction's text once however many of its events the page holds; never none.
      const budget = Buffer.byteLength(of(6)[0]!) + Buffer.byteLength(of(9)[0]!);
      expect((await page(A, 2n, 1n, 10, budget)).texts).toEqual(of(6, 9, 9));
      expect((await page(A, 2n, 1n, 10, budget - 1)).texts).toEqual(of(6));
      expect((await page(A, 2n, 1n, 10, 1)).texts).toEqual(of(6));
      expect((await page(A, 2n, 1n, 10, 1)).events).toHaveLength(3);
      // Pruned with the transactions: version 2's event goes, the others stay.
      await s.prune({ oldestVersion: 5n, oldestBlockHeight: 2n });
      const after = await s.readEvents({ account: A, creationNumber: 2n, start: 0n, limit: 10 });
      expect(after?.value.events.map((e) => e.sequenceNumber)).toEqual([1n, 2n, 3n]);
      expect((await s.readEvents({ account: A, creationNumber: 3n, limit: 10 }))?.value.events).toEqual([]);
    });

    it("keeps no history for a transaction written without its text, and invents none", async () => {
      const bare = HISTORY.map((b) => ({ ...b, transactions: b.transactions.map(({ json: _json, ...t }) => (t.version === 6n ? t : { ...t, json: _json })) }));
      const s = await fresh(4, bare);
      expect(textsOf((await s.readTransactions(0n, 100))?.value.texts)).toEqual(historyTexts(0, 5));
      expect((await s.readTransactions(6n, 3))?.value.texts).toEqual([]);
      expect(textsOf((await s.readTransactions(7n, 3))?.value.texts)).toEqual(historyTexts(7, 9));
      // the transaction is committed (its hash finds it), its text is not kept
      expect((await s.readTransactionByHash(hashOf(6n)))?.value).toEqual({ start: 6n, texts: [] });
      expect((await s.readAccountTransactions({ sender: A, limit: 10 }))?.value.texts.map((t) => (t === null ? null : Buffer.from(t).toString()))).toEqual([
        historyTexts(2, 2)[0],
        null,
        historyTexts(9, 9)[0],
      ]);
    });

    it("finds blocks by version, height and time", async () => {
      const heightOf = async (p: Promise<BlockInfo | null>) => (await p)?.height ?? null;
      const byVersion = await Promise.all([0n, 1n, 4n, 5n, 7n, 8n, 9n, 10n, U64_MAX].map((v) => heightOf(h.getBlockByVersion(v))));
      expect(byVersion).toEqual([0n, 1n, 1n, 2n, 2n, 3n, 3n, null, null]);
      expect(await h.getBlockByHeight(1n)).toEqual(HISTORY[1]!.block);
      expect(await h.getBlockByHeight(2n)).toEqual(HISTORY[2]!.block);
      expect(await h.getBlockByHeight(4n)).toBeNull();
      expect(await h.getBlockByHeight(U64_MAX)).toBeNull();
      // (2^62, not 2^64-1: SQLite keeps timestamps as signed 64-bit, so bounds >= 2^63 wrap there)
      const byTime = await Promise.all([0n, 1n, 1_000_000n, 1_000_001n, 3_000_000n, 3_000_001n, 1n << 62n].map((t) => heightOf(h.getFirstBlockAtOrAfter(t))));
      expect(byTime).toEqual([0n, 1n, 1n, 2n, 3n, null, null]);
    });

    it("lists user transaction gas and stored fingerprints by version range", async () => {
      expect(await h.getUserTxnGas(0n, 9n)).toEqual([
        { version: 2n, gasUnitPrice: 100n, gasUsed: 10n, contractAddress: CONTRACT_A },
        { version: 3n, gasUnitPrice: 150n, gasUsed: 20n, contractAddress: null },
        { version: 6n, gasUnitPrice: 200n, gasUsed: 30n, contractAddress: CONTRACT_1 },
        { version: 9n, gasUnitPrice: 300n, gasUsed: 40n, contractAddress: null },
      ]);
      expect((await h.getUserTxnGas(3n, 6n)).map((g) => g.version)).toEqual([3n, 6n]);
      expect((await h.getUserTxnGas(7n, U64_MAX)).map((g) => g.version)).toEqual([9n]);
      expect(await h.getFingerprints(4n, 6n)).toEqual([
        { version: 4n, kind: "block_epilogue_transaction", hash: Buffer.from(hashOf(4n)) },
        { version: 5n, kind: "block_metadata_transaction", hash: Buffer.from(hashOf(5n)) },
        { version: 6n, kind: "user_transaction", hash: Buffer.from(hashOf(6n)) },
      ]);
      expect((await h.getFingerprints(0n, 0n))[0]?.kind).toBe("genesis_transaction");
      expect(await h.getFingerprints(10n, U64_MAX)).toEqual([]);
    });

    it("records base state a follower fetched once, with its rows, and names the newest version of a state key", async () => {
      // A ledger that starts at version 5 (a follower's first block), base state at version 4.
      const s = await fresh(4, [
        {
          block: block(7n, 1n, 7_000_000n, 5n, 6n),
          transactions: [txn(5n, "block_metadata_transaction"), txn(6n, "block_epilogue_transaction")],
          modules: [],
          tableItems: [item(6n, K2, bytes(2))],
          resources: [],
        },
      ]);
      expect(await s.getBaseRecord("table:7:1")).toBeNull();
      await s.writeBaseState({ what: "table:7:1", fetchedAt: 4n, modules: [], tableItems: [item(4n, K1, bytes(9))], resources: [] });
      await s.writeBaseState({
        what: "modules:a",
        fetchedAt: 5n,
        modules: [mod(4n, A, "coin", code(7))],
        tableItems: [],
        resources: [res(4n, '{"base":true}')],
      });
      // A second write of the same record changes nothing, rows included.
      await s.writeBaseState({ what: "table:7:1", fetchedAt: 4n, modules: [], tableItems: [item(4n, K1, bytes(1))], resources: [] });
      expect(await s.getBaseRecord("table:7:1")).toBe(4n);
      expect(await s.getBaseRecord("modules:a")).toBe(5n);
      expect(hex(await tableItem(s, H, K1, 5n))).toBe("09");
      expect(hex(await tableItem(s, H, K1, 6n))).toBe("09");
      expect((await modulesAt(s, A, 6n, null, 10)).map((m) => m.name)).toEqual(["coin"]);
      expect(hex(await s.getModuleCode(sha(code(7))))).toBe(hex(code(7)));
      expect(await s.getResource(A, R, 5n)).toBe('{"base":true}');
      expect(await s.newestStateVersion({ kind: "table_item", handle: H, key: K2 }, 6n)).toBe(6n);
      expect(await s.newestStateVersion({ kind: "table_item", handle: H, key: K2 }, 5n)).toBeNull();
      expect(await s.newestStateVersion({ kind: "table_item", handle: H, key: K1 }, 6n)).toBe(4n);
      expect(await s.newestStateVersion({ kind: "resource", address: A, type: R }, 6n)).toBe(4n);
      expect(await s.newestStateVersion({ kind: "resource", address: B, type: R }, 6n)).toBeNull();
      // The ledger itself is untouched: its oldest version is still the first synced one.
      expect((await s.getLedgerInfo(true))?.oldestVersion).toBe(5n);
    });

    it("prunes: raises the oldest version, drops superseded rows, keeps every read at or above it", async () => {
      const s = await fresh(4, HISTORY);
      const versions = [5n, 6n, 7n, 8n, 9n];
      const before = await Promise.all(versions.map((v) => snapshot(s, v)));

      const r1 = await s.prune({ oldestVersion: 5n, oldestBlockHeight: 2n });
      // v0 rows of A::coin, k1 and R are superseded by v2 rows at or below 5
      expect(r1).toEqual({ transactionsDeleted: 5, blocksDeleted: 2, stateRowsDeleted: 3 });
      expect(await s.getLedgerInfo()).toMatchObject({ ledgerVersion: 9n, oldestVersion: 5n, oldestBlockHeight: 2n, blockHeight: 3n });
      // a snapshot read shows the raised oldest version, so the caller answers 410 below it
      expect((await s.readTableItem(H, K1, 1n))?.info).toMatchObject({ ledgerVersion: 9n, oldestVersion: 5n });
      expect(await Promise.all(versions.map((v) => snapshot(s, v)))).toEqual(before);
      // the superseded rows are really gone (reads below the oldest version are not kept exact)
      expect(await tableItem(s, H, K1, 1n)).toBeNull();
      expect(await s.getResource(A, R, 1n)).toBeNull();
      // the newest value of every key at or below the oldest version stays, however old
      expect(await moduleNames(s, 5n, B)).toEqual(["x"]);
      expect(hex(await tableItem(s, H, K2, 5n))).toBe("14");
      // transactions and blocks below it are gone
      expect(await s.getBlockByHeight(1n)).toBeNull();
      expect(await s.getBlockByVersion(3n)).toBeNull();
      expect((await s.getFingerprints(0n, 9n)).map((f) => f.version)).toEqual([5n, 6n, 7n, 8n, 9n]);
      expect((await s.getUserTxnGas(0n, 9n)).map((g) => g.version)).toEqual([6n, 9n]);
      expect(await summaryVersions(s, {})).toEqual([6n, 9n]);
      // and so is their history; the history kept is read as before
      expect((await s.readTransactions(0n, 10))?.value.texts).toEqual([]);
      expect((await s.readTransactions(4n, 10))?.value.texts).toEqual([]);
      expect(textsOf((await s.readTransactions(5n, 10))?.value.texts)).toEqual(historyTexts(5, 9));
      expect(textsOf((await s.readTransactionByHash(hashOf(5n)))?.value?.texts)).toEqual(historyTexts(5, 5));

      // not above the current oldest version: nothing happens
      expect(await s.prune({ oldestVersion: 5n, oldestBlockHeight: 2n })).toEqual({ transactionsDeleted: 0, blocksDeleted: 0, stateRowsDeleted: 0 });
      expect(await s.prune({ oldestVersion: 1n, oldestBlockHeight: 1n })).toEqual({ transactionsDeleted: 0, blocksDeleted: 0, stateRowsDeleted: 0 });
      expect((await s.getLedgerInfo())?.oldestVersion).toBe(5n);

      // to the last block: A::b (v0), k1 (v2) and R (v2) are superseded by their v6 deletions,
      // which then hide nothing and go too (A::b and k1 live on in their v9 rows)
      const r2 = await s.prune({ oldestVersion: 8n, oldestBlockHeight: 3n });
      expect(r2).toEqual({ transactionsDeleted: 3, blocksDeleted: 1, stateRowsDeleted: 6 });
      expect(await snapshot(s, 8n)).toEqual(before[3]);
      expect(await snapshot(s, 9n)).toEqual(before[4]);
      expect(await s.getLedgerInfo()).toMatchObject({ oldestVersion: 8n, oldestBlockHeight: 3n });

      // the ledger goes on after pruning
      await s.commitBlock({
        block: block(4n, 2n, 4_000_000n, 10n, 10n),
        transactions: [txn(10n, "block_metadata_transaction")],
        modules: [],
        tableItems: [item(10n, K2, null)],
        resources: [res(10n, '{"n":2}')],
      });
      expect(await tableItem(s, H, K2, 10n)).toBeNull();
      expect(hex(await tableItem(s, H, K2, 9n))).toBe("14");
      expect(await s.getResource(A, R, 10n)).toBe('{"n":2}');
      expect(await s.prune({ oldestVersion: 10n, oldestBlockHeight: 4n })).toEqual({ transactionsDeleted: 2, blocksDeleted: 1, stateRowsDeleted: 2 });
      expect(await tableItem(s, H, K2, 10n)).toBeNull();
      expect(await moduleNames(s, 10n)).toEqual(["b", "Ab", "aa", "zz", "coin"]);
    });

    it(`lists an account's modules at every version as a model of a random long history says, before and after pruning (seed ${MODULE_HISTORY_SEED})`, async () => {
      const random = prng(MODULE_HISTORY_SEED);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
      // neighbours just below and above A: a walk over A's keys must not stray into theirs
      const below = addr(0x9);
      const above = addr(0xb);
      const names = ["a", "b", "Ab", "aa", "zz", "coin", "coin2", "x", "long_module_name", "B", "m0", "m1"];
      /** address hex + name -> writes in version order (null: deletion) */
      const model = new Map<string, { address: Uint8Array; name: string; writes: Array<{ version: bigint; bytecode: Uint8Array | null }> }>();
      const blocks: BlockWrite[] = [];
      let version = 0n;
      for (let height = 0n; height < 60n; height++) {
        const first = version;
        const modules: BlockWrite["modules"] = [];
        const transactions: BlockWrite["transactions"] = [];
        for (let t = 0; t < 1 + Math.floor(random() * 3); t++, version++) {
          transactions.push(txn(version, height === 0n && t === 0 ? "genesis_transaction" : "user_transaction", height === 0n && t === 0 ? null : user(A, seq(version), 100n, 1n)));
          // one module key takes most upgrades: a long history beside short ones
          for (let w = 0; w < Math.floor(random() * 4); w++) {
            const address = random() < 0.7 ? A : pick([below, above]);
            const name = random() < 0.5 ? "coin" : pick(names);
            const bytecode = random() < 0.2 ? null : code(Math.floor(random() * 256));
            modules.push(mod(version, address, name, bytecode));
            const key = `${hex(address)}/${name}`;
            const entry = model.get(key) ?? { address, name, writes: [] };
            model.set(key, entry);
            // a key written twice at one version: the last write stands
            if (entry.writes.at(-1)?.version === version) entry.writes.pop();
            entry.writes.push({ version, bytecode });
          }
        }
        blocks.push({ block: block(height, 0n, height * 1000n, first, version - 1n), transactions, modules, tableItems: [], resources: [] });
      }
      const s = await fresh(4, blocks);
      const last = version - 1n;
      const expected = (address: Uint8Array, at: bigint, start: Uint8Array | null, limit: number) =>
        [...model.values()]
          .filter((m) => Buffer.compare(Buffer.from(m.address), Buffer.from(address)) === 0)
          .map((m) => ({ ...m, stateKey: Buffer.from(moduleStateKey(m.address, m.name)), newest: m.writes.filter((w) => w.version <= at).at(-1) }))
          .filter((m) => m.newest?.bytecode && (start === null || Buffer.compare(m.stateKey, Buffer.from(start)) >= 0))
          .sort((x, y) => Buffer.compare(x.stateKey, y.stateKey))
          .slice(0, limit)
          .map((m) => `${m.name}=${sha(m.newest!.bytecode!)}`);
      const listed = async (address: Uint8Array, at: bigint, start: Uint8Array | null, limit: number) =>
        (await modulesAt(s, address, at, start, limit)).map((m) => `${m.name}=${m.codeHash}`);
      const check = async (from: bigint) => {
        for (let i = 0; i < 60; i++) {
          const at = from + BigInt(Math.floor(random() * Number(last - from + 1n)));
          const address = pick([A, A, below, above]);
          const start = random() < 0.3 ? moduleStateKey(address, pick(names)) : null;
          const limit = 1 + Math.floor(random() * 8);
          expect(await listed(address, at, start, limit), `at ${at} limit ${limit}`).toEqual(expected(address, at, start, limit));
        }
        expect(await listed(A, U64_MAX, null, 100)).toEqual(expected(A, last, null, 100));
      };
      await check(0n);
      const oldest = blocks[30]!.block;
      await s.prune({ oldestVersion: oldest.firstVersion, oldestBlockHeight: oldest.height });
      await check(oldest.firstVersion);
    });

    it("round-trips u64 extremes exactly", async () => {
      const big = 1n << 63n;
      const s = await fresh(255, [
        {
          block: block(0n, 0n, U64_MAX, 0n, 2n),
          transactions: [
            txn(0n, "genesis_transaction"),
            txn(1n, "user_transaction", user(A, { type: "nonce", value: U64_MAX }, U64_MAX, U64_MAX)),
            txn(2n, "user_transaction", user(A, seq(big), big, big - 1n)),
          ],
          modules: [],
          tableItems: [],
          resources: [],
        },
      ]);
      expect(await s.getLedgerInfo()).toMatchObject({ chainId: 255, timestampUsec: U64_MAX });
      expect((await summariesAt(s, { sender: A, ledgerVersion: 2n, limit: 10 })).map((r) => r.replayProtector)).toEqual([
        { type: "nonce", value: U64_MAX },
        { type: "sequence_number", value: big },
      ]);
      expect(await s.getUserTxnGas(0n, U64_MAX)).toEqual([
        { version: 1n, gasUnitPrice: U64_MAX, gasUsed: U64_MAX, contractAddress: null },
        { version: 2n, gasUnitPrice: big, gasUsed: big - 1n, contractAddress: null },
      ]);
      expect((await s.getFirstBlockAtOrAfter(U64_MAX))?.timestampUsec).toBe(U64_MAX);
      expect((await s.getBlockByHeight(0n))?.timestampUsec).toBe(U64_MAX);
    });
  });
}
