import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { createGzip, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamClient, UpstreamUnavailableError, parseRetryAfter } from "./client.js";

describe("UpstreamClient", () => {
  /** What the next requests answer, in turn: a status and headers, "drop" to cut the connection, or "hang" to never answer. */
  const script: Array<{ status: number; headers?: Record<string, string> } | "drop" | "hang"> = [];
  const seen: Array<{ at: number; headers: IncomingHttpHeaders }> = [];
  const server = createServer((req, res) => {
    seen.push({ at: performance.now(), headers: req.headers });
    const next = script.shift() ?? { status: 200 };
    if (next === "drop") return void req.socket.destroy();
    if (next === "hang") return;
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

  it("cuts an attempt that gets no answer at its timeout and retries it; one that never gets one fails as timed out", async () => {
    seen.length = 0;
    script.push("hang", { status: 200 });
    const client = new UpstreamClient(base, { attemptTimeoutMs: 200, baseBackoffMs: 1, maxRequestsPerSecond: 1000 });
    const t0 = performance.now();
    expect((await client.getJson("/t")).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(195);
    expect(seen).toHaveLength(2);
    script.push("hang", "hang");
    await expect(new UpstreamClient(base, { attemptTimeoutMs: 150, maxAttempts: 2, baseBackoffMs: 1 }).getJson("/t")).rejects.toThrow(/timed out/);
  });

  it("keeps to its request rate", async () => {
    seen.length = 0;
    const client = new UpstreamClient(base, { maxRequestsPerSecond: 20 });
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 6 }, () => client.getJson("")));
    // The sixth start is booked 5 gaps of 50 ms after the first (timer rounding aside); measured
    // here, not by arrival at the server, where the first request's own connection setup shortens it.
    expect(seen).toHaveLength(6);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(245);
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

describe("UpstreamClient's bound on an answer", () => {
  /** What the next requests answer, in turn; then `{"ok":true}`, gzip-compressed. */
  const script: Array<"bomb" | "plain" | "declared"> = [];
  /** Bytes the server wrote into bodies that the client cut off. */
  let sent = 0;
  const server = createServer((req, res) => {
    const next = script.shift();
    if (next === undefined) {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      return void res.end(gzipSync(Buffer.from('{"ok":true}')));
    }
    if (next === "declared") {
      // A Content-Length past the bound: refused before its body is read.
      res.writeHead(200, { "content-type": "application/json", "content-length": String(64 << 20) });
      return void res.write(Buffer.alloc(1024, 0x20));
    }
    // 256 MiB of zeros, gzip-compressed (about 256 KiB on the wire), or 256 MiB of plain spaces.
    res.writeHead(200, { "content-type": "application/json", ...(next === "bomb" ? { "content-encoding": "gzip" } : {}) });
    const chunk = Buffer.alloc(1 << 16, next === "bomb" ? 0 : 0x20);
    let left = 256 << 20;
    const body = new Readable({
      read() {
        if (left <= 0) return void this.push(null);
        left -= chunk.length;
        this.push(chunk);
      },
    });
    const out = next === "bomb" ? body.pipe(createGzip({ level: 9 })) : body;
    out.on("data", (c: Buffer) => (sent += c.length));
    out.pipe(res);
    res.on("close", () => body.destroy());
    req.on("close", () => body.destroy());
  });
  let base = "";
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it("a gzip bomb, a huge plain body and a declared huge body are cut at the bound, retried, and the healed answer is read", async () => {
    script.push("bomb", "plain", "declared");
    const retries: string[] = [];
    const bound = 1 << 20;
    const client = new UpstreamClient(base, { baseBackoffMs: 1, maxRequestsPerSecond: 1000, maxAnswerBytes: bound, maxWireBytes: bound, onRetry: (what) => retries.push(what) });
    const r = await client.getJson("/transactions");
    expect(r).toMatchObject({ status: 200, json: { ok: true } });
    expect(retries).toHaveLength(3);
    expect(retries[0]).toMatch(/answer larger than 1048576 bytes \(decoded\)/);
    expect(retries[1]).toMatch(/answer larger than 1048576 bytes/);
    expect(retries[2]).toMatch(/answer larger than 1048576 bytes \(Content-Length 67108864\)/);
    // Read: at most a bound and a few chunks of each answer, never the 256 MiB behind it.
    expect(client.bytesRead.decoded).toBeLessThan(3 * bound + (1 << 20));
    expect(client.bytesRead.wire).toBeLessThan(2 * bound + (1 << 20));
    expect(sent).toBeLessThan(64 << 20);
  });

  it("by default bounds an answer at 32 MiB: a 50 MB page is refused", async () => {
    script.push("plain");
    const retries: string[] = [];
    const client = new UpstreamClient(base, { baseBackoffMs: 1, maxRequestsPerSecond: 1000, onRetry: (what) => retries.push(what) });
    const r = await client.getJson("/transactions");
    expect(r.status).toBe(200);
    expect(retries).toEqual([expect.stringMatching(/answer larger than 33554432 bytes/)]);
    expect(client.bytesRead.wire).toBeLessThan((32 << 20) + (1 << 20));
  });
});
