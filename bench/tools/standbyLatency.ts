/**
 * Commit-to-delivery latency of a transaction stream on a PostgreSQL hot standby, with and without
 * `serve --primary`: a throwaway primary and standby (the test suite's PgCluster), a devnet node
 * writing the primary (a block every `--block-interval` ms), and two nodes on the standby, one of
 * them given the primary's URL, each with one unfiltered NDJSON stream. Latency is arrival − the
 * transaction's `timestamp` (the devnet's wall clock before it writes the block: an upper bound).
 * Also the CPU each standby node used a second.
 *
 *   npm run build && node --import tsx bench/tools/standbyLatency.ts [--seconds 20] [--block-interval 100]
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import { PgCluster } from "../../test/helpers/postgres.js";
import { type ServeProcess, startServe } from "../../test/helpers/serveProcess.js";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : process.argv[i + 1]!;
};
const SECONDS = Number(arg("seconds", "20"));
const BLOCK_MS = arg("block-interval", "100");

const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
};

/** One NDJSON stream's latencies (ms) while `collect()` is true. */
function stream(base: string, latencies: number[], collect: () => boolean): http.ClientRequest {
  const req = http.get(`${base}/transactions/stream`, { headers: { accept: "application/x-ndjson" } }, (res) => {
    let rest = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      const at = Date.now() * 1000;
      const lines = (rest + chunk).split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        const m = /"timestamp":"(\d+)"/.exec(line);
        if (m && collect()) latencies.push((at - Number(m[1])) / 1000);
      }
    });
  });
  req.on("error", () => undefined);
  return req;
}

const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

// The suite's clusters commit with synchronous_commit off, which holds the WAL (and so the standby) up to 200 ms behind.
const pair = await PgCluster.startStandbyPair([], ["synchronous_commit=on"]);
const servers: ServeProcess[] = [];
try {
  const db = await pair.newDb();
  servers.push(await startServe(["--db", db.primary, "--devnet", "--block-interval", BLOCK_MS, "--quiet"]));
  await new Promise((r) => setTimeout(r, 3_000));
  await pair.caughtUp();
  const polling = await startServe(["--db", db.standby, "--no-prune", "--quiet"]);
  const told = await startServe(["--db", db.standby, "--no-prune", "--quiet", "--primary", db.primary]);
  servers.push(polling, told);
  let collecting = false;
  const lat = { polling: [] as number[], told: [] as number[] };
  const reqs = [stream(polling.base, lat.polling, () => collecting), stream(told.base, lat.told, () => collecting)];
  await new Promise((r) => setTimeout(r, 3_000));
  const before = { polling: cpuMs(polling.proc.pid!), told: cpuMs(told.proc.pid!) };
  const t0 = performance.now();
  collecting = true;
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  collecting = false;
  const s = (performance.now() - t0) / 1000;
  for (const r of reqs) r.destroy();
  for (const [name, xs] of Object.entries(lat)) {
    const pid = (name === "polling" ? polling : told).proc.pid!;
    const cpu = (cpuMs(pid) - before[name as keyof typeof before]) / s;
    console.log(`${name === "told" ? "--primary" : "polling  "}: ${xs.length} events, p50 ${q(xs, 0.5).toFixed(1)} ms, p90 ${q(xs, 0.9).toFixed(1)}, p99 ${q(xs, 0.99).toFixed(1)}; the node ${cpu.toFixed(1)} ms of CPU a second`);
  }
} finally {
  for (const s of servers) await s.stop();
  await pair.destroy();
}
