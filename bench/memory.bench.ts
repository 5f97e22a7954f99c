/**
 * Memory of a serving node against the size of its SQLite memory map (issue 17 item 6):
 *
 *   node --import tsx bench/memory.bench.ts [--versions 1000000,10000000] [--mmap-mb 0,256,1024] [--rounds 3] [--duration 3]
 *                                           [--servers "--module-cache-mb 32|--module-cache-mb 96"] [--compare DIR]
 *
 * For each ledger of `npm run bench:scale` (bench/out/scale-N.db and the targets it saved beside
 * it: run bench:scale first) and each `--sqlite-mmap-mb`, a server is started anew each round
 * (settings in an order rotating by round) and sent, one after the other, random summaries pages
 * (limit 25, random sender, random end_version), random module pages (random account, random
 * ledger_version) and random raw_item reads (random key, random ledger_version). `--servers`: the
 * servers compared are these `serve` arguments instead (`|` between servers); `--compare DIR`: each
 * served by DIR's build too (`DIR/dist/cli.js`), in the same rounds. Reported: the
 * server's RSS after the three, split into anonymous memory and mapped file pages (/proc/PID/status),
 * and its CPU µs per request on each, medians of the rounds.
 *
 *   node --import tsx bench/memory.bench.ts --store [--versions 10000000] [--mmap-mb 0,256,1024] [--rounds 5]
 *
 * `--store`: no HTTP; one process opens the ledger once per setting and times 3,000 random
 * `readSummaries` (limit 25, random sender, random end version) per setting and round, alternated:
 * CPU µs per call, with less noise than a server under load.
 *
 *   node --import tsx bench/memory.bench.ts --store-modules [--versions 1000000,10000000] [--mmap-mb 256,4096] [--rounds 3]
 *
 * `--store-modules`: the same for random module pages (limit 25, random account and version, each
 * module's JSON record written by SQLite as the node reads them: `wire.readModules`), once with
 * every module's code and once with none (the list alone), and the pages of the module tables
 * past the map (SQLite's `dbstat`): where a page's cost goes, and what of it the map decides.
 * `--against DIR`: the same ledger in another layout, DIR/scale-N.db (e.g. before `ledger-node
 * compact`), read in the same rounds, alternated with bench/out/'s.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { prng } from "../src/ingest/devnet/chain.js";
import Database from "better-sqlite3";
import { SqliteStore } from "../src/storage/sqlite/SqliteStore.js";
import { SQLITE_MMAP_SIZE_MIB } from "../src/storage/sqlite/options.js";
import { OUT, ROOT, median, startServer } from "./common.js";

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1]!;
};
const VERSIONS = arg("versions", "1000000,10000000").split(",").map(Number);
const MMAPS = arg("mmap-mb", "0,256,1024").split(",").map(Number);
const ROUNDS = Number(arg("rounds", "3"));
const DURATION = Number(arg("duration", "3"));
/** The servers compared, as extra `serve` arguments: `--servers`, else one a `--mmap-mb`. */
const SETTINGS = process.argv.includes("--servers") ? arg("servers", "").split("|").map((s) => s.trim()) : MMAPS.map((mb) => `--sqlite-mmap-mb ${mb}`);
/** `--compare DIR`: each setting served by DIR's build too (`DIR/dist/cli.js`), in the same rounds. */
const COMPARE = process.argv.includes("--compare") ? arg("compare", "").replace(/\/?$/, "/") : null;
/** `--against DIR` (`--store-modules`): DIR/scale-N.db read in the same rounds too. */
const AGAINST = process.argv.includes("--against") ? arg("against", "").replace(/\/?$/, "/") : null;
const SERVERS = SETTINGS.flatMap((args) => [{ label: COMPARE ? `this build ${args}` : args, cli: `${ROOT}dist/cli.js`, args }].concat(COMPARE ? [{ label: `${COMPARE} ${args}`, cli: `${COMPARE}dist/cli.js`, args }] : []));

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

/** Each module table's pages, and how many of them lie past the first `mmapMiB` of the file. */
function modulePagesPastMap(db: string, mmapMiB: number): string {
  const d = new Database(db, { readonly: true, fileMustExist: true });
  const pageSize = d.pragma("page_size", { simple: true }) as number;
  const rows = d
    .prepare<[number], { name: string; pages: number; past: number }>(
      `SELECT name, count(*) AS pages, sum(pageno > ?) AS past FROM dbstat
       WHERE name IN ('modules', 'module_keys', 'modules_by_address_version', 'code') GROUP BY name ORDER BY pages DESC`,
    )
    .all(Math.floor((mmapMiB * 1024 * 1024) / pageSize));
  d.close();
  return rows.map((r) => `${r.name} ${r.pages.toLocaleString("en")} pages, ${((100 * r.past) / r.pages).toFixed(0)}% past ${mmapMiB} MiB`).join("; ");
}

async function storeModulePages(): Promise<void> {
  const calls = 3_000;
  const random = prng(7);
  for (const versions of VERSIONS) {
    const t = readTargets(versions);
    const files = [`${OUT}scale-${versions}.db`, ...(AGAINST ? [`${AGAINST}scale-${versions}.db`] : [])];
    const accounts = t.moduleAccounts.map((m) => Buffer.from(m.address.slice(2).padStart(64, "0"), "hex"));
    const settings = files.flatMap((db) => MMAPS.flatMap((mb) => [true, false].map((code) => ({ db, mb, code, us: [] as number[] }))));
    const key = (db: string, mb: number) => `${db} ${mb}`;
    const stores = new Map(files.flatMap((db) => MMAPS.map((mb) => [key(db, mb), new SqliteStore(db, { readonly: true, mmapSizeMiB: mb })] as const)));
    const page = (store: SqliteStore, code: boolean) => {
      const version = BigInt(t.oldest + Math.floor(random() * (t.latest - t.oldest)));
      return store.wire!.readModules(accounts[Math.floor(random() * accounts.length)]!, version, null, 25, () => code);
    };
    // each store's map and SQLite cache warmed before the first round
    for (const store of stores.values()) for (let i = 0; i < calls; i++) await page(store, true);
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of settings) {
        const store = stores.get(key(s.db, s.mb))!;
        const c0 = process.cpuUsage();
        for (let i = 0; i < calls; i++) await page(store, s.code);
        const c = process.cpuUsage(c0);
        s.us.push((c.user + c.system) / calls);
      }
    }
    console.log(`${versions} versions, readModules (limit 25, random account and version) CPU µs per call (median of ${ROUNDS} rounds; each round):`);
    for (const s of settings) console.log(`  ${s.db}, --sqlite-mmap-mb ${s.mb}, ${s.code ? "every module's record" : "the list alone"}: ${median(s.us).toFixed(0)} (${s.us.map((x) => x.toFixed(0)).join(", ")})`);
    for (const db of files) console.log(`  ${db}: ${modulePagesPastMap(db, SQLITE_MMAP_SIZE_MIB)}`);
    for (const store of stores.values()) await store.close();
  }
}

if (process.argv.includes("--store-modules")) {
  await storeModulePages();
  process.exit(0);
}

if (process.argv.includes("--store")) {
  await storeReads();
  process.exit(0);
}

const lines: string[] = [];
for (const versions of VERSIONS) {
  const db = `${OUT}scale-${versions}.db`;
  const rows = mixes(readTargets(versions));
  const got = new Map<string, { rss: number[]; anon: number[]; file: number[]; cpu: Record<string, number[]> }>();
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < SERVERS.length; k++) {
      const server = SERVERS[(k + round) % SERVERS.length]!;
      const { url, child } = await startServer([server.cli, "serve", "--db", db, "--no-prune", "--quiet", "--port", "0", ...server.args.split(" ").filter(Boolean)]);
      const g = got.get(server.label) ?? { rss: [], anon: [], file: [], cpu: { summaries: [], modules: [], raw_item: [] } };
      got.set(server.label, g);
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
  lines.push("| serve arguments | RSS MB (each round) | of it anonymous | of it file pages | summaries CPU µs/req | modules | raw_item |", "|---|---|---|---|---|---|---|");
  for (const server of SERVERS) {
    const g = got.get(server.label)!;
    const f = (xs: number[]) => median(xs).toFixed(0);
    lines.push(`| \`${server.label}\` | ${f(g.rss)} (${g.rss.map((x) => x.toFixed(0)).join(", ")}) | ${f(g.anon)} | ${f(g.file)} | ${f(g.cpu.summaries!)} | ${f(g.cpu.modules!)} | ${f(g.cpu.raw_item!)} |`);
  }
  lines.push("");
}
console.log(`Command: \`node --import tsx bench/memory.bench.ts ${process.argv.slice(2).join(" ")}\` (${new Date().toISOString().slice(0, 16)} UTC)\n\n${lines.join("\n")}`);
