/**
 * Slow bodies and connection floods (issue 18): 2,000 chunked POSTs to raw_item that trickle a byte
 * a second are answered 408 with the error object and closed within the request timeout, while a
 * normal client is served throughout, over new and kept-alive connections. And connections over
 * the cap are answered 503 with the error object, not dropped. SQLite only: nothing here depends
 * on the backend.
 */
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "./helpers/backends.js";
import { ChainBuilder, addr, u64le, writeTable } from "./helpers/chain.js";
import { serveChain, startTestNode, stopNode, type TestNode } from "./helpers/node.js";

const SLOW = 2_000;
const TIMEOUT_MS = 2_000;
const H = addr("7ab1e");

interface Slow {
  opened: number;
  closed: number | null;
  /** Resolves when the server has closed the connection. */
  gone: Promise<void>;
  response: string;
}

/** A raw_item POST whose chunked body arrives a byte a second, for as long as the socket is open. */
function slowPost(port: number): Promise<{ socket: Socket; s: Slow }> {
  return new Promise((resolve, reject) => {
    let gone: () => void = () => undefined;
    const s: Slow = { opened: 0, closed: null, gone: new Promise<void>((r) => (gone = r)), response: "" };
    const socket = connect(port, "127.0.0.1", () => {
      s.opened = Date.now();
      socket.write(`POST /v1/tables/${H}/raw_item HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`);
      const tick = setInterval(() => socket.writable && socket.write("1\r\n \r\n"), 1_000);
      socket.once("close", () => {
        clearInterval(tick);
        s.closed = Date.now();
        gone();
      });
      resolve({ socket, s });
    });
    socket.on("data", (d: Buffer) => (s.response += d.toString("latin1")));
    socket.on("error", (e) => (s.opened === 0 ? reject(e) : undefined));
  });
}

/** GET on a new connection (no agent), resolving with the status. */
function freshGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("slow bodies and connection floods (sqlite)", () => {
  const backend = sqliteBackend();
  let node: TestNode;
  beforeAll(async () => {
    const chain = new ChainBuilder().genesis();
    chain.block([{ sender: addr("b0b"), seq: 0, changes: [writeTable(H, u64le(1), u64le(7))] }]);
    node = await serveChain(backend, chain, { api: { requestTimeoutMs: TIMEOUT_MS, headersTimeoutMs: TIMEOUT_MS } });
  });
  afterAll(() => stopNode(node, backend));

  it(`closes ${SLOW} slow-body connections within the request timeout, answering 408, while a normal client is served`, async () => {
    const port = Number(new URL(node.url).port);
    // The normal client: a request every 20 ms, alternating kept-alive (fetch) and new connections.
    const served: number[] = [];
    const failures: string[] = [];
    let stop = false;
    const client = (async () => {
      for (let i = 0; !stop; i++) {
        const t0 = performance.now();
        try {
          const status = i % 2 === 0 ? (await fetch(`${node.base}/info`)).status : await freshGet(`${node.base}/info`);
          if (status === 200) served.push(performance.now() - t0);
          else failures.push(`status ${status}`);
        } catch (e) {
          failures.push(String(e));
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    const slow: Slow[] = [];
    const sockets: Socket[] = [];
    for (let i = 0; i < SLOW; i += 100) {
      const batch = await Promise.all(Array.from({ length: Math.min(100, SLOW - i) }, () => slowPost(port)));
      for (const b of batch) {
        slow.push(b.s);
        sockets.push(b.socket);
      }
    }
    const servedBefore = served.length;
    // Every slow connection is closed by the server (the test's timeout bounds the wait).
    await Promise.all(slow.map((s) => s.gone));
    stop = true;
    await client;
    for (const s of sockets) s.destroy();

    const held = slow.map((s) => s.closed! - s.opened);
    console.log(`slow bodies: ${SLOW} closed after ${Math.min(...held)}–${Math.max(...held)} ms; normal client: ${served.length} served, ${failures.length} failed, slowest ${Math.round(Math.max(...served))} ms`);
    // Not closed early: the deadline is the request timeout, not something shorter. (No upper
    // bound: each one's 408 "request timeout" below says what closed it.)
    expect(Math.min(...held)).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    for (const s of slow) {
      expect(s.response).toMatch(/^HTTP\/1\.1 408 /);
      const body = JSON.parse(s.response.slice(s.response.indexOf("\r\n\r\n") + 4)) as { message: string; error_code: string };
      expect(body.error_code).toBe("web_framework_error");
      expect(body.message).toMatch(/^request timeout/);
    }
    expect(failures).toEqual([]);
    // Served during the flood too, not only before it began.
    expect(servedBefore).toBeGreaterThan(5);
    expect(served.length - servedBefore).toBeGreaterThan(5);
  }, 90_000);

  it("answers connections over the cap 503 with the error object, and serves again once they close", async () => {
    const db = await backend.newDb();
    const chain = new ChainBuilder().genesis();
    await chain.importInto(db);
    const capped = await startTestNode(db, { api: { maxConnections: 20 } });
    const port = Number(new URL(capped.url).port);
    const idle: Socket[] = [];
    try {
      for (let i = 0; i < 20; i++) {
        idle.push(await new Promise<Socket>((resolve, reject) => {
          const s = connect(port, "127.0.0.1", () => resolve(s));
          s.on("error", reject);
        }));
      }
      // Once the server has counted them, every new connection is shed.
      let sheds = 0;
      for (let tries = 0; (await freshGet(`${capped.base}/info`)) !== 503; tries++) expect(tries).toBeLessThan(1_000);
      sheds++;
      const shed = await fetch(`${capped.base}/info`);
      sheds++;
      expect(shed.status).toBe(503);
      expect(shed.headers.get("retry-after")).toBe("1");
      expect(await shed.json()).toEqual({ message: "too many open connections (20): try again later", error_code: "web_framework_error" });
      await Promise.all(
        idle.map(
          (s) =>
            new Promise((r) => {
              s.once("close", r);
              s.destroy();
            }),
        ),
      );
      // Served again once the server has seen them close (the sheds meanwhile are counted too).
      for (let status = await freshGet(`${capped.base}/info`); status !== 200; status = await freshGet(`${capped.base}/info`)) {
        expect(status).toBe(503);
        sheds++;
      }
      const metrics = await (await fetch(`${capped.url}/metrics`)).text();
      expect(metrics).toMatch(new RegExp(`^ledger_node_connections_shed_total ${sheds}$`, "m"));
    } finally {
      for (const s of idle) s.destroy();
      await capped.close();
    }
  }, 30_000);
});
