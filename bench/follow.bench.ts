/**
 * Sync throughput of `ledger-node follow` (issue 16) from a local fake upstream
 * (test/helpers/fakeUpstream.ts: the real genesis, then devnet blocks) into a fresh SQLite file,
 * at concurrency 1, 4 and 16: versions per second from the process start to its exit at the head,
 * versions per CPU-second of the follower (steadier than wall time on a shared machine), and
 * upstream requests per 1,000 versions.
 *
 *   npm run build && node --import tsx bench/follow.bench.ts [--blocks 3000] [--rounds 3] [--latency 0]
 *
 * `--latency MS` delays every page of transactions by MS (a remote upstream's round trip; the
 * public fullnodes are tens of ms away): what the pages in flight are for.
 *
 * The fake upstream runs in this process and the follower in its own (the built CLI), so they
 * share the machine's cores as an upstream and a replica on one host would.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, requireBuiltCli } from "../test/helpers/cli.js";
import { FakeUpstream } from "../test/helpers/fakeUpstream.js";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const BLOCKS = arg("blocks", 3000);
const ROUNDS = arg("rounds", 3);
const LATENCY_MS = arg("latency", 0);

requireBuiltCli();
const dir = mkdtempSync(join(tmpdir(), "ledger-node-follow-bench-"));
const up = await FakeUpstream.start({ blocks: BLOCKS });
const versions = Number(up.ledgerVersion) + 1;
up.faults.only = "/v1/transactions";
up.faults.slowMs = LATENCY_MS;
console.log(`fake upstream: ${BLOCKS} blocks, ${versions} versions, ${LATENCY_MS} ms per page`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: string[] = [];
try {
  for (const concurrency of [1, 4, 16]) {
    const rates: number[] = [];
    const perK: number[] = [];
    const perCpu: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const db = join(dir, `c${concurrency}-${r}.db`);
      const before = up.totalRequests;
      const t0 = performance.now();
      // Not spawnSync: the upstream answering it runs on this event loop.
      const p = spawn(
        process.execPath,
        [CLI, "follow", "--upstream", up.base, "--db", db, "--from", "genesis", "--exit-at-head", "--max-rps", "100000", "--concurrency", String(concurrency)],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let stderr = "";
      let stdout = "";
      p.stderr.on("data", (d) => (stderr += d));
      p.stdout.on("data", (d) => (stdout += d));
      const code = await new Promise<number | null>((r) => p.once("close", r));
      const secs = (performance.now() - t0) / 1000;
      if (code !== 0) throw new Error(`follow failed: ${stderr}`);
      rates.push(versions / secs);
      const cpu = /([0-9.]+) s CPU/.exec(stdout);
      if (!cpu) throw new Error(`follow did not report its CPU time: ${stdout}`);
      perCpu.push(versions / Number(cpu[1]));
      perK.push(((up.totalRequests - before) * 1000) / versions);
      rmSync(db, { force: true });
    }
    const row = `| ${concurrency} | ${Math.round(median(rates))} | ${rates.map((x) => Math.round(x)).join(", ")} | ${Math.round(median(perCpu))} | ${median(perK).toFixed(1)} |`;
    rows.push(row);
    console.log(row);
  }
} finally {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  `\n| concurrency | versions/s (median of ${ROUNDS}) | each round | versions per follower CPU-second | upstream requests per 1,000 versions |\n|---|---|---|---|---|\n${rows.join("\n")}`,
);
