/**
 * Requests answered by a worker thread of our own, each reply matched to its request by id (the
 * SQLite store's resource packer). The thread starts at the first request and is unreferenced
 * while nothing is awaited, so it never keeps a process alive. Where
 * it cannot start (a run from the TypeScript sources without a build) or has failed, `request`
 * answers null and the caller does the work itself, by the same function.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * The built entry of a thread: `file` beside the calling module in dist/, or, when that module
 * runs from its TypeScript source, the same file under `dist/<dir>/` if it was built (a worker
 * does not run TypeScript sources). `caller` is the calling module's `import.meta.url`.
 */
export function builtThreadEntry(caller: string, dir: string, file: string): URL | null {
  if (!caller.endsWith(".ts")) return new URL(`./${file}`, caller);
  const depth = dir.split("/").length;
  const built = new URL(`${"../".repeat(depth + 1)}dist/${dir}/${file}`, caller);
  return existsSync(fileURLToPath(built)) ? built : null;
}

export class ThreadClient<Request extends { id: number }, Reply extends { id: number }> {
  private worker: Worker | null = null;
  private failed = false;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();

  /** `entry`: the built thread, or null where none can run; `name`: the thread, for errors. */
  constructor(
    private readonly entry: () => URL | null,
    private readonly name: string,
  ) {}

  /**
   * The thread's reply to the request `make` builds with its id (the buffers in `transfer` are
   * handed to the thread), or null when no thread runs here. Rejects when the thread fails or is
   * closed before it replies.
   */
  request(make: (id: number) => Request, transfer: ArrayBuffer[]): Promise<Reply> | null {
    const worker = this.thread();
    if (!worker) return null;
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      // Held while a reply is awaited: an unreferenced thread would let the process exit meanwhile.
      if (this.waiting.size === 0) worker.ref();
      this.waiting.set(id, { resolve, reject });
      worker.postMessage(make(id), transfer);
    });
  }

  private thread(): Worker | null {
    if (this.worker || this.failed) return this.worker;
    const entry = this.entry();
    if (!entry) {
      this.failed = true;
      return null;
    }
    const worker = new Worker(entry);
    worker.unref();
    worker.on("message", (r: Reply) => {
      const w = this.waiting.get(r.id);
      this.waiting.delete(r.id);
      if (this.waiting.size === 0) worker.unref();
      w?.resolve(r);
    });
    const fail = (e: Error) => {
      this.failed = true;
      this.worker = null;
      this.rejectWaiting(e);
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`the ${this.name} thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private rejectWaiting(e: Error): void {
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
  }

  /** Ends the thread, rejecting what is awaited; `restartable`: a later request starts another. */
  async close(restartable: boolean): Promise<void> {
    const w = this.worker;
    this.worker = null;
    if (!restartable) this.failed = true;
    if (!w) return;
    w.removeAllListeners("exit");
    this.rejectWaiting(new Error(`the ${this.name} thread was closed`));
    // Held until it has exited: with nothing else on the event loop, an unreferenced thread's
    // terminate() never settles and the process exits meanwhile, skipping what awaits the close.
    w.ref();
    await w.terminate();
  }
}
