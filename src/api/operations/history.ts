/**
 * What the history's operations share (the transactions, by version, by hash, the wait, the
 * blocks): the answers of a version whose history is not held here, the reference's 404s, and the
 * JSON bodies made of the stored texts as they are (docs/decisions.md §20).
 */
import type { BlockInfo, LedgerInfo } from "../../ledger/types.js";
import { toHex } from "../../ledger/address.js";
import { withoutStack } from "../../storage/contracts/errors.js";
import type { NodeContext } from "../context.js";
import { ApiError } from "../http/apiError.js";
import type { Answer } from "../http/operation.js";

const OPEN = Buffer.from("[");
const COMMA = Buffer.from(",");
const CLOSE = Buffer.from("]");

/** A history page's size as the reference's `Page` takes it: `asked` (else `size`), 0 refused, past `max` clamped. */
export function historyPageSize(asked: number | undefined, size: number, max: number, info: LedgerInfo): number {
  const n = asked ?? size;
  if (n === 0) throw ApiError.invalidInput(`Given limit value (${n}) must not be zero`, info);
  return Math.min(n, max);
}

/**
 * One stored text as the body of an answer: a string, which measured cheaper to send than a Buffer
 * of the same bytes (bench/RESULTS.md, "History"). The texts were encoded from strings, so the
 * bytes sent are those stored.
 */
export function textBody(text: Uint8Array): string {
  return Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString("utf8");
}

/** The stored texts as one JSON array, byte for byte as they were ingested (a string, as `textBody`). */
export function textsArray(texts: readonly Uint8Array[]): string {
  const parts: Uint8Array[] = [OPEN];
  texts.forEach((t, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(t);
  });
  parts.push(CLOSE);
  return Buffer.concat(parts).toString("utf8");
}

/**
 * The answer for history this node does not hold at `version` (pruned, or before a replica's first
 * synced version): the upstream's answer with `--proxy`, else 410 as for pruned history.
 */
export function historyNotHeld(ctx: NodeContext, version: bigint, info: LedgerInfo): Answer {
  if (ctx.upstream !== null) return { upstream: true };
  return { error: ApiError.versionPruned(version, info), exactAt: info };
}

/** The reference's 404 for a version past the ledger. */
export function transactionNotFoundByVersion(version: bigint, info: LedgerInfo): ApiError {
  return withoutStack(() => new ApiError(404, "transaction_not_found", `Transaction not found by Ledger version(${version})`, info));
}

/** The reference's 404 for a hash no committed transaction has. */
export function transactionNotFoundByHash(hash: Uint8Array, info: LedgerInfo): ApiError {
  return withoutStack(() => new ApiError(404, "transaction_not_found", `Transaction not found by Transaction hash(${toHex(hash)})`, info));
}

/** The reference's 404 for a block past the ledger, and 410 for one below its window. */
export function blockNotFoundByHeight(height: bigint, info: LedgerInfo): ApiError {
  return withoutStack(() => new ApiError(404, "block_not_found", `Block not found by Block height(${height})`, info));
}
export function blockPruned(height: bigint, info: LedgerInfo): ApiError {
  return withoutStack(() => new ApiError(410, "block_pruned", `Block(${height}) has been pruned`, info));
}

/** The reference's largest number of a block's transactions sent with it (`max_block_transactions_page_size`). */
export const BLOCK_TRANSACTIONS_MAX = 10_000;

/** The genesis block's hash: the framework's genesis block event names `@0x0`. */
const GENESIS_BLOCK_HASH = `0x${"0".repeat(64)}`;

/**
 * The block as the reference's `Block` JSON: its height, hash, timestamp and versions, and its
 * transactions (up to `BLOCK_TRANSACTIONS_MAX`) or `null`. The hash is the block metadata's `id`
 * as its source printed it (the NewBlockEvent's `hash`), read from the first transaction's text;
 * null when that text is not held or names no id (the caller answers as for history not held).
 */
export async function blockJson(ctx: NodeContext, block: BlockInfo, withTransactions: boolean): Promise<{ body: string; info: LedgerInfo } | null> {
  const count = Number(block.lastVersion - block.firstVersion) + 1;
  const snap = await ctx.store.readTransactions(block.firstVersion, withTransactions ? Math.min(count, BLOCK_TRANSACTIONS_MAX) : 1, ctx.config.transactionsPageBytes);
  const first = snap?.value.texts[0];
  if (!snap || first === undefined || block.lastVersion > snap.info.ledgerVersion) return null;
  const hash = block.height === 0n ? GENESIS_BLOCK_HASH : blockHashOf(first);
  if (hash === null) return null;
  const head =
    `{"block_height":"${block.height}","block_hash":${JSON.stringify(hash)},"block_timestamp":"${block.timestampUsec}",` +
    `"first_version":"${block.firstVersion}","last_version":"${block.lastVersion}","transactions":`;
  return { body: `${head}${withTransactions ? textsArray(snap.value.texts) : "null"}}`, info: snap.info };
}

/** The `id` of a block metadata transaction's text (its NewBlockEvent's `hash` where it has no id), or null. */
function blockHashOf(text: Uint8Array): string | null {
  const t = JSON.parse(Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString("utf8")) as Record<string, unknown>;
  if (typeof t.id === "string" && t.id !== "") return t.id;
  const events = Array.isArray(t.events) ? (t.events as Array<Record<string, unknown>>) : [];
  const event = events.find((e) => typeof e?.type === "string" && e.type.endsWith("::block::NewBlockEvent"));
  const hash = (event?.data as Record<string, unknown> | undefined)?.hash;
  return typeof hash === "string" && hash !== "" ? hash : null;
}

/** The 406 of BCS asked of a transaction: this node holds its JSON, not the reference's BCS of it. */
export function transactionBcsNotHeld(info: LedgerInfo): ApiError {
  return ApiError.bcsNotSupported("A transaction", info, "transactions");
}
