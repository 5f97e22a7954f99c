/**
 * What a node costs with nothing to do but hold open transaction streams: its CPU time a second
 * (user and system, every process of it) over a window with no request, against the same with no
 * stream. The server runs on core 0, the stream clients (bench/streamClients.mjs, each stream
 * filtered by a random sender, so nothing matches) on core 1.
 *
 *   node bench/tools/idleCpu.mjs [--dist DIR] [--streams 10000] [--seconds 20] [--rounds 2]
 *        [--db FILE] [--devnet] [--workers N] [--serve "ARGS"]
 *
 * Without `--devnet` it serves `--db` (default: the 1M bench:scale ledger) read-only with `--no-prune`;
 * with it, a devnet on a new file (a block a second), whose writer tells the streams of each commit.
 * `--workers N` serves from N processes (streams dealt round-robin by node:cluster). Each round
 * measures with the streams and then without. `--dist` serves another checkout's build.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { option, streamCapFlags } from "./rowMixes.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;
const DIST = option("dist", ROOT);
const STREAMS = Number(option("streams", "10000"));
const SECONDS = Number(option("seconds", "20"));
const ROUNDS = Number(option("rounds", "2"));
const DB = option("db", `${ROOT}bench/out/scale-1000000.db`);
const DEVNET = process.argv.includes("--devnet");
const WORKERS = Number(option("workers", "1"));
const SERVE = option("serve", "").split(" ").filter(Boolean);

/** Starts the server on core 0; resolves with its process and port once every worker listens. */
async function start(streams) {
  const dir = mkdtempSync(join(tmpdir(), "idle-cpu-"));
  const db = DEVNET ? join(dir, "devnet.db") : DB;
  const args = [`${DIST}/dist/cli.js`, "serve", "--db", db, "--port", "0", ...(DEVNET ? ["--devnet"] : ["--no-prune"])];
  args.push(...streamCapFlags(DIST, streams + 100), ...(WORKERS > 1 ? ["--workers", String(WORKERS)] : []), ...SERVE);
  const child = spawn("taskset", ["-c", "0", process.execPath, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const read = (d) => {
    // Only the start is needed: the listening lines.
    if (out.length < 1 << 20) out += d;
  };
  child.stdout.on("data", read);
  child.stderr.on("data", read);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ports = [...out.matchAll(/listening at http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => m[1]);
    if (ports.length >= WORKERS) return { child, url: `http://127.0.0.1:${ports[0]}`, dir };
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The pids of the server: taskset execs node, whose children are the workers. */
function pidsOf(child) {
  let kids = [];
  try {
    kids = execFileSync("pgrep", ["-P", String(child.pid)], { encoding: "utf8" }).trim().split("\n").filter(Boolean).map(Number);
  } catch {
    // no children: one process
  }
  return [child.pid, ...kids];
}

/** User and system CPU ms of `pids` so far (clock ticks of /proc/PID/stat, 10 ms each). */
function cpuMs(pids) {
  const t = { user: 0, sys: 0 };
  for (const pid of pids) {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    t.user += Number(f[11]) * 10;
    t.sys += Number(f[12]) * 10;
  }
  return t;
}

let clients = null;
function ask(message) {
  return new Promise((resolve) => {
    clients.once("message", resolve);
    clients.send(message);
  });
}

async function measure(streams) {
  const { child, url, dir } = await start(streams);
  try {
    if (streams > 0) {
      const { statuses } = await ask({ cmd: "open", base: url, specs: [{ kind: "idle", path: "/v1/transactions/stream?sender=0x{random}", accept: "text/event-stream", count: streams }] });
      if (statuses["200"] !== streams) throw new Error(`opening ${streams} streams answered ${JSON.stringify(statuses)}`);
    }
    // Settle: the opening's garbage collected, the devnet past its genesis.
    await new Promise((r) => setTimeout(r, 5_000));
    const pids = pidsOf(child);
    const before = cpuMs(pids);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const after = cpuMs(pids);
    const s = (performance.now() - t0) / 1000;
    if (streams > 0) await ask({ cmd: "close", kind: "idle" });
    return { user: (after.user - before.user) / s, sys: (after.sys - before.sys) / s };
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
    if (DEVNET) rmSync(dir, { recursive: true, force: true });
  }
}

clients = spawn("taskset", ["-c", "1", process.execPath, `${ROOT}bench/streamClients.mjs`], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
await new Promise((resolve) => clients.once("message", resolve));
const what = `${DIST}${DEVNET ? ", devnet" : ""}${WORKERS > 1 ? `, --workers ${WORKERS}` : ""}${SERVE.length ? `, ${SERVE.join(" ")}` : ""}`;
for (let round = 1; round <= ROUNDS; round++) {
  for (const n of [STREAMS, 0]) {
    const r = await measure(n);
    console.log(`round ${round}: ${what}, ${n} idle streams: ${(r.user + r.sys).toFixed(1)} ms of CPU a second (user ${r.user.toFixed(1)}, system ${r.sys.toFixed(1)})`);
  }
}
clients.send({ cmd: "exit" });
