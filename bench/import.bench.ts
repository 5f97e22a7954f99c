/**
 * Throughput of `ledger-node import` (issue 35, target 5), as an operator runs it: an NDJSON file
 * of the real genesis and devnet blocks (src/ingest/devnet/chain.ts), written once to
 * bench/out/import-N.ndjson, imported by the built CLI into a fresh SQLite file (or a fresh
 * PostgreSQL database with `--pg`). A row: versions per second of wall clock from the process
 * start to its exit, and CPU µs a version of the whole process (all its threads, from
 * `process.cpuUsage()` at exit: steadier than wall time on a shared machine).
 *
 *   npm run build && node --import tsx bench/import.bench.ts [--versions 300000] [--rounds 3]
 *     [--compare DIR] [--pg] [--cpu-prof DIR]
 *
 * `--compare DIR` imports with another checkout's build too, alternating which goes first in a
 * round; `--cpu-prof DIR` writes V8 profiles of every thread of one import of this build there.
 */
import { spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { OUT, ROOT, devnetNdjson, median } from "./common.js";

const arg = (name: string): string | null => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? null : (process.argv[i + 1] ?? null);
};
const VERSIONS = Number(arg("versions") ?? 300_000);
const ROUNDS = Number(arg("rounds") ?? 3);
const COMPARE = arg("compare");
const PROFILE_DIR = arg("cpu-prof");
const PG = process.argv.includes("--pg");

mkdirSync(OUT, { recursive: true });
const file = `${OUT}import-${VERSIONS}.ndjson`;
/** Preloaded into each import: prints the process's CPU time (every thread) at exit. */
const CPU_PRELOAD = join(ROOT, "bench/cpuAtExit.mjs");

async function generate(): Promise<void> {
  await devnetNdjson(file, VERSIONS);
}

interface Run {
  versions: number;
  secs: number;
  cpuUs: number;
}

/** A fresh target: a SQLite file, or a new database on a throwaway PostgreSQL (`postgresBackend`). */
const pgBackend = PG ? (await import("../test/helpers/postgres.js")).postgresBackend() : null;
let dbCount = 0;
async function freshDb(): Promise<{ db: string; drop: () => void }> {
  if (pgBackend) return { db: await pgBackend.newDb(), drop: () => undefined };
  const db = join(OUT, `import-bench-${process.pid}-${dbCount++}.db`);
  const drop = () => {
    for (const s of ["", "-wal", "-shm"]) rmSync(db + s, { force: true });
  };
  drop();
  return { db, drop };
}

async function importOnce(root: string, profile: string | null): Promise<Run> {
  const { db, drop } = await freshDb();
  const flags = ["--import", CPU_PRELOAD];
  if (profile) flags.push("--cpu-prof", "--cpu-prof-dir", profile);
  const t0 = performance.now();
  const p = spawn(process.execPath, [...flags, join(root, "dist/cli.js"), "import", "--db", db, file], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  p.stdout.on("data", (d) => (stdout += d));
  p.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((r) => p.once("close", r));
  const secs = (performance.now() - t0) / 1000;
  drop();
  if (code !== 0) throw new Error(`import failed (${root}): ${stderr}`);
  const imported = /imported (\d+) transactions/.exec(stdout);
  const cpu = /cpu-us (\d+)/.exec(stderr);
  if (!imported || !cpu) throw new Error(`import did not report its count or CPU time: ${stdout} ${stderr}`);
  return { versions: Number(imported[1]), secs, cpuUs: Number(cpu[1]) };
}

await generate();
const builds: Array<[string, string]> = [["this build", ROOT]];
if (COMPARE) builds.push([COMPARE, COMPARE]);
console.log(`input: ${file}; ${PG ? "PostgreSQL" : "SQLite"}; ${ROUNDS} rounds`);
const runs = new Map<string, Run[]>(builds.map(([name]) => [name, []]));
try {
  if (PROFILE_DIR) {
    mkdirSync(PROFILE_DIR, { recursive: true });
    const r = await importOnce(ROOT, PROFILE_DIR);
    console.log(`profiled: ${r.versions} versions in ${r.secs.toFixed(1)} s; profiles in ${PROFILE_DIR}`);
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    for (const [name, root] of order) {
      const r = await importOnce(root, null);
      runs.get(name)!.push(r);
      console.log(`round ${round + 1} ${name}: ${Math.round(r.versions / r.secs)} versions/s, ${(r.cpuUs / r.versions).toFixed(1)} CPU µs a version`);
    }
  }
} finally {
  await pgBackend?.cleanup();
}
const rows = builds.map(([name]) => {
  const rs = runs.get(name)!;
  const rate = median(rs.map((r) => r.versions / r.secs));
  const cpu = median(rs.map((r) => r.cpuUs / r.versions));
  return { name, rate, cpu, each: rs.map((r) => Math.round(r.versions / r.secs)).join(", ") };
});
console.log(`\n| build | versions/s (median of ${ROUNDS}) | each round | CPU µs a version (median) |\n|---|---|---|---|`);
for (const r of rows) console.log(`| ${r.name} | ${Math.round(r.rate)} | ${r.each} | ${r.cpu.toFixed(1)} |`);
if (rows.length === 2) console.log(`\nratio this/compared: versions/s ${(rows[0]!.rate / rows[1]!.rate).toFixed(2)}×, CPU a version ${(rows[0]!.cpu / rows[1]!.cpu).toFixed(2)}×`);
