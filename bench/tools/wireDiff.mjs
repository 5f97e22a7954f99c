/**
 * The same requests to two builds over the same ledger, answers compared byte for byte (status,
 * headers but `date` and `x-request-id`, body as sent): a change to the miss path must not change
 * the wire. `node bench/tools/wireDiff.mjs --db bench/out/scale-1000000.db --compare DIR [--requests 3000]`
 * (DIR: another checkout with a build, e.g. a worktree of main). The requests are the random rows of
 * bench/scale.bench.ts (from `<db>.targets.json`), JSON and BCS, plain and compressed, a few bad
 * inputs, and the modules pages of every account with modules at a few versions, followed by cursor.
 * Both servers run with the page cache off, so every answer is built on the miss path. With
 * `--decoded`, a compressed body counts as the same when it decodes to the same bytes, under the
 * same headers but `content-length` (for a change of compression settings).
 */
import { spawn } from "node:child_process";
import { request } from "node:http";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { readFileSync } from "node:fs";
import { option, serverUrl } from "./rowMixes.mjs";

const ROOT = new URL("../../", import.meta.url).pathname;
const argv = process.argv.slice(2);
const DB = option("db", `${ROOT}bench/out/scale-1000000.db`);
const COMPARE = option("compare", null);
const N = Number(option("requests", "3000"));
const DECODED = argv.includes("--decoded");
if (!COMPARE) throw new Error("--compare DIR");
const { targets } = JSON.parse(readFileSync(`${DB}.targets.json`, "utf8"));

let seed = 17;
const rand = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
};
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const version = () => String(targets.oldest + Math.floor(rand() * (targets.latest - targets.oldest + 1)));

function start(dir) {
  const child = spawn(process.execPath, [`${dir}/dist/cli.js`, "serve", "--db", DB, "--port", "0", "--quiet", "--no-prune", "--page-cache-mb", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  return serverUrl(child, dir).then(({ url }) => ({ url, child }));
}

/** Bytes of compressed bodies, by server and encoding. */
const encodedBytes = new Map();

function ask(base, r) {
  return new Promise((resolve, reject) => {
    const req = request(base + r.path, { method: r.body === undefined ? "GET" : "POST", headers: r.headers }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const headers = { ...res.headers };
        delete headers.date;
        delete headers["x-request-id"];
        let body = Buffer.concat(chunks);
        const encoding = headers["content-encoding"];
        if (encoding) encodedBytes.set(`${base} ${encoding}`, (encodedBytes.get(`${base} ${encoding}`) ?? 0) + body.length);
        if (DECODED && encoding) {
          body = encoding === "br" ? brotliDecompressSync(body) : encoding === "gzip" ? gunzipSync(body) : inflateSync(body);
          delete headers["content-length"];
        }
        resolve({ status: res.statusCode, headers: JSON.stringify(headers), body });
      });
    });
    req.on("error", reject);
    req.end(r.body);
  });
}

const ENCODINGS = [{}, { "accept-encoding": "gzip" }, { "accept-encoding": "br" }, { "accept-encoding": "gzip, deflate, br" }, { "accept-encoding": "deflate" }];
const modulesAccounts = [...targets.moduleAccounts.map((m) => m.address), "0x1", targets.history.address];
function draw() {
  const enc = pick(ENCODINGS);
  const kind = Math.floor(rand() * 10);
  const bcs = rand() < 0.25 ? { accept: "application/x-bcs" } : {};
  switch (kind) {
    case 0:
    case 1:
    case 2: {
      const limit = pick(["", "&limit=1", "&limit=3", "&limit=25", "&limit=9999"]);
      const at = rand() < 0.8 ? `&ledger_version=${version()}` : "";
      return { path: `/v1/accounts/${pick(modulesAccounts)}/modules?x=1${limit}${at}`, headers: { ...enc, ...bcs } };
    }
    case 3:
    case 4:
    case 5: {
      const limit = pick(["", "&limit=1", "&limit=25", "&limit=100"]);
      const q = pick([() => "", () => `&end_version=${version()}`, () => `&start_version=${version()}`]);
      return { path: `/v1/accounts/${pick(targets.senders)}/transaction_summaries?x=1${limit}${q()}`, headers: { ...enc, ...bcs } };
    }
    case 6:
    case 7:
    case 8: {
      const item = rand() < 0.7 ? pick(targets.items) : pick(targets.missing);
      const at = rand() < 0.7 ? `?ledger_version=${version()}` : "";
      return {
        path: `/v1/tables/${item.handle}/raw_item${at}`,
        body: JSON.stringify({ key: item.key }),
        headers: { "content-type": "application/json", accept: pick(["application/x-bcs", "application/json", "*/*"]), ...enc },
      };
    }
    default:
      return pick([
        { path: "/v1/accounts/0xZZ/modules", headers: enc },
        { path: `/v1/accounts/0x1/modules?ledger_version=${targets.latest + 5}`, headers: enc },
        { path: "/v1/accounts/0x1/modules?limit=0", headers: enc },
        { path: "/v1/accounts/0x1/modules?start=0x00", headers: enc },
        { path: `/v1/accounts/${targets.senders[0]}/transaction_summaries?limit=abc`, headers: enc },
        { path: `/v1/accounts/${targets.senders[0]}/transaction_summaries?end_version=18446744073709551616`, headers: enc },
        { path: "/v1/tables/0x1/raw_item", body: '{"key":"0xz"}', headers: { "content-type": "application/json", accept: "application/x-bcs" } },
        { path: "/v1/tables/0x1/raw_item", body: '{"key":5}', headers: { "content-type": "application/json", accept: "application/x-bcs" } },
        { path: "/v1/estimate_gas_price", headers: enc },
      ]);
  }
}

const [a, b] = await Promise.all([start(ROOT), start(COMPARE)]);
let differ = 0;
let same = 0;
const statuses = new Map();
try {
  const requests = Array.from({ length: N }, draw);
  // every account's first module page and the page after it, at a random version
  for (const account of modulesAccounts) {
    requests.push({ path: `/v1/accounts/${account}/modules?limit=3&ledger_version=${version()}`, headers: {}, follow: true });
  }
  for (const r of requests) {
    const [x, y] = await Promise.all([ask(a.url, r), ask(b.url, r)]);
    statuses.set(x.status, (statuses.get(x.status) ?? 0) + 1);
    if (x.status !== y.status || x.headers !== y.headers || !x.body.equals(y.body)) {
      differ++;
      if (differ <= 5) console.log(`DIFFER ${r.path} ${JSON.stringify(r.headers)}\n  this: ${x.status} ${x.headers} ${x.body.length} B\n  that: ${y.status} ${y.headers} ${y.body.length} B`);
    } else same++;
    const cursor = JSON.parse(x.headers)["x-node-cursor"];
    if (r.follow && cursor) requests.push({ path: `${r.path}&start=${cursor}`, headers: r.headers });
  }
} finally {
  a.child.kill();
  b.child.kill();
}
for (const e of ["br", "gzip", "deflate"]) {
  const x = encodedBytes.get(`${a.url} ${e}`) ?? 0;
  const y = encodedBytes.get(`${b.url} ${e}`) ?? 0;
  if (x + y > 0) console.log(`${e} bodies: ${x} bytes here, ${y} there (${((x / y - 1) * 100).toFixed(2)}%)`);
}
console.log(`${same} identical, ${differ} different (statuses: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(", ")})`);
process.exitCode = differ === 0 ? 0 : 1;
