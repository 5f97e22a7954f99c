/**
 * Connections over real sockets: close() (what SIGINT/SIGTERM run) ends even when a client holds a
 * connection open, and a connection that goes silent is closed after the connection timeout. No
 * upper time bounds: whether close() had to force connections shut is seen on the server itself.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "./helpers/node.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-shutdown-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A raw TCP connection to the node's port. */
async function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const s = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => s.once("connect", resolve).once("error", reject));
  return s;
}
const closed = (s: Socket) => new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once("close", () => resolve())));

/** Records whether close() forced the remaining connections shut (its grace period ran out). */
function watchForcedClose(node: TestNode): () => boolean {
  const server = node.app.server;
  const closeAll = server.closeAllConnections.bind(server);
  let forced = false;
  server.closeAllConnections = () => {
    forced = true;
    closeAll();
  };
  return () => forced;
}

/**
 * Whether this runtime's `server.close()` itself ends a connection that never sent a request (Node
 * 26 does; earlier lines leave it open): a bare node:http server asked so, with one such connection.
 */
async function runtimeClosesSilentConnections(): Promise<boolean> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const s = await open(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  server.close();
  const ended = await Promise.race([closed(s).then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 1000))]);
  s.destroy();
  server.closeAllConnections();
  return ended;
}

describe("close()", () => {
  it("ends while a client holds a connection that never sent a request (browsers open those ahead of need), forcing it shut after the grace period where the runtime leaves it open", async () => {
    const runtimeCloses = await runtimeClosesSilentConnections();
    const node = await startTestNode(join(dir, "a.db"), { devnet: true });
    const silent = await open(node.url);
    const keptAlive = await open(node.url);
    keptAlive.write("GET /v1/info HTTP/1.1\r\nHost: test\r\n\r\n");
    const answer = await new Promise<string>((resolve) => keptAlive.once("data", (d: Buffer) => resolve(d.toString("latin1"))));
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    const forced = watchForcedClose(node);
    await node.close();
    await Promise.all([closed(silent), closed(keptAlive)]);
    // Where the runtime leaves the silent connection open, it held the close until the grace
    // period ran out; then it was closed by force.
    expect(forced()).toBe(!runtimeCloses);
    expect(silent.destroyed && keptAlive.destroyed).toBe(true);
  }, 30_000);

  it("ends at once with only idle keep-alive connections, and a request sent while closing is answered or refused, never left hanging", async () => {
    const node = await startTestNode(join(dir, "b.db"), { devnet: true });
    const res = await fetch(`${node.base}/info`); // undici keeps this connection alive
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const forced = watchForcedClose(node);
    const closing = node.close();
    const late = fetch(`${node.base}/info`).then(
      (r) => r.status,
      () => "refused",
    );
    await closing;
    // Idle connections were closed at once: the grace period never ran out.
    expect(forced()).toBe(false);
    expect([200, 503, "refused"]).toContain(await late);
  }, 30_000);
});

describe("connection timeout", () => {
  it("closes a connection that never sends a request once the timeout passes, and never one in use", async () => {
    const node = await startTestNode(join(dir, "c.db"), { devnet: true, api: { connectionTimeoutMs: 400 } });
    try {
      const silent = await open(node.url);
      const t0 = performance.now();
      let silentAfter: number | null = null;
      const silentClosed = closed(silent).then(() => {
        silentAfter = performance.now() - t0;
      });
      // A keep-alive connection with a request every 100 ms (idle gaps shorter than the timeout),
      // until the silent one is closed and two more after that: in use across a whole timeout.
      const busy = await open(node.url);
      let answers = 0;
      busy.on("data", (d: Buffer) => (answers += d.toString("latin1").split("HTTP/1.1 200 OK").length - 1));
      let sent = 0;
      for (let after = 0; after < 2; after += silentAfter === null ? 0 : 1) {
        busy.write("GET /v1/info HTTP/1.1\r\nHost: test\r\n\r\n");
        sent++;
        await new Promise((r) => setTimeout(r, 100));
      }
      await silentClosed;
      // closed by the timeout while the node ran, and not before it
      expect(silentAfter!).toBeGreaterThanOrEqual(350);
      expect(busy.destroyed).toBe(false);
      await expect.poll(() => answers).toBe(sent);
      busy.destroy();
    } finally {
      await node.close();
    }
  }, 30_000);
});
