/**
 * The live devnet: writes a block every `blockIntervalMs` into the store through the same Importer
 * that `ledger-node import` uses. Restarting continues the same chain from what the store holds.
 */
import type { LedgerStore } from "../storage/LedgerStore.js";
import { DEVNET_ACCOUNTS, DevnetChain, defaultDevnetChainOptions, devnetAccount, type DevnetChainOptions } from "./devnetChain.js";
import { Importer } from "./importer.js";
import { parseAddress } from "../ledger/address.js";

export interface DevnetOptions extends DevnetChainOptions {
  blockIntervalMs: number;
}

export class Devnet {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private lastTimestamp = 0n;

  private constructor(
    private readonly importer: Importer,
    private readonly chain: DevnetChain,
    private readonly opts: DevnetOptions,
  ) {}

  static async open(store: LedgerStore, partial: Partial<DevnetOptions> = {}): Promise<Devnet> {
    const opts: DevnetOptions = { ...defaultDevnetChainOptions, blockIntervalMs: 1000, ...partial };
    const importer = await Importer.open(store, opts.chainId);
    const info = await store.getLedgerInfo(true);
    let chain: DevnetChain;
    let lastTs = 0n;
    if (!info) {
      chain = DevnetChain.fresh(opts);
      for (const t of chain.genesis()) await importer.push(t);
      await importer.finish();
    } else {
      // Continue the stored chain: sequence numbers from each account's latest summaries.
      const sequence: bigint[] = [];
      for (let i = 0; i < DEVNET_ACCOUNTS; i++) {
        const rows = await store.getTransactionSummaries({
          sender: parseAddress(devnetAccount(i))!,
          ledgerVersion: info.ledgerVersion,
          limit: 100,
        });
        let next = 0n;
        for (const r of rows) if (r.replayProtector.type === "sequence_number") next = r.replayProtector.value + 1n;
        sequence.push(next);
      }
      chain = new DevnetChain(
        { version: info.ledgerVersion + 1n, height: info.blockHeight + 1n, epoch: info.epoch === 0n ? 1n : info.epoch, sequence, upgrades: Number(info.blockHeight / BigInt(opts.upgradeEvery || 1)) },
        opts,
      );
      lastTs = info.timestampUsec;
    }
    const d = new Devnet(importer, chain, opts);
    d.lastTimestamp = lastTs;
    return d;
  }

  /** Writes one block now (also used by tests to advance the chain deterministically). */
  async produceBlock(): Promise<void> {
    const run = this.running.then(async () => {
      let ts = BigInt(Date.now()) * 1000n;
      if (ts <= this.lastTimestamp) ts = this.lastTimestamp + 1n;
      this.lastTimestamp = ts;
      for (const t of this.chain.nextBlock(ts)) await this.importer.push(t);
      await this.importer.finish();
    });
    this.running = run.catch(() => undefined);
    return run;
  }

  /** Writes a block every interval; a failed block is reported to `onError` and tried again next tick. */
  start(onError: (e: Error) => void): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.produceBlock().catch(onError);
    }, this.opts.blockIntervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
