/**
 * Memory of a serving node against the size of its SQLite memory map (issue 17 item 6):
 *
 *   node --import tsx bench/memory.bench.ts [--versions 1000000,10000000] [--mmap-mb 0,256,1024] [--rounds 3] [--duration 3]
 *
 * For each ledger of `npm run bench:scale` (bench/out/scale-N.db and the targets it saved beside
 * it: run bench:scale first) and each `--sqlite-mmap-mb`, a server is started anew each round
 * (settings in an order rotating by round) and sent, one after the other, random summaries pages
 * (limit 25, random sender, random end_version), random module pages (random account, random
 * ledger_version) and random raw_item reads (random key, random ledger_version). Reported: the
 * server's RSS after the three, split into anonymous memory and mapped file pages (/proc/PID/status),
 * and its CPU µs per request on each, medians of the rounds.
 *
 *   node --import tsx bench/memory.bench.ts --store [--versions 10000000] [--mmap-mb 0,256,1024] [--rounds 5]
 *
 * `--store`: no HTTP; one process opens the ledger once per setting and times 3,000 random
 * `readSummaries` (limit 25, random sender, random end version) per setting and round, alternated:
 * CPU µs per call, with less noise than a server under load.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { prng } from "../src/ingest/devnetChain.js";
import { SqliteStore } from "../src/storage/sqlite/SqliteStore.js";
import { OUT, ROOT, median, startServer } from "./common.js";

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1]!;
};
const VERSIONS = arg("versions", "1000000,10000000").split(",").map(Number);
const MMAPS = arg("mmap-mb", "0,256,1024").split(",").map(Number);
const ROUNDS = Number(arg("rounds", "3"));
const DURATION = Number(arg("duration", "3"));

interface Targets {
  oldest: number;
  latest: number;
  senders: string[];
  moduleAccounts: Array<{ address: string }>;
  items: Array<{ handle: string; key: string }>;
}

/** The request mixes bench/loadgen.mjs draws from: `{name}` a field of a random choice, `{version}` a random version. */
function mixes(t: Targets) {
  const versions = [t.oldest, t.latest];
  return {
    summaries: { method: "GET", path: "/v1/accounts/{account}/transaction_summaries?limit=25&end_version={version}", choices: t.senders.map((account) => ({ account })), versions },
    modules: { method: "GET", path: "/v1/accounts/{account}/modules?limit=25&ledger_version={version}", choices: t.moduleAccounts.map((m) => ({ account: m.address })), versions },
    raw_item: {
      method: "POST",
      path: "/v1/tables/{handle}/raw_item?ledger_version={version}",
      body: '{"key":"{key}"}',
      headers: { "content-type": "application/json", accept: "application/x-bcs" },
      choices: t.items,
      versions,
    },
  };
}

function memory(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") };
}

const spec = `${OUT}memory-loadgen.json`;
async function cpuPerRequest(url: string, pid: number, mix: object): Promise<number> {
  writeFileSync(spec, JSON.stringify({ opts: { url, connections: 10, duration: DURATION }, pid, mix, warmup: 0.5 }));
  const { stdout } = await promisify(execFile)(process.execPath, [`${ROOT}bench/loadgen.mjs`, `@${spec}`], { cwd: ROOT, maxBuffer: 1 << 20 });
  const r = JSON.parse(stdout) as { total: number; serverCpu: number; non2xx: number };
  return r.serverCpu / r.total;
}

function readTargets(versions: number): Targets {
  const db = `${OUT}scale-${versions}.db`;
  if (!existsSync(`${db}.targets.json`)) throw new Error(`${db}.targets.json is missing: run npm run bench:scale -- --versions ${versions} first`);
  return (JSON.parse(readFileSync(`${db}.targets.json`, "utf8")) as { targets: Targets }).targets;
}

async function storeReads(): Promise<void> {
  const calls = 3_000;
  const random = prng(7);
  for (const versions of VERSIONS) {
    const t = readTargets(versions);
    const senders = t.senders.map((s) => Buffer.from(s.slice(2), "hex"));
    const stores = MMAPS.map((mb) => ({ mb, store: new SqliteStore(`${OUT}scale-${versions}.db`, { readonly: true, mmapSizeMiB: mb, memoLagMs: 1 }), us: [] as number[] }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of stores) {
        const c0 = process.cpuUsage();
        for (let i = 0; i < calls; i++) {
          const end = BigInt(t.oldest + Math.floor(random() * (t.latest - t.oldest)));
          await s.store.readSummaries({ sender: senders[Math.floor(random() * senders.length)]!, end, limit: 25 });
        }
        const c = process.cpuUsage(c0);
        s.us.push((c.user + c.system) / calls);
      }
    }
    console.log(`${versions} versions, readSummaries CPU µs per call (median of ${ROUNDS} rounds; each round):`);
    for (const s of stores) {
      console.log(`  --sqlite-mmap-mb ${s.mb}: ${median(s.us).toFixed(0)} (${s.us.map((x) => x.toFixed(0)).join(", ")})`);
      await s.store.close();
    }
  }
}

if (process.argv.includes("--store")) {
  await storeReads();
  process.exit(0);
}

const lines: string[] = [];
for (const versions of VERSIONS) {
  const db = `${OUT}scale-${versions}.db`;
  const rows = mixes(readTargets(versions));
  const got = new Map<number, { rss: number[]; anon: number[]; file: number[]; cpu: Record<string, number[]> }>();
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < MMAPS.length; k++) {
      const mb = MMAPS[(k + round) % MMAPS.length]!;
      const { url, child } = await startServer([`${ROOT}dist/cli.js`, "serve", "--db", db, "--no-prune", "--quiet", "--port", "0", "--sqlite-mmap-mb", String(mb)]);
      const g = got.get(mb) ?? { rss: [], anon: [], file: [], cpu: { summaries: [], modules: [], raw_item: [] } };
      got.set(mb, g);
      for (const [name, mix] of Object.entries(rows)) g.cpu[name]!.push(await cpuPerRequest(url, child.pid!, mix));
      const m = memory(child.pid!);
      g.rss.push(m.rss);
      g.anon.push(m.anon);
      g.file.push(m.file);
      child.kill();
      await new Promise((resolve) => child.once("exit", resolve));
    }
    console.error(`${versions} versions: round ${round + 1} of ${ROUNDS} done`);
  }
  lines.push(`**${versions.toLocaleString("en")} versions** (file ${(statSync(db).size / 1e9).toFixed(2)} GB)`, "");
  lines.push("| --sqlite-mmap-mb | RSS MB (each round) | of it anonymous | of it file pages | summaries CPU µs/req | modules | raw_item |", "|---|---|---|---|---|---|---|");
  for (const mb of MMAPS) {
    const g = got.get(mb)!;
    const f = (xs: number[]) => median(xs).toFixed(0);
    lines.push(`| ${mb} | ${f(g.rss)} (${g.rss.map((x) => x.toFixed(0)).join(", ")}) | ${f(g.anon)} | ${f(g.file)} | ${f(g.cpu.summaries!)} | ${f(g.cpu.modules!)} | ${f(g.cpu.raw_item!)} |`);
  }
  lines.push("");
}
console.log(`Command: \`node --import tsx bench/memory.bench.ts ${process.argv.slice(2).join(" ")}\` (${new Date().toISOString().slice(0, 16)} UTC)\n\n${lines.join("\n")}`);
