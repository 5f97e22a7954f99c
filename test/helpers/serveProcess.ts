/** `ledger-node serve …` as a child process (the built CLI), with the URL it printed. */
import { type ChildProcess, spawn } from "node:child_process";
import { CLI } from "./cli.js";

export interface ServeProcess {
  /** `http://127.0.0.1:PORT/v1` */
  base: string;
  proc: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Everything it wrote to stdout so far (the log's lines, JSON). */
  stdout(): string;
  stop(): Promise<number | null>;
}

/** `detached`: the process leads a process group of its own (`--workers`: kill them all with `process.kill(-pid, …)`). */
export function startServe(args: string[], startTimeoutMs = 60_000, opts: { detached?: boolean; nodeArgs?: string[] } = {}): Promise<ServeProcess> {
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), CLI, "serve", "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"], detached: opts.detached ?? false });
  let err = "";
  let out = "";
  proc.stderr!.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start within ${startTimeoutMs} ms: ${err}`)), startTimeoutMs);
    proc.once("exit", (code) => reject(new Error(`serve exited (${code}) before it served: ${err}`)));
    proc.stdout!.on("data", (d) => {
      out += d;
      const m = /serving .* at (http:\/\/[^ ]+\/v1)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        base: m[1]!,
        proc,
        stderr: () => err,
        stdout: () => out,
        async stop() {
          proc.kill("SIGTERM");
          return exited;
        },
      });
    });
  });
}

/** Waits until the node at `base` (its `/v1`) reports `version` as its ledger version, else throws after `timeoutMs`. */
export async function caughtUp(base: string, version: bigint, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const i = (await (await fetch(`${base}/info`)).json().catch(() => null)) as { ledger_version?: string } | null;
    if (i?.ledger_version === String(version)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the replica did not reach version ${version} within ${timeoutMs} ms`);
}
