/**
 * GET /v1/transactions/wait_by_hash/{txn_hash} — the reference's long poll: answers as by_hash once
 * the transaction is committed here, waiting for it up to the reference's timeout (1 s, looking
 * every 20 ms). On a follower that is the wait for the follower to reach it. Past the timeout: the
 * upstream's answer with `--proxy` (the transaction may still be pending there), else 404 as for
 * an unknown hash. At most 100 requests wait at once (the reference's cap); past it a request is
 * answered at once as by_hash.
 *
 * @example curl 'http://127.0.0.1:8080/v1/transactions/wait_by_hash/0x…'
 */
import { setTimeout as sleep } from "node:timers/promises";
import { defineOperation } from "../../http/operation.js";
import { byHashOperation, findTransactionByHash } from "../getTransactionByHash/index.js";
import { transactionNotFoundByHash } from "../history.js";

/** The reference's `wait_by_hash_timeout_ms`, `wait_by_hash_poll_interval_ms` and `wait_by_hash_max_active_connections`. */
export const WAIT_TIMEOUT_MS = 1000;
const WAIT_POLL_MS = 20;
const WAIT_MAX_ACTIVE = 100;

export const waitTransactionByHash = defineOperation({
  ...byHashOperation,
  operationId: "wait_transaction_by_hash",
  method: "GET",
  url: "/v1/transactions/wait_by_hash/:txn_hash",
  summary: "Wait for transaction by hash",
  description:
    "Same as /transactions/by_hash, but waits for the transaction to be committed here for a short time " +
    "(1 second) before answering. It is a long poll: a client calls it again while it wants to wait longer.",
  read: (ctx) => {
    let active = 0;
    return async ({ params }, at, format) => {
      const hash = params.txn_hash;
      const found = await findTransactionByHash(ctx, hash, at.info, format);
      if (found !== null || active >= WAIT_MAX_ACTIVE) return found ?? notFound();
      active++;
      try {
        const deadline = Date.now() + WAIT_TIMEOUT_MS;
        let seen = at.info.ledgerVersion;
        while (Date.now() < deadline) {
          await sleep(Math.min(WAIT_POLL_MS, Math.max(0, deadline - Date.now())));
          // Looked up again only once the ledger has moved: a wait costs a position read a poll.
          const info = await ctx.store.getLedgerInfo();
          if (info === null || info.ledgerVersion === seen) continue;
          seen = info.ledgerVersion;
          const now = await findTransactionByHash(ctx, hash, info, format);
          if (now !== null) return now;
        }
        return notFound();
      } finally {
        active--;
      }

      function notFound() {
        if (ctx.upstream !== null) return { upstream: true as const };
        return { error: transactionNotFoundByHash(hash, at.info) };
      }
    };
  },
});
