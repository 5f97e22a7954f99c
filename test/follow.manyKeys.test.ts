/**
 * 100,000 distinct missing table keys through a replica (`serve --follow`, the built CLI, a real
 * SQLite file, real HTTP), against a fake upstream that answers each with its own 404
 * `table_item_not_found` at once: every key is asked upstream once and answered 404, and neither
 * the node's memory nor its file grows with them (docs/following.md, "The replica's base state, decided").
 * The requests come from many client addresses (`X-Forwarded-For` behind `--trust-proxy`), so
 * the fairness bound, which this test is not about, never refuses one.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_TABLE_HANDLE } from "../src/ingest/devnet/chain.js";
import { sqliteBackend } from "./helpers/backends.js";
import { requireBuiltCli } from "./helpers/cli.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";
import { type ServeProcess, startServe } from "./helpers/serveProcess.js";

const KEYS = 100_000;
/** Bytes of each key: what a name made of the key's hex would hold, 512 characters. */
const KEY_BYTES = 256;
const IN_FLIGHT = 32;
/**
 * The node runs with its heap capped at this (MiB), so that what it keeps, not how lazily the
 * collector runs, sets its size: names kept without bound would fill the heap and end the process.
 */
const HEAP_MAX_MB = 192;
/**
 * The node's RSS at the end, whatever it kept (its caches fill to their bounds over the first
 * 50,000 keys), and its growth over the second 50,000, once the bounded sets of names are full.
 */
const RSS_MAX_MB = 400;
const RSS_GROWTH_FULL_MAX_MB = 25;
const FILE_GROWTH_MAX_MB = 2;

/** The resident set of process `pid`, in MiB (Linux). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

/** The SQLite file and its WAL, in MiB. */
function fileMb(db: string): number {
  let bytes = 0;
  for (const f of [db, `${db}-wal`]) if (existsSync(f)) bytes += statSync(f).size;
  return bytes / 1024 / 1024;
}

/** Key `i`: distinct, never written (its last 8 bytes are `i`). */
function keyHex(i: number): string {
  const b = Buffer.alloc(KEY_BYTES, 0x5a);
  b.writeBigUInt64BE(BigInt(i), KEY_BYTES - 8);
  return `0x${b.toString("hex")}`;
}

describe("100,000 distinct missing keys through a replica", () => {
  const backend = sqliteBackend();
  let up: FakeUpstream;
  let replica: ServeProcess;
  let db: string;
  beforeAll(async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: 150 });
    db = await backend.newDb();
    replica = await startServe([
      "--follow",
      up.base,
      "--from",
      "latest",
      "--db",
      db,
      "--no-prune",
      "--quiet",
      "--max-rps",
      "100000",
      "--base-fetches",
      "64",
      "--upstream-timeout",
      "30000",
      "--trust-proxy",
      "127.0.0.1",
    ], 60_000, { nodeArgs: [`--max-old-space-size=${HEAP_MAX_MB}`] });
    const until = Date.now() + 120_000;
    for (;;) {
      const i = (await (await fetch(`${replica.base}/info`)).json()) as { ledger_version: string };
      if (i.ledger_version === String(up.ledgerVersion)) break;
      if (Date.now() > until) throw new Error("the replica did not catch up");
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 180_000);
  afterAll(async () => {
    await replica?.stop();
    await up?.close();
    await backend.cleanup();
  });

  it(`asks the upstream once per key and answers each 404, its RSS under ${RSS_MAX_MB} MB and growing less than ${RSS_GROWTH_FULL_MAX_MB} MB over the second half, on a ${HEAP_MAX_MB} MB heap, and its file less than ${FILE_GROWTH_MAX_MB} MB`, async () => {
    up.faults.absentState = true;
    const url = new URL(`${replica.base}/tables/${DEVNET_TABLE_HANDLE}/raw_item`);
    const statuses = new Map<number, number>();
    // node:http over kept-alive connections: a lighter client than fetch, so the node, not the
    // test, does most of the work.
    const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    const post = (i: number) =>
      new Promise<number>((resolve, reject) => {
        const body = `{"key":"${keyHex(i)}"}`;
        const req = http.request(
          url,
          {
            method: "POST",
            agent,
            headers: {
              "content-type": "application/json",
              "content-length": Buffer.byteLength(body),
              accept: "application/x-bcs",
              "x-forwarded-for": `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
            },
          },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    const send = async (from: number, to: number) => {
      let next = from;
      const worker = async () => {
        while (next < to) {
          const status = await post(next++);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    };
    const pid = replica.proc.pid!;
    await send(KEYS, KEYS + 2000);
    const asked0 = up.count("/v1/*");
    const [rss0, file0] = [rssMb(pid), fileMb(db)];
    const t0 = performance.now();
    await send(0, KEYS / 2);
    const rssHalf = rssMb(pid);
    await send(KEYS / 2, KEYS);
    const seconds = (performance.now() - t0) / 1000;
    const [rss1, file1] = [rssMb(pid), fileMb(db)];
    const asked = up.count("/v1/*") - asked0;
    console.log(
      `${KEYS} keys in ${seconds.toFixed(1)} s: RSS ${rss0.toFixed(1)} -> ${rssHalf.toFixed(1)} (half) -> ${rss1.toFixed(1)} MiB, file ${file0.toFixed(2)} -> ${file1.toFixed(2)} MiB, ${asked} upstream state reads`,
    );
    expect(Object.fromEntries(statuses)).toEqual({ 404: KEYS + 2000 });
    expect(asked).toBe(KEYS);
    expect(replica.proc.exitCode).toBeNull();
    expect(rss1).toBeLessThan(RSS_MAX_MB);
    expect(rss1 - rssHalf).toBeLessThan(RSS_GROWTH_FULL_MAX_MB);
    expect(file1 - file0).toBeLessThan(FILE_GROWTH_MAX_MB);
    agent.destroy();
  }, 1_200_000);
});
