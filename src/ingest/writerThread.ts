/**
 * The writer thread's entry (see `WriterThread` in `writers.ts`): opens its own store, runs the
 * devnet, the pruner and the follower on it, writes a follower's base state when asked, and
 * reports to the serving thread by message.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { LedgerReader } from "../storage/contracts/reader.js";
import { openStore } from "../storage/open.js";
import { LocalWriters, type FromWriterThread, type ToWriterThread, type WriterThreadData, type WritersStore } from "./writers.js";
import { WriterStatus } from "./writerStatus.js";

const port = parentPort!;
const post = (m: FromWriterThread) => port.postMessage(m);

/** A status that tells the serving thread, which logs and answers /-/healthy. */
class ReportingStatus extends WriterStatus {
  override ok(writer: string, what = ""): void {
    post({ t: "ok", writer, what });
  }
  override failed(writer: string, e: unknown, retry = "it is tried again") {
    const message = e instanceof Error ? e.message : String(e);
    post({ t: "failed", writer, message, retry });
    return { writer, message, attempts: 0, sinceMs: Date.now() };
  }
  override stopped(writer: string, e: unknown) {
    const message = e instanceof Error ? e.message : String(e);
    post({ t: "writerStopped", writer, message });
    return { writer, message, attempts: 0, sinceMs: Date.now(), stopped: true };
  }
}

async function main(): Promise<void> {
  const data = workerData as WriterThreadData;
  let writers: LocalWriters;
  let close: () => Promise<void>;
  let store: WritersStore & Pick<LedgerReader, "close">;
  try {
    store = await openStore(data.db, data.open);
    close = () => store.close();
    writers = await LocalWriters.open(store, data.writers, new ReportingStatus(), {
      pruned: (seconds, result) => post({ t: "pruned", seconds, result }),
      pruneFailed: (seconds) => post({ t: "pruneFailed", seconds }),
      followLag: (lag) => post({ t: "followLag", lag }),
      followLog: (level, message) => post({ t: "followLog", level, message }),
      followUnknown: (unknown) => post({ t: "followUnknown", unknown }),
      committed: () => post({ t: "committed" }),
    });
  } catch (e) {
    post({ t: "startFailed", message: e instanceof Error ? e.message : String(e) });
    return;
  }
  port.on("message", (m: ToWriterThread) => {
    switch (m.t) {
      case "produce":
        writers.produceBlock().then(
          () => post({ t: "produced", id: m.id, error: null }),
          (e: Error) => post({ t: "produced", id: m.id, error: e.message }),
        );
        return;
      case "writeBase":
        store.writeBaseState(m.write).then(
          () => post({ t: "wroteBase", id: m.id, error: null }),
          (e: Error) => post({ t: "wroteBase", id: m.id, error: e.message }),
        );
        return;
      case "start":
        return writers.start();
      case "stop":
        void writers
          .stop()
          .then(() => close())
          .finally(() => {
            post({ t: "stopped" });
            port.close();
          });
        return;
    }
  });
  post({ t: "ready" });
}

void main();
