/**
 * The log a client cannot fill (issue 45): `serve --follow URL --proxy` (the built CLI, a real
 * SQLite file, the fake upstream then down, then failing) answers 2,000 reads of accounts it must
 * fetch with 503 (or 429 past a client's share) and hundreds of requests with long bad paths and query values
 * with 4xx; its log (stdout, pino's JSON lines) then holds no line over 4 KiB, a few lines per
 * status and error code whatever the number of requests, each without a stack (warn for the 503s,
 * info for the 4xx, none at error), and summary lines that with the logged ones add up, per status
 * and code, to `ledger_node_http_errors_total`, which counts every request.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LINES_PER_WINDOW } from "../src/api/observability/errorLog.js";
import { requireBuiltCli } from "./helpers/cli.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";
import { parsePrometheus, type Exposition } from "./helpers/prometheus.js";
import { caughtUp, type ServeProcess, startServe } from "./helpers/serveProcess.js";

const BURST = 2_000;
const LINE_MAX = 4096;


/** Runs `ask` for 0..n-1, `width` at a time; the statuses answered. */
async function statuses(n: number, width: number, ask: (i: number) => Promise<Response>): Promise<number[]> {
  const out: number[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let i = next++; i < n; i = next++) {
        const res = await ask(i);
        await res.arrayBuffer();
        out[i] = res.status;
      }
    }),
  );
  return out;
}

/** The error answers counted by `ledger_node_http_errors_total`, by `status error_code`. */
function errorCounts(e: Exposition): Map<string, number> {
  const m = new Map<string, number>();
  for (const s of e.samples) if (s.name === "ledger_node_http_errors_total") m.set(`${s.labels.status} ${s.labels.error_code}`, s.value);
  return m;
}

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  status?: number;
  errorCode?: string;
  suppressed?: number;
  err?: unknown;
  stack?: unknown;
}

describe("the error log of a replica whose upstream is down", () => {
  const dir = mkdtempSync(join(tmpdir(), "ledger-node-errlog-"));
  let up: FakeUpstream;
  let replica: ServeProcess;
  beforeAll(async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: 160 });
    replica = await startServe([
      "--follow", up.base, "--from", "latest", "--proxy", "--db", join(dir, "replica.db"), "--no-prune",
      "--max-rps", "5000", "--proxy-max-rps", "5000", "--poll", "50", "--upstream-timeout", "500",
    ]);
    await caughtUp(replica.base, up.ledgerVersion);
  }, 180_000);
  afterAll(async () => {
    await replica?.stop();
    await up?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("logs 2,000 upstream 503s and hundreds of long bad requests in a few short lines without a stack, and counts each in the metric", async () => {
    const metricsUrl = `${replica.base.replace(/\/v1$/, "")}/metrics`;
    const before = errorCounts(parsePrometheus(await (await fetch(metricsUrl)).text()));
    const logStart = replica.stdout().length;

    // Accounts the replica never saw: each read misses its base state, which the upstream cannot
    // give: down (every connection dropped) for the first half, then answering 503 to each read of
    // state (its catch-all route; each fetch is retried until the read's deadline).
    const fresh = (i: number) => `0x${(0xe0000000 + i).toString(16).padStart(64, "0")}`;
    up.faults.down = true;
    const burst = await statuses(BURST / 2, 64, (i) => fetch(`${replica.base}/accounts/${fresh(i)}`));
    up.heal();
    up.faults.only = "/v1/*";
    up.faults.fail5xx = 1_000_000_000;
    burst.push(...(await statuses(BURST / 2, 64, (i) => fetch(`${replica.base}/accounts/${fresh(BURST / 2 + i)}`))));
    up.heal();
    expect(burst.filter((s) => s !== 503 && s !== 429)).toEqual([]);
    expect(burst.filter((s) => s === 503).length).toBeGreaterThan(0);

    // Long client-controlled text: a bad address, a bad query value and a path parameter over the
    // router's bound, each with characters JSON escapes (control characters, quotes, non-ASCII).
    const junk = (n: number) => encodeURIComponent('\u0001"\\é\u2028'.repeat(n));
    const bad = [
      `${replica.base}/accounts/${junk(150)}`,
      `${replica.base}/accounts/0x1/transaction_summaries?limit=${junk(300)}`,
      `${replica.base}/accounts/0x1/resource/${"x".repeat(1_200)}${junk(50)}`,
    ];
    const refused = await statuses(300, 16, (i) => fetch(bad[i % bad.length]!));
    expect(refused.filter((s) => s < 400 || s >= 500)).toEqual([]);

    const after = errorCounts(parsePrometheus(await (await fetch(metricsUrl)).text()));
    const grew = new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).filter(([, d]) => d > 0));
    const counted = (pred: (status: number) => boolean) => [...grew].filter(([k]) => pred(Number(k.split(" ")[0]))).reduce((n, [, d]) => n + d, 0);
    expect(counted((s) => s === 503 || s === 429)).toBe(BURST);
    expect(counted((s) => s >= 400 && s < 500 && s !== 429)).toBe(refused.filter((s) => s !== 429).length);

    // Stopping the node ends the windows: their summary lines are written before it exits.
    await replica.stop();
    const text = replica.stdout().slice(logStart);
    const raw = text.split("\n").filter((l) => l !== "");
    for (const l of raw) expect(Buffer.byteLength(l), l.slice(0, 200)).toBeLessThanOrEqual(LINE_MAX);
    const lines = raw.map((l) => JSON.parse(l) as Line);
    // The answers' lines and their summaries (the follower's own failure, logged once, is not one).
    const answered = lines.filter((l) => l.reqId !== undefined);
    const summaries = lines.filter((l) => l.suppressed !== undefined);
    const theirs = raw.filter((_, i) => lines[i]!.reqId !== undefined || lines[i]!.suppressed !== undefined);
    expect(theirs.filter((l) => /\\n\s+at /.test(l))).toEqual([]);
    expect([...answered, ...summaries].filter((l) => l.err !== undefined || l.stack !== undefined || l.level >= 50)).toEqual([]);
    for (const l of answered) {
      expect(typeof l.reqId).toBe("string");
      expect(l.level, l.msg).toBe(l.status! >= 500 || l.status === 429 ? 40 : 30);
    }
    // Per status and code, what was logged and what the summaries say was not add up to the metric.
    for (const [key, n] of grew) {
      const logged = answered.filter((l) => `${l.status} ${l.errorCode}` === key).length;
      const suppressed = summaries.filter((l) => `${l.status} ${l.errorCode}` === key).reduce((s, l) => s + l.suppressed!, 0);
      expect(logged, key).toBeGreaterThan(0);
      expect(logged + suppressed, key).toBe(n);
      // One window, or two if the burst ran over a window's end.
      expect(logged, key).toBeLessThanOrEqual(2 * LINES_PER_WINDOW);
    }
    // The whole log of 2,300 error answers, the follower's retries with it, is a few dozen lines.
    expect(lines.length).toBeLessThan(100);
  }, 180_000);
});
