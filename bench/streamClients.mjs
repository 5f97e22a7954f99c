/**
 * Transaction-stream clients in a process of their own, driven by bench/stream.bench.ts over IPC
 * (`spawn` with an "ipc" stdio; plain node for the reason bench/loadgen.mjs gives): keep-alive
 * HTTP connections to GET /v1/transactions/stream, each body parsed as it arrives (SSE records up to
 * the blank line, NDJSON up to the newline), reading of each transaction only its version and its
 * `timestamp` (the block's time, microseconds). Per kind of stream it counts events, bytes and ends,
 * and keeps a histogram of arrival − timestamp; per version, the first and last arrival over all its
 * streams. A stream ended by the server (slow_client, shutdown, pruned) is opened again at once
 * after its end's next_version, as an SSE client would after `retry:` (`reconnect`).
 *
 * Messages in: {cmd:"open", base, specs:[{kind, path, accept, count, replayUntil?, replayFrom?}]}, {cmd:"reset", each?},
 * {cmd:"stats"}, {cmd:"poll", base, on}, {cmd:"close", kind}, {cmd:"exit"}; each is answered with
 * {reply: cmd, ...}.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";

/** Histogram buckets of 0.1 ms, up to 60 s (later arrivals land in the last bucket). */
const BUCKETS = 600_001;
const now = () => (performance.timeOrigin + performance.now()) * 1000; // µs, the wall clock
// A stream is one long response: no connection reuse, and so no TCP keep-alive, which Node's agent
// would set to probe every idle socket each second (10,000 idle streams: 10,000 probes a second on
// loopback, some lost under load, ending streams with ETIMEDOUT).
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

const kinds = new Map(); // kind → stats
const kindStats = (kind) => {
  let k = kinds.get(kind);
  if (!k) {
    k = { open: 0, events: 0, bytes: 0, heartbeats: 0, ends: {}, reconnects: 0, statuses: {}, hist: new Uint32Array(BUCKETS), late: 0 };
    kinds.set(kind, k);
  }
  return k;
};
/** version → [first arrival µs, last arrival µs, deliveries] in the current window. */
let arrivals = new Map();
/**
 * Each delivery's version and arrival (µs), in the window after a `{cmd:"reset", each:true}` only
 * (the bench's window with the poller), at most `EACH_MOST` of them: what each delivery took from
 * its version's visibility.
 */
let each = null;
const EACH_MOST = 2_000_000;
/** version → the moment the poller first saw the ledger at or past it (µs). */
let visible = new Map();
const streams = new Set();
/** Replay streams: when each opened, from where, and when it first got a version ≥ `until`. */
const replays = [];

const TS = Buffer.from('"timestamp":"');
const NDJSON_VERSION = Buffer.from('{"version":"');
const SSE_SEP = Buffer.from("\n\n");

function digitsAt(buf, at) {
  let v = 0;
  for (let i = at; i < buf.length; i++) {
    const c = buf[i];
    if (c < 48 || c > 57) break;
    v = v * 10 + (c - 48);
  }
  return v;
}

function record(stream, body, at) {
  const k = stream.stats;
  const tsAt = body.lastIndexOf(TS);
  const version = stream.format === "sse" ? digitsAt(body, 4) : digitsAt(body, NDJSON_VERSION.length);
  k.events++;
  stream.last = version;
  if (tsAt >= 0) {
    const lat = (at - digitsAt(body, tsAt + TS.length)) / 100; // 0.1 ms
    const b = lat < 0 ? 0 : lat >= BUCKETS - 1 ? BUCKETS - 1 : Math.floor(lat);
    k.hist[b]++;
    if (b === BUCKETS - 1) k.late++;
  }
  const a = arrivals.get(version);
  if (a === undefined) arrivals.set(version, [at, at, 1]);
  else {
    if (at < a[0]) a[0] = at;
    if (at > a[1]) a[1] = at;
    a[2]++;
  }
  if (each !== null && each.versions.length < EACH_MOST) {
    each.versions.push(version);
    each.times.push(at);
  }
  if (stream.replay && !stream.replay.caughtAt && version >= stream.replay.until) stream.replay.caughtAt = at;
}

function ended(stream, text) {
  let end;
  try {
    end = JSON.parse(text);
  } catch {
    end = { reason: "unparsed" };
  }
  if (end.stream_end) end = end.stream_end;
  stream.stats.ends[end.reason] = (stream.stats.ends[end.reason] ?? 0) + 1;
  stream.endedWith = end;
}

/** The records of one chunk (and what was left of the one before). */
function onData(stream, chunk) {
  const at = now();
  stream.stats.bytes += chunk.length;
  const buf = stream.rest ? Buffer.concat([stream.rest, chunk]) : chunk;
  let start = 0;
  if (stream.format === "sse") {
    for (;;) {
      const end = buf.indexOf(SSE_SEP, start);
      if (end < 0) break;
      const c = buf[start];
      if (c === 105 /* i */) record(stream, buf.subarray(start, end), at);
      else if (c === 58 /* : */) stream.stats.heartbeats++;
      else if (c === 101 /* e */) {
        const d = buf.indexOf("data: ", start);
        ended(stream, buf.subarray(d + 6, end).toString());
      }
      start = end + 2;
    }
  } else {
    for (;;) {
      const end = buf.indexOf(10, start);
      if (end < 0) break;
      if (end === start) stream.stats.heartbeats++;
      else if (buf[start + 2] === 115 /* {"s */) ended(stream, buf.subarray(start, end).toString());
      else record(stream, buf.subarray(start, end), at);
      start = end + 1;
    }
  }
  stream.rest = start < buf.length ? Buffer.from(buf.subarray(start)) : null;
}

/** Opens one stream; resolves with its status once the response's head arrived. */
function openStream(base, spec, lastEventId) {
  return new Promise((resolve) => {
    const stats = kindStats(spec.kind);
    const headers = { accept: spec.accept };
    if (lastEventId !== undefined) headers["last-event-id"] = String(lastEventId);
    const stream = { spec, stats, format: spec.accept === "application/x-ndjson" ? "ndjson" : "sse", rest: null, last: -1, replay: null, req: null, endedWith: null };
    if (spec.replayUntil !== undefined && lastEventId === undefined) {
      stream.replay = { opened: now(), until: spec.replayUntil, from: spec.replayFrom, caughtAt: 0 };
      replays.push(stream.replay);
    }
    // `{random}`: 32 random bytes in hex, drawn per stream (a sender no transaction has)
    const path = spec.path.replace("{random}", () => randomBytes(32).toString("hex"));
    const req = http.get(`${base}${path}`, { agent, headers }, (res) => {
      stats.statuses[res.statusCode] = (stats.statuses[res.statusCode] ?? 0) + 1;
      if (res.statusCode !== 200) {
        res.resume();
        resolve(res.statusCode);
        return;
      }
      streams.add(stream);
      stats.open++;
      res.on("data", (c) => onData(stream, c));
      res.on("end", () => {
        if (streams.delete(stream)) stats.open--;
        const end = stream.endedWith;
        // Ended by the server: opened again after the version it names, as an SSE client does.
        if (end && end.next_version !== undefined && !stream.closing) {
          stats.reconnects++;
          void openStream(base, spec, BigInt(end.next_version) - 1n);
        }
      });
      res.on("error", () => undefined);
      resolve(200);
    });
    stream.req = req;
    req.on("error", (e) => {
      stats.statuses[e.code ?? "error"] = (stats.statuses[e.code ?? "error"] ?? 0) + 1;
      resolve(e.code ?? "error");
    });
  });
}

/** Opens `count` streams of each spec, at most 100 handshakes at a time. */
async function open(base, specs) {
  const todo = specs.flatMap((s) => Array.from({ length: s.count }, () => s));
  const statuses = {};
  let i = 0;
  const worker = async () => {
    while (i < todo.length) {
      const s = todo[i++];
      const st = await openStream(base, s);
      statuses[st] = (statuses[st] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(100, todo.length) }, worker));
  return statuses;
}

let polling = false;
let polls = 0;
/** A tight poller of GET /v1 on one keep-alive connection: when each version first became visible. */
async function poll(base) {
  const pollAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let seen = -1;
  while (polling) {
    const body = await new Promise((resolve) => {
      http
        .get(`${base}/v1`, { agent: pollAgent }, (res) => {
          let s = "";
          res.setEncoding("utf8");
          res.on("data", (d) => (s += d));
          res.on("end", () => resolve(s));
        })
        .on("error", () => resolve(""));
    });
    const at = now();
    polls++;
    const m = /"ledger_version":"(\d+)"/.exec(body);
    if (!m) continue;
    const v = Number(m[1]);
    if (seen >= 0) for (let x = seen + 1; x <= v; x++) visible.set(x, at);
    if (v > seen) seen = v;
  }
}

function stats() {
  const out = {};
  for (const [kind, k] of kinds) {
    // the histogram as sparse [bucket, count] pairs
    const hist = [];
    for (let b = 0; b < BUCKETS; b++) if (k.hist[b] > 0) hist.push([b, k.hist[b]]);
    out[kind] = { ...k, hist };
  }
  return {
    kinds: out,
    arrivals: [...arrivals],
    each: each ?? { versions: [], times: [] },
    visible: [...visible],
    polls,
    replays: replays.map((r) => ({ ...r })),
    cpuUs: (() => {
      const u = process.cpuUsage();
      return u.user + u.system;
    })(),
  };
}

function reset(timeEach) {
  each = timeEach ? { versions: [], times: [] } : null;
  for (const k of kinds.values()) {
    k.events = 0;
    k.bytes = 0;
    k.heartbeats = 0;
    k.ends = {};
    k.reconnects = 0;
    k.hist.fill(0);
    k.late = 0;
  }
  arrivals = new Map();
  visible = new Map();
  polls = 0;
}

process.on("message", async (m) => {
  if (m.cmd === "open") process.send({ reply: "open", statuses: await open(m.base, m.specs) });
  else if (m.cmd === "reset") {
    reset(m.each === true);
    process.send({ reply: "reset" });
  } else if (m.cmd === "stats") process.send({ reply: "stats", ...stats() });
  else if (m.cmd === "poll") {
    polling = m.on;
    if (m.on) void poll(m.base);
    process.send({ reply: "poll" });
  } else if (m.cmd === "close") {
    for (const s of [...streams]) {
      if (s.spec.kind !== m.kind) continue;
      s.closing = true;
      s.req.destroy();
      if (streams.delete(s)) s.stats.open--;
    }
    if (m.kind === "replay") replays.length = 0;
    process.send({ reply: "close" });
  } else if (m.cmd === "exit") process.exit(0);
});
process.send({ reply: "ready" });
