/**
 * Feeds transactions, in strict version order, into a store one whole block at a time
 * (docs/decisions.md §17).
 *
 * - A block starts with a `block_metadata_transaction` (or the genesis transaction) and ends just
 *   before the next one. It commits atomically, so a half block is never visible.
 * - Versions already committed are skipped after checking that kind and hash match what is stored,
 *   so the same file can be imported again after a crash.
 * - A gap, a repeat or a mismatch stops the import with an error naming the version; the block that
 *   held it is not written.
 * - A transaction, change or module of a kind the reader does not know does not stop it: what is
 *   generic is stored (`parseAptosTransaction`), and each is counted in `stats.unknownKinds`.
 * - At the end of input the last block is committed only when it is visibly complete (it ends with a
 *   `state_checkpoint_transaction` or `block_epilogue_transaction`, or it is the genesis block);
 *   otherwise it is reported as pending and the next import picks it up.
 * - A failed commit (locked database, full disk, read-only file) changes nothing here: the blocks
 *   it held stay queued and the transaction being pushed is not taken, so calling the same
 *   `push(json)` or `finish()` again retries exactly the same blocks. Nothing is skipped, so a
 *   writer that retries after a failure leaves no gap.
 * - Up to two batches are in flight while the next transactions are taken: batch N+1 is prepared
 *   (`prepareBlocks`: packing, hashing) while batch N is prepared or written, and it is written
 *   only after N was, never after N failed. The next commit waits for the older of the two, and
 *   `finish()` for both. When one failed (its preparation or its write), its blocks and those of
 *   the batch after it (which wrote nothing) go back to the front of the queue and its error is
 *   thrown there, as if that commit had failed then; a batch before it stays committed.
 *   `finish()` returns only once every queued block is committed.
 */
import type { LedgerReader } from "../storage/contracts/reader.js";
import type { BlockWrite, HistoryChunk, LedgerWriter, ModuleWrite, ResourceWrite, StoredTxnFingerprint, TableItemWrite, TxnWrite } from "../storage/contracts/writer.js";
import type { BlockEndInfo } from "../ledger/types.js";
import { IngestError, parseAptosTransaction, type ParsedTxn, type UnknownKind } from "./aptosJson.js";

/** What the importer writes through: the writer, and the reader's position it starts after. */
export type ImportStore = LedgerWriter & Pick<LedgerReader, "getLedgerInfo">;

export interface ImportStats {
  committedBlocks: number;
  committedTxns: number;
  skippedTxns: number;
  /** Transactions of a trailing block held back because it was not complete. */
  pendingTxns: number;
  firstVersion: bigint | null;
  lastVersion: bigint | null;
  /**
   * What of a kind the reader does not know was taken, by `what:type` (a transaction stored
   * generically, a change skipped, a module whose ABI is the source's): counted once per version.
   */
  unknownKinds: Record<string, number>;
}

/** Whole blocks are grouped into one commit until they hold this many transactions. */
const BATCH_TXNS = 5_000;
/** Batches in flight: one being written while the next is prepared. */
const COMMITS_IN_FLIGHT = 2;

interface InFlight {
  blocks: BlockWrite[];
  txns: number;
  /** Settles once the batch is written, or failed (then nothing of it was written). */
  done: Promise<void>;
}

export class Importer {
  private block: ParsedTxn[] = [];
  /** Whole blocks validated and waiting for their commit; emptied only once it succeeded. */
  private batch: BlockWrite[] = [];
  private batchTxns = 0;
  /** The commits in flight, oldest first (see the head of this file). */
  private inFlight: InFlight[] = [];
  private expected: bigint | null = null; // next version the input must carry
  private stored: bigint | null = null; // newest committed version
  private tip: bigint | null = null; // newest committed or queued version: the next block follows it
  private nextHeight = 0n; // height of the block after `tip`
  private fingerprints = new Map<bigint, StoredTxnFingerprint>();
  private count = 0;
  readonly stats: ImportStats = {
    committedBlocks: 0,
    committedTxns: 0,
    skippedTxns: 0,
    pendingTxns: 0,
    firstVersion: null,
    lastVersion: null,
    unknownKinds: {},
  };
  /** Told of each thing of an unknown kind in a transaction taken (a metric, a log line). */
  onUnknown: ((u: UnknownKind, version: bigint) => void) | null = null;
  /** Told after each commit, once its blocks are readable (a server's streams look at once). */
  onCommitted: (() => void) | null = null;

  private constructor(private readonly store: ImportStore) {}

  /** Opens an importer positioned after the stored ledger; stores `chainId` on the first import. */
  static async open(store: ImportStore, chainId: number): Promise<Importer> {
    await store.initChain(chainId);
    const imp = new Importer(store);
    const info = await store.getLedgerInfo(true);
    if (info) {
      imp.stored = info.ledgerVersion;
      imp.tip = info.ledgerVersion;
      imp.nextHeight = info.blockHeight + 1n;
    }
    return imp;
  }

  /** Newest committed version (null for an empty ledger). */
  get ledgerVersion(): bigint | null {
    return this.stored;
  }

  /**
   * Takes the next transaction of the input. On an input error, the whole blocks before it are
   * still committed; the block holding the bad transaction is not. When a commit fails, the
   * transaction is not taken and nothing is lost: pushing the same transaction again retries.
   */
  async push(json: unknown): Promise<void> {
    let p: ParsedTxn;
    try {
      p = parseAptosTransaction(json, this.count);
    } catch (e) {
      // Bad input as in `pushParsed`: the whole blocks before it are kept.
      if (e instanceof IngestError) await this.flush();
      throw e;
    }
    return this.pushParsed(p);
  }

  /**
   * `push` of a transaction parsed already (`parseAptosTransaction` with the index of this push:
   * an import parses on a thread of its own).
   */
  async pushParsed(p: ParsedTxn): Promise<void> {
    try {
      await this.pushOne(p);
    } catch (e) {
      // Bad input: keep what came before it. A failed commit is not tried again at once here:
      // the caller retries (the devnet on its next tick) or gives up.
      if (e instanceof IngestError) await this.flush();
      throw e;
    }
  }

  /** Checks first and awaits the commit, and only then moves `expected`: a throw leaves no trace. */
  private async pushOne(p: ParsedTxn): Promise<void> {
    const v = p.txn.version;
    if (this.expected !== null && v !== this.expected) {
      throw new IngestError(
        v < this.expected
          ? `version ${v} repeats or goes back: expected version ${this.expected}`
          : `gap before version ${v}: expected version ${this.expected}`,
      );
    }
    if (this.stored !== null && v <= this.stored) {
      await this.checkStored(p);
    } else {
      if (p.blockStart) {
        await this.queuePending();
      } else if (this.block.length === 0) {
        // First new transaction after the stored ledger (or of an empty ledger) must open a block.
        const after = this.tip === null ? "an empty ledger" : `the stored ledger (version ${this.tip})`;
        throw new IngestError(`version ${v} continues a block, but ${after} ends at a block boundary`);
      }
      const prev = this.block[this.block.length - 1];
      if (!p.blockStart && prev?.txn.kind === "block_epilogue_transaction") {
        // The epilogue ends its block (AIP-88); the gas estimator relies on that (docs/decisions.md §14).
        throw new IngestError(
          `version ${v}: ${p.txn.kind} follows the block epilogue at version ${prev.txn.version}; a block epilogue must be the last transaction of its block`,
        );
      }
      if (this.tip !== null && this.block.length === 0 && v !== this.tip + 1n) {
        throw new IngestError(`gap before version ${v}: the ledger holds versions up to ${this.tip}`);
      }
      this.block.push(p);
      for (const u of p.unknown) {
        const key = `${u.what}:${u.type}`;
        this.stats.unknownKinds[key] = (this.stats.unknownKinds[key] ?? 0) + 1;
        this.onUnknown?.(u, v);
      }
    }
    this.count++;
    this.expected = v + 1n;
    this.stats.firstVersion ??= v;
    this.stats.lastVersion = v;
  }

  /** Ends the input: commits the last block when it is complete. */
  async finish(): Promise<ImportStats> {
    await this.commitPushed();
    await this.settle();
    this.stats.pendingTxns = this.block.length;
    return this.stats;
  }

  /**
   * Starts the commit of every whole block pushed so far (the last one when it is complete),
   * waiting only for the older of the commits in flight, as a full batch does: a follower's
   * periodic commit that keeps the pipeline going. `finish` waits for all of them.
   */
  async commitPushed(): Promise<void> {
    const last = this.block[this.block.length - 1];
    const complete =
      last !== undefined &&
      (last.txn.kind === "state_checkpoint_transaction" ||
        last.txn.kind === "block_epilogue_transaction" ||
        (this.block.length === 1 && last.txn.kind === "genesis_transaction"));
    if (complete) this.queueBlock();
    await this.flush();
  }

  private async checkStored(p: ParsedTxn): Promise<void> {
    const v = p.txn.version;
    let fp = this.fingerprints.get(v);
    if (!fp) {
      this.fingerprints.clear();
      const to = this.stored! < v + 9999n ? this.stored! : v + 9999n;
      for (const f of await this.store.getFingerprints(v, to)) this.fingerprints.set(f.version, f);
      fp = this.fingerprints.get(v);
    }
    if (!fp) {
      throw new IngestError(`version ${v} is not in the ledger any more (pruned); import from a later version`);
    }
    if (fp.kind !== p.txn.kind || !Buffer.from(fp.hash).equals(Buffer.from(p.txn.hash))) {
      throw new IngestError(
        `version ${v} does not match the ledger: stored ${fp.kind} ${Buffer.from(fp.hash).toString("hex")}, ` +
          `input ${p.txn.kind} ${Buffer.from(p.txn.hash).toString("hex")}`,
      );
    }
    this.stats.skippedTxns++;
  }

  /**
   * Starts the commit of the queued whole blocks as one batch (one atomic commit), once at most
   * one other is in flight. A failed commit puts its blocks back in the queue (`settle`), for the
   * next call to commit.
   */
  private async flush(): Promise<void> {
    await this.settle(COMMITS_IN_FLIGHT - 1);
    if (this.batch.length === 0) return;
    const blocks = this.batch;
    const prepared = this.store.prepareBlocks(blocks);
    const before = this.inFlight[this.inFlight.length - 1]?.done;
    // Written after the batch before it, and never when that failed (this rejects with its error).
    const done = Promise.all([prepared, before]).then(([p]) => this.store.commitPrepared(p));
    // Settled by `settle`; never an unhandled rejection meanwhile.
    done.catch(() => undefined);
    this.inFlight.push({ blocks, txns: this.batchTxns, done });
    this.batch = [];
    this.batchTxns = 0;
  }

  /**
   * Waits until at most `keep` commits are in flight (oldest first). When one failed, it and the
   * ones after it (chained on it: they wrote nothing) are waited for, their blocks go back in front
   * of the queue, and its error is thrown.
   */
  private async settle(keep = 0): Promise<void> {
    while (this.inFlight.length > keep) {
      const f = this.inFlight[0]!;
      try {
        await f.done;
      } catch (e) {
        const failed = this.inFlight;
        this.inFlight = [];
        await Promise.allSettled(failed.map((x) => x.done));
        this.batch = [...failed.flatMap((x) => x.blocks), ...this.batch];
        for (const x of failed) this.batchTxns += x.txns;
        throw e;
      }
      this.inFlight.shift();
      for (const w of f.blocks) this.committed(w);
      this.onCommitted?.();
    }
  }

  private committed(w: BlockWrite): void {
    this.stored = w.block.lastVersion;
    this.stats.committedBlocks++;
    this.stats.committedTxns += w.transactions.length;
  }

  /** Queues the open block, and commits the queue when it is full (retried by the next call). */
  private async queuePending(): Promise<void> {
    this.queueBlock();
    if (this.batch.length > 0 && this.batchTxns >= BATCH_TXNS) await this.flush();
  }

  /** Moves the open block, when there is one, to the commit queue. Synchronous: nothing to fail half-way. */
  private queueBlock(): void {
    if (this.block.length === 0) return;
    const txns = this.block;
    const head = txns[0]!;
    const start = head.blockStart!;
    const height = start.height ?? this.nextHeight;
    if (this.tip !== null && height !== this.nextHeight) {
      throw new IngestError(
        `version ${head.txn.version}: block height ${height} does not follow the ledger's ${this.nextHeight - 1n}`,
      );
    }
    // One pass over the block's transactions for all four write arrays (not a map and three flatMaps).
    let endInfo: BlockEndInfo | null = null;
    const transactions: TxnWrite[] = [];
    const modules: ModuleWrite[] = [];
    const tableItems: TableItemWrite[] = [];
    const resources: ResourceWrite[] = [];
    const history: HistoryChunk[] = [];
    for (const t of txns) {
      transactions.push(t.txn);
      if (t.history) history.push(t.history);
      if (t.endInfo) endInfo = t.endInfo;
      for (const m of t.modules) modules.push(m);
      for (const i of t.tableItems) tableItems.push(i);
      for (const r of t.resources) resources.push(r);
    }
    const write: BlockWrite = {
      block: {
        height,
        epoch: start.epoch,
        timestampUsec: start.timestampUsec,
        firstVersion: head.txn.version,
        lastVersion: txns[txns.length - 1]!.txn.version,
        endInfo,
      },
      transactions,
      modules,
      tableItems,
      resources,
    };
    // Packed where they were parsed: a chunk lies within one block, so the block's are all here.
    if (history.length > 0) write.history = history;
    this.batch.push(write);
    this.batchTxns += txns.length;
    this.block = [];
    this.tip = write.block.lastVersion;
    this.nextHeight = height + 1n;
  }
}
