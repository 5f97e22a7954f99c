/**
 * GET /v1/accounts/{address}/transaction_summaries — summaries of committed transactions sent by
 * the account, sequence-number-based and orderless alike, ascending by version (DECISIONS §9):
 * from `start_version` forward; else the `limit` latest at or before `end_version`; else the
 * `limit` latest. If `start_version` or `end_version` has been pruned, the server responds with a 410.
 *
 * JSON (default) or BCS (`vector<IndexedTransactionSummary>`).
 *
 * @example curl 'http://127.0.0.1:8080/v1/accounts/0x1/transaction_summaries?limit=10'
 */
import { formatAddress, toHex } from "../../ledger/address.js";
import type { LedgerInfo, TransactionSummary } from "../../ledger/types.js";
import type { Snapshot, SummariesJsonPage, SummariesPage, SummaryQuery } from "../../storage/reader.js";
import type { ApiConfig } from "../config.js";
import { EncodedBody } from "../compression.js";
import type { NodeContext } from "../context.js";
import { ApiError } from "../errors.js";
import type { WireFormat } from "../negotiate.js";
import { addressParam, defineOperation, limitParam, ref, u64Param } from "../operation.js";
import { after, type Later } from "../later.js";
import type { Page } from "../pageCache.js";
import { transactionSummary } from "../schemas.js";

/** The name of a page whose rows are all committed and end at its `end_version`. */
const SETTLED = "settled";
/** What a page's cache key names it by: `SETTLED`, or the version of the sender's newest transaction in it (null: none). */
type PageName = typeof SETTLED | bigint | null;
/** What the position read found: the page's name, and the page when the store read it with the position. */
interface Found {
  name: PageName;
  page?: SummariesPage | SummariesJsonPage | undefined;
}

export const getAccountTransactionSummaries = defineOperation({
  operationId: "get_account_transaction_summaries",
  method: "GET",
  url: "/v1/accounts/:address/transaction_summaries",
  summary: "Get account transaction summaries",
  description:
    "Retrieves summaries of on-chain committed transactions (sequence number based and orderless) sent by an account. " +
    "With start_version, the summaries start at that version; with only end_version, they end there; with neither, " +
    "the latest are returned. Always ascending by version. Pending transactions are not returned. " +
    "If start_version or end_version has been pruned, the server responds with a 410.",
  tags: ["Transactions"],
  params: { type: "object", required: ["address"], properties: { address: addressParam("Address of account with or without a 0x prefix") } } as const,
  query: {
    type: "object",
    properties: {
      start_version: u64Param("Transaction version to start the output from (inclusive)"),
      end_version: u64Param("Transaction version to end the output at (inclusive); ignored when start_version is given"),
      limit: limitParam("Max number of summaries to retrieve. If not provided, defaults to the default page size."),
    },
  } as const,
  formats: ["json", "bcs"],
  response: { description: "Transaction summaries, ascending by version", json: { type: "array", items: ref(transactionSummary) } },
  errors: [400, 403, 404, 410, 500, 503],
  // Always the latest ledger; the bounds only must not have been pruned.
  ledger: { bounds: ["start_version", "end_version"] },
  failure: "Failed to retrieve account transaction summaries",
  // The position with what names the page: a page that ends at a committed version never changes
  // (`SETTLED`: the end names it, and no read of the account is needed); else the version of the
  // account's newest transaction in the window, as a page of the account stays the same until it
  // sends again. Random-version traffic rarely asks for one page twice, and the seek for the
  // newest transaction was a second index read on every miss (and a second round trip on
  // PostgreSQL).
  // A request the page cache has not seen, on a store whose reads are round trips, reads its page
  // with the position in one read, as the modules operation's does.
  position: (reads, { params, query }, _version, format, ctx) => {
    const end = query.start_version === undefined ? query.end_version : undefined;
    const read = (): Later<Snapshot<Found> | null> => {
      const ask = pageAsk(ctx, params.address, query, format);
      if (ask) return readStorePage(ctx, ask, format).then((snap) => snap && { info: snap.info, value: { name: snap.value.newest, page: snap.value } });
      return after(reads.readSummariesVersion(params.address, end), (snap) => snap && { info: snap.info, value: { name: snap.value } });
    };
    if (end === undefined) return read();
    return after(reads.getLedgerInfo(), (info): Later<Snapshot<Found> | null> => (info && end <= info.ledgerVersion ? { info, value: { name: SETTLED } } : read()));
  },
  handler: (ctx) =>
    async function getAccountTransactionSummaries({ params, query }, { info, found }, format) {
      const sender = params.address;
      const { start_version: start, end_version: end } = query;
      const limit = pageLimit(query, ctx.config);
      const window = start === undefined ? `-|${end ?? "-"}` : `${start}|-`;
      const key = `summaries|${format}|${toHex(sender)}|${window}|${limit}|${found.name ?? "-"}`;
      const cached = ctx.pages.get<SummariesMeta>(key);
      // A cached page serves until pruning cuts into it.
      if (cached && (cached.meta.first === null || cached.meta.first >= info.oldestVersion)) return { body: cached.body };
      // the page the store read with the position, in its snapshot; else read now
      const read = found.page ? { page: encodePage(found.page, format), info } : await readPage(ctx, { sender, start, end, limit }, format);
      // A page read at a later position than the key's (a block or a prune came in between) is
      // not the page of this key: sent, not cached.
      if (read.info.ledgerVersion === info.ledgerVersion && read.info.oldestVersion === info.oldestVersion) ctx.pages.offer(key, read.page);
      return { body: read.page.body, exactAt: read.info };
    },
});

/**
 * Reads and encodes one page, with the ledger position it is exact for: the store reads the
 * position and the rows in one snapshot, so a prune committing meanwhile cannot cut into it. The
 * wrapper judges the requested bounds against that position (410 when pruned past them). JSON
 * comes as the store writes it where it can (`WireReads`).
 */
async function readPage(ctx: NodeContext, q: Omit<SummaryQuery, "ledgerVersion">, format: WireFormat): Promise<{ page: Page<SummariesMeta>; info: LedgerInfo }> {
  const snapshot = await readStorePage(ctx, q, format);
  if (!snapshot) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  return { page: encodePage(snapshot.value, format), info: snapshot.info };
}

/** A page as the store reads it: its JSON where the store writes it (`WireReads`), else its rows. */
function readStorePage(ctx: NodeContext, q: SummaryQuery, format: WireFormat): Promise<Snapshot<SummariesPage | SummariesJsonPage> | null> {
  return format === "json" && ctx.store.wire ? ctx.store.wire.readSummaries(q) : ctx.store.readSummaries(q);
}

/** A page as the store read it (its JSON, or its rows), encoded. */
function encodePage(page: SummariesPage | SummariesJsonPage, format: WireFormat): Page<SummariesMeta> {
  if ("json" in page) return { body: new EncodedBody(Buffer.from(page.json, "latin1")), meta: { first: page.first } };
  const rows = page.rows;
  const body = new EncodedBody(format === "bcs" ? summariesBcs(rows) : Buffer.from(summariesJson(rows), "latin1"));
  return { body, meta: { first: rows[0]?.version ?? null } };
}

/** Summaries asked for in a page: the limit given, else the default, at most the largest. */
function pageLimit(query: { limit?: number }, config: ApiConfig): number {
  return Math.min(query.limit ?? config.summariesPageSize, config.summariesMaxPageSize);
}

/**
 * The page to read with the position, on a store whose reads are round trips, for a request the
 * page cache has not seen (`PageCache.firstAsk`).
 */
function pageAsk(
  ctx: NodeContext,
  sender: Uint8Array,
  query: { start_version?: bigint; end_version?: bigint; limit?: number },
  format: WireFormat,
): SummaryQuery | undefined {
  if (ctx.store.immediate) return undefined;
  const { start_version: start, end_version: end } = query;
  const limit = pageLimit(query, ctx.config);
  if (!ctx.pages.firstAsk(`summaries|${format}|${toHex(sender)}|${start ?? "-"}|${end ?? "-"}|${limit}`)) return undefined;
  return { sender, start, end, limit };
}

interface SummariesMeta {
  /** Version of the page's first summary: once pruned past it, the page is read again. */
  first: bigint | null;
}

/**
 * The JSON of a page (`TransactionSummary[]`), in one pass: every value is hex or decimal digits,
 * so nothing is escaped, and the sender is formatted once. Byte for byte what the response
 * schema's serializer writes, without the objects it needs and its per-string escaping.
 */
export function summariesJson(rows: readonly TransactionSummary[]): string {
  let out = "[";
  let sender: Uint8Array | null = null;
  let head = "";
  for (let i = 0; i < rows.length; i++) {
    const s = rows[i]!;
    if (s.sender !== sender) {
      sender = s.sender;
      head = `{"sender":"${formatAddress(sender)}","version":"`;
    }
    const rp = s.replayProtector;
    out +=
      (i === 0 ? head : `,${head}`) +
      s.version +
      '","transaction_hash":"0x' +
      s.hashHex +
      (rp.type === "nonce" ? '","replay_protector":{"type":"nonce","nonce":"' : '","replay_protector":{"type":"sequence_number","sequence_number":"') +
      rp.value +
      '"}}';
  }
  return out + "]";
}

/**
 * The BCS of a page, `vector<IndexedTransactionSummary>` (DECISIONS §12), written straight into one
 * buffer: the variant `V1` (0), the sender's 32 bytes, the version (u64), the hash (a byte vector),
 * the replay protector (`Nonce` 0 or `SequenceNumber` 1, then a u64).
 */
export function summariesBcs(rows: readonly TransactionSummary[]): Buffer {
  let size = ulebLength(rows.length);
  for (const s of rows) size += 1 + 32 + 8 + ulebLength(s.hashHex.length / 2) + s.hashHex.length / 2 + 1 + 8;
  const out = Buffer.allocUnsafe(size);
  let at = writeUleb(out, 0, rows.length);
  for (const s of rows) {
    out[at++] = 0;
    out.set(s.sender, at);
    at = out.writeBigUInt64LE(s.version, at + 32);
    const hashBytes = s.hashHex.length / 2;
    at = writeUleb(out, at, hashBytes);
    at += out.write(s.hashHex, at, hashBytes, "hex");
    out[at++] = s.replayProtector.type === "nonce" ? 0 : 1;
    at = out.writeBigUInt64LE(s.replayProtector.value, at);
  }
  return out;
}

function ulebLength(n: number): number {
  let bytes = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    bytes++;
  }
  return bytes;
}

function writeUleb(out: Buffer, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  out[at++] = n;
  return at;
}
