/**
 * The file source of `ledger-node import`: Aptos REST JSON transactions read from files or stdin
 * (`readInput.ts`), parsed on a thread of their own (`parsedInput.ts`) and pushed, in order, into
 * the one `Importer`, as the devnet and the follower push theirs. The store is opened at the first transaction, so an empty input creates nothing.
 *
 * On a bad line or transaction the whole blocks read before it are committed (the last one too
 * when it visibly ended), then the import fails naming it and the ledger version reached.
 */
import type { PruneWindow } from "../../ledger/pruning.js";
import { pruneNow, type PruneStore } from "../pruneToWindow.js";
import type { PruneResult, PruneTarget } from "../../storage/contracts/writer.js";
import type { LedgerReader } from "../../storage/contracts/reader.js";
import { IngestError, type UnknownKind } from "../aptosJson.js";
import { type ImportStats, type ImportStore, Importer } from "../importer.js";
import { parsedTransactions } from "./parsedInput.js";

export interface ImportFilesOptions {
  /** Opens the ledger (called at the first transaction). */
  open: () => Promise<ImportStore & PruneStore & Pick<LedgerReader, "close">>;
  /** Chain id of a new ledger. */
  chainId: number;
  /** Prune to this window once the import is done. */
  pruneWindow?: PruneWindow | undefined;
  /** Told of each thing of a kind this node does not know in a transaction taken. */
  onUnknown?: (u: UnknownKind, version: bigint) => void;
  /** Told every 1024 transactions read: how many, and the importer's ledger version. */
  onProgress?: (read: number, ledgerVersion: bigint | null) => void;
}

/** What an import did; null stats: the input held no transaction (nothing was opened). */
export interface ImportFilesResult {
  stats: ImportStats | null;
  ledgerVersion: bigint | null;
  pruned: (PruneResult & PruneTarget) | null;
}

export async function importFiles(files: readonly string[], o: ImportFilesOptions): Promise<ImportFilesResult> {
  let store: (ImportStore & PruneStore & Pick<LedgerReader, "close">) | null = null;
  let importer: Importer | null = null;
  try {
    let n = 0;
    try {
      for await (const batch of parsedTransactions(files)) {
        store ??= await o.open();
        if (!importer) {
          importer = await Importer.open(store, o.chainId);
          if (o.onUnknown) importer.onUnknown = o.onUnknown;
        }
        for (const t of batch) {
          await importer.pushParsed(t);
          n++;
          if ((n & 1023) === 0) o.onProgress?.(n, importer.ledgerVersion);
        }
      }
    } catch (e) {
      if (importer && e instanceof IngestError) {
        await importer.finish().catch((e2: unknown) => {
          if (!(e2 instanceof IngestError)) throw e2;
        });
        throw new IngestError(`${e.message} (the whole blocks before it are committed: ledger version ${importer.ledgerVersion ?? "none"})`);
      }
      throw e;
    }
    if (!importer || !store) return { stats: null, ledgerVersion: null, pruned: null };
    const stats = await importer.finish();
    const pruned = o.pruneWindow ? await pruneNow(store, o.pruneWindow) : null;
    return { stats, ledgerVersion: importer.ledgerVersion, pruned };
  } finally {
    await store?.close();
  }
}
