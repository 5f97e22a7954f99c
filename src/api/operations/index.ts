/** The route table: every operation the app serves, each a folder named by its operation. */
import type { AnyOperation } from "../http/operation.js";
import { estimateGasPrice } from "./estimateGasPrice/index.js";
import { getAccount } from "./getAccount/index.js";
import { getAccountBalance } from "./getAccountBalance/index.js";
import { getAccountModule } from "./getAccountModule/index.js";
import { getAccountResource } from "./getAccountResource/index.js";
import { getAccountResources } from "./getAccountResources/index.js";
import { getAccountModules } from "./getAccountModules/index.js";
import { getBlockByHeight } from "./getBlockByHeight/index.js";
import { getBlockByVersion } from "./getBlockByVersion/index.js";
import { getAccountTransactions } from "./getAccountTransactions/index.js";
import { getAccountTransactionSummaries } from "./getAccountTransactionSummaries/index.js";
import { getEventsByCreationNumber } from "./getEventsByCreationNumber/index.js";
import { getEventsByEventHandle } from "./getEventsByEventHandle/index.js";
import { getHealthy } from "./getHealthy/index.js";
import { getIndex, getIndexSlash } from "./getIndex/index.js";
import { getInfo } from "./getInfo/index.js";
import { getRawTableItem } from "./getRawTableItem/index.js";
import { getTableItem } from "./getTableItem/index.js";
import { getSpec, specDocuments } from "./getSpec/index.js";
import { getTransactionByHash } from "./getTransactionByHash/index.js";
import { getTransactionByVersion } from "./getTransactionByVersion/index.js";
import { getTransactions } from "./getTransactions/index.js";
import { streamTransactions } from "./streamTransactions/index.js";
import { waitTransactionByHash } from "./waitTransactionByHash/index.js";

export const operations: AnyOperation[] = [
  getSpec,
  ...specDocuments,
  getInfo,
  getAccountTransactionSummaries,
  getAccountModules,
  getAccount,
  getAccountResource,
  getAccountResources,
  getAccountBalance,
  getAccountModule,
  getTableItem,
  getRawTableItem,
  getTransactions,
  getAccountTransactions,
  getTransactionByVersion,
  getTransactionByHash,
  waitTransactionByHash,
  streamTransactions,
  getEventsByCreationNumber,
  getEventsByEventHandle,
  getBlockByHeight,
  getBlockByVersion,
  estimateGasPrice,
  getIndex,
  getIndexSlash,
  getHealthy,
];
