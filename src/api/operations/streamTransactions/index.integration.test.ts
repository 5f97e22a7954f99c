/**
 * GET /v1/transactions/stream over real HTTP on SQLite files: replay then live with no seam, each
 * event the JSON /transactions/by_version answers, resumption after Last-Event-ID, the filters
 * against an evaluation of the imported JSON, the recorded transactions a node printed, the 400s,
 * 406 and 410 before any event, and the bounds: heartbeats, the cap, a slow client, shutdown.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApiConfig } from "../../config.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendFactories, sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr, writeResource } from "../../../../test/helpers/chain.js";
import { requireBuiltCli, runCli } from "../../../../test/helpers/cli.js";
import { recordedLedger } from "../../../../test/helpers/events.js";
import { pruneServed, serveChain, startTestNode, stopNode, type TestNode } from "../../../../test/helpers/node.js";
import { parsePrometheus } from "../../../../test/helpers/prometheus.js";
import { openStream, range, type StreamClient, versionsOf } from "../../../../test/helpers/stream.js";
import { openStore } from "../../../storage/open.js";

type Json = Record<string, unknown>;

const backend = sqliteBackend();
const ALICE = addr("a11ce");
const BOB = addr("b0b");
const CAROL = addr("ca401");
const MARKET = addr("3a7");

/** Every address a transaction's JSON names as sender, other signer, fee payer, change or event handle account, as 64 digits. */
function touched(t: Json): Set<string> {
  const out = new Set<string>();
  const add = (a: unknown) => typeof a === "string" && out.add(addr(a));
  add(t.sender);
  const sig = (t.signature ?? {}) as Json;
  for (const a of (sig.secondary_signer_addresses as unknown[] | undefined) ?? []) add(a);
  add(sig.fee_payer_address);
  for (const c of (t.changes as Json[] | undefined) ?? []) add(c.address);
  for (const e of (t.events as Json[] | undefined) ?? []) {
    const a = ((e.guid ?? {}) as Json).account_address;
    if (typeof a === "string" && !/^0x0*$/.test(a)) add(a);
  }
  return out;
}

/** Makes every seventh user transaction a failure, and gives each call of the market its events. */
function decorate(t: Json): void {
  if (t.type !== "user_transaction") return;
  const v = Number(t.version);
  if (v % 7 === 0) Object.assign(t, { success: false, vm_status: "Move abort in 0x1::coin: EINSUFFICIENT_BALANCE(0x10006): Not enough coins to complete transaction" });
  if (String((t.payload as Json).function).endsWith("::market::buy")) {
    t.events = [
      { guid: { creation_number: "0", account_address: "0x0" }, sequence_number: "0", type: `0x3a7::market::Filled<0x1::aptos_coin::AptosCoin>`, data: { amount: String(v) } },
      { guid: { creation_number: "2", account_address: BOB }, sequence_number: String(v), type: "0x1::coin::DepositEvent", data: { amount: "1" } },
    ];
  }
}

/**
 * A chain with what the filters look at: senders, entry functions, a failed transaction, events of
 * a plain and of a generic type, a change at an address that sends nothing.
 */
function filterChain(): ChainBuilder {
  const c = new ChainBuilder().genesis();
  for (let i = 0; i < 10; i++) {
    c.block([
      { sender: ALICE, seq: 2 * i, fn: i % 3 === 0 ? `${MARKET}::market::buy` : "0x1::aptos_account::transfer" },
      { sender: BOB, seq: i, changes: i === 4 ? [writeResource(CAROL, "0x1::account::Account", { sequence_number: "0" })] : [] },
      { sender: ALICE, seq: 2 * i + 1 },
    ]);
  }
  for (const t of c.txns) decorate(t);
  return c;
}

/**
 * Waits until the stream has sent what there is and gone quiet: two heartbeats after the call (one
 * may have left just before what was committed before the call was read).
 */
async function quiet(s: StreamClient): Promise<void> {
  const seen = s.heartbeats;
  await s.until((c) => c.heartbeats > seen + 1, "two heartbeats");
}

/**
 * A stream on a raw connection that reads nothing until `readToEnd`, which then reads the rest of
 * the response: its body ends with the connection (`connection: close`, not chunked).
 */
async function rawStream(node: TestNode, path: string): Promise<{ readToEnd(): Promise<string> }> {
  const sock = connect(Number(new URL(node.url).port), "127.0.0.1");
  await new Promise((resolve) => sock.once("connect", resolve));
  sock.write(`GET ${path} HTTP/1.1\r\nhost: x\r\naccept: text/event-stream\r\n\r\n`);
  sock.pause();
  return {
    readToEnd: () =>
      new Promise<string>((resolve, reject) => {
        let response = "";
        sock.setEncoding("utf8");
        sock.on("data", (b: string) => {
          response += b;
        });
        sock.once("end", () => {
          const at = response.indexOf("\r\n\r\n");
          const head = response.slice(0, at).toLowerCase();
          if (!head.includes("\r\nconnection: close") || head.includes("transfer-encoding")) reject(new Error(`not a body that ends with its connection: ${head}`));
          else resolve(response.slice(at + 4));
        });
        sock.once("error", reject);
        sock.resume();
      }),
  };
}

/** The data of the SSE end event a raw body ends with. */
function endOf(body: string): unknown {
  const end = /event: end\ndata: (.*)\n\n$/.exec(body);
  if (!end) throw new Error(`no end event at the end of ${JSON.stringify(body.slice(-200))}`);
  return JSON.parse(end[1]!);
}

async function metric(node: TestNode, name: string, labels: Record<string, string> = {}): Promise<number> {
  return parsePrometheus(await (await fetch(`${node.url}/metrics`)).text()).value(name, labels) ?? 0;
}

describe(`transaction stream (${backend.name})`, () => {
  let node: TestNode;
  const chain = filterChain();
  const url = (q = "") => `${node.base}/transactions/stream${q}`;
  const byVersion = async (v: number | string) => (await fetch(`${node.base}/transactions/by_version/${v}`)).text();
  const open: StreamClient[] = [];
  const stream = async (q: string, o: Parameters<typeof openStream>[1] = {}) => {
    const s = await openStream(url(q), o);
    open.push(s);
    return s;
  };

  beforeAll(async () => {
    node = await serveChain(backend, chain, { api: { streamHeartbeatMs: 200 } });
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await stopNode(node, backend);
  });

  it("replays from start_version, then sends each new commit live, with no gap and no duplicate at the seam", async () => {
    const last = Number(chain.version - 1n);
    const s = await stream("?start_version=0");
    expect(s.status).toBe(200);
    expect(s.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(s.headers["cache-control"]).toBe("no-cache");
    expect(s.headers["x-node-ledger-version"]).toBe(String(last));
    await s.until((c) => c.transactions.length === last + 1, "the replay of the whole ledger");
    expect(s.body().startsWith("retry: 1000\n\n")).toBe(true);
    // Commits by another connection (as another process's would) reach the open stream.
    for (let i = 0; i < 3; i++) chain.block([{ sender: CAROL, seq: i }]);
    await chain.importInto(node.db);
    const now = Number(chain.version - 1n);
    await s.until((c) => c.transactions.length === now + 1, "the new commits, live");
    expect(versionsOf(s)).toEqual(range(0, now));
    for (const v of [0, last, last + 1, now]) expect(s.transactions[v]!.data).toBe(await byVersion(v));
    for (const [i, t] of chain.txns.entries()) expect(s.transactions[i]!.data).toBe(JSON.stringify(t));
  });

  it("sends nothing twice when a replay's last read reaches commits the feed has not read yet", async () => {
    // The feed runs (a stream is open); each new stream opens right after a commit, before the
    // feed's next look, so its replay reads versions from the store that the feed hands over next.
    const watcher = await stream("");
    for (let i = 0; i < 8; i++) {
      chain.block([{ sender: CAROL, seq: 10 + i }]);
      await chain.importInto(node.db);
      const last = Number(chain.version - 1n);
      const s = await stream(`?start_version=${last - 4}`, { accept: "application/x-ndjson" });
      chain.block([{ sender: CAROL, seq: 100 + i }]);
      await chain.importInto(node.db);
      const head = Number(chain.version - 1n);
      await s.until((c) => c.transactions.length > 0 && Number(c.transactions.at(-1)!.id) >= head, "the next block");
      s.close();
      expect(versionsOf(s)).toEqual(range(last - 4, head));
    }
    await watcher.until((c) => c.transactions.length > 0 && BigInt(c.transactions.at(-1)!.id!) === chain.version - 1n, "every commit");
    expect(versionsOf(watcher)).toEqual(range(versionsOf(watcher)[0]!, Number(chain.version - 1n)));
  });

  it("sends one JSON line a transaction with Accept: application/x-ndjson, from a version in the middle", async () => {
    const last = Number(chain.version - 1n);
    const s = await stream("?start_version=5", { accept: "application/x-ndjson" });
    expect(s.status).toBe(200);
    expect(s.headers["content-type"]).toBe("application/x-ndjson");
    await s.until((c) => c.transactions.length === last - 4, "the replay from 5");
    expect(versionsOf(s)).toEqual(range(5, last));
    expect(s.body()).toBe(
      chain.txns
        .slice(5)
        .map((t) => `${JSON.stringify(t)}\n`)
        .join(""),
    );
  });

  it("resumes after the version of Last-Event-ID (over start_version), and starts at the next commit without either", async () => {
    const first = await stream("?start_version=0");
    await first.until((c) => c.transactions.length >= 6, "six events");
    const seen = first.transactions[5]!.id!;
    first.close();
    const resumed = await stream("?start_version=0", { headers: { "last-event-id": seen } });
    const live = await stream("");
    const head = Number(chain.version - 1n);
    expect(live.headers["x-node-ledger-version"]).toBe(String(head));
    await resumed.until((c) => c.transactions.length === head - Number(seen), "the replay after Last-Event-ID");
    expect(versionsOf(resumed)).toEqual(range(Number(seen) + 1, head));
    await quiet(live);
    expect(live.transactions).toEqual([]);
    chain.block([{ sender: CAROL, seq: 3 }]);
    await chain.importInto(node.db);
    await live.until((c) => c.transactions.length === 3, "the next block");
    expect(versionsOf(live)).toEqual(range(head + 1, head + 3));
    await resumed.until((c) => c.transactions.length === head + 3 - Number(seen), "the same block");
  });

  it("passes exactly the transactions every filter (combined with AND) picks out of the imported JSON", async () => {
    const txns = chain.txns as Json[];
    const fn = (t: Json) => {
      const f = (t.payload as Json | undefined)?.function;
      return typeof f === "string" ? f.replace(/^0x[0-9a-f]+/, (a) => addr(a)) : null;
    };
    const events = (t: Json) => ((t.events as Json[] | undefined) ?? []).map((e) => String(e.type));
    const cases: Array<[string, (t: Json) => boolean]> = [
      [`sender=${ALICE}`, (t) => t.sender === ALICE],
      // an address written short, and one that only a change touches
      ["address=0xb0b", (t) => touched(t).has(BOB)],
      [`address=${CAROL}`, (t) => touched(t).has(CAROL)],
      ["function=0x1::aptos_account::transfer", (t) => fn(t) === addr("1") + "::aptos_account::transfer"],
      [`function=${MARKET}::market::buy`, (t) => fn(t) === `${MARKET}::market::buy`],
      ["success=false", (t) => t.success === false],
      ["success=true&sender=0xa11ce", (t) => t.success === true && t.sender === ALICE],
      ["event_type=0x1::coin::DepositEvent", (t) => events(t).includes("0x1::coin::DepositEvent")],
      // a generic type: written with its argument (any spelling of its addresses), or without (every instantiation)
      [
        `event_type=${encodeURIComponent(`${MARKET}::market::Filled< 0x0001::aptos_coin::AptosCoin >`)}`,
        (t) => events(t).includes("0x3a7::market::Filled<0x1::aptos_coin::AptosCoin>"),
      ],
      ["event_type=0x3a7::market::Filled", (t) => events(t).some((e) => e.startsWith("0x3a7::market::Filled<"))],
      [`event_type=${encodeURIComponent("0x3a7::market::Filled<u64>")}`, () => false],
      [`function=${MARKET}::market::buy&success=true&address=0xb0b`, (t) => fn(t) === `${MARKET}::market::buy` && t.success === true && touched(t).has(BOB)],
      [`sender=${addr("dead")}`, () => false],
    ];
    const streams = await Promise.all(cases.map(([q]) => stream(`?start_version=0&${q}`)));
    const check = async () => {
      for (const [i, [q, pick]] of cases.entries()) {
        const want = txns.filter(pick).map((t) => Number(t.version));
        await quiet(streams[i]!);
        expect(versionsOf(streams[i]!), q).toEqual(want);
        for (const e of streams[i]!.transactions) expect(e.data).toBe(JSON.stringify(txns[Number(e.id)]));
      }
    };
    await check();
    // and live: blocks committed after the replay reach the same streams, filtered the same way
    const from = chain.txns.length;
    for (let i = 0; i < 4; i++) {
      chain.block([
        { sender: ALICE, seq: 100 + 2 * i, fn: i % 2 === 0 ? `${MARKET}::market::buy` : "0x1::aptos_account::transfer" },
        { sender: BOB, seq: 100 + i, changes: i === 1 ? [writeResource(CAROL, "0x1::account::Account", { sequence_number: "1" })] : [] },
        { sender: ALICE, seq: 101 + 2 * i },
      ]);
    }
    for (const t of chain.txns.slice(from)) decorate(t);
    await chain.importInto(node.db);
    await check();
    // the rare filters really selected something: not all of them are trivially empty
    expect(streams.filter((s) => s.transactions.length > 0).length).toBeGreaterThanOrEqual(cases.length - 3);
  });

  it("refuses a bad filter, start_version, Last-Event-ID or Accept with the error object before any event", async () => {
    const streaming = await metric(node, "ledger_node_streams_open");
    const refused = async (q: string, status: number, words: string, o: Parameters<typeof openStream>[1] = {}) => {
      const res = await fetch(url(q), { headers: { ...(o.headers ?? {}), ...(o.accept ? { accept: o.accept } : {}) } });
      expect(res.status, q).toBe(status);
      expect(res.headers.get("content-type")).toMatch(/^application\/json\b/);
      const body = (await res.json()) as { message: string; error_code: string };
      expect(body.message, q).toContain(words);
      return body;
    };
    expect((await refused("?snder=0x1", 400, 'unknown parameter "snder"')).error_code).toBe("web_framework_error");
    expect((await refused("?sender=0xzz", 400, "failed to parse parameter `sender`")).error_code).toBe("web_framework_error");
    await refused("?address=1234", 400, "failed to parse parameter `address`");
    await refused("?function=0x1::coin", 400, 'invalid entry function id "0x1::coin"');
    await refused("?function=0x1::coin::9transfer", 400, 'invalid function name "9transfer"');
    await refused(`?event_type=${encodeURIComponent("0x1::coin::Coin<")}`, 400, "failed to parse parameter `event_type`");
    await refused("?event_type=coin::Coin", 400, 'invalid struct tag "coin::Coin"');
    await refused("?start_version=-1", 400, 'Parsing u64 string "-1" failed');
    await refused("?start_version=18446744073709551616", 400, "18446744073709551616");
    await refused("?success=yes", 400, "success");
    await refused("", 400, "failed to parse header `Last-Event-ID`", { headers: { "last-event-id": "abc" } });
    expect((await refused("", 406, "text/event-stream or application/x-ndjson", { accept: "application/json" })).error_code).toBe("web_framework_error");
    // none of them opened a stream
    expect(await metric(node, "ledger_node_streams_open")).toBe(streaming);
  });
});

describe(`transaction stream of the recorded transactions (${backend.name})`, () => {
  const { chain, txns } = recordedLedger();
  let node: TestNode;
  beforeAll(async () => {
    node = await serveChain(backend, chain, { api: { streamHeartbeatMs: 200 } });
  });
  afterAll(() => stopNode(node, backend));

  it("sends each recorded transaction as the node printed it, and filters it by what it records", async () => {
    const all = await openStream(`${node.base}/transactions/stream?start_version=0`, { accept: "application/x-ndjson" });
    await all.until((c) => c.transactions.length === txns.length, "the recorded ledger");
    all.close();
    expect(all.transactions.map((e) => e.data)).toEqual(txns.map((t) => JSON.stringify(t)));
    const user = txns.find((t) => t.type === "user_transaction")!;
    const fn = String((user.payload as Json).function);
    const fee = ((user.events as Json[]) ?? []).map((e) => String(e.type)).find((t) => t.endsWith("FeeStatement"))!;
    const changed = [...touched(txns[1]!)].find((a) => !touched(user).has(a))!;
    const cases: Array<[string, (t: Json) => boolean]> = [
      [`sender=${String(user.sender)}`, (t) => t.sender === user.sender],
      [`function=${fn}`, (t) => (t.payload as Json | undefined)?.function === fn],
      [`event_type=${fee}`, (t) => ((t.events as Json[] | undefined) ?? []).some((e) => e.type === fee)],
      [`address=${changed}`, (t) => touched(t).has(changed)],
    ];
    for (const [q, pick] of cases) {
      const s = await openStream(`${node.base}/transactions/stream?start_version=0&${q}`);
      const want = txns.filter(pick).map((t) => Number(t.version));
      expect(want.length, q).toBeGreaterThan(0);
      await quiet(s);
      s.close();
      expect(versionsOf(s), q).toEqual(want);
    }
  });
});

describe(`transaction stream: pruned starts and the bounds (${backend.name})`, () => {
  const nodes: TestNode[] = [];
  afterAll(async () => {
    for (const n of nodes) await n.close();
    await backend.cleanup();
  });
  const serve = async (chain: ChainBuilder, api: Partial<ApiConfig>) => {
    const n = await serveChain(backend, chain, { api: { streamHeartbeatMs: 200, ...api } });
    nodes.push(n);
    return n;
  };
  const small = () => {
    const c = new ChainBuilder().genesis();
    for (let i = 0; i < 6; i++) c.block([{ sender: ALICE, seq: i }]);
    return c;
  };

  it("answers a start below the pruning window 410, with the archival endpoint when one is set", async () => {
    const n = await serve(small(), { archivalEndpoint: "https://archive.example/v1" });
    await pruneServed(n, "8");
    const oldest = BigInt(((await (await fetch(`${n.base}/info`)).json()) as { oldest_ledger_version: string }).oldest_ledger_version);
    const gone = await fetch(`${n.base}/transactions/stream?start_version=${oldest - 1n}`);
    expect(gone.status).toBe(410);
    // the 410 a read of that version answers, archival endpoint and all
    const read = await fetch(`${n.base}/transactions/by_version/${oldest - 1n}`);
    expect(read.status).toBe(410);
    const body = (await gone.json()) as Json;
    expect(body).toEqual(await read.json());
    expect(body).toMatchObject({ message: `Ledger version(${oldest - 1n}) has been pruned`, error_code: "version_pruned", archival_endpoint: "https://archive.example/v1" });
    const resumed = await fetch(`${n.base}/transactions/stream`, { headers: { "last-event-id": String(oldest - 2n) } });
    expect(resumed.status).toBe(410);
    await resumed.body?.cancel();
    const kept = await openStream(`${n.base}/transactions/stream?start_version=${oldest}`);
    await quiet(kept);
    kept.close();
    expect(versionsOf(kept)[0]).toBe(Number(oldest));
  });

  it("sends heartbeats while nothing matches, and answers streams past the cap 503 with Retry-After", async () => {
    const n = await serve(small(), { maxStreams: 2, maxStreamsPerClient: 2 });
    const sse = await openStream(`${n.base}/transactions/stream?sender=${addr("dead")}`);
    const nd = await openStream(`${n.base}/transactions/stream?sender=${addr("dead")}`, { accept: "application/x-ndjson" });
    await sse.until((c) => c.heartbeats >= 2, "two SSE heartbeats");
    await nd.until((c) => c.heartbeats >= 2, "two NDJSON heartbeats");
    expect(sse.body()).toMatch(/^retry: 1000\n\n(:\n\n)+$/);
    expect(nd.body()).toMatch(/^\n+$/);
    expect(await metric(n, "ledger_node_streams_open")).toBe(2);
    const third = await fetch(`${n.base}/transactions/stream`);
    expect(third.status).toBe(503);
    expect(third.headers.get("retry-after")).toBe("1");
    expect(((await third.json()) as { message: string }).message).toContain("too many transaction streams are open (at most 2)");
    expect(await metric(n, "ledger_node_streams_refused_total", { reason: "node_full" })).toBe(1);
    sse.close();
    await expect.poll(() => metric(n, "ledger_node_streams_open")).toBe(1);
    const again = await openStream(`${n.base}/transactions/stream`);
    expect(again.status).toBe(200);
    again.close();
    nd.close();
    await expect.poll(() => metric(n, "ledger_node_streams_ended_total", { reason: "client_closed" })).toBe(3);
  });

  it("answers HEAD at once with the head a GET gets and no body, opening no stream; a bad filter is the GET's 400", async () => {
    const n = await serve(small(), {});
    const head = await fetch(`${n.base}/transactions/stream?sender=${addr("dead")}`, { method: "HEAD", signal: AbortSignal.timeout(5_000) });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(head.headers.get("x-node-ledger-version")).toMatch(/^[0-9]+$/);
    expect(await head.text()).toBe("");
    expect(await metric(n, "ledger_node_streams_open")).toBe(0);
    expect(await metric(n, "ledger_node_streams_ended_total", { reason: "client_closed" })).toBe(0);
    const bad = await fetch(`${n.base}/transactions/stream?sender=0xnothex`, { method: "HEAD", signal: AbortSignal.timeout(5_000) });
    expect(bad.status).toBe(400);
  });

  it("answers a client's streams past its share 429 with Retry-After, opened at once or one by one, while other clients still open theirs", async () => {
    // Clients told apart by X-Forwarded-For behind --trust-proxy, as behind a load balancer.
    const n = await serve(small(), { maxStreams: 10, maxStreamsPerClient: 2, trustProxy: ["127.0.0.1"] });
    const from = (ip: string) => ({ headers: { "x-forwarded-for": ip } });
    const url = `${n.base}/transactions/stream?sender=${addr("dead")}`;
    // Five at once from one client: the share is counted where a stream opens, so only two open.
    const burst = await Promise.all(range(0, 4).map(() => openStream(url, from("10.0.0.1"))));
    expect(burst.map((s) => s.status).sort()).toEqual([200, 200, 429, 429, 429]);
    const refused = burst.find((s) => s.status === 429)!;
    await refused.closed;
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.headers["x-node-ledger-version"]).toMatch(/^[0-9]+$/);
    expect(JSON.parse(refused.body())).toMatchObject({
      error_code: "web_framework_error",
      message: "this client has 2 transaction streams open, the most one client may (2): close one, or try again later",
    });
    const others = await Promise.all([openStream(url, from("10.0.0.2")), openStream(url, from("10.0.0.2"))]);
    expect(others.map((s) => s.status)).toEqual([200, 200]);
    expect(await metric(n, "ledger_node_streams_open")).toBe(4);
    // One of the first client's closes: it may open one again, and no more.
    const open = burst.filter((s) => s.status === 200);
    open[0]!.close();
    await expect.poll(() => metric(n, "ledger_node_streams_open")).toBe(3);
    const again = await openStream(url, from("10.0.0.1"));
    expect(again.status).toBe(200);
    const over = await fetch(url, from("10.0.0.1"));
    expect(over.status).toBe(429);
    await over.body?.cancel();
    for (const s of [...open, ...others, again]) s.close();
    await expect.poll(() => metric(n, "ledger_node_streams_open")).toBe(0);
    expect(await metric(n, "ledger_node_http_errors_total", { status: "429", error_code: "web_framework_error" })).toBe(4);
    expect(await metric(n, "ledger_node_streams_refused_total", { reason: "client_share" })).toBe(4);
    expect(await metric(n, "ledger_node_streams_refused_total", { reason: "node_full" })).toBe(0);
  });

  it("ends a client that does not read at its buffer's bound, with a last event naming the version to resume from", async () => {
    // About 16 MiB of history: more than the kernel's socket buffers hold, so the server's own buffer fills.
    const c = new ChainBuilder().genesis();
    const big = "ab".repeat(32 * 1024);
    for (let i = 0; i < 64; i++) c.block(range(0, 3).map((j) => ({ sender: ALICE, seq: 4 * i + j, changes: [writeResource(ALICE, "0x1::blob::Blob", { bytes: big })] })));
    const n = await serve(c, { streamBufferBytes: 64 * 1024 });
    const stalled = await rawStream(n, "/v1/transactions/stream?start_version=0");
    await expect.poll(() => metric(n, "ledger_node_streams_ended_total", { reason: "slow_client" }), { timeout: 20_000, interval: 50 }).toBe(1);
    expect(await metric(n, "ledger_node_streams_open")).toBe(0);
    // Reading now (within the end's grace), the client gets what was sent, then the end event.
    const body = await stalled.readToEnd();
    const ids = [...body.matchAll(/^id: ([0-9]+)$/gm)].map((m) => Number(m[1]));
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(c.txns.length);
    expect(ids).toEqual(range(0, ids.length - 1));
    expect(endOf(body)).toEqual({ reason: "slow_client", next_version: String(ids.length) });
    expect(await metric(n, "ledger_node_stream_events_sent_total")).toBeGreaterThanOrEqual(ids.length);
  });

  it("ends a replay that the pruner overtook while its client was behind, naming the version it lost", async () => {
    const c = new ChainBuilder().genesis();
    const big = "ab".repeat(32 * 1024);
    for (let i = 0; i < 64; i++) c.block(range(0, 3).map((j) => ({ sender: ALICE, seq: 4 * i + j, changes: [writeResource(ALICE, "0x1::blob::Blob", { bytes: big })] })));
    // A long heartbeat: the replay waits that long for its client to take a page before calling it slow.
    const n = await serve(c, { streamBufferBytes: 64 * 1024, streamHeartbeatMs: 10_000 });
    const stalled = await rawStream(n, "/v1/transactions/stream?start_version=0");
    // the replay has filled the buffers and waits for the client: what it sent stops growing
    let before = -1;
    const settled = async () => {
      const now = await metric(n, "ledger_node_stream_events_sent_total");
      const same = now > 0 && now === before;
      before = now;
      return same;
    };
    await expect.poll(settled, { timeout: 10_000, interval: 300 }).toBe(true);
    await pruneServed(n, "8");
    const body = await stalled.readToEnd();
    const ids = [...body.matchAll(/^id: ([0-9]+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual(range(0, ids.length - 1));
    expect(endOf(body)).toEqual({ reason: "pruned", next_version: String(ids.length) });
    expect(await metric(n, "ledger_node_streams_ended_total", { reason: "pruned" })).toBe(1);
    // resuming there is the 410 of a pruned version
    const resumed = await fetch(`${n.base}/transactions/stream`, { headers: { "last-event-id": String(ids.length - 1) } });
    expect(resumed.status).toBe(410);
    await resumed.body?.cancel();
  });

  it("live, ends a client that does not read at its bound, and never one that reads, however much one commit writes", async () => {
    requireBuiltCli();
    const c = small();
    const n = await serve(c, { streamBufferBytes: 64 * 1024 });
    const reading = await openStream(`${n.base}/transactions/stream`, { accept: "application/x-ndjson" });
    const opened = Number(reading.headers["x-node-ledger-version"]);
    const stalled = await rawStream(n, "/v1/transactions/stream");
    // Once it has been cut, the stalled client reads what it was sent (within the end's grace).
    const stalledBody = (async () => {
      await expect.poll(() => metric(n, "ledger_node_streams_ended_total", { reason: "slow_client" }), { timeout: 30_000, interval: 50 }).toBe(1);
      return stalled.readToEnd();
    })();
    // Blocks of 1 MiB each, far more than the bound in one commit; 16 MiB in all, more than the kernel's socket buffers hold.
    const big = "ab".repeat(32 * 1024);
    // Committed by `ledger-node import` in another process, so that this one, which reads, is never busy importing.
    const file = join(mkdtempSync(join(tmpdir(), "ledger-node-stream-")), "blocks.ndjson");
    for (let round = 0; round < 8; round++) {
      for (let i = 0; i < 2; i++) c.block(range(0, 15).map((j) => ({ sender: BOB, seq: 32 * round + 16 * i + j, changes: [writeResource(BOB, "0x1::blob::Blob", { bytes: big })] })));
      writeFileSync(file, c.ndjson());
      const imported = await runCli(["import", "--db", n.db, file]);
      expect(imported.code, imported.stderr).toBe(0);
    }
    const last = Number(c.version - 1n);
    await reading.until((x) => x.transactions.length === last - opened, "every new commit");
    expect(versionsOf(reading)).toEqual(range(opened + 1, last));
    expect(reading.events.filter((e) => e.event === "end")).toEqual([]);
    const body = await stalledBody;
    const ids = [...body.matchAll(/^id: ([0-9]+)$/gm)].map((m) => Number(m[1]));
    expect(ids.length).toBeGreaterThan(0);
    expect(ids).toEqual(range(opened + 1, opened + ids.length));
    expect(ids.at(-1)).toBeLessThan(last);
    expect(endOf(body)).toEqual({ reason: "slow_client", next_version: String(ids.at(-1)! + 1) });
    reading.close();
  });

  it("ends every open stream with an end event when the node shuts down", async () => {
    const n = await serve(small(), {});
    const s = await openStream(`${n.base}/transactions/stream`, { accept: "application/x-ndjson" });
    const head = ((await (await fetch(`${n.base}/info`)).json()) as { ledger_version: string }).ledger_version;
    const closing = n.close();
    await s.closed;
    await closing;
    expect(s.events).toEqual([{ event: "end", data: JSON.stringify({ stream_end: { reason: "shutdown", next_version: String(BigInt(head) + 1n) } }) }]);
  });

  it("answers 503 a stream whose start_version read finishes after shutdown began, and the close does not wait on it", async () => {
    const db = await backend.newDb();
    await small().importInto(db);
    const store = await openStore(db);
    // The store served, with its history reads held at a gate while the test shuts the node down.
    const gate: { held: Promise<void> | null; open?: () => void } = { held: null };
    let entered!: () => void;
    const reading = new Promise<void>((r) => {
      entered = r;
    });
    const held = new Proxy(store, {
      get(target, key) {
        const v = Reflect.get(target, key);
        if (key !== "readTransactions") return typeof v === "function" ? v.bind(target) : v;
        return async (...args: Parameters<typeof store.readTransactions>) => {
          if (gate.held !== null) {
            entered();
            await gate.held;
          }
          return target.readTransactions(...args);
        };
      },
    });
    const n = await startTestNode(db, { store: held, api: { streamHeartbeatMs: 200 } });
    gate.held = new Promise<void>((r) => {
      gate.open = r;
    });
    const answer = fetch(`${n.base}/transactions/stream?start_version=1`);
    await reading;
    const closing = n.close();
    // The streams are shut (preClose) before the server stops taking requests: once it has, release the read.
    await expect.poll(() => fetch(`${n.base}/info`).then((r) => r.status, () => "refused")).not.toBe(200);
    gate.open!();
    const res = await answer;
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toEqual({ message: "the node is shutting down: try again later, at another node", error_code: "internal_error" });
    await closing;
  });
});

describe(`transaction stream of a devnet (${backend.name})`, () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode(await backend.newDb(), { devnet: { blockIntervalMs: 50 }, api: { streamHeartbeatMs: 200 } });
  });
  afterAll(() => stopNode(node, backend));

  it("sends the devnet's blocks as they commit, each as by_version answers it", async () => {
    const s = await openStream(`${node.base}/transactions/stream`);
    const opened = Number(s.headers["x-node-ledger-version"]);
    await s.until((c) => c.transactions.length >= 40, "forty live transactions");
    s.close();
    const got = versionsOf(s);
    expect(got).toEqual(range(opened + 1, opened + got.length));
    for (const e of s.transactions.slice(0, 40)) expect(e.data).toBe(await (await fetch(`${node.base}/transactions/by_version/${e.id}`)).text());
  });

  it("sends heartbeats to every quiet stream, those opened before and after one the devnet's blocks keep busy", async () => {
    // The heartbeat sweep walks the streams in the order of their last writes and stops at the first
    // that wrote recently: the busy stream must move out of the way of those opened after it.
    const quietPath = `${node.base}/transactions/stream?sender=${addr("dead")}`;
    const before = await openStream(quietPath);
    const busy = await openStream(`${node.base}/transactions/stream`);
    const after = await openStream(quietPath);
    try {
      await busy.until((c) => c.transactions.length >= 1, "a live transaction");
      const sent = busy.transactions.length;
      await after.until((c) => c.heartbeats >= 3, "three heartbeats after the busy stream");
      await before.until((c) => c.heartbeats >= 3, "three heartbeats before the busy stream");
      expect(busy.transactions.length).toBeGreaterThan(sent);
      expect([before.transactions.length, after.transactions.length]).toEqual([0, 0]);
    } finally {
      for (const s of [before, busy, after]) s.close();
    }
  });

  it("is told of each commit of the devnet's writer thread once the block is readable (the feed looks then, not at its next poll)", async () => {
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve) => node.commits.once("commit", resolve));
      const info = (await (await fetch(`${node.base}/`)).json()) as { ledger_version: string };
      seen.push(Number(info.ledger_version));
    }
    // Each told commit is a block newer than the one told before it.
    expect(seen[1]).toBeGreaterThan(seen[0]!);
    expect(seen[2]).toBeGreaterThan(seen[1]!);
  });
});

for (const makeBackend of backendFactories) {
  const b = makeBackend();
  describe(`transaction stream: the node's cap against many at once (${b.name})`, () => {
    let n: TestNode;
    beforeAll(async () => {
      const c = new ChainBuilder().genesis();
      for (let i = 0; i < 6; i++) c.block([{ sender: ALICE, seq: i }]);
      n = await serveChain(b, c, { api: { streamHeartbeatMs: 200, maxStreams: 2, maxStreamsPerClient: 100 } });
    });
    afterAll(() => stopNode(n, b));

    it("opens no more than --max-streams however many ask at once, each with a start_version read before it opens", async () => {
      const all = await Promise.all(range(0, 19).map(() => openStream(`${n.base}/transactions/stream?start_version=1&sender=${addr("dead")}`)));
      expect(all.map((s) => s.status).sort()).toEqual([...Array(18).fill(503), 200, 200].sort());
      expect(await metric(n, "ledger_node_streams_open")).toBe(2);
      expect(await metric(n, "ledger_node_streams_refused_total", { reason: "node_full" })).toBe(18);
      for (const s of all) s.close();
      await expect.poll(() => metric(n, "ledger_node_streams_open")).toBe(0);
    });
  });
}
