/**
 * What a client can make a replica's base state cost (`serve --follow`, the built CLI, real
 * SQLite files, a fake upstream served under a path holding a token): a table key or a resource
 * type past the reference's own bounds is refused with 400 before anything is asked upstream; an
 * invented key leaves no row in `follow_base` and is still answered exactly, once fetched; one
 * client's burst of distinct keys gets 429s with `Retry-After` while another client's first reads
 * are answered; a 503 of an upstream that is down names neither its URL, its host, the token in
 * its path nor the socket error, which the log keeps.
 */
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_TABLE_HANDLE } from "../src/ingest/devnet/chain.js";
import { sqliteBackend } from "./helpers/backends.js";
import { requireBuiltCli } from "./helpers/cli.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";
import { caughtUp, type ServeProcess, startServe } from "./helpers/serveProcess.js";

const TOKEN = "sEcReT-t0ken-9f3a";
/** Long enough for a machine under load: the burst of the old code queued past it all the same. */
const TIMEOUT_MS = 20_000;


const rawItem = (base: string, key: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/tables/${DEVNET_TABLE_HANDLE}/raw_item`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/x-bcs", ...headers },
    body: JSON.stringify({ key }),
  });

/** A distinct 8-byte key of `n`, never written by the devnet. */
const keyOf = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n) + 10_000_000n);
  return `0x${b.toString("hex")}`;
};

/** State reads the replica asked of the upstream (it always names the version; the tests' own reads do not). */
const stateRequests = (up: FakeUpstream) =>
  up.received.filter((r) => (r.url.includes("/raw_item") || r.url.includes("/resource")) && r.url.includes("ledger_version=")).length;

describe("a replica's base state against what a client can make it cost", () => {
  const backend = sqliteBackend();
  let up: FakeUpstream;
  let replica: ServeProcess;
  let db: string;
  beforeAll(async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: 150, pathPrefix: `/${TOKEN}` });
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
      "10",
      "--poll",
      "50",
      "--upstream-timeout",
      String(TIMEOUT_MS),
      "--trust-proxy",
      "127.0.0.1",
    ]);
    await caughtUp(replica.base, up.ledgerVersion);
  }, 180_000);
  afterAll(async () => {
    await replica?.stop();
    await up?.close();
    await backend.cleanup();
  });

  it("refuses a table key longer than any state item (1 MiB) and a struct name longer than 255 with 400 naming them, asking the upstream nothing", async () => {
    const before = up.received.length;
    const big = await rawItem(replica.base, `0x${"ab".repeat((1 << 20) + 1)}`);
    expect(big.status).toBe(400);
    expect(await big.json()).toEqual({
      message: `Table key(0x${"ab".repeat(49)}…) is ${(1 << 20) + 1} bytes long, it must be at most ${1 << 20}`,
      error_code: "invalid_input",
    });
    const longName = `0x1::m::${"S".repeat(256)}`;
    const type = await fetch(`${replica.base}/accounts/0x1/resource/${longName}`);
    expect(type.status).toBe(400);
    expect(await type.json()).toEqual({ message: `'resource_type' invalid: Identifier '${"S".repeat(32)}…' is 256 bytes long, it must be at most 255`, error_code: "invalid_input" });
    // At the bounds: asked upstream, answered as the upstream answers.
    const atBound = await rawItem(replica.base, `0x${"ab".repeat(1 << 20)}`);
    expect(atBound.status).toBe(404);
    expect(up.received.slice(before).filter((r) => r.url.includes("/raw_item")).length).toBe(1);
  }, 60_000);

  it("keeps no follow_base row for invented keys, and answers them as the upstream does, fetched once", async () => {
    const rows = () => {
      const d = new Database(db, { readonly: true });
      try {
        return d.prepare("SELECT what FROM follow_base").pluck().all() as string[];
      } finally {
        d.close();
      }
    };
    const before = rows();
    const asked = stateRequests(up);
    for (let i = 0; i < 8; i++) {
      const [ours, theirs] = await Promise.all([rawItem(replica.base, keyOf(i)), rawItem(up.base, keyOf(i))]);
      expect([ours.status, await ours.text()]).toEqual([theirs.status, await theirs.text()]);
      const type = `0x1::invented${i}::Thing`;
      const [r, u] = await Promise.all([fetch(`${replica.base}/accounts/0x1/resource/${type}`), fetch(`${up.base}/accounts/0x1/resource/${type}`)]);
      expect([r.status, await r.text()]).toEqual([u.status, await u.text()]);
    }
    expect(stateRequests(up) - asked).toBe(16);
    // Asked again: known absent, nothing fetched.
    for (let i = 0; i < 8; i++) expect((await rawItem(replica.base, keyOf(i))).status).toBe(404);
    expect(stateRequests(up) - asked).toBe(16);
    expect(rows()).toEqual(before);
    // Every record there is named by a digest, whatever it names.
    for (const what of before) expect(what).toMatch(/^(first_synced_version|(modules|resources|table_item|resource):[0-9a-f]{64})$/);
  }, 60_000);

  it("one client's burst of distinct keys gets 429 with Retry-After; another client's first reads of accounts are answered meanwhile", async () => {
    const burster = { "x-forwarded-for": "203.0.113.7" };
    const other = { "x-forwarded-for": "198.51.100.9" };
    let next = 1000;
    const statuses: number[] = [];
    const refusals: Array<{ retryAfter: string | null; body: unknown }> = [];
    // 300 distinct keys, 50 at a time (the test's own upstream shares this process: a burst without
    // end would starve it rather than the replica).
    const burst = async () => {
      while (next < 1300) {
        const res = await rawItem(replica.base, keyOf(next++), burster);
        statuses.push(res.status);
        const body = (await res.json().catch(() => null)) as unknown;
        if (res.status === 429) refusals.push({ retryAfter: res.headers.get("retry-after"), body });
      }
    };
    const bursting = Promise.all(Array.from({ length: 50 }, burst));
    // The others' reads start while the burst's keys are being fetched or refused.
    await new Promise((r) => setTimeout(r, 500));
    const accounts = Array.from({ length: 8 }, (_, i) => `0x${(0xfe0000 + i).toString(16)}`);
    const answers = await Promise.all(
      accounts.map(async (a) => {
        const [ours, theirs] = await Promise.all([fetch(`${replica.base}/accounts/${a}`, { headers: other }), fetch(`${up.base}/accounts/${a}`)]);
        return { account: a, ours: [ours.status, await ours.text()], theirs: [theirs.status, await theirs.text()] };
      }),
    );
    await bursting;
    for (const a of answers) expect(a.ours, a.account).toEqual(a.theirs);
    expect(statuses.filter((s) => s === 404).length).toBeGreaterThan(0);
    expect(refusals.length).toBeGreaterThan(200);
    expect(statuses.filter((s) => s !== 404 && s !== 429)).toEqual([]);
    expect(Number(refusals[0]!.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(refusals[0]!.body).toEqual({
      message: "Per IP rate limit exceeded. Limit: 10 fetches of state from the upstream per second (state this node has not stored yet); retry after 1 s",
      error_code: "web_framework_error",
    });
  }, 120_000);

  it("with the upstream down, a read that needs it answers 503 naming neither its URL, host, token nor the socket error; the log keeps them", async () => {
    up.faults.down = true;
    try {
      const res = await rawItem(replica.base, keyOf(99_999));
      expect(res.status).toBe(503);
      const body = (await res.json()) as { message: string; error_code: string };
      expect(body.error_code).toBe("internal_error");
      const host = new URL(up.base).host;
      for (const secret of [TOKEN, host, new URL(up.base).port, "127.0.0.1", "socket", "ECONN", "http"]) expect(body.message).not.toContain(secret);
      expect(body.message).toMatch(/^Failed when trying to retrieve table item from the DB with key: 0x[0-9a-f]+: the upstream (could not give|did not give) the table item /);
      await new Promise((r) => setTimeout(r, 200));
      expect(replica.stdout()).toContain(TOKEN);
    } finally {
      up.heal();
    }
  }, 60_000);

  it("with the upstream down, /-/healthy's 503 says the follower is failing without the upstream's URL, host, token or socket error", async () => {
    up.faults.down = true;
    try {
      const until = Date.now() + 90_000;
      let sick: { status: number; message: string } | null = null;
      while (Date.now() < until && sick === null) {
        const res = await fetch(`${replica.base}/-/healthy`);
        const body = (await res.json()) as { message: string };
        if (res.status === 503) sick = { status: res.status, message: body.message };
        else await new Promise((r) => setTimeout(r, 250));
      }
      expect(sick?.message).toContain("the follower is failing");
      expect(sick?.message).toContain("could not be reached");
      const host = new URL(up.base).host;
      for (const secret of [TOKEN, host, "127.0.0.1", "ECONN", "socket", "http"]) expect(sick?.message).not.toContain(secret);
    } finally {
      up.heal();
    }
  }, 120_000);
});
