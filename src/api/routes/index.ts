/** The route table: every operation the app serves. */
import type { AnyOperation } from "../operation.js";
import { estimateGasPrice } from "./estimateGasPrice.js";
import { getAccountModules } from "./getAccountModules.js";
import { getAccountTransactionSummaries } from "./getAccountTransactionSummaries.js";
import { getHealthy } from "./getHealthy.js";
import { getIndex, getIndexSlash } from "./getIndex.js";
import { getInfo } from "./getInfo.js";
import { getRawTableItem } from "./getRawTableItem.js";
import { getSpec, specDocuments } from "./getSpec.js";

export const operations: AnyOperation[] = [
  getSpec,
  ...specDocuments,
  getInfo,
  getAccountTransactionSummaries,
  getAccountModules,
  getRawTableItem,
  estimateGasPrice,
  getIndex,
  getIndexSlash,
  getHealthy,
];
