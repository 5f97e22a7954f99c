/**
 * The follower's pages of transactions parsed off its thread: a page's JSON and each of its
 * transactions (`parseAptosTransaction`) on a thread of their own (`pageThread.ts`), handed back in
 * the import's flat form (`parsedCodec.ts`) and decoded only when the page's turn comes, so a page
 * waiting behind others is a few flat arrays, not a tree of objects. Where the thread cannot start
 * (a run from the TypeScript sources without a build) or failed, a page is parsed here by the
 * same function.
 *
 * The parser belongs to one run of the follower and is closed when that run ends: a page still in
 * flight then is refused, never parsed on a thread started again after the close.
 */
import { IngestError, parseAptosTransaction, type ParsedTxn } from "../aptosJson.js";
import { builtThreadEntry, ThreadClient } from "../../storage/common/threadClient.js";
import { decodeParsed, type EncodedParsed } from "../parsedCodec.js";

/** The start of a body that is not JSON, for the error that names it. */
const NOT_JSON_HEAD_BYTES = 80;

/** A page's body as parsed: its shape, for the follower's checks, and its transactions. */
export type ParsedPage<Txns = ParsedTxn[]> =
  | { t: "notJson"; message: string; head: string }
  | { t: "notArray" }
  | {
      t: "page";
      /** Transactions in the answer (the upstream may send more than asked). */
      length: number;
      /** The first transaction's `version` field as JSON text (`undefined` when there is none). */
      firstVersion: string;
      /** The first `limit` transactions, up to a bad one. */
      txns: Txns;
      /** Why the transaction after `txns` is refused (an `IngestError`'s message); null when none is. */
      refused: string | null;
    };

/** A page as `PageParser.parse` gives it: the transactions flat when the thread parsed them. */
export type PendingPage = ParsedPage<ParsedTxn[] | EncodedParsed>;

export interface PageRequest {
  id: number;
  body: Uint8Array<ArrayBuffer>;
  limit: number;
}

export interface PageReply {
  id: number;
  page: ParsedPage<EncodedParsed>;
}

/** A page body parsed: the JSON, then its first `limit` transactions (the index counts in the page). */
export function parsePage(body: Uint8Array, limit: number): ParsedPage {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch (e) {
    return { t: "notJson", message: (e as Error).message, head: bytes.toString("utf8", 0, NOT_JSON_HEAD_BYTES) };
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

/** A page's transactions as objects, decoded from the flat form when the thread parsed them. */
export function pageTxns(txns: ParsedTxn[] | EncodedParsed): ParsedTxn[] {
  return Array.isArray(txns) ? txns : decodeParsed(txns);
}

export class PageParser {
  private readonly thread = new ThreadClient<PageRequest, PageReply>(
    () => builtThreadEntry(import.meta.url, "ingest/follow", "pageThread.js"),
    "page parsing",
  );
  private closed = false;

  /** `parsePage` of `body`, on the thread when it runs; rejects once the parser is closed. */
  parse(body: Buffer, limit: number): Promise<PendingPage> {
    if (this.closed) return Promise.reject(new Error("the page parser was closed"));
    // The thread takes the body's memory over; a view of a pooled buffer (a small body) is copied first.
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? new Uint8Array(body.buffer as ArrayBuffer) : new Uint8Array(body);
    const asked = this.thread.request((id) => ({ id, body: own, limit }), [own.buffer]);
    if (!asked) return Promise.resolve(parsePage(body, limit));
    // A thread that failed with the page rejects it (a transient fault: the follower asks again).
    return asked.then((r) => r.page);
  }

  /** Ends the thread for good: a later `parse` is refused. */
  async close(): Promise<void> {
    this.closed = true;
    await this.thread.close(false);
  }
}
