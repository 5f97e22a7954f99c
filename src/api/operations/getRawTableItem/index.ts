/**
 * POST /v1/tables/{table_handle}/raw_item — one table item by its BCS-serialized key, at a ledger
 * version. It is a POST only because the key travels in the body. The answer is the stored value
 * bytes verbatim, `application/x-bcs` only (docs/decisions.md §12): an Accept that names JSON is refused
 * with 403. If the requested ledger version has been pruned, the server responds with a 410.
 *
 * @example curl -X POST -H 'Content-Type: application/json' -H 'Accept: application/x-bcs' \
 *   -d '{"key":"0x01"}' 'http://127.0.0.1:8080/v1/tables/0x1b85/raw_item'
 */
import { formatAddress, toHex } from "../../../ledger/address.js";
import { MAX_STATE_ITEM_BYTES } from "../../../ledger/stateKey.js";
import { ApiError, clip } from "../../http/apiError.js";
import { withoutStack } from "../../../storage/contracts/errors.js";
import { defineOperation, ref, tableHandlePathParams, u64Param } from "../../http/operation.js";
import { rawTableItemRequest } from "../../schemas.js";

export const getRawTableItem = defineOperation({
  operationId: "get_raw_table_item",
  method: "POST",
  url: "/v1/tables/:table_handle/raw_item",
  summary: "Get raw table item",
  description:
    "Get a table item at a specific ledger version from the table identified by the handle {table_handle} " +
    "in the path and the \"key\" (RawTableItemRequest) provided in the request body. " +
    "The get_raw_table_item requires only a serialized key comparing to the full move type information " +
    "comparing to the get_table_item api, and can only return the query in the bcs format. " +
    "The Aptos nodes prune account state history, via a configurable time window. " +
    "If the requested ledger version has been pruned, the server responds with a 410.",
  tags: ["Tables"],
  params: tableHandlePathParams,
  query: {
    type: "object",
    properties: { ledger_version: u64Param("Ledger version to get state of account. If not provided, it will be the latest version") },
  } as const,
  body: ref(rawTableItemRequest),
  formats: ["bcs"],
  response: { description: "The stored value bytes (BCS)" },
  errors: [400, 403, 404, 410, 500, 503],
  ledger: { at: "ledger_version" },
  failure: ({ body }) => `Failed when trying to retrieve table item from the DB with key: ${clip(toHex(body.key))}`,
  // The read is version resolution's: the ledger position and the value in one snapshot, so no
  // prune can come between them.
  resolve: (reads, { params, body }, version) => {
    // A key no state item can have is refused before it is looked up (or fetched by a replica).
    if (body.key.length > MAX_STATE_ITEM_BYTES) {
      throw ApiError.invalidInput(`Table key(${clip(toHex(body.key))}) is ${body.key.length} bytes long, it must be at most ${MAX_STATE_ITEM_BYTES}`, null);
    }
    return reads.readTableItem(params.table_handle, body.key, version);
  },
  read:
    () =>
    (_input, { found }) =>
      found?.value ?? null,
  encode:
    () =>
    (value, _format, { params, body }, { info, version }) => {
      if (value === null) {
        // An answer, not a fault: returned, not thrown (see `Answer.error`).
        return {
          error: withoutStack(
            () =>
              new ApiError(
                404,
                "table_item_not_found",
                `Table Item not found by Table handle(${formatAddress(params.table_handle)}), Table key(${clip(toHex(body.key))}) and Ledger version(${version})`,
                info,
              ),
          ),
        };
      }
      // the stored bytes as they are
      return { body: Buffer.from(value.buffer, value.byteOffset, value.byteLength) };
    },
});
