/** Shared pieces of the benchmarks: child servers, autocannon runs, medians, the results history's sections. */
import type autocannon from "autocannon";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { DEVNET_ACCOUNTS, DevnetChain, defaultDevnetChainOptions } from "../src/ingest/devnet/chain.js";
import { FIXTURES } from "../test/helpers/fixtures.js";

export const ROOT = new URL("../", import.meta.url).pathname;
export const OUT = `${ROOT}bench/out/`;

/** `opt(name, def)`: the value after `--name` in `argv`, else `def`. */
export function argOption(argv: string[]): (name: string, def: string) => string {
  return (name, def) => {
    const i = argv.indexOf(`--${name}`);
    return i === -1 ? def : argv[i + 1]!;
  };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** How `startServer` runs its process: on core 0 (`taskset`) when pinned, with extra environment. */
export interface StartOptions {
  match?: RegExp;
  pinned?: boolean;
  env?: Record<string, string>;
}

/** Starts a process that prints its URL on stdout or stderr; resolves with it. */
export function startServer(cmd: string[], options: StartOptions = {}): Promise<{ url: string; child: ChildProcess }> {
  const { match = /http:\/\/127\.0\.0\.1:\d+/, pinned = false, env } = options;
  return new Promise((resolve, reject) => {
    const [file, args] = pinned ? ["taskset", ["-c", "0", process.execPath, ...cmd]] : [process.execPath, cmd];
    const child = spawn(file, args, { cwd: ROOT, env: env ? { ...process.env, ...env } : process.env, stdio: ["ignore", "pipe", "pipe"] });
    let buf = "";
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = match.exec(buf);
      if (m) resolve({ url: m[0], child });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${cmd.join(" ")} exited (${code}): ${buf}`)));
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
  /** CPU time of the load generator (autocannon, in its own process) per request, microseconds. */
  loaderUsPerReq: number;
}

/**
 * One autocannon run (10 connections, 5 s unless `opts` says otherwise) in a process of its own,
 * under plain node (bench/loadgen.mjs says why); with `pid`, also the server's CPU per request
 * over the run. `opts` must be JSON: url, method, headers, body, requests, duration, connections.
 */
export async function load(opts: autocannon.Options, pid?: number): Promise<Load> {
  // execFile passes no node flags on (fork would pass tsx's --import)
  const { stdout } = await promisify(execFile)(process.execPath, [`${ROOT}bench/loadgen.mjs`, JSON.stringify({ opts, pid })], { cwd: ROOT });
  const r = JSON.parse(stdout) as {
    rps: number;
    total: number;
    p99: number;
    non2xx: number;
    bytesPerSec: number;
    serverCpu: number | null;
    ownCpu: number;
  };
  return {
    rps: r.rps,
    p99: r.p99,
    non2xx: r.non2xx,
    bytesPerSec: r.bytesPerSec,
    cpuUsPerReq: r.serverCpu !== null && r.total > 0 ? r.serverCpu / r.total : null,
    loaderUsPerReq: r.total > 0 ? r.ownCpu / r.total : NaN,
  };
}

/** Replaces (or appends) the section `## title` of the results history, bench/results/archive.md. */
export function writeSection(title: string, body: string): void {
  const path = `${ROOT}bench/results/archive.md`;
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

/** Writes `file` once (kept for later runs): the genesis fixture, then devnet blocks up to `versions`, as NDJSON. */
export async function devnetNdjson(file: string, versions: number): Promise<void> {
  if (existsSync(file)) return;
  const out = createWriteStream(`${file}.tmp`);
  const write = (s: string) => (out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once("drain", () => r())));
  const genesis = JSON.parse(readFileSync(`${FIXTURES}genesis_transaction.json`, "utf8"))[0];
  await write(`${JSON.stringify(genesis)}\n`);
  const chain = new DevnetChain(
    { version: 1n, height: 1n, epoch: 1n, sequence: Array.from({ length: DEVNET_ACCOUNTS }, () => 0n), upgrades: 0 },
    defaultDevnetChainOptions,
  );
  let ts = 1_700_000_000_000_000n;
  while (chain.pos.version < BigInt(versions)) {
    let buf = "";
    ts += 1_000_000n;
    for (const t of chain.nextBlock(ts)) buf += `${JSON.stringify(t)}\n`;
    await write(buf);
  }
  await new Promise<void>((r) => out.end(() => r()));
  renameSync(`${file}.tmp`, file);
}
