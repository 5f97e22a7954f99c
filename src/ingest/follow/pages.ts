/**
 * The follower's pages of transactions parsed off its thread: the JSON of a page, and each of its
 * transactions (`parseAptosTransaction`), on a thread of their own (`pageThread.ts`), handed back
 * in the import's flat form (`parsedCodec.ts`), so the thread that commits only checks and queues
 * them. Where the thread cannot start (a run from the TypeScript sources without a build) or
 * failed, a page is parsed here by the same function.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { IngestError, parseAptosTransaction, type ParsedTxn } from "../aptosJson.js";
import { decodeParsed, type EncodedParsed } from "../parsedCodec.js";

/** A page's body as parsed: its shape, for the follower's checks, and its transactions. */
export type ParsedPage =
  | { t: "notJson"; message: string }
  | { t: "notArray" }
  | {
      t: "page";
      /** Transactions in the answer (the upstream may send more than asked). */
      length: number;
      /** The first transaction's `version` field as JSON text (`undefined` when there is none). */
      firstVersion: string;
      /** The first `limit` transactions, up to a bad one. */
      txns: ParsedTxn[];
      /** Why the transaction after `txns` is refused (an `IngestError`'s message); null when none is. */
      refused: string | null;
    };

/** `ParsedPage` as the thread sends it. */
export type EncodedPage = Exclude<ParsedPage, { t: "page" }> | (Omit<Extract<ParsedPage, { t: "page" }>, "txns"> & { txns: EncodedParsed });

export interface PageRequest {
  id: number;
  body: Uint8Array;
  limit: number;
}

export interface PageReply {
  id: number;
  page: EncodedPage;
}

/** A page body parsed: the JSON, then its first `limit` transactions (the index counts in the page). */
export function parsePage(body: Uint8Array, limit: number): ParsedPage {
  let json: unknown;
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { t: "notJson", message: `${(e as Error).message}): ${JSON.stringify(text.slice(0, 80))}` };
  }
  if (!Array.isArray(json)) return { t: "notArray" };
  const first = (json[0] as Record<string, unknown> | null | undefined)?.version;
  const txns: ParsedTxn[] = [];
  let refused: string | null = null;
  const n = Math.min(limit, json.length);
  for (let i = 0; i < n; i++) {
    try {
      txns.push(parseAptosTransaction(json[i], i));
    } catch (e) {
      if (!(e instanceof IngestError)) throw e;
      refused = e.message;
      break;
    }
  }
  return { t: "page", length: json.length, firstVersion: String(JSON.stringify(first)), txns, refused };
}

/** The built entry of the thread (a worker does not run TypeScript sources; see writers.ts). */
function threadEntry(): URL | null {
  if (!import.meta.url.endsWith(".ts")) return new URL("./pageThread.js", import.meta.url);
  const built = new URL("../../../dist/ingest/follow/pageThread.js", import.meta.url);
  return existsSync(fileURLToPath(built)) ? built : null;
}

export class PageParser {
  private worker: Worker | null = null;
  private failed = false;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (r: EncodedPage) => void; reject: (e: Error) => void }>();

  /** `parsePage` of `body` (its buffer is handed to the thread: the caller keeps no use of it). */
  async parse(body: Uint8Array, limit: number): Promise<ParsedPage> {
    const worker = this.thread();
    if (!worker) return parsePage(body, limit);
    const id = this.nextId++;
    // A view of a pooled buffer is copied: only a buffer of its own may be transferred.
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : body.slice();
    // A thread that failed with the page rejects it (a transient fault: the follower asks again).
    const reply = await new Promise<EncodedPage>((resolve, reject) => {
      // Held while a reply is awaited: an unreferenced thread would let the process exit meanwhile.
      if (this.waiting.size === 0) worker.ref();
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, body: own, limit } satisfies PageRequest, [own.buffer as ArrayBuffer]);
    });
    return reply.t === "page" ? { ...reply, txns: decodeParsed(reply.txns) } : reply;
  }

  private thread(): Worker | null {
    if (this.worker || this.failed) return this.worker;
    const entry = threadEntry();
    if (!entry) {
      this.failed = true;
      return null;
    }
    // Unreferenced while idle: a follower's parser never keeps a process alive.
    const worker = new Worker(entry);
    worker.unref();
    worker.on("message", (r: PageReply) => {
      const w = this.waiting.get(r.id);
      this.waiting.delete(r.id);
      if (this.waiting.size === 0) worker.unref();
      w?.resolve(r.page);
    });
    const fail = (e: Error) => {
      this.failed = true;
      this.worker = null;
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`the page parsing thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  /** Ends the thread; a later `parse` starts another. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    if (!w) return;
    w.removeAllListeners("exit");
    for (const p of this.waiting.values()) p.reject(new Error("the page parser was closed"));
    this.waiting.clear();
    await w.terminate();
  }
}
