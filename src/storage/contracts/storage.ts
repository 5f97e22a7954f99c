/**
 * What `openStore` gives: one connection's reader (with the API's page reads), writer and follow-base bookkeeping. A caller
 * takes the narrowest of the three it needs; the composition root (`server.ts`) holds the whole.
 */
import type { FollowBase } from "./followBase.js";
import type { PageReads } from "./pageReads.js";
import type { LedgerReader } from "./reader.js";
import type { LedgerWriter } from "./writer.js";

export type Storage = LedgerReader & PageReads & LedgerWriter & FollowBase;
