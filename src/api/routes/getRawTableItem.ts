/**
 * POST /v1/tables/{table_handle}/raw_item — one table item by its BCS-serialized key, at a ledger
 * version. It is a POST only because the key travels in the body. The answer is the stored value
 * bytes verbatim, `application/x-bcs` only (DECISIONS §11): an Accept that names JSON is refused
 * with 403. If the requested ledger version has been pruned, the server responds with a 410.
 *
 * @example curl -X POST -H 'Content-Type: application/json' -H 'Accept: application/x-bcs' \
 *   -d '{"key":"0x01"}' 'http://127.0.0.1:8080/v1/tables/0x1b85/raw_item'
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { formatAddress, parseHexBytes, toHex } from "../../ledger/address.js";
import { sendBody } from "../compression.js";
import { andThen } from "../context.js";
import { ApiError, clip, quote } from "../errors.js";
import { ledgerHeaderSchemas } from "../headers.js";
import { BCS_TYPE, namedType } from "../negotiate.js";
import { addressPath, addressPathSchema, u64Query, u64QuerySchema } from "../params.js";
import { errorResponses, type RouteDef } from "../route.js";

export interface RawTableItemRequest {
  key: string;
}

export const getRawTableItem: RouteDef = {
  method: "POST",
  url: "/v1/tables/:table_handle/raw_item",
  ledgerHeaders: true,
  schema: {
    operationId: "get_raw_table_item",
    summary: "Get raw table item",
    description:
      "Get a table item at a specific ledger version from the table identified by the handle {table_handle} " +
      "in the path and the \"key\" (RawTableItemRequest) provided in the request body. " +
      "The get_raw_table_item requires only a serialized key comparing to the full move type information " +
      "comparing to the get_table_item api, and can only return the query in the bcs format. " +
      "The Aptos nodes prune account state history, via a configurable time window. " +
      "If the requested ledger version has been pruned, the server responds with a 410.",
    tags: ["Tables"],
    params: {
      type: "object",
      required: ["table_handle"],
      properties: { table_handle: addressPathSchema("Table handle hex encoded 32-byte string") },
    },
    querystring: {
      type: "object",
      properties: {
        ledger_version: u64QuerySchema("Ledger version to get state of account. If not provided, it will be the latest version"),
      },
    },
    body: { $ref: "RawTableItemRequest#" },
    response: {
      200: {
        description: "The stored value bytes (BCS)",
        headers: ledgerHeaderSchemas(false),
        content: { "application/x-bcs": { schema: { type: "string", format: "binary" } } },
      },
      ...errorResponses([400, 403, 404, 410, 500, 503]),
    },
  },
  handler: (ctx) =>
    function getRawTableItemHandler(req: FastifyRequest, reply: FastifyReply) {
      // 1. validate
      const handle = addressPath("table_handle", (req.params as { table_handle: string }).table_handle);
      const requested = u64Query("ledger_version", (req.query as { ledger_version?: string }).ledger_version);
      const body = req.body as RawTableItemRequest;
      const key = parseHexBytes(body.key);
      if (!key) {
        throw ApiError.badParam(
          `parse request payload error: key: decode hex-encoded string(${quote(body.key)}) failed: expected an optional 0x and an even number of hex digits`,
        );
      }
      if (namedType(req.headers.accept) === "json") {
        throw new ApiError(
          403,
          "api_disabled",
          "Get raw table item is not allowed with Accept: application/json. Only BCS is supported as an AcceptType: send Accept: application/x-bcs",
        );
      }
      // 2-3. resolve the ledger version and read the raw bytes, in one snapshot of the store
      const read = ctx.snapshot(
        () => `Failed when trying to retrieve table item from the DB with key: ${clip(toHex(key))}`,
        requested,
        () => ctx.store.readTableItem(handle, key, requested),
      );
      return andThen(read, ({ info, version, value }) => {
        if (value === null) {
          throw new ApiError(
            404,
            "table_item_not_found",
            `Table Item not found by Table handle(${formatAddress(handle)}), Table key(${clip(toHex(key))}) and Ledger version(${version})`,
            info,
          );
        }
        // 4. encode: the stored bytes, verbatim
        reply.headers(ctx.headers.ledger(info));
        return sendBody(ctx.config, req, reply, Buffer.from(value.buffer, value.byteOffset, value.byteLength), BCS_TYPE);
      });
    },
};
