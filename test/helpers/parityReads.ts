/**
 * The parity suite's ledger and reads: a devnet chain with module upgrades, table writes and
 * deletions, and every read of the store interface at a version as plain data, so that two
 * stores (SQLite and PostgreSQL, a primary and its hot standby) can be compared read for read.
 */
import { parseAddress } from "../../src/ledger/address.js";
import { DEVNET_APP_ADDRESS, DevnetChain, defaultDevnetChainOptions } from "../../src/ingest/devnet/chain.js";
import type { Storage } from "../../src/storage/contracts/storage.js";
import { tableItem, modulesAt, summariesAt } from "./store.js";

type Json = Record<string, unknown>;

export const BLOCKS = 150;

/** The chain, and every key it touches. */
export type DevnetLedger = ReturnType<typeof devnetLedger>;

export function devnetLedger() {
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
export async function readsAt(s: Storage, v: bigint, L: DevnetLedger) {
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

