/**
 * A ledger-node follows a ledger-node (issue 48 item 6), the built CLI on real SQLite files: a
 * devnet node writes a block every 100 ms; one replica follows it from genesis, one from its head
 * (which starts 120 blocks behind it)
 * (fetching the state it lacks from the devnet node), and a third follows the first replica. Each
 * answers the history and state it holds byte for byte as the node it follows, at the same
 * versions: transaction pages, blocks with their transactions, by hash, account state and summaries;
 * and each streams what it follows as the source answers it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_APP_ADDRESS, DEVNET_TABLE_HANDLE, devnetAccount } from "../src/ingest/devnet/chain.js";
import { sqliteBackend } from "./helpers/backends.js";
import { requireBuiltCli } from "./helpers/cli.js";
import { type ServeProcess, startServe } from "./helpers/serveProcess.js";
import { openStream, range, versionsOf } from "./helpers/stream.js";

interface Info {
  ledger_version: string;
  oldest_ledger_version: string;
  block_height: string;
}
const info = async (base: string): Promise<Info> => (await fetch(`${base}/info`)).json() as Promise<Info>;

/** Waits until `base` holds `version`. */
async function reached(base: string, version: bigint, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const i = await info(base).catch(() => null);
    if (i?.ledger_version && BigInt(i.ledger_version) >= version) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${base} did not reach version ${version} within ${timeoutMs} ms`);
}

/** Status and body bytes of a GET (a POST when `body` is given). */
async function ask(base: string, path: string, body?: unknown): Promise<{ path: string; status: number; body: string }> {
  const init: RequestInit = body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json", accept: "application/x-bcs" }, body: JSON.stringify(body) };
  const res = await fetch(base + path, init);
  return { path, status: res.status, body: Buffer.from(await res.arrayBuffer()).toString("hex") };
}

const backend = sqliteBackend();
describe("a ledger-node following a ledger-node", () => {
  let source: ServeProcess;
  let fromGenesis: ServeProcess;
  let fromHead: ServeProcess;
  let ofReplica: ServeProcess;
  let at: bigint;
  beforeAll(async () => {
    requireBuiltCli();
    source = await startServe(["--devnet", "--block-interval", "100", "--db", await backend.newDb(), "--no-prune", "--quiet"]);
    // Past the 120 blocks a replica from the head starts behind the head (the gas estimate's history).
    while (Number((await info(source.base)).block_height) < 160) await new Promise((r) => setTimeout(r, 200));
    const follow = (upstream: string, from: string, db: string) =>
      startServe(["--follow", upstream, "--from", from, "--db", db, "--no-prune", "--quiet", "--poll", "50", "--max-rps", "2000"]);
    [fromGenesis, fromHead] = await Promise.all([follow(source.base, "genesis", await backend.newDb()), follow(source.base, "latest", await backend.newDb())]);
    ofReplica = await follow(fromGenesis.base, "genesis", await backend.newDb());
    at = BigInt((await info(source.base)).ledger_version) + 20n;
    await Promise.all([source, fromGenesis, fromHead, ofReplica].map((n) => reached(n.base, at)));
  }, 180_000);
  afterAll(async () => {
    await Promise.all([ofReplica, fromHead, fromGenesis, source].map((n) => n?.stop()));
    await backend.cleanup();
  });

  /** The reads compared, at about 25 versions from `from` to `at` (every read names versions at or below `at`). */
  function reads(from: bigint): Array<[string, unknown?]> {
    const out: Array<[string, unknown?]> = [];
    const step = (at - from) / 25n + 1n;
    for (let v = from; v <= at; v += step) {
      out.push([`/transactions?start=${v}&limit=${v % 2n === 0n ? 100 : 7}`], [`/transactions/by_version/${v}`], [`/blocks/by_version/${v}?with_transactions=true`]);
      out.push([`/accounts/${devnetAccount(Number(v % 6n))}/resources?ledger_version=${v}`], [`/accounts/${DEVNET_APP_ADDRESS}/modules?ledger_version=${v}`]);
      out.push([`/tables/${DEVNET_TABLE_HANDLE}/raw_item?ledger_version=${v}`, { key: "0x0500000000000000" }]);
      // A key never written: from the head, the replica asks the source, whose 404 names its ledger
      // version in X-NODE-LEDGER-VERSION (no --aptos-headers), and answers 404 as it does.
      out.push([`/tables/${DEVNET_TABLE_HANDLE}/raw_item?ledger_version=${v}`, { key: "0xffffffffffffffff" }]);
    }
    return out;
  }

  async function sameAs(replica: ServeProcess, upstream: ServeProcess, from: bigint): Promise<number> {
    let n = 0;
    for (const [path, body] of reads(from)) {
      const [ours, theirs] = await Promise.all([ask(replica.base, path, body), ask(upstream.base, path, body)]);
      expect(ours).toEqual(theirs);
      n += ours.status === 200 ? 1 : 0;
    }
    return n;
  }

  it("from genesis, answers as the devnet node, and so does a replica of it", async () => {
    expect(await sameAs(fromGenesis, source, 0n)).toBeGreaterThan(50);
    expect(await sameAs(ofReplica, fromGenesis, 0n)).toBeGreaterThan(50);
    // by hash, the hashes of the source's own pages
    const page = JSON.parse(await (await fetch(`${source.base}/transactions?start=${at - 9n}&limit=10`)).text()) as Array<{ hash: string }>;
    for (const t of page) {
      const [a, b] = await Promise.all([ask(ofReplica.base, `/transactions/by_hash/${t.hash}`), ask(source.base, `/transactions/by_hash/${t.hash}`)]);
      expect(a.status).toBe(200);
      expect(a).toEqual(b);
    }
    // their summaries of an account, the whole history
    const summaries = `/accounts/${devnetAccount(2)}/transaction_summaries?end_version=${at}&limit=100`;
    expect(await ask(ofReplica.base, summaries)).toEqual(await ask(source.base, summaries));
  });

  it("from the head, answers what it holds as the devnet node, and the history before it 410", async () => {
    const oldest = BigInt((await info(fromHead.base)).oldest_ledger_version);
    expect(oldest).toBeGreaterThan(0n);
    expect(await sameAs(fromHead, source, oldest)).toBeGreaterThan(5);
    const before = await fetch(`${fromHead.base}/transactions/by_version/${oldest - 1n}`);
    expect(before.status).toBe(410);
  });

  it("streams what it follows, replayed and live, each transaction as the source answers it; the history before a replica's first version 410", async () => {
    const head = BigInt((await info(ofReplica.base)).ledger_version);
    const streams = await Promise.all([
      openStream(`${fromGenesis.base}/transactions/stream?start_version=${head - 50n}`),
      openStream(`${ofReplica.base}/transactions/stream`, { accept: "application/x-ndjson" }),
      openStream(`${fromHead.base}/transactions/stream?start_version=${BigInt((await info(fromHead.base)).oldest_ledger_version)}`),
    ]);
    // the source keeps writing; every replica's stream goes on past what it held when it opened
    for (const s of streams) await s.until((c) => c.transactions.length > 0 && BigInt(c.transactions.at(-1)!.id!) >= head + 30n, "thirty versions past the head", 60_000);
    for (const s of streams) {
      s.close();
      const got = versionsOf(s);
      expect(got).toEqual(range(got[0]!, got.at(-1)!));
      for (const e of s.transactions.filter((_, i) => i % 9 === 0)) expect(e.data, `version ${e.id}`).toBe(await (await fetch(`${source.base}/transactions/by_version/${e.id}`)).text());
    }
    expect(versionsOf(streams[0]!)[0]).toBe(Number(head - 50n));
    const oldest = BigInt((await info(fromHead.base)).oldest_ledger_version);
    const before = await fetch(`${fromHead.base}/transactions/stream?start_version=${oldest - 1n}`);
    expect(before.status).toBe(410);
    expect(((await before.json()) as { error_code: string }).error_code).toBe("version_pruned");
  });
});
