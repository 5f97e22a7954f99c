/**
 * The follower's pages of transactions parsed off its thread: the JSON of a page, and each of its
 * transactions (`parseAptosTransaction`), on a thread of their own (`pageThread.ts`), handed back
 * in the import's flat form (`parsedCodec.ts`), so the thread that commits only checks and queues
 * them. Where the thread cannot start (a run from the TypeScript sources without a build) or
 * failed, a page is parsed here by the same function.
 */
import { IngestError, parseAptosTransaction, type ParsedTxn } from "../aptosJson.js";
import { builtThreadEntry, ThreadClient } from "../../storage/threadClient.js";
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

export class PageParser {
  private readonly thread = new ThreadClient<PageRequest, PageReply>(
    () => builtThreadEntry(import.meta.url, "ingest/follow", "pageThread.js"),
    "page parsing",
  );

  /** `parsePage` of `body` (its buffer is handed to the thread: the caller keeps no use of it). */
  async parse(body: Uint8Array, limit: number): Promise<ParsedPage> {
    // A view of a pooled buffer is copied: only a buffer of its own may be transferred.
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : body.slice();
    // A thread that failed with the page rejects it (a transient fault: the follower asks again).
    const asked = this.thread.request((id) => ({ id, body: own, limit }), [own.buffer as ArrayBuffer]);
    if (!asked) return parsePage(body, limit);
    const { page } = await asked;
    return page.t === "page" ? { ...page, txns: decodeParsed(page.txns) } : page;
  }

  /** Ends the thread; a later `parse` starts another. */
  async close(): Promise<void> {
    await this.thread.close(true);
  }
}
