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
import { bcs } from "@mysten/bcs";
import { formatAddress, toHex } from "../../ledger/address.js";
import type { LedgerInfo, TransactionSummary } from "../../ledger/types.js";
import type { SummaryQuery } from "../../storage/LedgerStore.js";
import { EncodedBody } from "../compression.js";
import type { NodeContext } from "../context.js";
import { jsonSerializer, resolveVersions } from "../handler.js";
import { ApiError } from "../errors.js";
import type { WireFormat } from "../negotiate.js";
import { addressParam, defineOperation, limitParam, ref, u64Param } from "../operation.js";
import type { Page } from "../pageCache.js";
import { transactionSummary } from "../schemas.js";

/** `IndexedTransactionSummary::V1` (DECISIONS §12). */
const summaryBcs = bcs.enum("IndexedTransactionSummary", {
  V1: bcs.struct("V1", {
    sender: bcs.fixedArray(32, bcs.u8()),
    version: bcs.u64(),
    transaction_hash: bcs.byteVector(),
    replay_protector: bcs.enum("ReplayProtector", { Nonce: bcs.u64(), SequenceNumber: bcs.u64() }),
  }),
});
const summariesBcs = bcs.vector(summaryBcs);

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
  // The position with the version of the account's newest transaction in the window: a page of
  // the account stays the same until it sends again.
  position: (store, { params, query }) =>
    store.readSummariesVersion(params.address, query.start_version === undefined ? query.end_version : undefined),
  handler: (ctx) => {
    const serialize = jsonSerializer<SummaryJson[]>({ type: "array", items: ref(transactionSummary) });
    return async function getAccountTransactionSummaries({ params, query }, { info, found: newest }, format) {
      const sender = params.address;
      const { start_version: start, end_version: end } = query;
      const limit = Math.min(query.limit ?? ctx.config.summariesPageSize, ctx.config.summariesMaxPageSize);
      const window = start === undefined ? `-|${end ?? "-"}` : `${start}|-`;
      const key = `summaries|${format}|${toHex(sender)}|${window}|${limit}|${newest ?? "-"}`;
      const cached = ctx.pages.get<SummariesMeta>(key);
      // A cached page serves until pruning cuts into it.
      if (cached && (cached.meta.first === null || cached.meta.first >= info.oldestVersion)) return { body: cached.body };
      const read = await readPage(ctx, info, { sender, start, end, ledgerVersion: info.ledgerVersion, limit }, format, serialize);
      // A page read again at a later position (a prune raced the first read) is not the page of
      // this key's snapshot: sent, not cached.
      if (read.info.ledgerVersion === info.ledgerVersion && read.info.oldestVersion === info.oldestVersion) ctx.pages.offer(key, read.page);
      return { body: read.page.body, exactAt: read.info };
    };
  },
});

/** Reads of one request a prune may overtake before it answers 503 (only when it prunes past the read's ledger version). */
const READ_ATTEMPTS = 3;

/**
 * Reads and encodes one page: exact for the ledger position it returns, or 410. The rows are read
 * in a statement of their own, after the position, so a prune committing in between may have
 * removed some. Afterwards the oldest version is read fresh:
 * - `start_version` (or, without it, `end_version`) now pruned: 410;
 * - from `start_version`, the page holds versions from it up only, so it is exact;
 * - else the page depended on versions from its first row up (a full page) or from the oldest
 *   version up (a short or empty one). If a prune passed that point, the rows from the new oldest
 *   version up are still all there (a prune deletes below it only), so the page is those rows, sent
 *   with the new oldest version in its headers: exact for that position.
 */
async function readPage(
  ctx: NodeContext,
  info: LedgerInfo,
  q: SummaryQuery,
  format: WireFormat,
  serialize: (rows: SummaryJson[]) => string,
): Promise<{ page: Page<SummariesMeta>; info: LedgerInfo }> {
  for (let attempt = 1; ; attempt++) {
    const at = info;
    let rows = await ctx.store.getTransactionSummaries({ ...q, ledgerVersion: at.ledgerVersion });
    const now = await ctx.ledger(true);
    resolveVersions(now, { at: undefined, bounds: [q.start ?? q.end] });
    // A full page depends on its own rows only (none at all for limit=0).
    const first = rows[0];
    const dependsOn = q.start ?? (rows.length >= q.limit ? (first?.version ?? at.ledgerVersion + 1n) : at.oldestVersion);
    let answered = at;
    if (dependsOn < now.oldestVersion) {
      if (now.oldestVersion > at.ledgerVersion) {
        // Pruned past everything this read saw: read again at the fresh position.
        if (attempt >= READ_ATTEMPTS) throw ApiError.unavailable(`the ledger was pruned past this read ${attempt} times in a row; try again`);
        info = now;
        continue;
      }
      rows = rows.filter((r) => r.version >= now.oldestVersion);
      answered = { ...at, oldestVersion: now.oldestVersion, oldestBlockHeight: now.oldestBlockHeight };
    }
    const body = new EncodedBody(format === "bcs" ? encodeBcs(rows) : Buffer.from(serialize(rows.map(toJson))));
    return { page: { body, meta: { first: rows[0]?.version ?? null } }, info: answered };
  }
}

interface SummariesMeta {
  /** Version of the page's first summary: once pruned past it, the page is read again. */
  first: bigint | null;
}

/** The JSON form of a summary (`TransactionSummary` in the OpenAPI document). */
interface SummaryJson {
  sender: string;
  version: string;
  transaction_hash: string;
  replay_protector: { type: "nonce"; nonce: string } | { type: "sequence_number"; sequence_number: string };
}

function toJson(s: TransactionSummary): SummaryJson {
  const rp = s.replayProtector;
  return {
    sender: formatAddress(s.sender),
    version: s.version.toString(),
    transaction_hash: toHex(s.hash),
    replay_protector: rp.type === "nonce" ? { type: "nonce", nonce: rp.value.toString() } : { type: "sequence_number", sequence_number: rp.value.toString() },
  };
}

function encodeBcs(rows: TransactionSummary[]): Buffer {
  return Buffer.from(
    summariesBcs
      .serialize(
        rows.map((s) => ({
          V1: {
            sender: Array.from(s.sender),
            version: s.version,
            transaction_hash: s.hash,
            replay_protector:
              s.replayProtector.type === "nonce"
                ? { Nonce: s.replayProtector.value }
                : { SequenceNumber: s.replayProtector.value },
          },
        })),
      )
      .toBytes(),
  );
}
