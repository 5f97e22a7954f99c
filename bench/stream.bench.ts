/**
 * GET /v1/transactions/stream under load (issue 49): a `serve --devnet --block-interval 100` child
 * (SQLite under bench/out/) and stream clients in processes of their own, two by default
 * (bench/streamClients.mjs).
 *
 *   npm run build && node --import tsx bench/stream.bench.ts [--mix sse:50,ndjson:50,sender:500,function:200,event:200]
 *     [--seconds 15] [--poll-seconds 10] [--replay-streams 50] [--replay-versions 10000] [--idle 10000]
 *     [--clients 2] [--client-cores 1] [--rows-versions 1000000] [--rows-only REGEX] [--rows-rounds 3] [--rows-duration 3] [--rows-restart] [--stream-buffer-kb N] [--stream-heartbeat-ms N] [--skip live,memory,rows] [--cpu-prof DIR]
 *
 * 1. Live: the mix of streams open (unfiltered SSE and NDJSON; filtered by a devnet sender, by
 *    0x1::aptos_account::transfer, by the NewBlockEvent type). Latency of every delivered event as
 *    arrival − its `timestamp` (the devnet stamps a block with the wall clock before writing it, so
 *    this includes the block's commit); in a second window a tight poller of GET /v1 marks when each
 *    version became visible to a client of the API, and each version's last delivery to any stream,
 *    and every delivery, are measured from that (the issue's "from commit to delivery"). Server CPU (/proc) over the first window ÷ events delivered. Then
 *    `--replay-streams` streams open at start_version = head − `--replay-versions` while the live ones
 *    run: versions/s replayed, and the live latency meanwhile.
 * 2. Memory: the server's RSS (/proc VmRSS, median of samples over 10 s) with no stream open, then
 *    with `--idle` streams filtered by a random sender (nothing matches; they get heartbeats only).
 * 3. Rows: two servers over copies of the bench:scale ledger (`--rows-versions`), each with the devnet
 *    writing on top, one with `--idle` idle streams open: bench:scale's rows on both in the same
 *    rounds, alternating which goes first: server CPU a request and req/s. With `--rows-restart` every
 *    round starts two fresh servers over fresh copies, and the streams open on the first or the
 *    second in turn, so that neither a server's nor a copy's own speed lands on one side.
 *
 * Servers are pinned to core 0, clients (`--client-cores`) and the load generator to core 1 (with two or more cores).
 * Prints markdown for bench/RESULTS.md.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { promisify } from "node:util";
import { devnetAccount } from "../src/ingest/devnet/chain.js";
import { OUT, ROOT, argOption, median, startServer } from "./common.js";
import { buildScaleLedger } from "./scaleLedger.js";
import { type Mix, readTargets, rowsOf } from "./scaleRows.js";

const argv = process.argv.slice(2);
const opt = argOption(argv);
const MIX = opt("mix", "sse:50,ndjson:50,sender:500,function:200,event:200")
  .split(",")
  .map((s) => s.split(":") as [string, string])
  .map(([kind, n]) => ({ kind, count: Number(n) }));
const SECONDS = Number(opt("seconds", "15"));
const POLL_SECONDS = Number(opt("poll-seconds", "10"));
const REPLAY_STREAMS = Number(opt("replay-streams", "50"));
const REPLAY_VERSIONS = Number(opt("replay-versions", "10000"));
const IDLE = Number(opt("idle", "10000"));
const ROWS_VERSIONS = Number(opt("rows-versions", "1000000"));
const ROWS_ONLY = new RegExp(opt("rows-only", "summaries limit=25, random sender, random end_version|by_version|raw_item, random key|modules limit=25, random account"));
const ROWS_ROUNDS = Number(opt("rows-rounds", "3"));
const ROWS_DURATION = Number(opt("rows-duration", "3"));
/** `--rows-restart`: fresh copies and servers every round, the idle streams on each of the two in turn. */
const ROWS_RESTART = argv.includes("--rows-restart");
const BUFFER_KB = argv.includes("--stream-buffer-kb") ? opt("stream-buffer-kb", "256") : null;
const HEARTBEAT_MS = argv.includes("--stream-heartbeat-ms") ? opt("stream-heartbeat-ms", "15000") : null;
const SKIP = new Set(opt("skip", "").split(","));
/** `--cpu-prof DIR`: the devnet server of parts 1 and 2 writes a V8 CPU profile into DIR when it exits, the rows' servers into DIR/rows-with and DIR/rows-without. */
const CPU_PROF = argv.includes("--cpu-prof") ? opt("cpu-prof", `${OUT}stream-prof`) : null;
const PINNED = availableParallelism() >= 2;
/** `--clients N` stream-client processes, on the cores of `--client-cores` (a taskset list; default core 1). */
const CLIENTS = Number(opt("clients", "2"));
const CLIENT_CORES = opt("client-cores", "1");

const SENDER = devnetAccount(1);
const PATHS: Record<string, { path: string; accept: string }> = {
  sse: { path: "/v1/transactions/stream", accept: "text/event-stream" },
  ndjson: { path: "/v1/transactions/stream", accept: "application/x-ndjson" },
  sender: { path: `/v1/transactions/stream?sender=${SENDER}`, accept: "text/event-stream" },
  function: { path: "/v1/transactions/stream?function=0x1::aptos_account::transfer", accept: "text/event-stream" },
  event: { path: "/v1/transactions/stream?event_type=0x1::block::NewBlockEvent", accept: "application/x-ndjson" },
};
const LIVE_KINDS = new Set(MIX.map((m) => m.kind));
for (const k of LIVE_KINDS) if (!PATHS[k]) throw new Error(`--mix: unknown kind ${k} (one of ${Object.keys(PATHS).join(", ")})`);

const serverFlags = ["--port", "0", "--quiet", "--no-prune", "--max-connections", "0", "--max-streams", "20000", "--max-streams-per-client", "20000", ...(BUFFER_KB ? ["--stream-buffer-kb", BUFFER_KB] : []), ...(HEARTBEAT_MS ? ["--stream-heartbeat-ms", HEARTBEAT_MS] : [])];
const serveDevnet = (db: string) => [`${ROOT}dist/cli.js`, "serve", "--devnet", "--block-interval", "100", "--db", db, ...serverFlags];

// ---------------------------------------------------------------------------------------------
// The server and the client processes
// ---------------------------------------------------------------------------------------------

/** user + system CPU time of a process so far, µs (Linux /proc, 100 Hz ticks). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ledgerVersion(base: string): Promise<number> {
  return Number(((await (await fetch(`${base}/v1`)).json()) as { ledger_version: string }).ledger_version);
}

/** A counter of the server's /metrics, summed over its labels. */
async function metric(base: string, name: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, "gmu"))) out.set(m[1] ?? "", Number(m[2]));
  return out;
}

interface KindStats {
  open: number;
  events: number;
  bytes: number;
  heartbeats: number;
  ends: Record<string, number>;
  reconnects: number;
  statuses: Record<string, number>;
  hist: Array<[number, number]>;
  late: number;
}
interface ReplayStat {
  opened: number;
  until: number;
  from: number;
  caughtAt: number;
}
interface ClientStats {
  kinds: Record<string, KindStats>;
  arrivals: Array<[number, [number, number, number]]>;
  /** Each delivery's version and arrival (µs), in a window reset with `each`. */
  each: { versions: number[]; times: number[] };
  visible: Array<[number, number]>;
  polls: number;
  replays: ReplayStat[];
  cpuUs: number;
}

class Clients {
  private constructor(private readonly procs: ChildProcess[]) {}

  static async start(n: number): Promise<Clients> {
    const file = `${ROOT}bench/streamClients.mjs`;
    const procs = Array.from({ length: n }, () =>
      spawn(PINNED ? "taskset" : process.execPath, PINNED ? ["-c", CLIENT_CORES, process.execPath, file] : [file], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit", "ipc"] }),
    );
    const c = new Clients(procs);
    await Promise.all(procs.map((p) => c.next(p, "ready")));
    return c;
  }

  get pids(): number[] {
    return this.procs.map((p) => p.pid!);
  }

  private next<T>(p: ChildProcess, reply: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const onMessage = (m: { reply: string }) => {
        if (m.reply !== reply) return;
        p.off("message", onMessage);
        p.off("exit", onExit);
        resolve(m as T);
      };
      const onExit = (code: number) => reject(new Error(`a stream client exited (${code})`));
      p.on("message", onMessage);
      p.once("exit", onExit);
    });
  }

  private ask<T>(p: ChildProcess, msg: { cmd: string } & Record<string, unknown>): Promise<T> {
    const r = this.next<T>(p, msg.cmd);
    p.send(msg);
    return r;
  }

  /** Opens `count` streams of `kind`, spread over the processes; the statuses of the answers. */
  async open(base: string, kind: string, count: number, path: string, accept: string, extra: Record<string, unknown> = {}): Promise<Record<string, number>> {
    const per = this.procs.map((_, i) => Math.floor(count / this.procs.length) + (i < count % this.procs.length ? 1 : 0));
    const got = await Promise.all(
      this.procs.map((p, i) => this.ask<{ statuses: Record<string, number> }>(p, { cmd: "open", base, specs: per[i]! > 0 ? [{ kind, path, accept, count: per[i], ...extra }] : [] })),
    );
    const statuses: Record<string, number> = {};
    for (const g of got) for (const [s, n] of Object.entries(g.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
    return statuses;
  }

  /** A new window; `each`: the clients keep every delivery's version and arrival in it. */
  async reset(each = false): Promise<void> {
    await Promise.all(this.procs.map((p) => this.ask(p, { cmd: "reset", each })));
  }

  async close(kind: string): Promise<void> {
    await Promise.all(this.procs.map((p) => this.ask(p, { cmd: "close", kind })));
  }

  /** The poller runs in the first process only, on one connection (the bench gives it a process of its own). */
  async poll(base: string, on: boolean): Promise<void> {
    await this.ask(this.procs[0]!, { cmd: "poll", base, on });
  }

  async stats(): Promise<ClientStats[]> {
    return Promise.all(this.procs.map((p) => this.ask<ClientStats>(p, { cmd: "stats" })));
  }

  stop(): void {
    for (const p of this.procs) p.kill();
  }
}

// ---------------------------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------------------------

/** The kinds' figures summed over the processes. */
function merged(all: ClientStats[], keep: (kind: string) => boolean): { events: number; bytes: number; heartbeats: number; ends: Record<string, number>; reconnects: number; hist: Map<number, number> } {
  const out = { events: 0, bytes: 0, heartbeats: 0, ends: {} as Record<string, number>, reconnects: 0, hist: new Map<number, number>() };
  for (const s of all) {
    for (const [kind, k] of Object.entries(s.kinds)) {
      if (!keep(kind)) continue;
      out.events += k.events;
      out.bytes += k.bytes;
      out.heartbeats += k.heartbeats;
      out.reconnects += k.reconnects;
      for (const [r, n] of Object.entries(k.ends)) out.ends[r] = (out.ends[r] ?? 0) + n;
      for (const [b, n] of k.hist) out.hist.set(b, (out.hist.get(b) ?? 0) + n);
    }
  }
  return out;
}

/** The q-quantile of a histogram of 0.1 ms buckets, in ms. */
function histQuantile(hist: Map<number, number>, q: number): number {
  const entries = [...hist].sort((a, b) => a[0] - b[0]);
  const total = entries.reduce((s, [, n]) => s + n, 0);
  let seen = 0;
  for (const [b, n] of entries) {
    seen += n;
    if (seen >= q * total) return b / 10;
  }
  return NaN;
}

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/** Per version over every process: first and last arrival (µs) and deliveries. */
function arrivalsOf(all: ClientStats[]): Map<number, [number, number, number]> {
  const out = new Map<number, [number, number, number]>();
  for (const s of all) {
    for (const [v, [first, last, n]] of s.arrivals) {
      const a = out.get(v);
      if (!a) out.set(v, [first, last, n]);
      else {
        a[0] = Math.min(a[0], first);
        a[1] = Math.max(a[1], last);
        a[2] += n;
      }
    }
  }
  return out;
}

const ms = (x: number) => (!Number.isFinite(x) ? "–" : x < 10 ? x.toFixed(1) : x.toFixed(0));
const ends = (e: Record<string, number>) =>
  Object.keys(e).length === 0
    ? "none"
    : Object.entries(e)
        .map(([r, n]) => `${r} ${n}`)
        .join(", ");

// ---------------------------------------------------------------------------------------------
// 1. Live streams, and a burst of replays
// ---------------------------------------------------------------------------------------------

const out: string[] = [];
const load0 = loadavg();

async function live(base: string, pid: number, clients: Clients, poller: Clients): Promise<void> {
  // The ledger first grows past what the replays will ask for (about 500 versions a second).
  while ((await ledgerVersion(base)) < REPLAY_VERSIONS + 1000) await sleep(1000);
  const opened: string[] = [];
  for (const m of MIX) {
    const p = PATHS[m.kind]!;
    opened.push(`${m.kind} ${m.count}: ${JSON.stringify(await clients.open(base, m.kind, m.count, p.path, p.accept))}`);
  }
  console.error(`opened: ${opened.join("; ")}`);
  await sleep(3000);
  const isLive = (k: string) => LIVE_KINDS.has(k);

  // window 1: latency from the block's timestamp, CPU a delivered event
  await clients.reset();
  const sent0 = (await metric(base, "ledger_node_stream_events_sent_total")).get("") ?? 0;
  const v0 = await ledgerVersion(base);
  const cpu0 = cpuMicros(pid);
  const clientCpu0 = clients.pids.map(cpuMicros);
  const t0 = performance.now();
  await sleep(SECONDS * 1000);
  const cpu1 = cpuMicros(pid);
  const clientCpu1 = clients.pids.map(cpuMicros);
  const elapsed = (performance.now() - t0) / 1000;
  const v1 = await ledgerVersion(base);
  const sent1 = (await metric(base, "ledger_node_stream_events_sent_total")).get("") ?? 0;
  const w1 = await clients.stats();
  const all = merged(w1, isLive);
  const arrivals = arrivalsOf(w1);
  const serverCpu = cpu1 - cpu0;
  const clientCpu = clientCpu1.reduce((s, c, i) => s + c - clientCpu0[i]!, 0);
  const byKind = MIX.map((m) => {
    const k = merged(w1, (x) => x === m.kind);
    return `| ${m.kind} | ${m.count} | ${Math.round(k.events / elapsed).toLocaleString("en")} | ${(k.bytes / elapsed / 1e6).toFixed(1)} | ${ms(histQuantile(k.hist, 0.5))} | ${ms(histQuantile(k.hist, 0.99))} | ${ms(histQuantile(k.hist, 0.999))} | ${ends(k.ends)} |`;
  });
  const spreads = [...arrivals.values()].map(([f, l]) => (l - f) / 1000);

  // window 2: the same, with a poller marking when each version became visible through GET /v1
  await clients.reset(true);
  await poller.reset();
  await poller.poll(base, true);
  await sleep(POLL_SECONDS * 1000);
  await poller.poll(base, false);
  const w2 = await clients.stats();
  const polled = (await poller.stats())[0]!;
  const visible = new Map(polled.visible);
  const arrivals2 = arrivalsOf(w2);
  const lastAfterVisible: number[] = [];
  const firstAfterVisible: number[] = [];
  for (const [v, [f, l]] of arrivals2) {
    const at = visible.get(v);
    if (at === undefined) continue;
    firstAfterVisible.push((f - at) / 1000);
    lastAfterVisible.push((l - at) / 1000);
  }
  // Every delivery from its version's visibility: the issue's "from commit to delivery".
  const eachAfterVisible: number[] = [];
  for (const c of w2) {
    c.each.versions.forEach((v, i) => {
      const at = visible.get(v);
      if (at !== undefined) eachAfterVisible.push((c.each.times[i]! - at) / 1000);
    });
  }
  const all2 = merged(w2, isLive);
  const polls = polled.polls;

  // the replay burst, while the live streams run
  await clients.reset();
  const head = await ledgerVersion(base);
  const from = head - REPLAY_VERSIONS;
  const rcpu0 = cpuMicros(pid);
  const rt0 = performance.now();
  const rStatuses = await clients.open(base, "replay", REPLAY_STREAMS, `/v1/transactions/stream?start_version=${from}`, "text/event-stream", { replayUntil: head, replayFrom: from });
  let replays: ReplayStat[] = [];
  for (;;) {
    await sleep(250);
    replays = (await clients.stats()).flatMap((s) => s.replays);
    if (replays.every((r) => r.caughtAt > 0) || performance.now() - rt0 > 60_000) break;
  }
  const rElapsed = (performance.now() - rt0) / 1000;
  const rcpu = cpuMicros(pid) - rcpu0;
  const w3 = await clients.stats();
  const all3 = merged(w3, isLive);
  const rep = merged(w3, (k) => k === "replay");
  await clients.close("replay");
  const caught = replays.filter((r) => r.caughtAt > 0);
  const perStream = caught.map((r) => (r.until - r.from) / ((r.caughtAt - r.opened) / 1e6));
  const firstOpen = Math.min(...replays.map((r) => r.opened));
  const lastCaught = Math.max(...caught.map((r) => r.caughtAt));
  const aggregate = (caught.length * REPLAY_VERSIONS) / ((lastCaught - firstOpen) / 1e6);

  const streamsTotal = MIX.reduce((s, m) => s + m.count, 0);
  out.push(`### Live: ${streamsTotal.toLocaleString("en")} streams on a devnet committing a block every 100 ms

Streams opened (statuses): ${opened.join("; ")}. The devnet committed ${(v1 - v0).toLocaleString("en")} versions in the ${elapsed.toFixed(1)} s window (${Math.round((v1 - v0) / elapsed)} a second: blocks of 3 to 10 versions, and 5 blocks of 302 in every 30).

Window 1 (${elapsed.toFixed(1)} s), latency = arrival at the client − the transaction's \`timestamp\` (the block's wall-clock time, taken before the block is written: it includes the commit):

| streams | open | events/s | MB/s | p50 ms | p99 ms | p99.9 ms | ended by the server (each reopened at once after its next_version) |
|---|---|---|---|---|---|---|---|
${byKind.join("\n")}
| **all** | ${streamsTotal} | ${Math.round(all.events / elapsed).toLocaleString("en")} | ${(all.bytes / elapsed / 1e6).toFixed(1)} | **${ms(histQuantile(all.hist, 0.5))}** | **${ms(histQuantile(all.hist, 0.99))}** | ${ms(histQuantile(all.hist, 0.999))} | ${ends(all.ends)} |

- Server CPU: ${(serverCpu / 1e6).toFixed(2)} s over the window (${((serverCpu / 1e6 / elapsed) * 100).toFixed(0)}% of a core, the devnet's writing included) ÷ ${all.events.toLocaleString("en")} events delivered = **${(serverCpu / all.events).toFixed(2)} µs a delivered event** (the server counted ${(sent1 - sent0).toLocaleString("en")} sent). The ${CLIENTS} client processes: ${(clientCpu / 1e6).toFixed(2)} s (${(clientCpu / all.events).toFixed(2)} µs an event).
- Per version, over every stream that got it: the spread from its first to its last delivery p50 ${ms(quantile(spreads, 0.5))} ms, p99 ${ms(quantile(spreads, 0.99))} ms (${arrivals.size.toLocaleString("en")} versions).

Window 2 (${POLL_SECONDS} s), a poller of GET /v1 on one keep-alive connection, in a process of its own (${polls.toLocaleString("en")} polls, ${(polls / POLL_SECONDS).toFixed(0)} a second) marks when each version first became visible to an API client; per version (${firstAfterVisible.length.toLocaleString("en")}): its first delivery on a stream − visible p50 ${ms(quantile(firstAfterVisible, 0.5))} / p99 ${ms(quantile(firstAfterVisible, 0.99))} ms, its **last delivery − visible p50 ${ms(quantile(lastAfterVisible, 0.5))} / p99 ${ms(quantile(lastAfterVisible, 0.99))} ms**; every delivery (${eachAfterVisible.length.toLocaleString("en")}) − its version's visible: **p50 ${ms(quantile(eachAfterVisible, 0.5))} / p99 ${ms(quantile(eachAfterVisible, 0.99))} ms**. Latency from the timestamp in that window: p50 ${ms(histQuantile(all2.hist, 0.5))}, p99 ${ms(histQuantile(all2.hist, 0.99))} ms; ended ${ends(all2.ends)}.

${REPLAY_STREAMS === 0 ? "Replay burst: none (`--replay-streams 0`)." : `Replay burst: ${REPLAY_STREAMS} SSE streams at start_version=${from} (${REPLAY_VERSIONS.toLocaleString("en")} versions behind the head) opened at once (${JSON.stringify(rStatuses)}) while the live streams ran; ${caught.length} of ${replays.length} reached the head of their opening within ${rElapsed.toFixed(1)} s. Each replayed p50 ${Math.round(median(perStream)).toLocaleString("en")} versions/s (min ${Math.round(Math.min(...perStream)).toLocaleString("en")}); all together **${Math.round(aggregate).toLocaleString("en")} versions/s** (${(rep.bytes / 1e6).toFixed(0)} MB; ended ${ends(rep.ends)}). Server CPU ${((rcpu / 1e6 / rElapsed) * 100).toFixed(0)}% of a core meanwhile. The live streams meanwhile: p50 ${ms(histQuantile(all3.hist, 0.5))} ms, **p99 ${ms(histQuantile(all3.hist, 0.99))} ms** (window 1: ${ms(histQuantile(all.hist, 0.99))}), ended ${ends(all3.ends)}.`}
`);
  console.error(out.at(-1));
  for (const m of MIX) await clients.close(m.kind);
}

// ---------------------------------------------------------------------------------------------
// 2. Memory of idle streams
// ---------------------------------------------------------------------------------------------

/** Median of RSS samples every 500 ms over `seconds`. */
async function settledRss(pid: number, seconds: number): Promise<{ median: number; min: number; max: number }> {
  const xs: number[] = [];
  for (let i = 0; i < seconds * 2; i++) {
    xs.push(rssKb(pid));
    await sleep(500);
  }
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
}

const IDLE_PATH = "/v1/transactions/stream?sender=0x{random}";

/** Opens the idle streams, each with its own random sender. */
async function openIdle(base: string, clients: Clients): Promise<Record<string, number>> {
  return clients.open(base, "idle", IDLE, IDLE_PATH, "text/event-stream");
}

async function memory(base: string, pid: number, clients: Clients): Promise<void> {
  await sleep(5000);
  const before = await settledRss(pid, 10);
  const t0 = performance.now();
  const statuses = await openIdle(base, clients);
  const openS = (performance.now() - t0) / 1000;
  const open = (await metric(base, "ledger_node_streams_open")).get("") ?? NaN;
  await sleep(5000);
  const withIdle = await settledRss(pid, 10);
  const cpu0 = cpuMicros(pid);
  await sleep(5000);
  const idleCpu = (cpuMicros(pid) - cpu0) / 5e6;
  await clients.close("idle");
  await sleep(5000);
  const after = await settledRss(pid, 10);
  const per = (withIdle.median - before.median) / IDLE;
  out.push(`### Memory: ${IDLE.toLocaleString("en")} idle filtered streams (\`sender=\` a random address each)

Opened in ${openS.toFixed(1)} s (${JSON.stringify(statuses)}; the server's ledger_node_streams_open: ${open}). Server RSS, median of 20 samples over 10 s (min–max):

| | RSS KB |
|---|---|
| no stream open | ${before.median.toLocaleString("en")} (${before.min.toLocaleString("en")}–${before.max.toLocaleString("en")}) |
| ${IDLE.toLocaleString("en")} idle streams | ${withIdle.median.toLocaleString("en")} (${withIdle.min.toLocaleString("en")}–${withIdle.max.toLocaleString("en")}) |
| after closing them | ${after.median.toLocaleString("en")} (${after.min.toLocaleString("en")}–${after.max.toLocaleString("en")}) |

**(with − without) ÷ ${IDLE.toLocaleString("en")} = ${per.toFixed(1)} KB a stream** (target ≤ 32). The devnet kept writing throughout (the file and its map grow under both). With them open and nothing to send them, the server used ${(idleCpu * 100).toFixed(0)}% of a core (the devnet's blocks, each transaction offered to every stream).
`);
  console.error(out.at(-1));
}

// ---------------------------------------------------------------------------------------------
// 3. The scale rows beside idle streams
// ---------------------------------------------------------------------------------------------

const specFile = `${OUT}stream-loadgen.json`;

/** What one run of a row measured: req/s, p99 ms, server CPU µs a request, non-2xx answers. */
type RowRun = { rps: number; p99: number; cpu: number; non2xx: number };

/** One autocannon run of a mix (bench/loadgen.mjs) on core 1, with the server's CPU a request. */
async function loadRow(base: string, mix: Mix, pid: number): Promise<RowRun> {
  writeFileSync(specFile, JSON.stringify({ opts: { url: base, connections: 10, duration: ROWS_DURATION }, pid, mix, warmup: 1 }));
  const args = [`${ROOT}bench/loadgen.mjs`, `@${specFile}`];
  const { stdout } = await promisify(execFile)(PINNED ? "taskset" : process.execPath, PINNED ? ["-c", "1", process.execPath, ...args] : args, { cwd: ROOT, maxBuffer: 1 << 20 });
  const r = JSON.parse(stdout) as { rps: number; total: number; p99: number; non2xx: number; serverCpu: number };
  return { rps: r.rps, p99: r.p99, cpu: r.serverCpu / r.total, non2xx: r.non2xx };
}

/** Two fresh copies of `ledger` (any WAL of an earlier run removed), for the two servers of the rows. */
function freshCopies(ledger: string): string[] {
  const copies = ["a", "b"].map((x) => `${OUT}stream-rows-${x}.db`);
  for (const c of copies) {
    for (const f of [c, `${c}-wal`, `${c}-shm`]) rmSync(f, { force: true });
    copyFileSync(ledger, c);
  }
  return copies;
}

async function rows(clients: Clients): Promise<void> {
  const ledger = `${OUT}scale-${ROWS_VERSIONS}.db`;
  await buildScaleLedger(ledger, ROWS_VERSIONS);
  const rowList = rowsOf(readTargets(ledger), ROWS_ONLY);
  const copies = freshCopies(ledger);
  const profile = (i: number) => (CPU_PROF ? { env: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${CPU_PROF}/rows-${i === 1 ? "with" : "without"}` } } : {});
  const servers = await Promise.all(copies.map((c, i) => startServer(serveDevnet(c), { pinned: PINNED, ...profile(i) })));
  try {
    const withIdle = servers[1]!;
    const statuses = await openIdle(withIdle.url, clients);
    await sleep(3000);
    // what each server spends with no request, over the same 5 s
    const idle0 = servers.map((s) => cpuMicros(s.child.pid!));
    await sleep(5000);
    const idleCpu = servers.map((s, i) => (cpuMicros(s.child.pid!) - idle0[i]!) / 5e6);
    const results = rowList.map(() => [[], []] as RowRun[][]);
    for (let round = 0; round < ROWS_ROUNDS; round++) {
      for (const [i, row] of rowList.entries()) {
        for (let k = 0; k < 2; k++) {
          const j = (k + round + i) % 2;
          const s = servers[j]!;
          results[i]![j]!.push(await loadRow(s.url, row.mix, s.child.pid!));
        }
      }
      console.error(`rows: round ${round + 1} of ${ROWS_ROUNDS} done`);
    }
    const stillOpen = (await metric(withIdle.url, "ledger_node_streams_open")).get("") ?? NaN;
    const endedBy = [...(await metric(withIdle.url, "ledger_node_streams_ended_total"))].map(([l, n]) => `${l} ${n}`).join(", ") || "none";
    const idleClients = merged(await clients.stats(), (k) => k === "idle");
    const lines = rowList.map((row, i) => {
      const [a, b] = results[i]! as [RowRun[], RowRun[]];
      const m = (xs: typeof a, f: (x: (typeof a)[0]) => number) => median(xs.map(f));
      const bad = [...a, ...b].reduce((s, x) => s + x.non2xx, 0);
      return `| ${row.name}${bad > 0 ? ` (${bad} non-2xx)` : ""} | ${m(a, (x) => x.cpu).toFixed(0)} | ${m(b, (x) => x.cpu).toFixed(0)} | **${(m(b, (x) => x.cpu) / m(a, (x) => x.cpu)).toFixed(2)}** | ${Math.round(m(a, (x) => x.rps))} | ${Math.round(m(b, (x) => x.rps))} | ${(m(b, (x) => x.rps) / m(a, (x) => x.rps)).toFixed(2)} | ${m(a, (x) => x.p99)} / ${m(b, (x) => x.p99)} |`;
    });
    out.push(`### The scale rows beside ${IDLE.toLocaleString("en")} idle streams

Two servers, each over its own copy of the ${ROWS_VERSIONS.toLocaleString("en")}-version bench:scale ledger with the devnet committing on top (a block every 100 ms); ${IDLE.toLocaleString("en")} idle filtered streams open on the second (${JSON.stringify(statuses)}; ${stillOpen} open after the rows; the server's ledger_node_streams_ended_total: ${endedBy}; the clients saw ${ends(idleClients.ends)}, ${idleClients.heartbeats.toLocaleString("en")} heartbeats, statuses ${JSON.stringify(await clients.stats().then((all) => all.map((x) => x.kinds.idle?.statuses)))}). Each row on both in every round (${ROWS_ROUNDS} rounds of ${ROWS_DURATION} s after 1 s of warm-up, 10 connections, the order alternating); medians. With no request, over 5 s: ${(idleCpu[0]! * 100).toFixed(0)}% of a core without streams, ${(idleCpu[1]! * 100).toFixed(0)}% with them.

| row | CPU µs/req, no streams | with ${IDLE.toLocaleString("en")} idle | with ÷ without | req/s, no streams | with idle | with ÷ without | p99 ms without / with |
|---|---|---|---|---|---|---|---|
${lines.join("\n")}
`);
    console.error(out.at(-1));
    await clients.close("idle");
  } finally {
    for (const s of servers) s.child.kill();
  }
}

/** The rows as `rows` measures them, on fresh servers each round (`--rows-restart`). */
async function rowsRestarted(clients: Clients): Promise<void> {
  const ledger = `${OUT}scale-${ROWS_VERSIONS}.db`;
  await buildScaleLedger(ledger, ROWS_VERSIONS);
  const rowList = rowsOf(readTargets(ledger), ROWS_ONLY);
  // per row: the runs without and with the streams, and each round's ratio of the two
  const results = rowList.map(() => ({ without: [] as RowRun[], with: [] as RowRun[], ratios: [] as number[] }));
  const statuses: Array<Record<string, number>> = [];
  for (let round = 0; round < ROWS_ROUNDS; round++) {
    const copies = freshCopies(ledger);
    const servers = await Promise.all(copies.map((c) => startServer(serveDevnet(c), { pinned: PINNED })));
    try {
      const streamed = round % 2;
      statuses.push(await clients.open(servers[streamed]!.url, "idle", IDLE, IDLE_PATH, "text/event-stream"));
      await sleep(3000);
      for (const [i, row] of rowList.entries()) {
        const got: RowRun[] = [];
        for (let k = 0; k < 2; k++) {
          const j = (k + round + i) % 2;
          got[j] = await loadRow(servers[j]!.url, row.mix, servers[j]!.child.pid!);
        }
        const withIdle = got[streamed]!;
        const without = got[1 - streamed]!;
        results[i]!.without.push(without);
        results[i]!.with.push(withIdle);
        results[i]!.ratios.push(withIdle.cpu / without.cpu);
      }
      await clients.close("idle");
    } finally {
      for (const s of servers) s.child.kill();
      await Promise.all(servers.map((s) => (s.child.exitCode !== null ? null : new Promise((resolve) => s.child.once("exit", resolve)))));
    }
    console.error(`rows (restarted): round ${round + 1} of ${ROWS_ROUNDS} done`);
  }
  const lines = rowList.map((row, i) => {
    const r = results[i]!;
    const m = (xs: RowRun[], f: (x: RowRun) => number) => median(xs.map(f));
    const bad = [...r.without, ...r.with].reduce((n, x) => n + x.non2xx, 0);
    const ratios = [...r.ratios].sort((a, b) => a - b);
    return `| ${row.name}${bad > 0 ? ` (${bad} non-2xx)` : ""} | ${m(r.without, (x) => x.cpu).toFixed(0)} | ${m(r.with, (x) => x.cpu).toFixed(0)} | **${median(r.ratios).toFixed(2)}** | ${ratios.map((x) => x.toFixed(2)).join(", ")} | ${Math.round(m(r.without, (x) => x.rps))} / ${Math.round(m(r.with, (x) => x.rps))} |`;
  });
  out.push(`### The scale rows beside ${IDLE.toLocaleString("en")} idle streams, fresh servers each round

Each of ${ROWS_ROUNDS} rounds: two fresh servers, each over a fresh copy of the ${ROWS_VERSIONS.toLocaleString("en")}-version bench:scale ledger with the devnet committing on top; ${IDLE.toLocaleString("en")} idle filtered streams opened on the first server in even rounds and on the second in odd ones (statuses ${JSON.stringify(statuses)}); each row on both (${ROWS_DURATION} s after 1 s of warm-up, 10 connections, the order alternating). The ratio is each round's CPU a request with the streams ÷ without; the median is over the rounds.

| row | CPU µs/req, no streams (median) | with ${IDLE.toLocaleString("en")} idle (median) | **median ratio** | the rounds' ratios, sorted | req/s without / with |
|---|---|---|---|---|---|
${lines.join("\n")}
`);
  console.error(out.at(-1));
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

const started = performance.now();
const db = `${OUT}stream-devnet.db`;
for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
const clients = await Clients.start(CLIENTS);
const poller = await Clients.start(1);
const server = await startServer(serveDevnet(db), { pinned: PINNED, ...(CPU_PROF ? { env: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${CPU_PROF}` } } : {}) });
try {
  if (!SKIP.has("live")) await live(server.url, server.child.pid!, clients, poller);
  if (!SKIP.has("memory")) await memory(server.url, server.child.pid!, clients);
} finally {
  server.child.kill();
}
try {
  if (!SKIP.has("rows")) await (ROWS_RESTART ? rowsRestarted(clients) : rows(clients));
} finally {
  clients.stop();
  poller.stop();
}
console.log(`Command: \`node --import tsx bench/stream.bench.ts ${argv.join(" ")}\`
(${new Date().toISOString().slice(0, 16)} UTC, ${availableParallelism()}-core VM shared with other work, load average ${load0.map((l) => l.toFixed(1)).join(" ")} at the start and ${loadavg()
  .map((l) => l.toFixed(1))
  .join(" ")} at the end${PINNED ? `; servers pinned to core 0, the stream clients (${CLIENTS} processes) to core${CLIENT_CORES === "1" ? "" : "s"} ${CLIENT_CORES} and the load generator to core 1` : ""}; the server's flags: ${serverFlags.join(" ")}; ${((performance.now() - started) / 60000).toFixed(1)} minutes)

${out.join("\n")}`);
