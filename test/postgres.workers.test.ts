/**
 * `ledger-node serve --workers 2` as a user runs it (the built `dist/cli.js`, a real process tree on a real port), on every
 * backend and PostgreSQL major: two processes answer on one port, the devnet writes in one and both serve what it
 * wrote, a dead worker is replaced, SIGTERM stops them all, and every worker streams the writer's commits.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { Agent, get } from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import { devnetAccount } from "../src/ingest/devnet/chain.js";
import { everyMajorBackendFactories } from "./helpers/backends.js";
import { CLI, requireBuiltCli } from "./helpers/cli.js";
import { parsePrometheus } from "./helpers/prometheus.js";
import { openStream, range, type StreamClient, versionsOf } from "./helpers/stream.js";
import { serverOf } from "./helpers/procSockets.js";


interface LogLine {
  pid?: number;
  msg?: string;
  reqId?: string;
}

/** The process tree of one `serve --workers` run and everything it printed. */
class Served {
  readonly lines: LogLine[] = [];
  readonly text: string[] = [];
  readonly exited: Promise<number | null>;
  private waiters: Array<() => void> = [];

  constructor(readonly child: ChildProcess) {
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        this.text.push(line);
        try {
          this.lines.push(JSON.parse(line) as LogLine);
        } catch {
          // the supervisor prints plain text
        }
      }
      for (const w of this.waiters) w();
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  /** Waits until `cond` holds over the output so far. */
  async until<T>(what: string, cond: () => T | undefined | false, ms = 30_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = cond();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output:\n${this.text.join("\n")}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100);
      });
      this.waiters = [];
    }
  }

  /** pid → port of every worker that logged it listens. */
  listening(): Map<number, number> {
    const m = new Map<number, number>();
    for (const l of this.lines) {
      const port = /^Server listening at http:\/\/127\.0\.0\.1:([0-9]+)$/.exec(l.msg ?? "")?.[1];
      if (port && l.pid) m.set(l.pid, Number(port));
    }
    return m;
  }
}

/**
 * GET on a new connection each time (so node:cluster's round-robin reaches every worker), and
 * which of `pids` answered: the process holding the server end of the connection (Linux /proc:
 * the socket inode of our client port, then the process with that inode among its fds).
 */
function getFresh(url: string, pids: number[]): Promise<{ status: number; version: bigint; pid: number | undefined; body: string }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return new Promise<{ status: number; version: bigint; pid: number | undefined; body: string }>((resolve, reject) => {
    get(url, { agent }, (res) => {
      const clientPort = res.socket.localPort!;
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          version: BigInt(String(res.headers["x-node-ledger-version"] ?? "-1")),
          pid: serverOf(clientPort, pids),
          body,
        }),
      );
    }).on("error", reject);
  }).finally(() => agent.destroy());
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

for (const factory of everyMajorBackendFactories) {
  const backend = factory();
  describe(`serve --workers 2 on ${backend.name}`, () => {
    const served: Served[] = [];
    afterAll(async () => {
      for (const s of served) {
        if (s.child.exitCode !== null) continue;
        s.child.kill("SIGKILL");
        for (const pid of s.listening().keys()) if (alive(pid)) process.kill(pid, "SIGKILL");
      }
      await backend.cleanup();
    });

    /** `serve --workers 2` with a devnet on a new database of the backend, once both workers listen: the port, the writer's and the reader's pid. */
    async function serveTwo(): Promise<{ s: Served; port: number; writer: number; reader: number; workers: Map<number, number> }> {
      requireBuiltCli();
      const db = await backend.newDb();
      const s = new Served(
        spawn(process.execPath, [CLI, "serve", "--workers", "2", "--devnet", "--block-interval", "100", "--db", db, "--port", "0"], {
          stdio: ["ignore", "pipe", "pipe"],
        }),
      );
      served.push(s);
      const workers = await s.until("two workers listening", () => (s.listening().size === 2 ? s.listening() : undefined));
      const writer = Number(/pid ([0-9]+) writes/.exec(s.text.join("\n"))?.[1]);
      const reader = [...workers.keys()].find((p) => p !== writer)!;
      return { s, port: [...workers.values()][0]!, writer, reader, workers };
    }

    it("serves one advancing ledger from two processes on one port, replaces a dead worker, stops on SIGTERM", async () => {
      const { s, writer, reader, workers } = await serveTwo();
      const ports = new Set(workers.values());
      expect(ports.size).toBe(1); // one shared port
      expect(workers.has(writer)).toBe(true);

      const url = `http://127.0.0.1:${[...ports][0]}/v1/accounts/${devnetAccount(0)}/transaction_summaries?limit=1`;
      const seen: bigint[] = [];
      const byReader: bigint[] = [];
      const answered = new Set<number>();
      // Ask (a new connection each time) until both have answered and the reader has served a
      // block written after the first answer: the writer's devnet adds one every 100 ms.
      for (let i = 0; !(answered.size === 2 && byReader.length > 0 && byReader[byReader.length - 1]! > seen[0]!); i++) {
        expect(i, "requests before the reader served a newer block").toBeLessThan(5_000);
        const r = await getFresh(url, [writer, reader]);
        expect(r.status).toBe(200);
        seen.push(r.version);
        // (a connection whose server end is already gone from the socket table names no process)
        if (r.pid !== undefined) answered.add(r.pid);
        if (r.pid === reader) byReader.push(r.version);
      }
      // both processes answered …
      expect(answered).toEqual(new Set([writer, reader]));
      // … from one ledger that the writer's devnet keeps advancing: alternate answers never go back,
      // and the reader saw blocks written after the first answer
      expect([...seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(seen);
      expect(byReader[byReader.length - 1]!).toBeGreaterThan(seen[0]!);

      process.kill(reader, "SIGKILL");
      const replacement = await s.until("a replacement worker", () => [...s.listening().keys()].find((p) => p !== writer && p !== reader));
      const after = new Set<number>();
      for (let i = 0; after.size < 2; i++) {
        expect(i, "requests before both the writer and the replacement answered").toBeLessThan(200);
        const r = await getFresh(url, [writer, replacement]);
        expect(r.status).toBe(200);
        if (r.pid !== undefined) after.add(r.pid);
      }
      expect(after).toEqual(new Set([writer, replacement]));

      s.child.kill("SIGTERM");
      expect(await s.exited).toBe(0);
      for (const pid of s.listening().keys()) await s.until(`worker ${pid} to exit`, () => !alive(pid), 10_000);
    });

    it("streams from every worker: the writer's commits reach the streams each process serves, replayed and live", async () => {
      const { s, port, writer, reader } = await serveTwo();
      const base = `http://127.0.0.1:${port}/v1`;
      // New connections until both processes serve a stream (node:cluster deals them round-robin).
      const streams = new Map<number, StreamClient[]>([
        [writer, []],
        [reader, []],
      ]);
      const replaying = new Set<StreamClient>();
      for (let i = 0; streams.get(writer)!.length < 2 || streams.get(reader)!.length < 2; i++) {
        expect(i, "streams opened before both workers served two").toBeLessThan(100);
        const c = await openStream(`${base}/transactions/stream${i % 2 === 0 ? "?start_version=0" : ""}`, { accept: i % 4 < 2 ? "text/event-stream" : "application/x-ndjson" });
        expect(c.status).toBe(200);
        const pid = serverOf(c.localPort, [writer, reader]);
        if (pid === undefined) c.close();
        else streams.get(pid)!.push(c);
        if (i % 2 === 0) replaying.add(c);
      }
      const all = [...streams.values()].flat();
      const head = BigInt((await (await fetch(`${base}/info`)).json() as { ledger_version: string }).ledger_version);
      // every stream, on either process, goes on past a version committed after it opened
      for (const c of all) await c.until((x) => x.transactions.length > 0 && BigInt(x.transactions.at(-1)!.id!) >= head + 20n, "twenty versions past the head");
      for (const c of all) {
        c.close();
        const got = versionsOf(c);
        expect(got).toEqual(range(got[0]!, got.at(-1)!));
        // from start_version=0, else from the commit after the one it opened at
        expect(got[0]).toBe(replaying.has(c) ? 0 : Number(c.headers["x-node-ledger-version"]) + 1);
        for (const e of [c.transactions[0]!, c.transactions.at(-1)!]) expect(e.data).toBe(await (await fetch(`${base}/transactions/by_version/${e.id}`)).text());
      }
      // The reader was told of the writer's commits (through the primary), not only polling for them.
      let told: number | undefined;
      for (let i = 0; told === undefined; i++) {
        expect(i, "metrics requests before one reached the reader").toBeLessThan(100);
        const r = await getFresh(`http://127.0.0.1:${port}/metrics`, [writer, reader]);
        if (r.pid === reader) told = parsePrometheus(r.body).value("ledger_node_stream_commits_told_total", {});
      }
      expect(told).toBeGreaterThan(0);
      s.child.kill("SIGTERM");
      expect(await s.exited).toBe(0);
    });
  });
}
