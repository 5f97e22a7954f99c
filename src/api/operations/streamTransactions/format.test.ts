import { describe, expect, it } from "vitest";
import { ApiError } from "../../http/apiError.js";
import { streamFormat } from "./index.js";

describe("the stream's format by Accept", () => {
  it("is SSE without a preference, NDJSON when asked first, and skips ranges refused with q=0", () => {
    expect(streamFormat(undefined)).toBe("sse");
    expect(streamFormat("")).toBe("sse");
    expect(streamFormat("*/*")).toBe("sse");
    expect(streamFormat("text/event-stream")).toBe("sse");
    expect(streamFormat("application/x-ndjson")).toBe("ndjson");
    expect(streamFormat("application/x-ndjson, text/event-stream")).toBe("ndjson");
    expect(streamFormat("text/event-stream;q=0, application/x-ndjson")).toBe("ndjson");
    expect(streamFormat("application/json, */*;q=0.1")).toBe("sse");
  });

  it("refuses with 406 what it cannot send, naming the header", () => {
    let err: unknown;
    try {
      streamFormat("application/json");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(406);
    expect((err as ApiError).message).toContain('not "application/json"');
  });
});
