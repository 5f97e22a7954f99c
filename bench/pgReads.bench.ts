/**
 * The PostgreSQL store's cache-missing reads of bench/scale.bench.ts's random rows, without HTTP:
 * what one read costs this process and the cluster, and its round trips, on the scale ledger
 * bench/scalePg.ts built (`npm run bench:scale:pg` builds it first).
 *
 *   node --import tsx bench/pgReads.bench.ts [--versions 1000000] [--calls 2000] [--rounds 3] [--concurrency 10] [--only REGEX] [--url-params "a=b&c=d"]
 *
 * Each read is called `--calls` times with random targets, `--concurrency` at a time, through one
 * store opened as `serve` opens it (memo lag 10 ms); this process's CPU (process.cpuUsage), the
 * cluster's processes' CPU (/proc) and pg_stat_statements' calls are read around the calls.
 * `--url-params` adds parameters to the store's URL (e.g. `options=-c plan_cache_mode=…`), to
 * compare a server setting. Medians of the rounds.
 */
import { availableParallelism } from "node:os";
import { openStore } from "../src/storage/open.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { argOption, median } from "./common.js";
import { ScalePg } from "./scalePg.js";

const argv = process.argv.slice(2);
const opt = argOption(argv);
const VERSIONS = Number(opt("versions", "1000000"));
const CALLS = Number(opt("calls", "2000"));
const ROUNDS = Number(opt("rounds", "3"));
const CONCURRENCY = Number(opt("concurrency", "10"));
const ONLY = argv.includes("--only") ? new RegExp(opt("only", "")) : null;
const URL_PARAMS = argv.includes("--url-params") ? opt("url-params", "") : "";

const pg = await ScalePg.start(VERSIONS, availableParallelism() >= 2);
try {
  const db = pg.db;
  const t = await pg.targetsOf(db);
  const url = URL_PARAMS ? `${pg.url(db)}?${URL_PARAMS}` : pg.url(db);
  const store = await openStore(url, { memoLagMs: 10 });
  const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
  const version = () => BigInt(t.oldest + Math.floor(Math.random() * (t.latest - t.oldest + 1)));
  const all = () => true;
  // A caller holding every record it has been sent (the API's records ring at 1M): it wants a
  // module's code the first time the module is listed only.
  const sent = new Set<string>();
  const unsent = (hash: string) => {
    if (sent.has(hash)) return false;
    sent.add(hash);
    return true;
  };
  const reads: Array<[string, (s: Storage) => Promise<unknown>]> = [
    ["raw_item, random key, random version", (s) => { const i = pick(t.items); return s.readTableItem(i.handle, i.key, version()); }],
    ["summaries 25, random sender, random end", (s) => s.wire!.readSummaries({ sender: pick(t.senders), end: version(), limit: 26 })],
    ["summaries 100, random sender, random end", (s) => s.wire!.readSummaries({ sender: pick(t.senders), end: version(), limit: 101 })],
    ["modules 25, random account, random version", (s) => s.wire!.readModules(pick(t.moduleAccounts).address, version(), null, 26, all)],
    ["modules 25, random account and version, records held", (s) => s.wire!.readModules(pick(t.moduleAccounts).address, version(), null, 26, unsent)],
    ["modules of the history account, random version", (s) => s.wire!.readModules(t.history.address, version(), null, 26, all)],
  ];
  const rows: string[] = [];
  for (const [name, read] of reads) {
    if (ONLY && !ONLY.test(name)) continue;
    const node: number[] = [];
    const cluster: number[] = [];
    const trips: number[] = [];
    const system: number[] = [];
    const exec: number[] = [];
    for (let round = 0; round < ROUNDS + 1; round++) {
      await pg.settle(db);
      const before = await pg.statements(db);
      const c0 = pg.cpuMicros();
      const u0 = process.cpuUsage();
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next++ < CALLS) await read(store);
        }),
      );
      const u = process.cpuUsage(u0);
      await pg.settle(db);
      const c1 = pg.cpuMicros();
      const delta = [...ScalePg.delta(before, await pg.statements(db)).values()];
      const calls = delta.reduce((a, s) => a + s.calls, 0);
      if (round === 0) continue; // warm-up: connections, prepared statements, JIT
      node.push((u.user + u.system) / CALLS);
      system.push(u.system / CALLS);
      exec.push((delta.reduce((a, s) => a + s.ms, 0) * 1000) / CALLS);
      cluster.push((c1 - c0) / CALLS);
      trips.push(calls / CALLS);
    }
    const [n, c] = [median(node), median(cluster)];
    rows.push(`| ${name} | ${median(trips).toFixed(2)} | ${n.toFixed(0)} | ${c.toFixed(0)} | ${(n + c).toFixed(0)} | ${median(system).toFixed(0)} | ${median(exec).toFixed(1)} |`);
    console.error(rows.at(-1));
  }
  await store.close();
  console.log(`
\`${["node --import tsx bench/pgReads.bench.ts", ...argv].join(" ")}\` (${new Date().toISOString().slice(0, 16)} UTC; ${CALLS} calls a round, ${CONCURRENCY} at a time, median of ${ROUNDS} rounds)

| read | round trips / call | node CPU µs/call | cluster CPU µs/call | node + cluster | of node CPU, system µs/call | statement execution µs/call |
|---|---|---|---|---|---|---|
${rows.join("\n")}
`);
} finally {
  await pg.stop();
}
