/** Shared pieces of the benchmarks: child servers, autocannon runs, medians, RESULTS.md sections. */
import autocannon from "autocannon";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

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
}

export async function load(opts: autocannon.Options): Promise<Load> {
  const r = await autocannon({ connections: 10, duration: 5, ...opts });
  return { rps: r.requests.average, p99: r.latency.p99, non2xx: r.non2xx + r.errors + r.timeouts };
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
