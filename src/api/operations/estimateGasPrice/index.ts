/**
 * GET /v1/estimate_gas_price — the gas unit price needed to get a transaction on chain in
 * reasonable time: the reference node's algorithm over recent blocks of the current epoch
 * (docs/decisions.md §14; `src/ledger/gas.ts`). Three values: deprioritized (low), regular and
 * prioritized (aggressive). Idle chain: the minimum gas unit price.
 *
 * JSON (default; three integers) or BCS (the regular estimate as one u64).
 *
 * @example curl http://127.0.0.1:8080/v1/estimate_gas_price
 */
import { bcs } from "@mysten/bcs";
import { GasEstimator } from "../../../ledger/gas.js";
import { defineOperation, ref } from "../../http/operation.js";
import { gasEstimation } from "../../schemas.js";

export const estimateGasPrice = defineOperation({
  operationId: "estimate_gas_price",
  method: "GET",
  url: "/v1/estimate_gas_price",
  summary: "Estimate gas price",
  description:
    "Gives an estimate of the gas unit price required to get a transaction on chain in a reasonable amount of time. " +
    "The gas unit price is the amount that each transaction commits to pay for each unit of gas consumed in executing " +
    "the transaction. The estimate is based on recent history: it gives the minimum gas that would have been required " +
    "to get into recent blocks, for blocks that were full. (When blocks are not full, the estimate will match the " +
    "minimum gas unit price.) The deprioritized estimate is given for low priority transactions; the prioritized " +
    "estimate, computed from a larger history and higher percentile statistics, for more aggressive inclusion.",
  tags: ["Transactions"],
  formats: ["json", "bcs"],
  response: { description: "Gas estimate (JSON) or the regular estimate as a BCS u64", json: ref(gasEstimation) },
  errors: [400, 403, 500, 503],
  ledger: "latest",
  failure: "Failed to estimate the gas price",
  read: (ctx) => {
    const estimator = new GasEstimator(ctx.config.gas, undefined, (message) => ctx.log.warn(message));
    // the on-chain configs are read once per epoch, recent blocks once per block
    return (_input, { info }) => estimator.peek(info) ?? estimator.estimate(info, ctx.gasReads);
  },
  encode: () => (estimate, format) =>
    format === "bcs" ? { body: Buffer.from(bcs.u64().serialize(estimate.gas_estimate).toBytes()) } : { json: estimate },
});
