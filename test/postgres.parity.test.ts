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
import { parseAddress } from "../src/ledger/address.js";
import { parsePruneWindow, pruneNow } from "../src/ledger/pruning.js";
import { DEVNET_APP_ADDRESS, DevnetChain, defaultDevnetChainOptions } from "../src/ingest/devnetChain.js";
import { Importer } from "../src/ingest/importer.js";
import type { Storage } from "../src/storage/storage.js";
import { openStore } from "../src/storage/open.js";
import { postgresBackend } from "./helpers/postgres.js";
import { tableItem, modulesAt, summariesAt } from "./helpers/store.js";

type Json = Record<string, unknown>;

const BLOCKS = 150;

/** The chain, and every key it touches. */
function devnetLedger() {
  const chain = DevnetChain.fresh({ ...defaultDevnetChainOptions, upgradeEvery: 20 });
  const txns: Json[] = [...chain.genesis()];
  for (let b = 0; b < BLOCKS; b++) txns.push(...chain.nextBlock(1_700_000_000_000_000n + BigInt(b) * 1_000_000n));
  const tableKeys = new Map<string, [Uint8Array, Uint8Array]>();
  const resources = new Map<string, [Uint8Array, string]>();
  const senders = new Map<string, Uint8Array>();
  for (const t of txns) {
    if (typeof t.sender === "string") senders.set(t.sender, parseAddress(t.sender)!);
    for (const ch of (t.changes as Json[] | undefined) ?? []) {
      if (ch.type === "write_table_item" || ch.type === "delete_table_item") {
        const k = `${ch.handle}/${ch.key}`;
        tableKeys.set(k, [parseAddress(ch.handle as string)!, Buffer.from((ch.key as string).slice(2), "hex")]);
      } else if (ch.type === "write_resource" || ch.type === "delete_resource") {
        const type = ((ch.data as Json | null)?.type ?? ch.resource) as string;
        resources.set(`${ch.address}/${type}`, [parseAddress(ch.address as string)!, type]);
      }
    }
  }
  return { txns, tableKeys: [...tableKeys.values()], resources: [...resources.values()], senders: [...senders.values()] };
}

const hex = (b: Uint8Array | null | undefined): string | null => (b ? Buffer.from(b).toString("hex") : null);

/** Every read of the interface at `v`, as plain data. */
async function readsAt(s: Storage, v: bigint, L: ReturnType<typeof devnetLedger>) {
  const out: unknown[] = [];
  for (const a of [parseAddress("0x1")!, parseAddress(DEVNET_APP_ADDRESS)!]) {
    const all = await modulesAt(s, a, v, null, 10_000);
    out.push(await Promise.all(all.map(async (m) => [m.name, hex(m.stateKey), m.codeHash, (await s.getModuleCode(m.codeHash))?.length])));
    const mid = all[Math.floor(all.length / 2)];
    if (mid) out.push((await modulesAt(s, a, v, mid.stateKey, 3)).map((m) => m.name));
  }
  for (const [h, k] of L.tableKeys) out.push(hex(await tableItem(s, h, k, v)));
  for (const [a, t] of L.resources) out.push(await s.getResource(a, t, v));
  for (const sender of L.senders) {
    const summary = (r: Awaited<ReturnType<typeof summariesAt>>) =>
      r.map((x) => [x.version, x.replayProtector.type, x.replayProtector.value, x.hashHex]);
    out.push(summary(await summariesAt(s, { sender, ledgerVersion: v, limit: 25 })));
    out.push(summary(await summariesAt(s, { sender, ledgerVersion: v, start: v > 300n ? v - 300n : 0n, limit: 25 })));
    out.push(summary(await summariesAt(s, { sender, ledgerVersion: v, end: v - 100n > 0n ? v - 100n : 0n, limit: 10 })));
  }
  out.push(await s.getUserTxnGas(v > 500n ? v - 500n : 0n, v));
  out.push((await s.getFingerprints(v > 60n ? v - 60n : 0n, v)).map((f) => [f.version, f.kind, hex(f.hash)]));
  const block = await s.getBlockByVersion(v);
  out.push(block, block && (await s.getBlockByHeight(block.height)), block && (await s.getFirstBlockAtOrAfter(block.timestampUsec - 1n)));
  return out;
}

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
