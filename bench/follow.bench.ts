/**
 * Sync throughput of `ledger-node follow` (issue 16) from a local fake upstream
 * (test/helpers/fakeUpstream.ts: the real genesis, then devnet blocks) into a fresh SQLite file,
 * at concurrency 1, 4 and 16: versions per second from the process start to its exit at the head,
 * versions per CPU-second of the follower (steadier than wall time on a shared machine), and
 * upstream requests per 1,000 versions.
 *
 *   npm run build && node --import tsx bench/follow.bench.ts [--blocks 3000] [--rounds 3] [--latency 0]
 *
 * `--compare DIR` runs another checkout's built CLI too, alternating which goes first in a round;
 * `--only N` runs concurrency N alone; `--cpu-prof DIR` writes V8 profiles of one follow of this
 * build at the last concurrency there.
 *
 *   node --import tsx bench/follow.bench.ts --only 16 --rounds 5 --compare /work/wt-base35
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
const strArg = (name: string): string | null => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? null : (process.argv[i + 1] ?? null);
};
const COMPARE = strArg("compare");
const PROFILE_DIR = strArg("cpu-prof");
const CONCURRENCIES = strArg("only") ? [Number(strArg("only"))] : [1, 4, 16];
const builds: Array<[string, string]> = [["this build", CLI]];
if (COMPARE) builds.push([COMPARE, join(COMPARE, "dist/cli.js")]);

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
  const followOnce = async (cli: string, concurrency: number, db: string, profile: string | null) => {
    const before = up.totalRequests;
    const t0 = performance.now();
    const flags = profile ? ["--cpu-prof", "--cpu-prof-dir", profile] : [];
    // Not spawnSync: the upstream answering it runs on this event loop.
    const p = spawn(
      process.execPath,
      [...flags, cli, "follow", "--upstream", up.base, "--db", db, "--from", "genesis", "--exit-at-head", "--max-rps", "100000", "--concurrency", String(concurrency)],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    let stdout = "";
    p.stderr.on("data", (d) => (stderr += d));
    p.stdout.on("data", (d) => (stdout += d));
    const code = await new Promise<number | null>((r) => p.once("close", r));
    const secs = (performance.now() - t0) / 1000;
    if (code !== 0) throw new Error(`follow failed: ${stderr}`);
    const cpu = /([0-9.]+) s CPU/.exec(stdout);
    if (!cpu) throw new Error(`follow did not report its CPU time: ${stdout}`);
    for (const s of ["", "-wal", "-shm"]) rmSync(db + s, { force: true });
    return { rate: versions / secs, perCpu: versions / Number(cpu[1]), perK: ((up.totalRequests - before) * 1000) / versions };
  };
  for (const concurrency of CONCURRENCIES) {
    const results = new Map(builds.map(([name]) => [name, { rates: [] as number[], perK: [] as number[], perCpu: [] as number[] }]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, cli] of r % 2 === 0 ? builds : [...builds].reverse()) {
        const x = await followOnce(cli, concurrency, join(dir, `c${concurrency}-${r}.db`), null);
        const res = results.get(name)!;
        res.rates.push(x.rate);
        res.perCpu.push(x.perCpu);
        res.perK.push(x.perK);
      }
    }
    for (const [name] of builds) {
      const { rates, perCpu, perK } = results.get(name)!;
      const row = `| ${concurrency} | ${builds.length > 1 ? `${name} | ` : ""}${Math.round(median(rates))} | ${rates.map((x) => Math.round(x)).join(", ")} | ${Math.round(median(perCpu))} | ${median(perK).toFixed(1)} |`;
      rows.push(row);
      console.log(row);
    }
  }
  if (PROFILE_DIR) {
    const concurrency = CONCURRENCIES[CONCURRENCIES.length - 1]!;
    await followOnce(CLI, concurrency, join(dir, "profiled.db"), PROFILE_DIR);
    console.log(`profiles of a follow at concurrency ${concurrency} in ${PROFILE_DIR}`);
  }
} finally {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  `\n| concurrency | ${builds.length > 1 ? "build | " : ""}versions/s (median of ${ROUNDS}) | each round | versions per follower CPU-second | upstream requests per 1,000 versions |\n|---|${builds.length > 1 ? "---|" : ""}---|---|---|---|\n${rows.join("\n")}`,
);
