import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamClient, UpstreamUnavailableError, parseRetryAfter } from "./client.js";

describe("UpstreamClient", () => {
  /** What the next requests answer, in turn: a status and headers, or "drop" to cut the connection. */
  const script: Array<{ status: number; headers?: Record<string, string> } | "drop"> = [];
  const seen: Array<{ at: number; headers: IncomingHttpHeaders }> = [];
  const server = createServer((req, res) => {
    seen.push({ at: performance.now(), headers: req.headers });
    const next = script.shift() ?? { status: 200 };
    if (next === "drop") return void req.socket.destroy();
    res.writeHead(next.status, { "content-type": "application/json", ...next.headers });
    res.end(JSON.stringify({ status: next.status }));
  });
  let base = "";
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => server.close());

  it("sends the API key as a bearer token, and none without one", async () => {
    seen.length = 0;
    await new UpstreamClient(base, { apiKey: "k-123" }).getJson("");
    await new UpstreamClient(base).getJson("");
    expect(seen.map((s) => s.headers.authorization)).toEqual(["Bearer k-123", undefined]);
  });

  it("retries 5xx, 429 and dropped connections, waiting at least what Retry-After says", async () => {
    seen.length = 0;
    script.push({ status: 503 }, "drop", { status: 429, headers: { "retry-after": "1" } }, { status: 200 });
    const client = new UpstreamClient(base, { baseBackoffMs: 1, maxRequestsPerSecond: 1000 });
    const r = await client.getJson("/transactions");
    expect(r.status).toBe(200);
    expect(seen).toHaveLength(4);
    expect(seen[3]!.at - seen[2]!.at).toBeGreaterThanOrEqual(990);
  });

  it("returns any other status as it is, and gives up after its attempts or at a deadline", async () => {
    script.push({ status: 404 });
    expect((await new UpstreamClient(base).getJson("/x")).status).toBe(404);
    script.push({ status: 500 }, { status: 500 }, { status: 500 });
    await expect(new UpstreamClient(base, { maxAttempts: 3, baseBackoffMs: 1 }).getJson("/x")).rejects.toBeInstanceOf(UpstreamUnavailableError);
    script.push({ status: 429, headers: { "retry-after": "30" } });
    const t0 = performance.now();
    await expect(new UpstreamClient(base).getJson("/x", { deadline: Date.now() + 300 })).rejects.toThrow(/429/);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it("keeps to its request rate", async () => {
    seen.length = 0;
    const client = new UpstreamClient(base, { maxRequestsPerSecond: 20 });
    await Promise.all(Array.from({ length: 6 }, () => client.getJson("")));
    expect(seen[5]!.at - seen[0]!.at).toBeGreaterThanOrEqual(240);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter(null)).toBeNull();
    expect(parseRetryAfter("soon")).toBeNull();
    const ms = parseRetryAfter(new Date(Date.now() + 5000).toUTCString())!;
    expect(ms).toBeGreaterThan(3000);
    expect(ms).toBeLessThanOrEqual(5000);
  });
});
