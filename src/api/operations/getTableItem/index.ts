/**
 * POST /v1/tables/{table_handle}/item — one table item by its key as JSON and the Move types of
 * its key and value, at a ledger version (docs/decisions.md §23). The key is encoded as its type's
 * BCS, by the layout of the type's structs in the modules held at that version, and looked up as
 * `raw_item` looks up its bytes; the value is answered as JSON decoded by the value type, or in
 * BCS as the stored bytes. It is a POST because the key may be a whole struct. If the requested
 * ledger version has been pruned, the server responds with a 410.
 *
 * @example curl -X POST -H 'Content-Type: application/json' \
 *   -d '{"key_type":"address","value_type":"u128","key":"0x619dc29a0aac8fa146714058e8dd6d2d0f3bdf5f6331907bf91f3acd81e6935"}' \
 *   'http://127.0.0.1:8080/v1/tables/0x1b854694ae746cdbd8d44186ca4929b2b337df21d1c74633be19b2710552fdca/item'
 */
import { defineOperation, ref, stateVersionQuery, tableHandlePathParams } from "../../http/operation.js";
import { tableItemRequest } from "../../schemas.js";
import { keyText, readTableItem, structsCache } from "./read.js";
import { tableItemTypes } from "./request.js";

export const getTableItem = defineOperation({
  operationId: "get_table_item",
  method: "POST",
  url: "/v1/tables/:table_handle/item",
  summary: "Get table item",
  description:
    "Get a table item at a specific ledger version from the table identified by {table_handle} " +
    "in the path and the \"key\" (TableItemRequest) provided in the request body. " +
    "This is a POST endpoint because the \"key\" for requesting a specific table item (TableItemRequest) " +
    "could be quite complex, as each of its fields could themselves be composed of other structs. " +
    "This makes it impractical to express using query params, meaning GET isn't an option. " +
    "The Aptos nodes prune account state history, via a configurable time window. " +
    "If the requested ledger version has been pruned, the server responds with a 410.",
  tags: ["Tables"],
  params: tableHandlePathParams,
  query: stateVersionQuery,
  body: ref(tableItemRequest),
  formats: ["json", "bcs"],
  // any JSON value: a number, a string, a boolean, an array or an object (the reference's MoveValue)
  response: { description: "The value as JSON (a MoveValue), or its stored bytes (BCS)", json: { description: "A Move value" } },
  errors: [400, 403, 404, 410, 500, 503],
  ledger: { at: "ledger_version" },
  failure: ({ body }) => `Failed when trying to retrieve table item from the DB with key: ${keyText(body.key)}`,
  // The types are checked before the ledger is read, as the reference checks them (no ledger
  // headers on their 400s); the position is read after them.
  resolve: async (reads, { body }) => {
    const types = tableItemTypes(body.key_type, body.value_type);
    const info = await reads.getLedgerInfo(true);
    return info ? { info, types } : null;
  },
  read: (ctx) => {
    const cache = structsCache();
    return ({ params, body }, at, format) => readTableItem(ctx, cache, params.table_handle, body.key, body.value_type, at.found!.types, at, format);
  },
});
