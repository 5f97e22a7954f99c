/**
 * API processes on a PostgreSQL hot standby against the same load on the primary alone (issue 33):
 *
 *   npm run bench:standby -- [--txns 20000] [--duration 5] [--rounds 3] [--block-ms 100]
 *
 * - A primary and a streaming-replication hot standby (test/helpers/postgres.ts
 *   `PgCluster.startStandbyPair`, default `max_standby_streaming_delay`), the devnet ledger of
 *   `--txns` versions imported into the primary and replayed on the standby.
 * - A writer: devnet blocks pushed through the Importer into the primary every `--block-ms`, as a
 *   follower commits them, for the whole run.
 * - Two `ledger-node serve --no-prune` processes, one on the primary, one on the standby. The load
 *   (autocannon, 10 connections) is random rows, with no page cache (`--page-cache-mb 0`) so each
 *   request reads the database: an account's transaction summaries at a random
 *   version of the imported range. The rounds alternate the two targets.
 * - Reported per request, from /proc: CPU of the serving node, of the primary's PostgreSQL
 *   processes (postmaster and all its children: backends, WAL sender, checkpointer…) and of the
 *   standby's (backends, startup/replay, WAL receiver). On this 2-core machine everything shares the
 *   cores, so the figure that carries over is CPU per request, and what the primary was spared.
 * - Writes the "PostgreSQL hot standby (issue 33)" section of bench/results/archive.md.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { cpus } from "node:os";
import { promisify } from "node:util";
import { DEVNET_ACCOUNTS, DevnetChain, defaultDevnetChainOptions, devnetAccount } from "../src/ingest/devnet/chain.js";
import { Importer } from "../src/ingest/importer.js";
import { openStore } from "../src/storage/open.js";
import { freePort, PgCluster, type StandbyPair } from "../test/helpers/postgres.js";
import { median, ROOT, writeSection } from "./common.js";

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const TXNS = arg("txns", 20_000);
const DURATION = arg("duration", 5);
const ROUNDS = arg("rounds", 3);
const BLOCK_MS = arg("block-ms", 100);

/** user + system CPU (µs) of `pid` and every descendant alive now (Linux /proc, 100 Hz ticks). */
function treeCpuUs(pid: number): number {
  const children = new Map<number, number[]>();
  const cpu = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const f = readFileSync(`/proc/${d}/stat`, "utf8").split(") ")[1]!.split(" ");
      const ppid = Number(f[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
      cpu.set(Number(d), ((Number(f[11]) + Number(f[12])) * 1e6) / 100);
    } catch {
      // gone
    }
  }
  let total = 0;
  const all = [pid];
  for (let i = 0; i < all.length; i++) {
    total += cpu.get(all[i]!) ?? 0;
    all.push(...(children.get(all[i]!) ?? []));
  }
  return total;
}


async function serve(db: string): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ["dist/cli.js", "serve", "--db", db, "--port", String(port), "--quiet", "--no-prune", "--page-cache-mb", "0"], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const base = `http://127.0.0.1:${port}/v1`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve ${db} exited with ${child.exitCode}`);
    if (await fetch(`${base}/`).then((r) => r.ok, () => false)) return { base, child };
    if (Date.now() > deadline) throw new Error(`serve ${db} did not start`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Run {
  rps: number;
  non2xx: number;
  nodeUs: number;
  primaryUs: number;
  standbyUs: number;
}

/** One measured load on `base` (random summaries rows); CPU per request of the node and both servers. */
async function measure(base: string, node: number, pair: StandbyPair, versions: [number, number]): Promise<Run> {
  const pm = [pair.primary.postmasterPid(), pair.standby.postmasterPid()] as const;
  const mix = {
    method: "GET",
    path: `${new URL(base).pathname}/accounts/{account}/transaction_summaries?ledger_version={version}&limit=5`,
    choices: Array.from({ length: DEVNET_ACCOUNTS }, (_, i) => ({ account: devnetAccount(i) })),
    versions,
  };
  const before = [treeCpuUs(pm[0]), treeCpuUs(pm[1])];
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [`${ROOT}bench/loadgen.mjs`, JSON.stringify({ opts: { url: base, duration: DURATION }, pid: node, mix, warmup: 1 })],
    { cwd: ROOT },
  );
  const after = [treeCpuUs(pm[0]), treeCpuUs(pm[1])];
  const r = JSON.parse(stdout) as { rps: number; total: number; non2xx: number; serverCpu: number };
  // The warm-up second is outside `serverCpu` but inside the servers' deltas: count its requests.
  const served = r.total + r.rps;
  return {
    rps: r.rps,
    non2xx: r.non2xx,
    nodeUs: r.serverCpu / r.total,
    primaryUs: (after[0]! - before[0]!) / served,
    standbyUs: (after[1]! - before[1]!) / served,
  };
}

async function main(): Promise<void> {
  const pair = await PgCluster.startStandbyPair();
  const children: ChildProcess[] = [];
  let writing = true;
  try {
    const db = await pair.newDb();
    const store = await openStore(db.primary);
    const chain = DevnetChain.fresh(defaultDevnetChainOptions);
    const imp = await Importer.open(store, 4);
    let ts = 1_700_000_000_000_000n;
    for (const t of chain.genesis()) await imp.push(t);
    while (chain.pos.version < BigInt(TXNS)) {
      ts += 1_000_000n;
      for (const t of chain.nextBlock(ts)) await imp.push(t);
    }
    await imp.finish();
    const imported = Number(imp.ledgerVersion);
    await pair.caughtUp(120_000);
    console.error(`imported ${imported + 1} versions; standby caught up`);

    // The writer: a block every BLOCK_MS through the Importer, committed when it ends, as a follower commits.
    let blocks = 0;
    const writer = (async () => {
      try {
        while (writing) {
          ts += 1_000_000n;
          const block = await Importer.open(store, 4);
          for (const t of chain.nextBlock(ts)) await block.push(t);
          await block.finish();
          blocks++;
          await new Promise((r) => setTimeout(r, BLOCK_MS));
        }
      } finally {
        await store.close();
      }
    })();

    const onPrimary = await serve(db.primary);
    const onStandby = await serve(db.standby);
    children.push(onPrimary.child, onStandby.child);
    const runs: { primary: Run[]; standby: Run[] } = { primary: [], standby: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, s] of [["primary", onPrimary], ["standby", onStandby]] as const) {
        const r = await measure(s.base, s.child.pid!, pair, [1, imported]);
        runs[name].push(r);
        console.error(`round ${round + 1} ${name}: ${Math.round(r.rps)} req/s, node ${r.nodeUs.toFixed(0)} µs, primary pg ${r.primaryUs.toFixed(0)} µs, standby pg ${r.standbyUs.toFixed(0)} µs per request, non-2xx ${r.non2xx}`);
      }
    }
    writing = false;
    await writer;
    const m = (xs: Run[], k: keyof Run) => median(xs.map((x) => x[k]));
    const row = (name: string, xs: Run[]) =>
      `| ${name} | ${Math.round(m(xs, "rps"))} | ${m(xs, "nodeUs").toFixed(0)} | ${m(xs, "primaryUs").toFixed(0)} | ${m(xs, "standbyUs").toFixed(0)} | ${xs.reduce((a, x) => a + x.non2xx, 0)} |`;
    const spared = m(runs.primary, "primaryUs") - m(runs.standby, "primaryUs");
    const body = `
\`npm run bench:standby -- --txns ${TXNS} --duration ${DURATION} --rounds ${ROUNDS} --block-ms ${BLOCK_MS}\`
(${cpus().length} cores, ${cpus()[0]?.model ?? "?"}; PostgreSQL primary and hot standby, the node,
the writer and the load generator all on this one machine, which was shared with other work and
noisy: the figures are CPU per request, medians of ${ROUNDS} rounds of ${DURATION} s, not a scaling curve).

Ledger: ${imported + 1} devnet versions imported into the primary; while measuring, a writer
committed a devnet block every ${BLOCK_MS} ms to the primary through the Importer (${blocks} blocks).
Load: autocannon, 10 connections, an account's transaction summaries (limit 5) at a random version
of the imported range, against \`serve --no-prune --page-cache-mb 0\` on the primary or on the standby
(every request reads the database).

| reads served from | req/s | node CPU µs/req | primary PostgreSQL CPU µs/req | standby PostgreSQL CPU µs/req | non-2xx |
|---|---|---|---|---|---|
${row("primary", runs.primary)}
${row("hot standby", runs.standby)}

Primary PostgreSQL CPU per request spared by reading the standby: ${spared.toFixed(0)} µs
(${((spared / m(runs.primary, "primaryUs")) * 100).toFixed(0)}% of what the reads cost it); what is
left on the primary while the standby serves is the writer's commits and the WAL sender, spread
over the requests of the run. The standby's column on the primary's row is its replay of the same
writes (its cost when it serves nothing).
`;
    writeSection("PostgreSQL hot standby (issue 33)", body);
    console.log(body);
  } finally {
    writing = false;
    for (const c of children) c.kill("SIGTERM");
    await pair.destroy();
  }
}

await main();
