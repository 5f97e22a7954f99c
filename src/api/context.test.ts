import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { RecoveryConflictError, StateBeforeBaseError, StatePrunedError, StorageUnavailableError, UpstreamUnavailableError } from "../storage/contracts/errors.js";
import { defaultApiConfig } from "./config.js";
import { NodeContext, type ApiStore } from "./context.js";
import { ApiError } from "./http/apiError.js";
import type { LedgerInfo } from "../ledger/types.js";

const info: LedgerInfo = { chainId: 4, ledgerVersion: 9n, oldestVersion: 0n, timestampUsec: 0n, epoch: 1n, blockHeight: 1n, oldestBlockHeight: 0n };

describe("NodeContext.storageError", () => {
  const ctx = new NodeContext({ errorKind: () => null } as unknown as ApiStore, defaultApiConfig(), pino({ level: "silent" }));

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

describe("NodeContext.storageError, a replica's failures", () => {
  const fresh = () => new NodeContext({ errorKind: () => null } as unknown as ApiStore, defaultApiConfig(), pino({ level: "silent" }));

  it("answers 503 for an upstream outage without reporting it as a database failure", () => {
    const ctx = fresh();
    const counted: number[] = [];
    ctx.onStorageError = (status) => counted.push(status);
    const err = ctx.storageError(new UpstreamUnavailableError("the upstream did not give the modules of 0x1 within 5 ms"), "Failed to get modules", info);
    expect([err.status, err.errorCode, ctx.storageFailure, counted]).toEqual([503, "internal_error", null, []]);
  });

  it("answers 503 for a standby's recovery conflict that outlived its retries, not as a database failure", () => {
    const ctx = fresh();
    const counted: number[] = [];
    ctx.onStorageError = (status) => counted.push(status);
    const conflict = new RecoveryConflictError("the hot standby cancelled modules (8 attempts) (conflict with recovery)");
    const err = ctx.storageError(conflict, "Failed to get modules", info);
    expect([err.status, err.body(), ctx.storageFailure, counted]).toEqual([
      503,
      { message: "Failed to get modules: the hot standby cancelled modules (8 attempts) (conflict with recovery)", error_code: "internal_error" },
      null,
      [],
    ]);
  });

  it("answers 503 for a base miss nothing fetches, naming it", () => {
    const ctx = fresh();
    const miss = new StateBeforeBaseError({ kind: "modules", address: new Uint8Array(32) }, 5n, 3n, "fetched from the upstream only by serve --follow");
    const err = ctx.storageError(miss, "Failed to get modules", info);
    expect([err.status, err.body().message, ctx.storageFailure]).toEqual([503, "Failed to get modules: fetched from the upstream only by serve --follow", null]);
  });
});

describe("NodeContext.readWithBase", () => {
  const miss = () => new StateBeforeBaseError({ kind: "table_item", handle: new Uint8Array(32), key: new Uint8Array([1]) }, 7n, 3n, "missing");
  const failed = (e: unknown): never => {
    throw e;
  };
  const withService = (fetch: (m: StateBeforeBaseError) => Promise<void>) => {
    const ctx = new NodeContext({ errorKind: () => null } as unknown as ApiStore, defaultApiConfig(), pino({ level: "silent" }));
    ctx.baseState = { fetch };
    return ctx;
  };

  it("without a service is the read itself: a value in the calling turn stays one", () => {
    const ctx = new NodeContext({ errorKind: () => null } as unknown as ApiStore, defaultApiConfig(), pino({ level: "silent" }));
    expect(ctx.readWithBase(() => 42, failed, "127.0.0.1")).toBe(42);
  });

  it("fetches what the read missed and reads once more", async () => {
    const fetched: bigint[] = [];
    const ctx = withService(async (m) => {
      fetched.push(m.version);
    });
    let reads = 0;
    const value = await ctx.readWithBase(async () => {
      reads++;
      if (reads === 1) throw miss();
      return "stored";
    }, failed, "127.0.0.1");
    expect([value, reads, fetched]).toEqual(["stored", 2, [7n]]);
  });

  it("fetches each key a read of several keys misses (an account, then the feature flags), then reads once more", async () => {
    const other = () => new StateBeforeBaseError({ kind: "resource", address: new Uint8Array(32), type: "0x1::features::Features" }, 7n, 3n, "missing");
    const fetched: string[] = [];
    const ctx = withService(async (m) => {
      fetched.push(m.missing.kind);
    });
    let reads = 0;
    const value = await ctx.readWithBase(async () => {
      reads++;
      if (reads === 1) throw miss();
      if (reads === 2) throw other();
      return "stored";
    }, failed, "127.0.0.1");
    expect([value, reads, fetched]).toEqual(["stored", 3, ["table_item", "resource"]]);
  });

  it("fails a second miss of state it fetched instead of fetching again", async () => {
    let fetches = 0;
    const ctx = withService(async () => {
      fetches++;
    });
    await expect(
      ctx.readWithBase(async () => {
        throw miss();
      }, failed, "127.0.0.1"),
    ).rejects.toBeInstanceOf(StateBeforeBaseError);
    expect(fetches).toBe(1);
  });

  it("passes the service's failure (pruned, upstream down) to the mapping, without reading again", async () => {
    let reads = 0;
    const ctx = withService(async () => {
      throw new StatePrunedError(7n, "pruned upstream");
    });
    await expect(
      ctx.readWithBase(() => {
        reads++;
        throw miss();
      }, failed, "127.0.0.1"),
    ).rejects.toBeInstanceOf(StatePrunedError);
    expect(reads).toBe(1);
  });
});
