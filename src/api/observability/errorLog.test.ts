import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { StorageUnavailableError, UpstreamUnavailableError } from "../../storage/contracts/errors.js";
import { defaultApiConfig } from "../config.js";
import { NodeContext, type ApiStore } from "../context.js";
import { ApiError } from "../http/apiError.js";
import { ErrorLog, LINES_PER_WINDOW, WINDOW_MS } from "./errorLog.js";

/** An ErrorLog over pino writing into `lines` (synchronously, one JSON object a line). */
function capture(): { log: ErrorLog; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n")) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { log: new ErrorLog(pino({ level: "info" }, sink)), lines };
}

const req = (i: number, url = "/v1/accounts/0x1") => ({ id: `r${i}`, method: "GET", url });

describe("ErrorLog", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("logs the first few of a status and code a window, then one line saying how many more, and opens a new window after", () => {
    const { log, lines } = capture();
    const e = ApiError.unavailable("the upstream could not give the account 0x2");
    for (let i = 0; i < 1_000; i++) log.note(req(i), e);
    log.note(req(0), ApiError.badParam("bad limit"));
    expect(lines.length).toBe(LINES_PER_WINDOW + 1);
    expect(lines.slice(0, LINES_PER_WINDOW).map((l) => [l.level, l.reqId, l.status, l.errorCode])).toEqual(
      Array.from({ length: LINES_PER_WINDOW }, (_, i) => [40, `r${i}`, 503, "internal_error"]),
    );
    expect(lines[LINES_PER_WINDOW]).toMatchObject({ level: 30, status: 400, errorCode: "web_framework_error", msg: "bad limit" });

    vi.advanceTimersByTime(WINDOW_MS);
    // The 400's window suppressed nothing: no line for it.
    expect(lines.slice(LINES_PER_WINDOW + 1)).toMatchObject([{ level: 40, status: 503, errorCode: "internal_error", suppressed: 1_000 - LINES_PER_WINDOW }]);
    log.note(req(2_000), e);
    expect(lines.at(-1)).toMatchObject({ reqId: "r2000", status: 503 });
  });

  it("says at close what the open windows did not log", () => {
    const { log, lines } = capture();
    for (let i = 0; i < LINES_PER_WINDOW + 7; i++) log.note(req(i), new ApiError(429, "web_framework_error", "too many"));
    log.flush();
    expect(lines.at(-1)).toMatchObject({ level: 40, status: 429, suppressed: 7 });
    vi.advanceTimersByTime(WINDOW_MS);
    expect(lines.length).toBe(LINES_PER_WINDOW + 1);
  });

  it("clips what a client sent and names the cause once, without a stack", () => {
    const { log, lines } = capture();
    const cause = new UpstreamUnavailableError("the upstream could not give the account 0x2", { cause: new Error("connect ECONNREFUSED 127.0.0.1:9") });
    log.note(req(1, `/v1/accounts/0x1?x=${"\u0001".repeat(5_000)}`), ApiError.unavailable(`Failed to get account: ${cause.message}`, cause));
    log.note(req(2), ApiError.badParam(`bad value ${"é".repeat(900)}`));
    const [a, b] = lines;
    expect(a).toMatchObject({ level: 40, method: "GET", cause: "connect ECONNREFUSED 127.0.0.1:9", msg: "Failed to get account: the upstream could not give the account 0x2" });
    expect((a!.url as string).length).toBeLessThan(130);
    expect((b!.msg as string).length).toBeLessThan(250);
    for (const l of lines) expect(l.err ?? l.stack).toBeUndefined();
  });

  it("logs a fault at error with its cause's stack", () => {
    const { log, lines } = capture();
    const bug = new TypeError("x is undefined");
    log.note(req(1), ApiError.internal("internal error", null, bug), bug);
    expect(lines[0]).toMatchObject({ level: 50, reqId: "r1", status: 500, msg: "internal error", err: { type: "TypeError", message: "x is undefined" } });
    expect((lines[0]!.err as { stack: string }).stack).toMatch(/\n\s+at /);
  });
});

describe("which errors are the node's faults", () => {
  const ctx = new NodeContext({ errorKind: () => null } as unknown as ApiStore, defaultApiConfig(), pino({ level: "silent" }));

  it("a store that cannot be read and any other 500, but not an upstream's 503, a gateway timeout or a 4xx", () => {
    expect(ctx.storageError(new StorageUnavailableError("connection terminated"), "Failed to get modules", null).fault).toBe(true);
    expect(ctx.storageError(new Error("disk I/O error"), "Failed to get modules", null).fault).toBe(true);
    expect(ctx.storageError(new UpstreamUnavailableError("the upstream did not answer"), "Failed to get modules", null).fault).toBe(false);
    expect(ApiError.unavailable("the ledger is empty: no block has been committed yet").fault).toBe(false);
    expect(new ApiError(504, "internal_error", "the upstream did not answer").fault).toBe(false);
    expect(new ApiError(429, "web_framework_error", "too many").fault).toBe(false);
    expect(ApiError.badParam("bad").fault).toBe(false);
  });
});
