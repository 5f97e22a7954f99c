/**
 * Several processes on one PostgreSQL database (two stores here, each with its own pool):
 * starting together, pruning together, and committing a block while pruning.
 */
import { afterAll, describe, expect, it } from "vitest";
import { parseAddress } from "../src/ledger/address.js";
import { DEVNET_TABLE_HANDLE, DevnetChain, defaultDevnetChainOptions } from "../src/ingest/devnet/chain.js";
import { Importer } from "../src/ingest/importer.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { openStore } from "../src/storage/open.js";
import { postgresBackend } from "./helpers/postgres.js";
import { tableItem } from "./helpers/store.js";

describe("processes sharing one PostgreSQL database", () => {
  const pg = postgresBackend();
  const opened: Storage[] = [];
  const open = async (db: string) => {
    const s = await openStore(db);
    opened.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of opened) await s.close();
    await pg.cleanup();
  });

  it("create the schema once when they start at the same moment", async () => {
    const db = await pg.newDb();
    const stores = await Promise.all(Array.from({ length: 6 }, () => open(db)));
    await stores[0]!.initChain(4);
    expect(await Promise.all(stores.map((s) => s.getChainId()))).toEqual([4, 4, 4, 4, 4, 4]);
  });

  it("prune together: one does the work, the other finds nothing to do; a block commits meanwhile", async () => {
    const db = await pg.newDb();
    const [a, b] = [await open(db), await open(db)];
    const chain = DevnetChain.fresh({ ...defaultDevnetChainOptions, maxTxnsPerBlock: 4, burstEvery: 1000 });
    const imp = await Importer.open(a, 4);
    for (const t of chain.genesis()) await imp.push(t);
    for (let i = 0; i < 40; i++) for (const t of chain.nextBlock(1_000_000n * BigInt(i + 1))) await imp.push(t);
    await imp.finish();

    const info = (await a.getLedgerInfo())!;
    const target = (await a.getBlockByHeight(30n))!;
    const handle = parseAddress(DEVNET_TABLE_HANDLE)!;
    const key = Buffer.from("0100000000000000", "hex");
    const before = await tableItem(a, handle, key, info.ledgerVersion);

    const next = chain.nextBlock(1_000_000n * 42n);
    const [ra, rb] = await Promise.all([
      a.prune({ oldestVersion: target.firstVersion, oldestBlockHeight: target.height }),
      b.prune({ oldestVersion: target.firstVersion, oldestBlockHeight: target.height }),
      (async () => {
        for (const t of next) await imp.push(t);
        await imp.finish();
      })(),
    ]);
    const worked = [ra, rb].filter((r) => r.transactionsDeleted > 0);
    expect(worked).toHaveLength(1);
    expect(worked[0]).toMatchObject({ transactionsDeleted: Number(target.firstVersion), blocksDeleted: 30 });
    expect([ra, rb]).toContainEqual({ transactionsDeleted: 0, stateRowsDeleted: 0, blocksDeleted: 0 });

    const now = (await b.getLedgerInfo())!;
    expect(now).toMatchObject({ oldestVersion: target.firstVersion, oldestBlockHeight: 30n, blockHeight: info.blockHeight + 1n });
    expect(await tableItem(b, handle, key, info.ledgerVersion)).toEqual(before);
  });
});
