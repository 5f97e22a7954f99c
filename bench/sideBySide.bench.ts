/**
 * Point reads of two builds side by side on one ledger: /v1/info, /v1/estimate_gas_price and
 * raw_item, alternating the two servers run by run (which one goes first alternates too), server
 * CPU per request split into user and system time from /proc. For changes whose effect is a few
 * microseconds per request, which a whole bench run's noise hides.
 *
 *   npm run build && node --import tsx bench/sideBySide.bench.ts --before DIR --db bench/out/ledger-1000000.db [--runs 8]
 *
 * `DIR` is another checkout with its own `dist/` (e.g. a worktree of the previous commit); the
 * ledger is one `bench/api.bench.ts` imported.
 */
import { readFileSync } from "node:fs";
import { DEVNET_TABLE_HANDLE } from "../src/ingest/devnet/chain.js";
import { ROOT, load, median, startServer } from "./common.js";

const arg = (name: string, def?: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  if (i === -1 && def === undefined) throw new Error(`--${name} is required`);
  return i === -1 ? def! : process.argv[i + 1]!;
};
const BEFORE = arg("before");
const DB = arg("db");
const RUNS = Number(arg("runs", "8"));

/** utime and stime of a process, in clock ticks (100 per second on Linux). */
function ticks(pid: number): [number, number] {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return [Number(fields[11]), Number(fields[12])];
}

const serve = (dir: string) => startServer([`${dir}/dist/cli.js`, "serve", "--db", DB, "--port", "0", "--quiet", "--prune-window", "1000000000"]);
const servers = { before: await serve(BEFORE), after: await serve(ROOT) };

/** Keys the devnet wrote and kept at the newest version (see bench/api.bench.ts). */
const keys = [1, 2, 3, 4, 5, 6, 9, 10].map((k) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(k));
  return { method: "POST" as const, headers: { "content-type": "application/json", accept: "application/x-bcs" }, body: JSON.stringify({ key: `0x${b.toString("hex")}` }) };
});
const rows: Record<string, (url: string) => Parameters<typeof load>[0]> = {
  "GET /v1/info": (url) => ({ url: `${url}/v1/info` }),
  "GET /v1/estimate_gas_price": (url) => ({ url: `${url}/v1/estimate_gas_price` }),
  "POST /v1/tables/{h}/raw_item (BCS)": (url) => ({ url: `${url}/v1/tables/${DEVNET_TABLE_HANDLE}/raw_item`, requests: keys }),
};

const lines: string[] = [];
for (const [name, opts] of Object.entries(rows)) {
  const seen = { before: { cpu: [] as number[], user: [] as number[], sys: [] as number[], rps: [] as number[] }, after: { cpu: [] as number[], user: [] as number[], sys: [] as number[], rps: [] as number[] } };
  for (const which of ["before", "after"] as const) await load({ ...opts(servers[which].url), duration: 1 });
  for (let run = 0; run < RUNS; run++) {
    for (const which of run % 2 === 0 ? (["before", "after"] as const) : (["after", "before"] as const)) {
      const pid = servers[which].child.pid!;
      const t0 = ticks(pid);
      const l = await load({ ...opts(servers[which].url), duration: 2 }, pid);
      const t1 = ticks(pid);
      const requests = l.rps * 2;
      seen[which].cpu.push(l.cpuUsPerReq ?? NaN);
      seen[which].user.push(((t1[0] - t0[0]) * 1e4) / requests);
      seen[which].sys.push(((t1[1] - t0[1]) * 1e4) / requests);
      seen[which].rps.push(l.rps);
    }
  }
  const m = (xs: number[]) => median(xs).toFixed(1);
  const line =
    `| ${name} | ${m(seen.before.cpu)} | ${m(seen.after.cpu)} | ${m(seen.before.user)} / ${m(seen.before.sys)} | ${m(seen.after.user)} / ${m(seen.after.sys)} ` +
    `| ${Math.round(median(seen.before.rps))} | ${Math.round(median(seen.after.rps))} | ${((100 * median(seen.after.rps)) / median(seen.before.rps)).toFixed(0)}% |`;
  console.error(line);
  lines.push(line);
}
for (const s of Object.values(servers)) s.child.kill();
console.log(`| operation | before CPU µs/req | after | before user / system | after user / system | before req/s | after req/s | after/before |
|---|---|---|---|---|---|---|---|
${lines.join("\n")}`);
