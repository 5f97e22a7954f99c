import { describe, expect, it } from "vitest";
import { defaultApiConfig } from "./config.js";

describe("defaultApiConfig: the stream caps", () => {
  it("gives streams half the connection cap, at most 10,000, and one client a tenth of them, at least one", () => {
    expect(defaultApiConfig({ maxConnections: 1000 })).toMatchObject({ maxStreams: 500, maxStreamsPerClient: 50 });
    expect(defaultApiConfig({ maxConnections: 0 })).toMatchObject({ maxStreams: 10_000, maxStreamsPerClient: 1000 });
    expect(defaultApiConfig({ maxStreams: 25 })).toMatchObject({ maxStreams: 25, maxStreamsPerClient: 2 });
    expect(defaultApiConfig({ maxStreams: 5 })).toMatchObject({ maxStreams: 5, maxStreamsPerClient: 1 });
  });

  it("keeps a per-client cap that is set, whatever the stream cap", () => {
    expect(defaultApiConfig({ maxStreams: 5, maxStreamsPerClient: 5 })).toMatchObject({ maxStreams: 5, maxStreamsPerClient: 5 });
    expect(defaultApiConfig({ maxStreamsPerClient: 3 }).maxStreamsPerClient).toBe(3);
  });
});
