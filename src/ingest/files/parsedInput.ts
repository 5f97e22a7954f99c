/**
 * The transactions of an import's files, parsed (`ParsedTxn`), in order: read and parsed on a
 * thread of their own (`parseThread.ts`) while the importing thread checks and commits the ones
 * before, since parsing the JSON is most of an import's work outside the database. Where the
 * thread cannot start (a run from the TypeScript sources without a build), the same functions run
 * here. An input error arrives after every transaction before it, as an `IngestError`.
 */
import { Worker } from "node:worker_threads";
import { builtThreadEntry } from "../../storage/common/threadClient.js";
import { IngestError, parseAptosTransaction, type ParsedTxn } from "../aptosJson.js";
import { decodeParsed, type EncodedParsed } from "../parsedCodec.js";
import { readTransactions } from "./readInput.js";

/** Transactions a batch of the parsing thread holds. */
export const PARSED_BATCH_TXNS = 512;
/**
 * Batches the parsing thread posts ahead of the importer: more than a commit's worth of
 * transactions (the Importer's 5,000), so the thread parses on through a whole commit.
 */
export const PARSED_BATCHES_AHEAD = 24;

export interface ParseThreadData {
  files: readonly string[];
}

export type FromParseThread =
  | { t: "txns"; txns: EncodedParsed }
  | { t: "end" }
  /** `ingest`: an input error (an `IngestError`); else a failure of the thread itself. */
  | { t: "error"; message: string; ingest: boolean };

/** The parsed transactions of `files` (`-`: stdin), in batches, in order. */
export function parsedTransactions(files: readonly string[]): AsyncGenerator<ParsedTxn[]> {
  const entry = builtThreadEntry(import.meta.url, "ingest/files", "parseThread.js");
  return entry ? fromThread(entry, files) : parsedHere(files);
}

async function* parsedHere(files: readonly string[]): AsyncGenerator<ParsedTxn[]> {
  let index = 0;
  for (const file of files) {
    for await (const json of readTransactions(file)) yield [parseAptosTransaction(json, index++)];
  }
}

async function* fromThread(entry: URL, files: readonly string[]): AsyncGenerator<ParsedTxn[]> {
  const readsStdin = files.includes("-");
  const worker = new Worker(entry, { workerData: { files } satisfies ParseThreadData, stdin: readsStdin });
  if (readsStdin) process.stdin.pipe(worker.stdin!);
  const queue: FromParseThread[] = [];
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const woken = () => {
    wake?.();
    wake = null;
  };
  worker.on("message", (m: FromParseThread) => {
    queue.push(m);
    woken();
  });
  worker.on("error", (e) => {
    failure ??= e;
    woken();
  });
  worker.on("exit", (code) => {
    failure ??= new Error(`the import's parsing thread exited (code ${code}) before the end of its input`);
    woken();
  });
  try {
    for (;;) {
      const m = queue.shift();
      if (!m) {
        if (failure) throw failure;
        await new Promise<void>((r) => (wake = r));
        continue;
      }
      if (m.t === "end") return;
      if (m.t === "error") throw m.ingest ? new IngestError(m.message) : new Error(m.message);
      worker.postMessage(null); // one more batch may come
      yield decodeParsed(m.txns);
    }
  } finally {
    if (readsStdin) process.stdin.unpipe(worker.stdin!);
    await worker.terminate();
  }
}
