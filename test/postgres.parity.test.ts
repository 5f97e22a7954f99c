/**
 * PostgreSQL answers exactly as SQLite (the reference backend) over a realistic ledger: the same
 * devnet chain (module upgrades, table writes and deletions, bursts) imported into both, then
 * pruned in steps; after each step every read of the interface is compared at many versions.
 * This pins the PostgreSQL prune, which only looks at rows changed since the previous prune.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pruneNow } from "../src/ingest/pruneToWindow.js";
import { parsePruneWindow } from "../src/ledger/pruning.js";
import { Importer } from "../src/ingest/importer.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { openStore } from "../src/storage/open.js";
import { postgresBackend } from "./helpers/postgres.js";
import { devnetLedger, readsAt } from "./helpers/parityReads.js";

describe("PostgreSQL answers exactly as SQLite over a devnet ledger, through pruning", () => {
  const pg = postgresBackend();
  const dir = mkdtempSync(join(tmpdir(), "ledger-node-parity-"));
  const L = devnetLedger();
  let sqlite: Storage;
  let postgres: Storage;

  beforeAll(async () => {
    sqlite = await openStore(join(dir, "ledger.db"));
    postgres = await openStore(await pg.newDb());
    for (const s of [sqlite, postgres]) {
      const imp = await Importer.open(s, 4);
      for (const t of L.txns) await imp.push(t);
      await imp.finish();
    }
  });
  afterAll(async () => {
    await sqlite?.close();
    await postgres?.close();
    await pg.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it("has the same reads after import and after every prune step", async () => {
    const info = await sqlite.getLedgerInfo();
    expect(await postgres.getLedgerInfo()).toEqual(info);
    const last = info!.ledgerVersion;
    for (const window of [null, "6000", "4000", "3999", "1500", "120s", "5"]) {
      // null: the reads before any prune
      const w = window === null ? null : parsePruneWindow(window);
      const [a, b] = w === null ? [null, null] : [await pruneNow(sqlite, w), await pruneNow(postgres, w)];
      expect(b, `prune to ${window}`).toEqual(a);
      const now = (await sqlite.getLedgerInfo())!;
      expect(await postgres.getLedgerInfo()).toEqual(now);
      const span = last - now.oldestVersion;
      const versions = new Set([now.oldestVersion, now.oldestVersion + 1n, last - 1n, last]);
      for (let i = 1n; i < 8n; i++) versions.add(now.oldestVersion + (span * i) / 8n);
      for (const v of versions) {
        if (v < now.oldestVersion || v > last) continue;
        expect(await readsAt(postgres, v, L), `reads at ${v} after prune to ${window}`).toEqual(await readsAt(sqlite, v, L));
      }
    }
  });
});
