import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../storage/errors.js";
import type { Storage } from "../storage/storage.js";
import { defaultApiConfig } from "./config.js";
import { NodeContext } from "./context.js";
import { ApiError } from "./errors.js";
import type { LedgerInfo } from "../ledger/types.js";

const info: LedgerInfo = { chainId: 4, ledgerVersion: 9n, oldestVersion: 0n, timestampUsec: 0n, epoch: 1n, blockHeight: 1n, oldestBlockHeight: 0n };

describe("NodeContext.storageError", () => {
  const ctx = new NodeContext({ errorKind: () => null } as unknown as Storage, defaultApiConfig(), pino({ level: "silent" }));

  it("answers 503 when the store goes away between the ledger read and the data read", () => {
    const err = ctx.storageError(new StorageUnavailableError("connection terminated"), "Failed to get modules", info);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(503);
    expect((err as ApiError).body()).toEqual({ message: "Failed to get modules: connection terminated", error_code: "internal_error" });
  });

  it("answers 500 with the ledger for any other storage failure", () => {
    const err = ctx.storageError(new Error("disk I/O error"), "Failed to get modules", info);
    expect([err.status, err.errorCode, err.ledger]).toEqual([500, "internal_error", info]);
  });
});
