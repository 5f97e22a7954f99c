/**
 * The read of the resources operation: one store read of the page and one more resource (whether
 * a next page exists), in one snapshot with the ledger position; the page as the reference's JSON.
 */
import { resourceStateKey } from "../../../ledger/stateKey.js";
import { parseStructTag } from "../../../ledger/structTag.js";
import type { NodeContext } from "../../context.js";
import { ApiError } from "../../http/apiError.js";
import type { WireFormat } from "../../http/negotiate.js";
import type { Answer, Position } from "../../http/operation.js";
import { resourceJson } from "../getAccountResource/read.js";
import { pageLimit, readCursor, type ResourcesQuery } from "./page.js";

/**
 * The page as JSON (`[MoveResource]`), with the cursor of the next page (the state key of its
 * first resource, hex) when one follows. BCS is refused: this node holds resource values as JSON only.
 */
export async function readResourcesPage(ctx: NodeContext, address: Uint8Array, query: ResourcesQuery, at: Position, format: WireFormat): Promise<Answer> {
  const start = query.start === undefined ? null : readCursor(query.start, address);
  if (query.limit === 0) throw ApiError.invalidInput("Given limit value (0) must not be zero", at.info);
  if (format === "bcs") return { error: ApiError.bcsNotSupported("An account's resources", at.info) };
  const limit = pageLimit(query, ctx.config);
  const snap = await ctx.store.readResources(address, at.version, start, limit + 1);
  if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  const { rows } = snap.value;
  const page = rows.slice(0, limit);
  const next = rows[limit];
  const tag = next && parseStructTag(next.type);
  const cursor = tag && typeof tag !== "string" ? resourceStateKey(address, tag).toString("hex") : null;
  return { body: `[${page.map((r) => resourceJson(r.type, r.json)).join(",")}]`, cursor, exactAt: snap.info };
}
