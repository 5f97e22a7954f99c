/**
 * One autocannon run in a process of its own: `node bench/loadgen.mjs '{"opts":{...},"pid":123}'`
 * prints one JSON line: the run's figures, the CPU this process spent, and (with `pid`) the CPU the
 * serving process spent over exactly the run.
 *
 * Plain JavaScript under plain node on purpose, not TypeScript through tsx like the rest of bench/:
 * autocannon shares the two cores with the server, so what it spends per response is taken from the
 * server. In two runs of api.bench.ts on 2026-11-23, the constant server sending the modules page's
 * bytes cost autocannon 28 µs per response (26 KB brotli) and 64 µs (150 KB plain) inside the bench
 * process under tsx, with latin1 bodies; 16 and 42 µs here. Under tsx, dropping the bodies made it
 * worse, not better (88 against 51 µs per 150 KB response, side by side; its CPU profile shows 17% in
 * garbage collection against 5% under plain node).
 *
 * Response bodies are not kept: autocannon would build a string of each for options that read it
 * (`expectBody`, `verifyBody`, a request's `onResponse`), which nothing here uses; the run refuses
 * them. BENCH_KEEP_BODIES=1 keeps autocannon's own code (UTF-8 strings: 400 µs per 32 KB brotli page).
 */
import autocannon from "autocannon";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const arg = process.argv[2];
const { opts, pid, mix, mixes, warmup, untilSignal } = JSON.parse(arg.startsWith("@") ? readFileSync(arg.slice(1), "utf8") : arg);
// Set before anything else runs: SIGUSR2's default action ends the process.
let stopAsked = false;
let stopRun = null;
if (untilSignal) {
  process.once("SIGUSR2", () => {
    stopAsked = true;
    stopRun?.();
  });
}
const keepBodies = process.env.BENCH_KEEP_BODIES === "1";
if (!keepBodies) {
  const readsBodies = (o) => "expectBody" in o || "verifyBody" in o || "onResponse" in o;
  if (readsBodies(opts) || (opts.requests ?? []).some(readsBodies)) {
    throw new Error("this run drops response bodies: set BENCH_KEEP_BODIES=1 to check them");
  }
  createRequire(import.meta.url)("autocannon/lib/pipelinedRequestsQueue.js").prototype.addBody = () => {};
}

/** user + system CPU time of a process so far, in microseconds (Linux /proc, 100 Hz ticks). */
const cpuMicros = (p) => {
  const fields = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
};

const fill = (template, pick, version) => template.replace(/\{(\w+)\}/gu, (_, name) => (name === "version" ? version : pick[name]));
/** autocannon's request of a mix: a random choice and version drawn for each one sent. */
const requestOf = (m) => ({
  method: m.method,
  headers: m.headers,
  setupRequest: (req) => {
    const pick = m.choices[Math.floor(Math.random() * m.choices.length)];
    const version = m.versions ? String(m.versions[0] + Math.floor(Math.random() * (m.versions[1] - m.versions[0] + 1))) : "";
    return { ...req, path: fill(m.path, pick, version), body: m.body === undefined ? undefined : fill(m.body, pick, version) };
  },
});
if (mix) opts.requests = [requestOf(mix)];
if (mixes) opts.requests = mixes.map(requestOf);

// `warmup`: seconds of the same run first, not measured (saves a process start per measured run)
if (warmup > 0) await autocannon({ connections: 10, ...opts, duration: warmup });

const before = pid ? cpuMicros(pid) : null;
const self = process.cpuUsage();
const run = autocannon({ connections: 10, duration: 5, ...opts, ...(untilSignal ? { duration: 24 * 3600 } : {}) });
stopRun = () => run.stop();
if (stopAsked) stopRun();
const r = await run;
const own = process.cpuUsage(self);
const after = pid ? cpuMicros(pid) : null;
console.log(
  JSON.stringify({
    rps: r.requests.average,
    total: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count])),
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx + r.errors + r.timeouts,
    bytesPerSec: r.throughput.average,
    serverCpu: before !== null && after !== null ? after - before : null,
    ownCpu: own.user + own.system,
  }),
);
