/**
 * The live devnet: writes a block every `blockIntervalMs` into the store through the same Importer
 * that `ledger-node import` uses. Restarting continues the same chain from what the store holds.
 *
 * A block is generated once and kept until it commits: a failed commit (locked database, full
 * disk, read-only or deleted file) is retried with the same block on the next tick, and the chain's
 * position moves only after the commit, so a failure never leaves a gap. Every attempt is reported
 * to the `WriterStatus` (log and `/-/healthy`).
 */
import type { LedgerReader } from "../../storage/contracts/reader.js";
import { DEVNET_ACCOUNTS, DevnetChain, defaultDevnetChainOptions, devnetAccount, type DevnetChainOptions, type DevnetPosition } from "./chain.js";
import { type ImportStore, Importer } from "../importer.js";
import { parseAddress } from "../../ledger/address.js";
import { WriterStatus } from "../writerStatus.js";

export interface DevnetOptions extends DevnetChainOptions {
  blockIntervalMs: number;
}

/** A generated block not committed yet: its transactions, how many the importer took, and the position after it. */
interface PendingBlock {
  txns: Record<string, unknown>[];
  pushed: number;
  next: DevnetPosition;
  height: bigint;
}

/** What the devnet writes through: the importer's store, and the summaries it resumes its accounts' sequence numbers from. */
export type DevnetStore = ImportStore & Pick<LedgerReader, "readSummaries">;

export class Devnet {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private lastTimestamp = 0n;
  private pending: PendingBlock | null = null;

  private constructor(
    private readonly importer: Importer,
    private readonly chain: DevnetChain,
    private readonly opts: DevnetOptions,
    readonly status: WriterStatus,
  ) {}

  /** `onCommitted`: told after each block's commit (not genesis's, written before anything is served). */
  static async open(store: DevnetStore, partial: Partial<DevnetOptions> = {}, status = new WriterStatus(), onCommitted?: () => void): Promise<Devnet> {
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
        const rows = (await store.readSummaries({ sender: parseAddress(devnetAccount(i))!, limit: 100 }))?.value.rows ?? [];
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
    importer.onCommitted = onCommitted ?? null;
    const d = new Devnet(importer, chain, opts, status);
    d.lastTimestamp = lastTs;
    return d;
  }

  /** Height of the next block to commit (the pending one, when a commit failed). */
  get nextHeight(): bigint {
    return this.pending?.height ?? this.chain.pos.height;
  }

  /**
   * Writes one block now (also used by tests to advance the chain deterministically): the block
   * kept from a failed attempt if there is one, else a new one. Rejects when the commit fails;
   * the next call retries the same block.
   */
  async produceBlock(): Promise<void> {
    const run = this.running.then(async () => {
      if (!this.pending) {
        let ts = BigInt(Date.now()) * 1000n;
        if (ts <= this.lastTimestamp) ts = this.lastTimestamp + 1n;
        const height = this.chain.pos.height;
        const { txns, next } = this.chain.peekBlock(ts);
        this.pending = { txns, pushed: 0, next, height };
        this.lastTimestamp = ts;
      }
      const p = this.pending;
      try {
        // The importer takes a transaction only when its push succeeds, so a retry resumes here.
        for (; p.pushed < p.txns.length; p.pushed++) await this.importer.push(p.txns[p.pushed]);
        const stats = await this.importer.finish();
        if (stats.pendingTxns > 0) throw new Error(`devnet block ${p.height} was not committed whole`);
      } catch (e) {
        this.status.failed("devnet", e, `block ${p.height} is kept and tried again`);
        throw e;
      }
      this.chain.advanceTo(p.next);
      this.pending = null;
      this.status.ok("devnet", `block ${p.height} committed`);
    });
    this.running = run.catch(() => undefined);
    return run;
  }

  /** Writes a block every interval; a failed block is reported (to `onError` too) and tried again next tick. */
  start(onError: (e: Error) => void = () => undefined): void {
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
