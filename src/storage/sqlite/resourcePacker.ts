/**
 * Packs the resource values of a large commit (`packResourceValue`) on a thread of its own, so that an import parses the next transactions meanwhile (the Importer
 * keeps one commit in flight): on the devnet mix a resource is written per user transaction and
 * packing was a quarter of the import's CPU time. Small commits (a devnet block) pack inline: a
 * round trip to the thread would cost more than it saves. When the thread cannot be started or
 * fails, values are packed inline: the packing is the same function either way.
 */
import { packResourceValue } from "../common/resourceValue.js";
import { builtThreadEntry, ThreadClient } from "../common/threadClient.js";

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

export interface ResourceToPack {
  address: Uint8Array;
  json: string;
}

export class ResourcePacker {
  private readonly thread = new ThreadClient<PackRequest, PackReply>(
    () => builtThreadEntry(import.meta.url, "storage/sqlite", "packWorker.js"),
    "resource packing",
  );

  /** The packed values of `items`, in their order. */
  async pack(items: readonly ResourceToPack[]): Promise<Buffer[]> {
    if (items.length < PACK_ON_THREAD_MIN) return packInline(items);
    const owners = new Uint8Array(items.length * 32);
    for (let i = 0; i < items.length; i++) owners.set(items[i]!.address, i * 32);
    const asked = this.thread.request((id) => ({ id, owners, jsons: items.map((r) => r.json) }), [owners.buffer]);
    if (!asked) return packInline(items);
    let reply: PackReply;
    try {
      reply = await asked;
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

  async close(): Promise<void> {
    await this.thread.close(false);
  }
}

function packInline(items: readonly ResourceToPack[]): Buffer[] {
  return items.map((r) => packResourceValue(r.address, r.json));
}
