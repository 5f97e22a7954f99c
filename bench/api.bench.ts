/**
 * Throughput and p99 of every operation on a ledger of at least 1,000,000 transactions, side by
 * side with a bare Fastify route that returns a constant, in the same run (rounds alternate, the
 * median of each is reported). Also the import rate of that ledger.
 *
 *   npm run build && node --import tsx bench/api.bench.ts [--txns 1000000] [--duration 5] [--rounds 3] [--compare DIR]
 *
 * `--only REGEX` keeps the rows whose operation matches (a section is written only without it).
 * `--compare DIR`: also serves the same ledger from another checkout's build (`DIR/dist/cli.js`,
 * e.g. a worktree of the previous commit) and runs every operation on it in the same rounds, as
 * a baseline: a change's effect measured side by side.
 *
 * The ledger is the real genesis (test/fixtures: 57 framework modules at 0x1)
 * followed by devnet blocks. Loopback only; every run is bounded in time.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { DEVNET_TABLE_HANDLE, devnetAccount } from "../src/ingest/devnet/chain.js";
import { rawRequest, untilEncodingShrinks, type RawResponse } from "../test/helpers/rawHttp.js";
import { OUT, ROOT, devnetNdjson, load, median, startServer, writeSection, type Load } from "./common.js";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const TXNS = arg("txns", 1_000_000);
const DURATION = arg("duration", 5);
const ROUNDS = arg("rounds", 3);
/** `--only REGEX`: the rows whose operation matches (a quick side-by-side of a few rows). */
const ONLY = process.argv.includes("--only") ? new RegExp(process.argv[process.argv.indexOf("--only") + 1]!) : null;
const COMPARE = process.argv.includes("--compare") ? process.argv[process.argv.indexOf("--compare") + 1]! : null;

mkdirSync(OUT, { recursive: true });
const file = `${OUT}ledger-${TXNS}.ndjson`;
const db = `${OUT}ledger-${TXNS}.db`;

async function generate(): Promise<void> {
  await devnetNdjson(file, TXNS);
}

function importLedger(): string {
  if (existsSync(db) && process.argv.includes("--reuse-db")) return "(--reuse-db: the ledger imported by an earlier run)";
  rmSync(db, { force: true });
  rmSync(db + "-wal", { force: true });
  rmSync(db + "-shm", { force: true });
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ["dist/cli.js", "import", "--db", db, file], { cwd: ROOT, encoding: "utf8" });
  const secs = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(r.stderr);
  return `${r.stdout.trim()} (wall clock ${secs.toFixed(1)} s including process start)`;
}

/** Headers Node or Fastify write on every response by themselves: the replaying server writes its own. */
const OWN_HEADERS = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"]);

/** A response as the node sent it (fetch would decode a compressed body); anything but 200 is an error. */
async function rawResponse(url: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
  const r = await rawRequest(url, headers, body);
  if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
  return r;
}

/** Saves a response for the constant server's /replay route: DIR/NAME (body) and DIR/NAME.headers. */
function saveResponse(dir: string, name: string, r: RawResponse): void {
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([k]) => !OWN_HEADERS.has(k)));
  writeFileSync(`${dir}/${name}`, r.body);
  writeFileSync(`${dir}/${name}.headers`, JSON.stringify(headers));
}

/**
 * Saves a page as the node sends it, plain and brotli. A page sent often is re-encoded at brotli's
 * best quality in the background (src/api/http/compression.ts): ask until it comes smaller (at most
 * 5 s), so the bytes are the ones the measured runs receive.
 */
async function savePage(dir: string, name: string, url: string): Promise<void> {
  saveResponse(dir, `${name}.json`, await rawResponse(url));
  const { last: br } = await untilEncodingShrinks(url, "br", 5_000);
  saveResponse(dir, `${name}.br`, br);
}

const u64le = (v: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(v));
  return "0x" + b.toString("hex");
};

async function main(): Promise<void> {
  console.error(`generating ${file} ...`);
  await generate();
  console.error("importing ...");
  const imported = importLedger();
  console.error(imported);

  const serveArgs = ["dist/cli.js", "serve", "--db", db, "--port", "0", "--quiet", "--prune-window", "1000000000"];
  const saved = `${OUT}responses`;
  const modules = `/accounts/0x1/modules?limit=25`;
  const summaries = `/accounts/${devnetAccount(1)}/transaction_summaries?limit=100`;
  // Every round runs on newly started processes, so a run is a median over starts: a start that
  // happens to be slower (V8's inline caches settle differently from one start to another) is one
  // draw among several, not the whole result.
  const startAll = async () => {
    const api = await startServer(serveArgs);
    // The same node with its page cache off: what a page costs when it is not served again.
    const cold = await startServer([...serveArgs, "--page-cache-mb", "0"]);
    const base = await startServer(["--import", "tsx", "bench/constServer.ts", "0", saved]);
    const previous = COMPARE ? await startServer([`${COMPARE}/dist/cli.js`, ...serveArgs.slice(1)]) : null;
    return {
      api,
      cold,
      base,
      previous,
      kill: () => {
        for (const s of [api, cold, base, previous]) s?.child.kill();
      },
    };
  };
  // The devnet writes and deletes keys 0..63: read the ones that exist at the latest version.
  const liveKeys: number[] = [];
  {
    const first = await startServer(serveArgs);
    for (let k = 0; k < 64; k++) {
      const res = await fetch(`${first.url}/v1/tables/${DEVNET_TABLE_HANDLE}/raw_item`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/x-bcs" },
        body: JSON.stringify({ key: u64le(k) }),
      });
      await res.arrayBuffer();
      if (res.status === 200) liveKeys.push(k);
    }
    rmSync(saved, { recursive: true, force: true });
    mkdirSync(saved, { recursive: true });
    saveResponse(saved, "info", await rawResponse(`${first.url}/v1/info`));
    saveResponse(saved, "gas", await rawResponse(`${first.url}/v1/estimate_gas_price`));
    const item = `${first.url}/v1/tables/${DEVNET_TABLE_HANDLE}/raw_item`;
    saveResponse(saved, "raw_item", await rawResponse(item, { accept: "application/x-bcs" }, JSON.stringify({ key: u64le(liveKeys[0]!) })));
    await savePage(saved, "modules", `${first.url}/v1${modules}`);
    await savePage(saved, "summaries", `${first.url}/v1${summaries}`);
    first.child.kill();
  }
  const rawBody = (k: number) => JSON.stringify({ key: u64le(k) });
  const json = { "content-type": "application/json" };
  // What the official SDK sends (ts-sdk 7.3.0 through aptos-client 4.1.0 / got: seen in a probe).
  const sdkEncoding = { "accept-encoding": "gzip, deflate, br" };
  type Opts = Parameters<typeof load>[0];
  type Servers = Awaited<ReturnType<typeof startAll>>;
  type Op = {
    name: string;
    target: string;
    opts: Opts;
    pid: number;
    /** `pid`: the process serving the baseline, when not the constant server. */
    baselines: Array<{ name: string; opts: Opts; pid?: number }>;
  };
  /** The rows, for one set of running servers. */
  const opsOf = (servers: Servers): Op[] => {
    const { api, previous } = servers;
    const all = opsOn(servers);
    const rows = ONLY ? all.filter((op) => ONLY.test(op.name)) : all;
    if (!previous) return rows;
    // The same request to the other build: the first baseline of each row.
    return rows.map((op) =>
      op.pid !== api.child.pid
        ? op
        : {
            ...op,
            baselines: [
              { name: `previous build (${COMPARE})`, opts: { ...op.opts, url: op.opts.url!.toString().replace(api.url, previous.url) }, pid: previous.child.pid! },
              ...op.baselines,
            ],
          },
    );
  };
  const opsOn = ({ api, cold, base }: Servers): Op[] => {
    const B = `${api.url}/v1`;
    const GET = { name: "GET constant", opts: { url: `${base.url}/const` } };
    // The POST baseline parses the same bodies raw_item does.
    const POST = {
      name: "POST constant",
      opts: { url: `${base.url}/const`, requests: liveKeys.map((k) => ({ method: "POST" as const, headers: json, body: rawBody(k) })) },
    };
    /**
     * The constant server replaying the node's own response (its headers, its bytes): what sending
     * it costs with no work behind it. `like`: the operation's request options (headers, bodies).
     */
    const same = (file: string, like: Partial<Opts> = {}) => ({
      name: "same response, constant",
      opts: { ...like, url: `${base.url}/replay/${file}` },
    });
    /** A page operation, then the same page from the node with its page cache off, then with the SDK's encoding. */
    const pageRows = (name: string, target: string, path: string, body: string): Op[] => [
      { name, target, opts: { url: B + path }, pid: api.child.pid!, baselines: [GET, same(`${body}.json`)] },
      { name: "… same, page cache off", target: "", opts: { url: `${cold.url}/v1${path}` }, pid: cold.child.pid!, baselines: [GET] },
      {
        name: "… same, Accept-Encoding: gzip, deflate, br (SDK)",
        target: "",
        opts: { url: B + path, headers: sdkEncoding },
        pid: api.child.pid!,
        baselines: [GET, same(`${body}.br`, { headers: sdkEncoding })],
      },
    ];
    return [
      { name: "GET /v1/info", target: "70%", opts: { url: `${B}/info` }, pid: api.child.pid!, baselines: [GET, same("info")] },
      { name: "GET /v1/estimate_gas_price", target: "70%", opts: { url: `${B}/estimate_gas_price` }, pid: api.child.pid!, baselines: [GET, same("gas")] },
      {
        name: "POST /v1/tables/{h}/raw_item (BCS)",
        target: "70%",
        opts: {
          url: `${B}/tables/${DEVNET_TABLE_HANDLE}/raw_item`,
          requests: liveKeys.map((k) => ({ method: "POST" as const, headers: { ...json, accept: "application/x-bcs" }, body: rawBody(k) })),
        },
        pid: api.child.pid!,
        baselines: [POST, GET, same("raw_item", POST.opts)],
      },
      ...pageRows("GET /v1/accounts/0x1/modules?limit=25 (ABIs)", "40%", modules, "modules"),
      ...pageRows("GET /v1/accounts/{a}/transaction_summaries?limit=100", "50%", summaries, "summaries"),
    ];
  };

  // Per row: the operation's runs, and each baseline's runs, one of each per round.
  const runs: Array<{ op: Op; o: Load[]; c: Load[][] }> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const servers = await startAll();
    const ops = opsOf(servers);
    // Warm the servers (caches, JIT) before measuring.
    for (const b of new Set(ops.flatMap((op) => op.baselines))) await load({ ...b.opts, duration: 2 });
    for (const op of ops) await load({ ...op.opts, duration: 1 });
    for (const [i, op] of ops.entries()) {
      const row = runs[i] ?? { op, o: [], c: op.baselines.map(() => []) };
      runs[i] = row;
      for (const [j, b] of op.baselines.entries()) {
        const l = await load({ ...b.opts, duration: DURATION }, b.pid ?? servers.base.child.pid);
        if (l.non2xx > 0) throw new Error(`baseline ${b.name} (${b.opts.url}) answered ${l.non2xx} non-2xx`);
        row.c[j]!.push(l);
      }
      row.o.push(await load({ ...op.opts, duration: DURATION }, op.pid));
    }
    servers.kill();
    console.error(`round ${r + 1} of ${ROUNDS} done`);
  }

  const rows: string[] = [];
  const mb = (xs: Load[]) => (median(xs.map((x) => x.bytesPerSec)) / 1e6).toFixed(0);
  const cpu = (xs: Load[]) => median(xs.map((x) => x.cpuUsPerReq ?? NaN)).toFixed(0);
  const rps = (xs: Load[]) => median(xs.map((x) => x.rps));
  const loader = (xs: Load[]) => median(xs.map((x) => x.loaderUsPerReq)).toFixed(0);
  // How busy the serving process was: req/s × its CPU per request (100% = one core).
  const busy = (xs: Load[]) => `${Math.round(median(xs.map((x) => (x.rps * (x.cpuUsPerReq ?? NaN)) / 1e4)))}%`;
  for (const { op, o, c } of runs) {
    const bad = o.reduce((s, x) => s + x.non2xx, 0);
    for (const [i, b] of op.baselines.entries()) {
      const first = i === 0;
      const row =
        `| ${first ? op.name : ""} | ${first ? Math.round(rps(o)) : ""} | ${first ? median(o.map((x) => x.p99)) : ""} ` +
        `| ${b.name} | ${Math.round(rps(c[i]!))} | ${(100 * rps(o) / rps(c[i]!)).toFixed(0)}% ` +
        `| ${o.map((x, r) => `${((100 * x.rps) / c[i]![r]!.rps).toFixed(0)}%`).join(" ")} | ${first ? op.target : ""} ` +
        `| ${first ? cpu(o) : ""} | ${cpu(c[i]!)} | ${first ? busy(o) : ""} | ${first ? loader(o) : ""} | ${loader(c[i]!)} ` +
        `| ${first ? mb(o) : ""} | ${first ? bad : ""} |`;
      console.error(row);
      rows.push(row);
    }
  }

  const body = `
Command: \`npm run build && node --import tsx bench/api.bench.ts ${process.argv.slice(2).join(" ")}\`
(${new Date().toISOString().slice(0, 10)}, 2-core shared VM; autocannon 10 connections, each run in a process of its own under plain node
(bench/loadgen.mjs), not keeping response bodies; the node, the node with
\`--page-cache-mb 0\` and the constant routes each in their own process, started anew for every round; within a round each
row runs its constant routes, then the operation; medians of ${ROUNDS} rounds of ${DURATION} s). "same response, constant": the constant server replaying a response the node sent
(its ledger headers and its bytes: plain, or brotli with the SDK's Accept-Encoding), with no work behind it.

Ledger: the real genesis (57 modules at 0x1) + devnet blocks, ${TXNS.toLocaleString("en")}+ transactions, SQLite.
Import: ${imported}

| operation | req/s | p99 ms | constant route | its req/s | ratio | ratio by round | target | server CPU µs/req | constant CPU µs/req | server busy | autocannon CPU µs/req | … for the constant | MB/s read | non-2xx |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join("\n")}
`;
  if (ONLY) {
    console.log(body);
    return;
  }
  writeSection(COMPARE ? "API throughput, side by side with the previous build (SQLite)" : "API throughput (SQLite)", body);
  console.log(body);
}

await main();
