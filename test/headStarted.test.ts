/**
 * A head-started replica's reads (`HeadStartedStorage`): state from before the first synced block
 * that was never fetched is a typed miss naming it, never an empty answer; once its base record is
 * stored the read answers from the ledger. On SQLite and PostgreSQL, over real databases.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Devnet } from "../src/ingest/devnet/devnet.js";
import { parseAddress } from "../src/ledger/address.js";
import { StateBeforeBaseError } from "../src/storage/contracts/errors.js";
import { FIRST_SYNCED_RECORD } from "../src/storage/contracts/followBase.js";
import { baseRecordName } from "../src/storage/replica/baseRecords.js";
import { HeadStartedStorage, mayBeHeadStarted } from "../src/storage/replica/HeadStartedStorage.js";
import { openStore } from "../src/storage/open.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { backendFactories } from "./helpers/backends.js";

const EMPTY = { modules: [], tableItems: [], resources: [] };
const FRAMEWORK = parseAddress("0x1")!;
const TABLE = new Uint8Array(32).fill(0xab);
const KEY = new Uint8Array([1, 2, 3]);

async function ledgerWithBlocks(db: string): Promise<Storage> {
  const store = await openStore(db, { create: true });
  const devnet = await Devnet.open(store, { chainId: 4 });
  for (let i = 0; i < 3; i++) await devnet.produceBlock();
  await devnet.stop();
  return store;
}

for (const make of backendFactories) {
  const backend = make();
  afterAll(() => backend.cleanup());

  describe(`a head-started replica's reads on ${backend.name}`, () => {
    it("a key no synced block wrote is a miss naming it, its version and the base; stored, it is read", async () => {
      const store = await ledgerWithBlocks(await backend.newDb());
      try {
        await store.writeBaseState({ what: FIRST_SYNCED_RECORD, fetchedAt: 2n, ...EMPTY });
        const replica = new HeadStartedStorage(store);
        const at = (await store.getLedgerInfo(true))!.ledgerVersion;

        const miss = await replica.readTableItem(TABLE, KEY, undefined).then(
          () => null,
          (e: unknown) => e,
        );
        expect(miss).toBeInstanceOf(StateBeforeBaseError);
        const { missing, version, base } = miss as StateBeforeBaseError;
        expect([missing, version, base]).toEqual([{ kind: "table_item", handle: TABLE, key: KEY }, at, 1n]);

        await store.writeBaseState({ what: baseRecordName(missing), fetchedAt: 1n, ...EMPTY });
        expect((await replica.readTableItem(TABLE, KEY, undefined))?.value).toBeNull();

        await expect(replica.readModulesVersion(FRAMEWORK, at)).rejects.toMatchObject({ kind: "before-base", missing: { kind: "modules", address: FRAMEWORK } });
        await expect(replica.getBlockByVersion(1n)).rejects.toMatchObject({ kind: "unavailable" });
        expect((await replica.getBlockByVersion(at))?.lastVersion).toBe(at);
      } finally {
        await store.close();
      }
    }, 60_000);

    it("is applied to a ledger with a first-synced record above 0 or no block yet, not to one synced from genesis", async () => {
      const empty = await openStore(await backend.newDb(), { create: true });
      const genesis = await ledgerWithBlocks(await backend.newDb());
      const headStarted = await ledgerWithBlocks(await backend.newDb());
      try {
        await headStarted.writeBaseState({ what: FIRST_SYNCED_RECORD, fetchedAt: 2n, ...EMPTY });
        expect([await mayBeHeadStarted(empty), await mayBeHeadStarted(genesis), await mayBeHeadStarted(headStarted)]).toEqual([true, false, true]);
      } finally {
        await Promise.all([empty.close(), genesis.close(), headStarted.close()]);
      }
    }, 60_000);
  });
}
