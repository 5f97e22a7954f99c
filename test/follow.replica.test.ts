/**
 * A replica that started at the head (`serve --follow URL --from latest`, the built CLI on a real
 * SQLite file, then on a PostgreSQL database) against a fake upstream that keeps the whole history:
 * after following 500 more blocks it answers modules (JSON and BCS), raw_item, summaries, an
 * account, a resource, a resources page and a single module (JSON and BCS) at random versions at
 * or above its oldest exactly as the upstream does, 410 below; its gas estimate equals the upstream's; the
 * state it lacked is fetched once per key, concurrent reads sharing the fetch; with the upstream
 * down, reads that need it answer 503 within the timeout and everything stored is still served.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_APP_ADDRESS, DEVNET_TABLE_HANDLE, devnetAccount, prng } from "../src/ingest/devnet/chain.js";
import { requireBuiltCli } from "./helpers/cli.js";
import { backendFactories } from "./helpers/backends.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";
import { caughtUp, type ServeProcess, startServe } from "./helpers/serveProcess.js";

/** Blocks of the upstream when the replica starts (the issue's 5,000; FOLLOW_REPLICA_BLOCKS to change). */
const START_BLOCKS = Number(process.env.FOLLOW_REPLICA_BLOCKS ?? 5000);
const MORE_BLOCKS = 500;
const SAMPLES = 300;
const TIMEOUT_MS = 2000;

const GENESIS_TABLE = "0x1b854694ae746cdbd8d44186ca4929b2b337df21d1c74633be19b2710552fdca";
const GENESIS_TABLE_KEY = "0x0619dc29a0aac8fa146714058e8dd6d2d0f3bdf5f6331907bf91f3acd81e6935";
const u64le = (v: number): string => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(v));
  return "0x" + b.toString("hex");
};

interface Answer {
  status: number;
  type: string | null;
  cursor: string | null;
  body: string;
}

async function ask(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(base + path, init);
  const body = Buffer.from(await res.arrayBuffer()).toString("hex");
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    cursor: res.headers.get("x-node-cursor") ?? res.headers.get("x-aptos-cursor"),
    body,
  };
}

const rawItem = (handle: string, key: string, version: bigint | null): [string, RequestInit] => [
  `/tables/${handle}/raw_item${version === null ? "" : `?ledger_version=${version}`}`,
  { method: "POST", headers: { "content-type": "application/json", accept: "application/x-bcs" }, body: JSON.stringify({ key }) },
];

/**
 * These tests read state a replica fetches from one client address, faster than the fairness
 * bound's default share; the bound has its own tests (follow.bounds.test.ts).
 */
const UNBOUNDED_FETCHES = ["--base-fetches-per-client", "100000", "--base-fetches", "1000"];

async function info(base: string): Promise<{ ledger_version: string; oldest_ledger_version: string; follow_lag_versions?: string }> {
  return (await fetch(`${base}/info`)).json();
}


for (const factory of backendFactories) describe(`a replica that started at the head (${factory().name})`, () => {
  const backend = factory();
  let up: FakeUpstream;
  let replica: ServeProcess;
  let oldest: bigint;
  let replicaDb: string;
  beforeAll(async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: START_BLOCKS });
    replicaDb = await backend.newDb();
    const args = ["--follow", up.base, "--from", "latest", "--db", replicaDb, "--no-prune", "--quiet"];
    replica = await startServe([...args, ...UNBOUNDED_FETCHES, "--max-rps", "5000", "--poll", "50", "--concurrency", "8", "--upstream-timeout", String(TIMEOUT_MS)]);
    await caughtUp(replica.base, up.ledgerVersion);
    oldest = BigInt((await info(replica.base)).oldest_ledger_version);
    // The first version of the block 120 before the upstream's head block: the gas estimator's history.
    expect(oldest).toBe(up.blocks[up.blocks.length - 121]!.first);
    await up.extend(MORE_BLOCKS);
    await caughtUp(replica.base, up.ledgerVersion);
  }, 300_000);
  afterAll(async () => {
    await replica?.stop();
    await up?.close();
    await backend.cleanup();
  });

  it(`answers ${SAMPLES} random reads at versions at or above its oldest exactly as the upstream, 410 below`, async () => {
    const rand = prng(1616);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const accounts = ["0x1", DEVNET_APP_ADDRESS, devnetAccount(0), devnetAccount(3), "0xdead"];
    const span = Number(up.ledgerVersion - oldest) + 1;
    const kinds = new Map<string, number>();
    for (let i = 0; i < SAMPLES; i++) {
      const v = oldest + BigInt(Math.floor(rand() * span));
      const kind = pick(["modules", "modules_bcs", "raw_item", "raw_item", "summaries", "account", "resource", "resources", "module", "module_bcs"]);

      let req: [string, RequestInit];
      if (kind === "modules" || kind === "modules_bcs") {
        const limit = pick(["", "&limit=7"]);
        req = [`/accounts/${pick(accounts)}/modules?ledger_version=${v}${limit}`, kind === "modules_bcs" ? { headers: { accept: "application/x-bcs" } } : {}];
      } else if (kind === "account") {
        req = [`/accounts/${pick(accounts)}?ledger_version=${v}`, {}];
      } else if (kind === "resource") {
        const type = pick(["0x1::account::Account", "0x1::gas_schedule::GasScheduleV2", "0x1::chain_id::ChainId", "0x1::a::Missing"]);
        req = [`/accounts/${pick(accounts)}/resource/${type}?ledger_version=${v}`, {}];
      } else if (kind === "resources") {
        req = [`/accounts/${pick(accounts)}/resources?ledger_version=${v}${pick(["", "&limit=2"])}`, {}];
      } else if (kind === "module" || kind === "module_bcs") {
        const [account, name] = pick([["0x1", "coin"], ["0x1", "string"], [DEVNET_APP_ADDRESS, "registry"], ["0x1", "nono"]]);
        req = [`/accounts/${account}/module/${name}?ledger_version=${v}`, kind === "module_bcs" ? { headers: { accept: "application/x-bcs" } } : {}];
      } else if (kind === "raw_item") {
        req = rand() < 0.1 ? rawItem(GENESIS_TABLE, GENESIS_TABLE_KEY, v) : rawItem(DEVNET_TABLE_HANDLE, u64le(Math.floor(rand() * 66)), v);
      } else {
        req = [`/accounts/${pick(accounts.slice(2))}/transaction_summaries?start_version=${v}&limit=${pick([5, 100])}`, {}];
      }
      const [ours, theirs] = await Promise.all([ask(replica.base, ...req), ask(up.base, ...req)]);
      expect({ at: req[0], ...ours }).toEqual({ at: req[0], ...theirs });
      const seen = `${kind} ${ours.status}`;
      kinds.set(seen, (kinds.get(seen) ?? 0) + 1);
    }
    // Every kind of read was made, and both found and missing items among them.
    expect([...kinds.keys()].sort()).toEqual(
      [
        "account 200",
        "account 404",
        "module 200",
        "module 404",
        "module_bcs 200",
        "module_bcs 404",
        "modules 200",
        "modules_bcs 200",
        "raw_item 200",
        "raw_item 404",
        "resource 200",
        "resource 404",
        "resources 200",
        "summaries 200",
      ].sort(),
    );
    for (const below of [oldest - 1n, oldest / 2n, 0n]) {
      const m = await ask(replica.base, `/accounts/0x1/modules?ledger_version=${below}`);
      const t = await ask(replica.base, ...rawItem(DEVNET_TABLE_HANDLE, u64le(1), below));
      const s = await ask(replica.base, `/accounts/${devnetAccount(0)}/transaction_summaries?start_version=${below}`);
      expect([m.status, t.status, s.status]).toEqual([410, 410, 410]);
      expect((await ask(up.base, `/accounts/0x1/modules?ledger_version=${below}`)).status).toBe(200);
    }
  }, 120_000);

  it("estimates gas exactly as the upstream, JSON and BCS", async () => {
    for (const accept of ["application/json", "application/x-bcs"]) {
      const [ours, theirs] = await Promise.all([
        ask(replica.base, "/estimate_gas_price", { headers: { accept } }),
        ask(up.base, "/estimate_gas_price", { headers: { accept } }),
      ]);
      expect(ours).toEqual(theirs);
    }
  });

  it("fetched the base state it served from the upstream, once per key", async () => {
    // 0x1's modules were written only by genesis: the replica had to fetch the whole list once.
    expect(up.count("/v1/*")).toBeGreaterThan(0);
    const before = up.count("/v1/*");
    await ask(replica.base, "/accounts/0x1/modules?limit=3");
    await ask(replica.base, `/accounts/0x1/modules?ledger_version=${oldest}`);
    expect(up.count("/v1/*")).toBe(before);
  });

  it("fetches missing state once: concurrent reads of it share one upstream request, later reads none", async () => {
    const before = up.count("/v1/*");
    const key = u64le(1_000_001); // never written: the upstream answers 404, which is kept too (in memory)
    const answers = await Promise.all(Array.from({ length: 8 }, () => ask(replica.base, ...rawItem(DEVNET_TABLE_HANDLE, key, null))));
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([404]));
    expect(up.count("/v1/*") - before).toBe(1);
    await ask(replica.base, ...rawItem(DEVNET_TABLE_HANDLE, key, oldest));
    expect(up.count("/v1/*") - before).toBe(1);
  });

  it("shows its lag in /v1/info", async () => {
    const i = await info(replica.base);
    expect(i.follow_lag_versions).toBe("0");
  });

  it("a plain serve over the same ledger (no upstream) serves what is stored and answers 503 for what it would fetch", async () => {
    const plain = await startServe(["--db", replicaDb, "--no-prune", "--quiet"]);
    try {
      const stored = rawItem(GENESIS_TABLE, GENESIS_TABLE_KEY, oldest);
      expect(await ask(plain.base, ...stored)).toEqual(await ask(replica.base, ...stored));
      const missing = await ask(plain.base, ...rawItem(DEVNET_TABLE_HANDLE, u64le(4_000_004), null));
      expect(missing.status).toBe(503);
      expect(Buffer.from(missing.body, "hex").toString()).toContain("fetched from the upstream only by serve --follow");
    } finally {
      await plain.stop();
    }
  }, 60_000);

  it("with the upstream down: 503 within the timeout for reads that need it; stored state still served", async () => {
    const stored = await ask(replica.base, ...rawItem(GENESIS_TABLE, GENESIS_TABLE_KEY, oldest));
    expect(stored.status).toBe(200);
    up.faults.down = true;
    try {
      const t0 = performance.now();
      const missing = await ask(replica.base, ...rawItem(DEVNET_TABLE_HANDLE, u64le(2_000_002), null));
      const ms = performance.now() - t0;
      expect(missing.status).toBe(503);
      expect(JSON.parse(Buffer.from(missing.body, "hex").toString()).error_code).toBe("internal_error");
      expect(ms).toBeLessThan(TIMEOUT_MS + 1500);
      expect(await ask(replica.base, ...rawItem(GENESIS_TABLE, GENESIS_TABLE_KEY, oldest))).toEqual(stored);
      expect((await ask(replica.base, `/accounts/0x1/modules?ledger_version=${oldest}`)).status).toBe(200);
      expect((await ask(replica.base, `/accounts/${devnetAccount(0)}/transaction_summaries`)).status).toBe(200);
      // The account and its resources were written by synced blocks or fetched before: local.
      expect((await ask(replica.base, `/accounts/${devnetAccount(0)}`)).status).toBe(200);
      expect((await ask(replica.base, `/accounts/${devnetAccount(0)}/resource/0x1::account::Account`)).status).toBe(200);
      expect((await ask(replica.base, `/accounts/0x1/module/coin?ledger_version=${oldest}`)).status).toBe(200);
    } finally {
      up.heal();
    }
  }, 30_000);

  it("when the upstream has pruned its base: reads a newer upstream version where the ledger proves the value unchanged, else 410", async () => {
    // A second replica, started 300 blocks back; then the upstream prunes 150 blocks past its start.
    const start = up.blocks[up.blocks.length - 300]!;
    const second = await startServe(["--follow", up.base, "--from", String(start.first), "--db", await backend.newDb(), "--no-prune", "--quiet", ...UNBOUNDED_FETCHES, "--max-rps", "5000", "--poll", "50", "--upstream-timeout", String(TIMEOUT_MS)]);
    try {
      await caughtUp(second.base, up.ledgerVersion);
      const from = BigInt((await info(second.base)).oldest_ledger_version);
      expect(from).toBe(start.first);
      const prunedTo = up.blocks[up.blocks.length - 150]!.first;
      await up.pruneTo(prunedTo);
      // Never written anywhere: provably unchanged, answered as the upstream did before it pruned.
      expect((await ask(second.base, ...rawItem(DEVNET_TABLE_HANDLE, u64le(3_000_003), from))).status).toBe(404);
      // 0x1's modules never change after genesis: read at the upstream's oldest, served at `from`.
      const ours = await ask(second.base, `/accounts/0x1/modules?ledger_version=${from}`);
      expect(ours).toEqual(await ask(up.base, `/accounts/0x1/modules?ledger_version=${prunedTo}`));
      // The app module is upgraded every 50 blocks, so a synced block changed that account's list
      // between the two: the list at the base cannot be had any more.
      const lost = await fetch(`${second.base}/accounts/${DEVNET_APP_ADDRESS}/modules?ledger_version=${from}`);
      expect(lost.status).toBe(410);
      // The 410 names the version; its ledger headers are the replica's own, not a raised oldest.
      expect(((await lost.json()) as { message: string }).message).toBe(`Ledger version(${from}) has been pruned`);
      expect(lost.headers.get("x-node-ledger-oldest-version")).toBe(String(from));
      // A table key first written by a synced block between the two: its base value is lost.
      type Change = { type: string; handle?: string; key?: string; value?: string };
      const firstWrite = new Map<string, { at: bigint; change: Change }>();
      for (let v = from; v <= prunedTo; v++) {
        for (const c of (JSON.parse(up.txns[Number(v)]!) as { changes: Change[] }).changes) {
          if (c.type.endsWith("_table_item") && c.handle === DEVNET_TABLE_HANDLE && !firstWrite.has(c.key!)) firstWrite.set(c.key!, { at: v, change: c });
        }
      }
      const [key, { at: w, change }] = [...firstWrite].find(([, f]) => f.at > from)!;
      expect((await ask(second.base, ...rawItem(DEVNET_TABLE_HANDLE, key, w - 1n))).status).toBe(410);
      // At that write the ledger itself answers, without the upstream.
      const atWrite = await ask(second.base, ...rawItem(DEVNET_TABLE_HANDLE, key, w));
      const written = change.type === "write_table_item";
      expect({ status: atWrite.status, value: atWrite.status === 200 ? "0x" + atWrite.body : null }).toEqual({ status: written ? 200 : 404, value: written ? change.value : null });
    } finally {
      await second.stop();
    }
  }, 120_000);
});
