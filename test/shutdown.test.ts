/**
 * Connections over real sockets: close() (what SIGINT/SIGTERM run) ends even when a client holds a
 * connection open, and a connection that goes silent is closed after the connection timeout.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTestNode } from "./helpers/node.js";

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

describe("close()", () => {
  it("ends within seconds while a client holds a connection that never sent a request (browsers open those ahead of need)", async () => {
    const node = await startTestNode(join(dir, "a.db"), { devnet: true });
    const silent = await open(node.url);
    const keptAlive = await open(node.url);
    keptAlive.write("GET /v1/info HTTP/1.1\r\nHost: test\r\n\r\n");
    const answer = await new Promise<string>((resolve) => keptAlive.once("data", (d: Buffer) => resolve(d.toString("latin1"))));
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    const t0 = performance.now();
    await node.close();
    const took = performance.now() - t0;
    expect(took).toBeLessThan(8_000);
    await Promise.all([closed(silent), closed(keptAlive)]);
    expect(silent.destroyed && keptAlive.destroyed).toBe(true);
  }, 30_000);

  it("ends at once with only idle keep-alive connections, and a request sent while closing is answered or refused, never left hanging", async () => {
    const node = await startTestNode(join(dir, "b.db"), { devnet: true });
    const res = await fetch(`${node.base}/info`); // undici keeps this connection alive
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const t0 = performance.now();
    const closing = node.close();
    const late = fetch(`${node.base}/info`).then(
      (r) => r.status,
      () => "refused",
    );
    await closing;
    expect(performance.now() - t0).toBeLessThan(1_500);
    expect([200, 503, "refused"]).toContain(await late);
  }, 30_000);
});

describe("connection timeout", () => {
  it("closes a connection that never sends a request once the timeout passes, and never one in use", async () => {
    const node = await startTestNode(join(dir, "c.db"), { devnet: true, api: { connectionTimeoutMs: 400 } });
    try {
      const silent = await open(node.url);
      const t0 = performance.now();
      const silentClosed = closed(silent).then(() => performance.now() - t0);
      // a keep-alive connection with a request every 100 ms, for three timeouts' worth
      const busy = await open(node.url);
      let answers = 0;
      busy.on("data", (d: Buffer) => (answers += d.toString("latin1").split("HTTP/1.1 200 OK").length - 1));
      for (let i = 0; i < 12; i++) {
        busy.write("GET /v1/info HTTP/1.1\r\nHost: test\r\n\r\n");
        await new Promise((r) => setTimeout(r, 100));
      }
      const after = await silentClosed;
      expect(after).toBeGreaterThanOrEqual(350);
      expect(after).toBeLessThan(1_200); // closed by the timeout, not by anything at the end
      expect(busy.destroyed).toBe(false);
      expect(answers).toBe(12);
      busy.destroy();
    } finally {
      await node.close();
    }
  }, 30_000);
});
