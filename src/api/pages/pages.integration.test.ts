/**
 * The page strategy over real stores (SQLite and PostgreSQL): which reads it answers in the
 * calling turn, when a request's first ask reads its page with the position, how a page that ends
 * at a committed version is named, and which cached pages it still serves after a prune.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultApiConfig } from "../config.js";
import { EncodedBody } from "../http/compression.js";
import type { LedgerInfo } from "../../ledger/types.js";
import { openStore } from "../../storage/open.js";
import type { Storage } from "../../storage/contracts/storage.js";
import { backendFactories } from "../../../test/helpers/backends.js";
import { ChainBuilder, addr } from "../../../test/helpers/chain.js";
import { Pages } from "./pages.js";

const SENDER = addr("5e4d");
const senderBytes = Buffer.from(SENDER.slice(2), "hex");

for (const factory of backendFactories) {
  const backend = factory();
  describe(`Pages on ${backend.name}`, () => {
    let store: Storage;
    let pages: Pages;
    const sent: bigint[] = [];
    beforeAll(async () => {
      const chain = new ChainBuilder().genesis();
      for (let seq = 0; seq < 3; seq++) {
        sent.push(chain.nextUserVersion);
        chain.block([{ sender: SENDER, seq, changes: [] }]);
      }
      const db = await backend.newDb();
      await chain.importInto(db);
      store = await openStore(db);
      pages = new Pages(store, defaultApiConfig());
    });
    afterAll(async () => {
      await store?.close();
      await backend.cleanup();
    });

    it("answers the position reads in the calling turn on SQLite only, and reads a first ask's page with the position only where reads are round trips", async () => {
      const info = pages.positions.getLedgerInfo();
      expect(info instanceof Promise).toBe(backend.name !== "sqlite");
      expect(pages.roundTrips).toBe(backend.name !== "sqlite");
      // A request is a first ask once; on SQLite never (the position costs nothing to read alone).
      expect(pages.firstAsk("summaries|json|a")).toBe(backend.name !== "sqlite");
      expect(pages.firstAsk("summaries|json|a")).toBe(false);
      // the position the round trip brings is the one the later cases read too
      expect((await info)!.ledgerVersion >= sent[2]!).toBe(true);
    });

    it("names a page that ends at a committed version by the position alone, and any other by the sender's newest transaction", async () => {
      const info = (await pages.positions.getLedgerInfo())!;
      const settled = (await pages.summariesVersion(senderBytes, sent[1]!))!;
      expect(settled).toEqual({ info, value: null });
      const newest = (await pages.summariesVersion(senderBytes, undefined))!;
      expect(newest.value).toBe(sent[2]);
      // Past the newest version the page may still change: it is named by what the sender sent.
      const ahead = (await pages.summariesVersion(senderBytes, info.ledgerVersion + 10n))!;
      expect(ahead.value).toBe(sent[2]);
    });

    it("keeps a page once its key is offered twice, and stops serving it once pruning passes its first version", async () => {
      const info = (await pages.positions.getLedgerInfo())!;
      const answer = { body: new EncodedBody(Buffer.from("[]")), cursor: null, firstVersion: sent[1]! };
      pages.offer("k", answer);
      expect(pages.cached("k", info)).toBeUndefined();
      pages.offer("k", answer);
      expect(pages.cached("k", info)?.body).toBe(answer.body);
      const pruned: LedgerInfo = { ...info, oldestVersion: sent[1]! + 1n };
      expect(pages.cached("k", pruned)).toBeUndefined();
    });
  });
}
