/**
 * GET /v1/estimate_gas_price — the gas unit price needed to get a transaction on chain in
 * reasonable time: the reference node's algorithm over recent blocks of the current epoch
 * (DECISIONS §13; `src/ledger/gas.ts`). Three values: deprioritized (low), regular and
 * prioritized (aggressive). Idle chain: the minimum gas unit price.
 *
 * JSON (default; three integers) or BCS (the regular estimate as one u64).
 *
 * @example curl http://127.0.0.1:8080/v1/estimate_gas_price
 */
import { bcs } from "@mysten/bcs";
import type { FastifyReply, FastifyRequest } from "fastify";
import { GasEstimator, type GasEstimate } from "../../ledger/gas.js";
import { andThen, type NodeContext } from "../context.js";
import { sendBody } from "../compression.js";
import { ledgerHeaderSchemas } from "../headers.js";
import { acceptType, BCS_TYPE, JSON_TYPE } from "../negotiate.js";
import { errorResponses, type RouteDef } from "../route.js";

export const estimateGasPrice: RouteDef = {
  method: "GET",
  url: "/v1/estimate_gas_price",
  ledgerHeaders: true,
  schema: {
    operationId: "estimate_gas_price",
    summary: "Estimate gas price",
    description:
      "Gives an estimate of the gas unit price required to get a transaction on chain in a reasonable amount of time. " +
      "The gas unit price is the amount that each transaction commits to pay for each unit of gas consumed in executing " +
      "the transaction. The estimate is based on recent history: it gives the minimum gas that would have been required " +
      "to get into recent blocks, for blocks that were full. (When blocks are not full, the estimate will match the " +
      "minimum gas unit price.) The deprioritized estimate is given for low priority transactions; the prioritized " +
      "estimate, computed from a larger history and higher percentile statistics, for more aggressive inclusion.",
    tags: ["Transactions"],
    response: {
      200: {
        description: "Gas estimate (JSON) or the regular estimate as a BCS u64",
        headers: ledgerHeaderSchemas(false),
        content: {
          "application/json": { schema: { $ref: "GasEstimation#" } },
          "application/x-bcs": { schema: { type: "string", format: "binary" } },
        },
      },
      ...errorResponses([400, 403, 500, 503]),
    },
  },
  handler: (ctx) => {
    const estimator = new GasEstimator(ctx.config.gas, undefined, (message) => ctx.log.warn(message));
    // The JSON of the last answer: between blocks the estimate is the same object.
    let last: { estimate: Readonly<GasEstimate>; json: string } | null = null;
    return function estimateGasPriceHandler(req: FastifyRequest, reply: FastifyReply) {
      // 1. validate (no parameters)
      const format = acceptType(req.headers.accept);
      // 2. resolve: the latest ledger
      return andThen(ctx.ledger(), (info) => {
        // 3. read: the on-chain configs (once per epoch) and recent blocks (cached between blocks;
        //    while cached, no promise at all)
        const estimate = estimator.peek(info) ?? ctx.read("Failed to estimate the gas price", info, () => estimator.estimate(info, ctx.store));
        return andThen(estimate, (estimate) => {
          // 4. encode
          reply.headers(ctx.headers.ledger(info));
          if (format === "bcs") {
            return sendBody(ctx.config, req, reply, Buffer.from(bcs.u64().serialize(estimate.gas_estimate).toBytes()), BCS_TYPE);
          }
          // Three integers, in the reference key order, written directly (no schema walk per call).
          if (last?.estimate !== estimate) {
            const json =
              `{"deprioritized_gas_estimate":${estimate.deprioritized_gas_estimate},"gas_estimate":${estimate.gas_estimate},` +
              `"prioritized_gas_estimate":${estimate.prioritized_gas_estimate}}`;
            last = { estimate, json };
          }
          return sendBody(ctx.config, req, reply, last.json, JSON_TYPE);
        });
      });
    };
  },
};
