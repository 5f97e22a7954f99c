/** Shared pieces of the benchmarks: child servers, autocannon runs, medians, RESULTS.md sections. */
import autocannon from "autocannon";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

// autocannon keeps each response body as a string (`PipelinedRequestsQueue.addBody`: `body += chunk`,
// which decodes the bytes as UTF-8). A compressed body is not UTF-8, and decoding it that way cost
// autocannon 400 µs per 32 KB brotli page (about 80 MB/s), so autocannon, not the server, set the
// pace of every compressed row (the node was 14% busy). Decoded as latin1 (one char per byte) the
// same page costs it 27 µs, and text bodies cost what they did: 58–80 against 60–84 µs for the
// 150 KB modules page, 2.4k → 28–31k req/s on the brotli one (same node, `bench/` probe, one run).
// Nothing here reads the bodies; bytes, latencies and status codes are counted elsewhere.
// Dropping the bodies altogether looks cheaper under plain node (41 against 50 µs per 150 KB page)
// but costs more under tsx, where the benchmarks run (88 against 51 µs; its CPU profile shows 17% in
// garbage collection against 5% under plain node), so latin1 it is (side by side, 2026-11-23).
// BENCH_UTF8_BODIES=1 restores autocannon's own decoding.
if (process.env.BENCH_UTF8_BODIES !== "1") {
  type Queue = { peek(): { body: string } | undefined };
  const Q = createRequire(import.meta.url)("autocannon/lib/pipelinedRequestsQueue.js") as { prototype: { addBody(this: Queue, data: Buffer): void } };
  Q.prototype.addBody = function (data) {
    const req = this.peek();
    if (req) req.body += data.toString("latin1");
  };
}

export const ROOT = new URL("../", import.meta.url).pathname;
export const OUT = `${ROOT}bench/out/`;

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Starts a process that prints its URL on stdout; resolves with it. */
export function startServer(cmd: string[], match = /http:\/\/127\.0\.0\.1:\d+/): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cmd, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let buf = "";
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = match.exec(buf);
      if (m) resolve({ url: m[0], child });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`server exited (${code}): ${buf}`)));
  });
}

export interface Load {
  rps: number;
  p99: number;
  non2xx: number;
  /** Response bytes per second (headers and bodies) as the load generator read them. */
  bytesPerSec: number;
  /** CPU time (user + system) the serving process spent per request, microseconds. */
  cpuUsPerReq: number | null;
  /** CPU time of this process (autocannon, the load generator) per request, microseconds. */
  loaderUsPerReq: number;
}

/** user + system CPU time of a process so far, in microseconds (Linux /proc). */
function cpuMicros(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // clock ticks: 100 Hz
  } catch {
    return null;
  }
}

/** One autocannon run; with `pid`, also the server's CPU per request over the run. */
export async function load(opts: autocannon.Options, pid?: number): Promise<Load> {
  const before = pid ? cpuMicros(pid) : null;
  const self = process.cpuUsage();
  const r = await autocannon({ connections: 10, duration: 5, ...opts });
  const own = process.cpuUsage(self);
  const after = pid ? cpuMicros(pid) : null;
  const total = r.requests.total;
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    non2xx: r.non2xx + r.errors + r.timeouts,
    bytesPerSec: r.throughput.average,
    cpuUsPerReq: before !== null && after !== null && total > 0 ? (after - before) / total : null,
    loaderUsPerReq: total > 0 ? (own.user + own.system) / total : NaN,
  };
}

/** Replaces (or appends) the section `## title` of bench/RESULTS.md. */
export function writeSection(title: string, body: string): void {
  const path = `${ROOT}bench/RESULTS.md`;
  let text = existsSync(path) ? readFileSync(path, "utf8") : "# Benchmark results\n";
  const head = `## ${title}\n`;
  const start = text.indexOf(head);
  const section = `${head}\n${body.trim()}\n\n`;
  if (start === -1) text = text.trimEnd() + "\n\n" + section;
  else {
    const next = text.indexOf("\n## ", start + head.length);
    text = text.slice(0, start) + section + (next === -1 ? "" : text.slice(next + 1));
  }
  writeFileSync(path, text.trimEnd() + "\n");
}
