/**
 * The transaction stream in a real headless Chromium: a page's own `EventSource` follows a devnet
 * from version 0, its connection is cut (a TCP proxy between browser and node drops every socket),
 * it reconnects by itself after the stream's `retry:` and sends `Last-Event-ID`, and what it
 * received across the cut is every version once, each event as /transactions/by_version answers.
 * No browser is a failure, not a skip (see `browser.ts`).
 */
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../helpers/backends.js";
import { startTestNode, type TestNode } from "../helpers/node.js";
import { parsePrometheus } from "../helpers/prometheus.js";
import { launchBrowser, type LaunchedBrowser } from "./browser.js";

/** One request's line and headers as the proxy read them off the browser's bytes. */
interface SeenRequest {
  method: string;
  target: string;
  headers: Record<string, string>;
}

interface CuttingProxy {
  origin: string;
  /** Every request head the browser sent through the proxy, in order. */
  requests: SeenRequest[];
  /** Drops every connection open now: the browser's side is reset, the node's closed. */
  cut(): number;
  close(): Promise<void>;
}

/** Reads request heads from a connection's bytes (bodiless GETs, so heads follow one another). */
function headReader(onHead: (r: SeenRequest) => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (let end = pending.indexOf("\r\n\r\n"); end >= 0; end = pending.indexOf("\r\n\r\n")) {
      const [line = "", ...fields] = pending.subarray(0, end).toString("latin1").split("\r\n");
      pending = pending.subarray(end + 4);
      const [method = "", target = ""] = line.split(" ");
      const headers: Record<string, string> = {};
      for (const f of fields) {
        const colon = f.indexOf(":");
        headers[f.slice(0, colon).trim().toLowerCase()] = f.slice(colon + 1).trim();
      }
      onHead({ method, target, headers });
    }
  };
}

/** A TCP proxy to `port` (the node's), whose connections the test can drop while they are open. */
async function startCuttingProxy(port: number): Promise<CuttingProxy> {
  const requests: SeenRequest[] = [];
  const pairs = new Set<[Socket, Socket]>();
  const server: Server = createServer((browserSide) => {
    const nodeSide = connect(port, "127.0.0.1");
    const pair: [Socket, Socket] = [browserSide, nodeSide];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      browserSide.destroy();
      nodeSide.destroy();
    };
    for (const s of pair) {
      s.on("error", drop);
      s.on("close", drop);
    }
    browserSide.on("data", headReader((r) => requests.push(r)));
    browserSide.pipe(nodeSide);
    nodeSide.pipe(browserSide);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    cut() {
      const n = pairs.size;
      for (const [browserSide, nodeSide] of [...pairs]) {
        browserSide.resetAndDestroy();
        nodeSide.destroy();
      }
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [browserSide, nodeSide] of [...pairs]) {
          browserSide.destroy();
          nodeSide.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

/** A page of its own origin (another port than the proxy's), so the stream is read across CORS. */
async function startPageServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = createHttpServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!doctype html><title>stream</title>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What the page's EventSource saw, in order. */
interface Recorded {
  /** `lastEventId` and the parsed `data.version` of every message event. */
  events: Array<{ id: string; version: string }>;
  /** Number of events received when each `open` and each `error` fired. */
  opens: number[];
  errors: Array<{ at: number; readyState: number }>;
  /** `data` of an `end` event, if the server ended the stream. */
  ends: string[];
}

declare global {
  interface Window {
    streamTest: { source: EventSource; recorded: Recorded; data: string[] };
  }
}

async function recorded(page: Page): Promise<Recorded> {
  return page.evaluate(() => window.streamTest.recorded);
}

async function ledgerVersion(node: TestNode): Promise<bigint> {
  const info = (await (await fetch(`${node.base}/info`)).json()) as { ledger_version: string };
  return BigInt(info.ledger_version);
}

async function metric(node: TestNode, name: string, labels?: Record<string, string>): Promise<number | undefined> {
  return parsePrometheus(await (await fetch(`${node.url}/metrics`)).text()).value(name, labels);
}

/** `EventSource.CONNECTING`: its state after a lost connection, while it waits to reconnect. */
const CONNECTING = 0;

const backend = sqliteBackend();
describe("transaction stream in Chromium's EventSource", () => {
  let browser: LaunchedBrowser;
  let node: TestNode;
  let proxy: CuttingProxy;
  let pages: Awaited<ReturnType<typeof startPageServer>>;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    node = await startTestNode(await backend.newDb(), { devnet: { blockIntervalMs: 100 }, api: { streamHeartbeatMs: 200 } });
    proxy = await startCuttingProxy(Number(new URL(node.url).port));
    pages = await startPageServer();
    page = await browser.context.newPage();
    await page.goto(`${pages.origin}/`);
  });
  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await proxy?.close();
    await pages?.close();
    await node?.close();
    await backend.cleanup();
  });

  it("resumes after a lost connection with Last-Event-ID: every version once, 0..K, each as by_version answers it", async () => {
    const url = `${proxy.origin}/v1/transactions/stream?start_version=0`;
    await page.evaluate((u) => {
      const recorded: Recorded = { events: [], opens: [], errors: [], ends: [] };
      const data: string[] = [];
      const source = new EventSource(u);
      source.onopen = () => recorded.opens.push(recorded.events.length);
      source.onerror = () => recorded.errors.push({ at: recorded.events.length, readyState: source.readyState });
      source.onmessage = (e) => {
        recorded.events.push({ id: e.lastEventId, version: (JSON.parse(e.data) as { version: string }).version });
        data.push(e.data);
      };
      source.addEventListener("end", (e) => recorded.ends.push((e as MessageEvent<string>).data));
      window.streamTest = { source, recorded, data };
    }, url);

    // Before the cut: the replay from 0 is done and the stream is live (past a version committed after it opened).
    const liveFrom = await ledgerVersion(node);
    await page.waitForFunction((v) => {
      const e = window.streamTest.recorded.events;
      return e.length >= 50 && BigInt(e[e.length - 1]!.version) > BigInt(v);
    }, String(liveFrom + 5n), { timeout: 30_000 });
    expect(await metric(node, "ledger_node_streams_open")).toBe(1);
    expect(proxy.requests).toHaveLength(1);

    expect(proxy.cut()).toBe(1);
    const beforeCut = await recorded(page);
    // The node let go of the first stream: its client's connection closed.
    await expect.poll(() => metric(node, "ledger_node_streams_ended_total", { reason: "client_closed" }), { timeout: 5_000 }).toBe(1);

    // The browser reconnects by itself (retry: 1000) through the same proxy, to the same URL.
    await expect.poll(() => proxy.requests.length, { timeout: 10_000 }).toBe(2);
    const resumedAt = await ledgerVersion(node);
    // And catches up past what was committed while it was away, then follows live again.
    await page.waitForFunction(
      (v) => {
        const e = window.streamTest.recorded.events;
        return BigInt(e[e.length - 1]!.version) > BigInt(v);
      },
      String(resumedAt + 5n),
      { timeout: 30_000 },
    );
    await page.evaluate(() => window.streamTest.source.close());
    const after = await recorded(page);
    await expect.poll(() => metric(node, "ledger_node_streams_open"), { timeout: 5_000 }).toBe(0);

    // The requests the node was sent: the same URL twice, cross-origin, the second with Last-Event-ID.
    const [first, second] = proxy.requests;
    for (const r of [first!, second!]) {
      expect(r.method).toBe("GET");
      expect(r.target).toBe("/v1/transactions/stream?start_version=0");
      expect(r.headers.accept).toBe("text/event-stream");
      expect(r.headers.origin).toBe(pages.origin);
    }
    expect(first!.headers["last-event-id"]).toBeUndefined();
    // The last event the page had received when the connection died (a partly received one is discarded).
    const seam = after.errors[0]!.at;
    const lastBefore = after.events[seam - 1]!;
    expect(seam).toBeGreaterThanOrEqual(beforeCut.events.length);
    expect(second!.headers["last-event-id"]).toBe(lastBefore.id);

    // One error (the cut), then one more open; the server never ended the stream itself.
    expect(after.opens).toEqual([0, seam]);
    expect(after.errors).toEqual([{ at: seam, readyState: CONNECTING }]);
    expect(after.ends).toEqual([]);
    // Versions were committed while the browser was away: the resumed stream had some to replay.
    expect(resumedAt).toBeGreaterThan(BigInt(lastBefore.version) + 1n);

    // Every version from 0 once, in order, each event's id its version.
    const versions = after.events.map((e) => e.version);
    expect(versions).toEqual(versions.map((_, i) => String(i)));
    expect(after.events.every((e) => e.id === e.version)).toBe(true);
    expect(after.events[seam]!.version).toBe(String(BigInt(lastBefore.version) + 1n));
    const last = after.events.length - 1;
    expect(BigInt(after.events[last]!.version)).toBeGreaterThan(resumedAt);

    // Each sampled event's data is what by_version answers: both ends, around the seam, and where the resumed replay met live.
    const sampled = [...new Set([0, 1, Math.floor(seam / 2), seam - 2, seam - 1, seam, seam + 1, Number(resumedAt), Number(resumedAt) + 1, last])];
    const data = await page.evaluate((at) => at.map((i) => window.streamTest.data[i]!), sampled);
    for (const [i, v] of sampled.entries()) {
      const expected = await (await fetch(`${node.base}/transactions/by_version/${v}`)).json();
      expect(JSON.parse(data[i]!), `version ${v}`).toEqual(expected);
    }
  });
});
