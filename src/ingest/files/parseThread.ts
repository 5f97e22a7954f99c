/**
 * The parsing thread of an import (`parsedInput.ts`): reads the files (`readTransactionsBlocking`),
 * parses each transaction (`parseAptosTransaction`) and posts them in order, in batches in their
 * flat form (`parsedCodec.ts`, the texts packed into their history chunks), to the importing thread, which only checks, queues and commits
 * them. At most `PARSED_BATCHES_AHEAD` batches are posted ahead of what the importer took, so a
 * large file is never read into memory.
 */
import { parentPort, workerData } from "node:worker_threads";
import { IngestError, parseAptosTransaction, type ParsedTxn } from "../aptosJson.js";
import { encodeParsed } from "../parsedCodec.js";
import { PARSED_BATCHES_AHEAD, PARSED_BATCH_TXNS, type FromParseThread, type ParseThreadData } from "./parsedInput.js";
import { readTransactionsBlocking } from "./readInput.js";

const port = parentPort!;
const data = workerData as ParseThreadData;
let credit = PARSED_BATCHES_AHEAD;
let wake: (() => void) | null = null;
port.on("message", () => {
  credit++;
  wake?.();
  wake = null;
});

const post = (m: FromParseThread) => port.postMessage(m);

async function run(): Promise<void> {
  let batch: ParsedTxn[] = [];
  let index = 0;
  const send = async () => {
    if (batch.length === 0) return;
    while (credit === 0) await new Promise<void>((r) => (wake = r));
    credit--;
    const txns = encodeParsed(batch, null, true);
    port.postMessage({ t: "txns", txns } satisfies FromParseThread, [txns.ints.buffer, txns.u64s.buffer, txns.bytes.buffer]);
    batch = [];
  };
  try {
    for (const file of data.files) {
      for await (const json of readTransactionsBlocking(file)) {
        batch.push(parseAptosTransaction(json, index++));
        if (batch.length >= PARSED_BATCH_TXNS) await send();
      }
    }
    await send();
    post({ t: "end" });
  } catch (e) {
    // What was parsed before the bad transaction goes first: the importer commits its whole blocks.
    await send();
    post({ t: "error", message: e instanceof Error ? e.message : String(e), ingest: e instanceof IngestError });
  }
}

void run();
