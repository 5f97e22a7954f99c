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
import type { FastifyReply, FastifyRequest } from "fastify";
import { formatAddress, toHex } from "../../ledger/address.js";
import type { LedgerInfo, TransactionSummary } from "../../ledger/types.js";
import type { SummaryQuery } from "../../storage/LedgerStore.js";
import { ApiError } from "../errors.js";
import { ledgerHeaderSchemas } from "../headers.js";
import { EncodedBody, sendBody } from "../compression.js";
import { andThen, type NodeContext } from "../context.js";
import { acceptType, BCS_TYPE, JSON_TYPE, type WireFormat } from "../negotiate.js";
import type { Page } from "../pageCache.js";
import { addressPath, addressPathSchema, limitQuerySchema, u64Query, u64QuerySchema } from "../params.js";
import { errorResponses, type RouteDef } from "../route.js";

export interface GetAccountTransactionSummariesQuery {
  start_version?: string;
  end_version?: string;
  limit?: number;
}

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

export const getAccountTransactionSummaries: RouteDef = {
  method: "GET",
  url: "/v1/accounts/:address/transaction_summaries",
  ledgerHeaders: true,
  schema: {
    operationId: "get_account_transaction_summaries",
    summary: "Get account transaction summaries",
    description:
      "Retrieves summaries of on-chain committed transactions (sequence number based and orderless) sent by an account. " +
      "With start_version, the summaries start at that version; with only end_version, they end there; with neither, " +
      "the latest are returned. Always ascending by version. Pending transactions are not returned. " +
      "If start_version or end_version has been pruned, the server responds with a 410.",
    tags: ["Transactions"],
    params: { type: "object", required: ["address"], properties: { address: addressPathSchema("Address of account with or without a 0x prefix") } },
    querystring: {
      type: "object",
      properties: {
        start_version: u64QuerySchema("Transaction version to start the output from (inclusive)"),
        end_version: u64QuerySchema("Transaction version to end the output at (inclusive); ignored when start_version is given"),
        limit: limitQuerySchema("Max number of summaries to retrieve. If not provided, defaults to the default page size."),
      },
    },
    response: {
      200: {
        description: "Transaction summaries, ascending by version",
        headers: ledgerHeaderSchemas(true),
        content: {
          "application/json": { schema: { type: "array", items: { $ref: "TransactionSummary#" } } },
          "application/x-bcs": { schema: { type: "string", format: "binary" } },
        },
      },
      ...errorResponses([400, 403, 404, 410, 500, 503]),
    },
  },
  handler: (ctx) =>
    function getAccountTransactionSummariesHandler(req: FastifyRequest, reply: FastifyReply) {
      // 1. validate
      const sender = addressPath("address", (req.params as { address: string }).address);
      const query = req.query as GetAccountTransactionSummariesQuery;
      const start = u64Query("start_version", query.start_version);
      const end = u64Query("end_version", query.end_version);
      const format = acceptType(req.headers.accept);
      // 2. resolve: always the latest ledger, with the account's newest transaction in the window
      // read in the same snapshot; a bound below the oldest kept version is pruned
      const resolved = ctx.snapshot("Failed to retrieve account transaction summaries", undefined, () =>
        ctx.store.readSummariesVersion(sender, start === undefined ? end : undefined),
      );
      return andThen(resolved, ({ info, value: newest }) => {
        for (const bound of [start, end]) {
          if (bound !== undefined && bound < info.oldestVersion) throw ApiError.versionPruned(bound, info);
        }
        const limit = Math.min(query.limit ?? ctx.config.summariesPageSize, ctx.config.summariesMaxPageSize);
        // 3. read: the page stays the same until the account sends again, so a page built once
        // serves every request until then from the cache (unless pruning has since cut into it)
        const window = start === undefined ? `-|${end ?? "-"}` : `${start}|-`;
        const key = `summaries|${format}|${toHex(sender)}|${window}|${limit}|${newest ?? "-"}`;
        const cached = ctx.pages.get<SummariesMeta>(key);
        const read =
          cached && (cached.meta.first === null || cached.meta.first >= info.oldestVersion)
            ? { page: cached, info }
            : readPage(ctx, info, { sender, start, end, ledgerVersion: info.ledgerVersion, limit }, format).then((r) =>
                // A page read again at a later position (a prune raced the first read) is not the
                // page of this key's snapshot: served, not cached.
                r.info === info ? { page: ctx.pages.set(key, r.page), info } : r,
              );
        return andThen(read, ({ page, info }) => {
          // 4. encode
          reply.headers(ctx.headers.ledger(info));
          return sendBody(ctx.config, req, reply, page.body, format === "bcs" ? BCS_TYPE : JSON_TYPE);
        });
      });
    },
};

/** Reads of one request a prune may overtake before it answers 503 (only when it prunes past the read's ledger version). */
const READ_ATTEMPTS = 3;

/**
 * Reads and encodes one page: exact for the ledger position it returns, or 410. The rows are read
 * in a statement of their own, after the position, so a prune committing in between may have
 * removed some. Afterwards the oldest version is read fresh (`NodeContext.recheck`):
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
): Promise<{ page: Page<SummariesMeta>; info: LedgerInfo }> {
  for (let attempt = 1; ; attempt++) {
    const at = info;
    let rows = await ctx.read("Failed to retrieve account transaction summaries", at, () =>
      ctx.store.getTransactionSummaries({ ...q, ledgerVersion: at.ledgerVersion }),
    );
    const now = await ctx.recheck(q.start !== undefined ? [q.start] : [q.end]);
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
    const body = new EncodedBody(format === "bcs" ? encodeBcs(rows) : Buffer.from(toJson(rows)));
    return { page: { body, meta: { first: rows[0]?.version ?? null } }, info: answered };
  }
}

interface SummariesMeta {
  /** Version of the page's first summary: once pruned past it, the page is read again. */
  first: bigint | null;
}

/**
 * The JSON array, written directly: every field is an address, a hash or a decimal, so nothing
 * needs escaping, and a page of 100 costs no per-row schema walk.
 */
function toJson(rows: TransactionSummary[]): string {
  let out = "[";
  // One account's page: its sender prints the same on every row.
  const head = rows.length > 0 ? `{"sender":"${formatAddress(rows[0]!.sender)}","version":"` : "";
  for (let i = 0; i < rows.length; i++) {
    const s = rows[i]!;
    const rp = s.replayProtector;
    const kind = rp.type === "nonce" ? "nonce" : "sequence_number";
    if (i > 0) out += ",";
    out +=
      `${head}${s.version}","transaction_hash":"${toHex(s.hash)}",` +
      `"replay_protector":{"type":"${kind}","${kind}":"${rp.value}"}}`;
  }
  return out + "]";
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
