/**
 * Packs the resource values of a large commit (`packResourceValue`) on a thread of its own, so that an import parses the next transactions meanwhile (the Importer
 * keeps one commit in flight): on the devnet mix a resource is written per user transaction and
 * packing was a quarter of the import's CPU time. Small commits (a devnet block) pack inline: a
 * round trip to the thread would cost more than it saves. When the thread cannot be started or
 * fails, values are packed inline: the packing is the same function either way.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { packResourceValue } from "../resourceValue.js";

export interface PackRequest {
  id: number;
  /** The owners' 32-byte addresses, one after another. */
  owners: Uint8Array;
  jsons: string[];
}

export interface PackReply {
  id: number;
  /** The packed values one after another; value i ends at `ends[i]`. */
  data: Uint8Array;
  ends: Uint32Array;
}

/** Commits with fewer resource values than this pack them inline. */
export const PACK_ON_THREAD_MIN = 512;

/** The built entry of the thread (a worker does not run TypeScript sources; see writers.ts). */
function threadEntry(): URL | null {
  if (!import.meta.url.endsWith(".ts")) return new URL("./packWorker.js", import.meta.url);
  const built = new URL("../../../dist/storage/sqlite/packWorker.js", import.meta.url);
  return existsSync(fileURLToPath(built)) ? built : null;
}

export interface ResourceToPack {
  address: Uint8Array;
  json: string;
}

export class ResourcePacker {
  private worker: Worker | null = null;
  private failed = false;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (r: PackReply) => void; reject: (e: Error) => void }>();

  /** The packed values of `items`, in their order. */
  async pack(items: readonly ResourceToPack[]): Promise<Buffer[]> {
    if (items.length < PACK_ON_THREAD_MIN) return packInline(items);
    const worker = this.thread();
    if (!worker) return packInline(items);
    const owners = new Uint8Array(items.length * 32);
    for (let i = 0; i < items.length; i++) owners.set(items[i]!.address, i * 32);
    const id = this.nextId++;
    let reply: PackReply;
    try {
      reply = await new Promise<PackReply>((resolve, reject) => {
        // Held while a reply is awaited: an unreferenced thread would let the process exit meanwhile.
        if (this.waiting.size === 0) worker.ref();
        this.waiting.set(id, { resolve, reject });
        const m: PackRequest = { id, owners, jsons: items.map((r) => r.json) };
        worker.postMessage(m, [owners.buffer]);
      });
    } catch {
      return packInline(items);
    }
    const data = Buffer.from(reply.data.buffer, reply.data.byteOffset, reply.data.byteLength);
    const out: Buffer[] = new Array(items.length);
    let start = 0;
    for (let i = 0; i < items.length; i++) {
      const end = reply.ends[i]!;
      out[i] = data.subarray(start, end);
      start = end;
    }
    return out;
  }

  private thread(): Worker | null {
    if (this.worker || this.failed) return this.worker;
    const entry = threadEntry();
    if (!entry) {
      this.failed = true;
      return null;
    }
    // Unreferenced while idle: an open store's packer never keeps a process alive.
    const worker = new Worker(entry);
    worker.unref();
    worker.on("message", (r: PackReply) => {
      const w = this.waiting.get(r.id);
      this.waiting.delete(r.id);
      if (this.waiting.size === 0) worker.unref();
      w?.resolve(r);
    });
    const fail = (e: Error) => {
      this.failed = true;
      this.worker = null;
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`the resource packing thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.failed = true;
    if (w) await w.terminate();
  }
}

function packInline(items: readonly ResourceToPack[]): Buffer[] {
  return items.map((r) => packResourceValue(r.address, r.json));
}
