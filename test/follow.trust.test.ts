/**
 * A replica never answers wrong (issue 31 §2): exact, or 503.
 *
 * - While it catches up (`serve --follow --from VERSION`), and in a plain `serve` started beside a
 *   `follow` before its first block, state before the first synced block is the upstream's (fetched)
 *   or 503, never an empty answer. On SQLite and PostgreSQL.
 * - A 404 from the upstream that is not its own "not found" of the thing asked (a gateway's HTML
 *   page, `version_not_found`, a lagging backend) answers 503 and is never stored: once the
 *   upstream heals, the replica answers what the upstream does. On SQLite and PostgreSQL.
 * - The upstream's chain id changing under a running follower, or its history changing under the
 *   same versions (on resume and while it polls), stops the follower with both ids or hashes, having
 *   written nothing of the other chain.
 * - A replica started at the head estimates gas exactly as the upstream.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_APP_ADDRESS } from "../src/ingest/devnet/chain.js";
import { UpstreamClient } from "../src/ingest/follow/client.js";
import { ChainIdChangedError, Follower, HistoryDivergedError } from "../src/ingest/follow/sync.js";
import type { Storage } from "../src/storage/contracts/storage.js";
import { openStore } from "../src/storage/open.js";
import { type Backend, backendFactories } from "./helpers/backends.js";
import { CLI, requireBuiltCli } from "./helpers/cli.js";
import { FakeUpstream, type StateNotFoundFault } from "./helpers/fakeUpstream.js";
import { type ServeProcess, startServe } from "./helpers/serveProcess.js";

const GENESIS_TABLE = "0x1b854694ae746cdbd8d44186ca4929b2b337df21d1c74633be19b2710552fdca";
const GENESIS_TABLE_KEY = "0x0619dc29a0aac8fa146714058e8dd6d2d0f3bdf5f6331907bf91f3acd81e6935";
const TIMEOUT_MS = 1500;

interface Answer {
  status: number;
  body: string;
}

async function ask(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(base + path, init);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()).toString("hex") };
}

const rawItem = (handle: string, key: string, version: bigint): [string, RequestInit] => [
  `/tables/${handle}/raw_item?ledger_version=${version}`,
  { method: "POST", headers: { "content-type": "application/json", accept: "application/x-bcs" }, body: JSON.stringify({ key }) },
];

const errorCode = (a: Answer): unknown => (JSON.parse(Buffer.from(a.body, "hex").toString()) as { error_code?: unknown }).error_code;

type Info = { ledger_version?: string | null; oldest_ledger_version?: string | null };
async function info(base: string): Promise<Info> {
  return (await fetch(`${base}/info`)).json() as Promise<Info>;
}

/** Waits until the node's ledger version satisfies `ok`. */
async function until(base: string, ok: (v: bigint) => boolean, what: string, timeoutMs = 60_000): Promise<Info> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const i = await info(base).catch(() => null);
    if (typeof i?.ledger_version === "string" && ok(BigInt(i.ledger_version))) return i;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

const replicaArgs = (up: FakeUpstream, db: string) => [
  "--follow",
  up.base,
  "--db",
  db,
  "--no-prune",
  "--quiet",
  "--max-rps",
  "5000",
  "--poll",
  "50",
  "--upstream-timeout",
  String(TIMEOUT_MS),
];

for (const makeBackend of backendFactories) {
  const backend: Backend = makeBackend();
  describe(`a replica's state reads (${backend.name})`, () => {
    let up: FakeUpstream;
    beforeAll(async () => {
      requireBuiltCli();
      up = await FakeUpstream.start({ blocks: 400 });
    }, 120_000);
    afterAll(async () => {
      up?.heal();
      await up?.close();
      await backend.cleanup();
    });

    it("while serve --follow --from VERSION catches up: modules and table items before its first block are the upstream's", async () => {
      const start = up.blocks[up.blocks.length - 300]!.first;
      // Pages slowed down, one at a time: the catch-up spans seconds.
      up.faults.only = "/v1/transactions";
      up.faults.slowMs = 150;
      const replica = await startServe([...replicaArgs(up, await backend.newDb()), "--from", String(start), "--concurrency", "1"]);
      try {
        const at = await until(replica.base, () => true, "the replica's first block");
        const v = BigInt(at.ledger_version!);
        expect(BigInt(at.oldest_ledger_version!)).toBe(start);
        for (const req of [[`/accounts/0x1/modules?ledger_version=${v}`, {}], rawItem(GENESIS_TABLE, GENESIS_TABLE_KEY, v)] as Array<[string, RequestInit]>) {
          const [ours, theirs] = await Promise.all([ask(replica.base, ...req), ask(up.base, ...req)]);
          expect({ at: req[0], ...ours }).toEqual({ at: req[0], ...theirs });
          expect(ours.status).toBe(200);
        }
        // Asked while it was still catching up.
        expect(BigInt((await info(replica.base)).ledger_version!)).toBeLessThan(up.ledgerVersion);
      } finally {
        up.heal();
        await replica.stop();
      }
    }, 120_000);

    it("a plain serve started beside a follow before its first block answers 503 for state before it, not []", async () => {
      const db = await backend.newDb();
      // An empty ledger (schema only), served before the follower writes anything.
      await (await openStore(db)).close();
      const plain = await startServe(["--db", db, "--no-prune", "--quiet"]);
      up.faults.only = "/v1/transactions";
      up.faults.slowMs = 150;
      const start = up.blocks[up.blocks.length - 200]!.first;
      const follow: ChildProcess = spawn(
        process.execPath,
        [CLI, "follow", "--upstream", up.base, "--db", db, "--from", String(start), "--quiet", "--max-rps", "5000", "--concurrency", "1", "--poll", "50"],
        { stdio: "ignore" },
      );
      try {
        const at = await until(plain.base, () => true, "the plain serve's first block");
        const v = BigInt(at.ledger_version!);
        const modules = await ask(plain.base, `/accounts/0x1/modules?ledger_version=${v}`);
        const item = await ask(plain.base, ...rawItem(GENESIS_TABLE, GENESIS_TABLE_KEY, v));
        expect([modules.status, errorCode(modules), item.status, errorCode(item)]).toEqual([503, "internal_error", 503, "internal_error"]);
        expect(Buffer.from(modules.body, "hex").toString()).toContain("fetched from the upstream only by serve --follow");
      } finally {
        follow.kill("SIGKILL");
        await new Promise((r) => follow.once("exit", r));
        up.heal();
        await plain.stop();
      }
    }, 120_000);

    describe("a 404 from the upstream that is not its own \"not found\"", () => {
      let replica: ServeProcess;
      let oldest: bigint;
      beforeAll(async () => {
        replica = await startServe([...replicaArgs(up, await backend.newDb()), "--from", "latest"]);
        const i = await until(replica.base, (v) => v === up.ledgerVersion, "the replica caught up");
        oldest = BigInt(i.oldest_ledger_version!);
      }, 120_000);
      afterAll(async () => {
        await replica?.stop();
      });

      const cases: Array<[StateNotFoundFault, string, () => [string, RequestInit]]> = [
        ["html", "a gateway's HTML page", () => rawItem(GENESIS_TABLE, GENESIS_TABLE_KEY, oldest)],
        ["version_not_found", "version_not_found", () => [`/accounts/0x1/modules?ledger_version=${oldest}`, {}]],
        ["lagging", "a lagging backend's not-found", () => [`/accounts/${DEVNET_APP_ADDRESS}/modules?ledger_version=${oldest}`, {}]],
      ];
      for (const [fault, what, req] of cases) {
        it(`${what}: 503, nothing stored; after the upstream heals, the upstream's answer`, async () => {
          up.faults.stateNotFound = fault;
          try {
            const during = await ask(replica.base, ...req());
            expect([during.status, errorCode(during)]).toEqual([503, "internal_error"]);
          } finally {
            up.heal();
          }
          const [ours, theirs] = await Promise.all([ask(replica.base, ...req()), ask(up.base, ...req())]);
          expect(theirs.status).toBe(200);
          expect(ours).toEqual(theirs);
        }, 60_000);
      }
    });
  });
}

describe("a follower whose upstream changes chain", () => {
  const dir = mkdtempSync(join(tmpdir(), "ledger-node-trust-"));
  let n = 0;
  const logs: string[] = [];
  const log = { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m) };
  const follower = (store: Storage, up: FakeUpstream, exitAtHead: boolean) =>
    new Follower(store, new UpstreamClient(up.base, { maxRequestsPerSecond: 5000 }), { from: { kind: "genesis" }, concurrency: 4, pollMs: 20, exitAtHead, log });
  /** `run` settled within `ms`: its error, or "resolved", or "still running". */
  const settled = (run: Promise<void>, ms: number): Promise<unknown> =>
    Promise.race([run.then(() => "resolved", (e: unknown) => e), new Promise((r) => setTimeout(() => r("still running"), ms))]);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("another chain id while it runs: stops taking versions, naming both chain ids", async () => {
    const up = await FakeUpstream.start({ blocks: 30 });
    const store = await openStore(join(dir, `c${n++}.db`));
    const f = follower(store, up, false);
    const run = f.run();
    try {
      await expect.poll(async () => (await store.getLedgerInfo(true))?.ledgerVersion, { timeout: 30_000 }).toBe(up.ledgerVersion);
      const held = up.ledgerVersion;
      up.faults.chainIdOverride = 9;
      await up.extend(20);
      const e = await settled(run, 10_000);
      expect(String((e as Error).message ?? e)).toContain("the upstream now serves chain 9, but this ledger holds chain 4");
      expect(e).toBeInstanceOf(ChainIdChangedError);
      expect((await store.getLedgerInfo(true))?.ledgerVersion).toBe(held);
    } finally {
      f.stop();
      await run.catch(() => undefined);
      await store.close();
      await up.close();
    }
  }, 60_000);

  it("a page of transactions of another chain id: stops before taking any of it", async () => {
    const up = await FakeUpstream.start({ blocks: 30 });
    const store = await openStore(join(dir, `p${n++}.db`));
    up.faults.pageChainId = 9;
    try {
      const e = await settled(follower(store, up, true).run(), 10_000);
      expect(String((e as Error).message ?? e)).toContain("the upstream's page of transactions from version 0 is of chain 9, but this ledger holds chain 4");
      expect(e).toBeInstanceOf(ChainIdChangedError);
      expect(await store.getLedgerInfo(true)).toBeNull();
    } finally {
      await store.close();
      await up.close();
    }
  }, 60_000);

  for (const when of ["on resume", "while it polls"] as const) {
    it(`another history under the same chain id (${when}): stops, naming the version and both hashes; nothing of it written`, async () => {
      const up = await FakeUpstream.start({ blocks: 30 });
      const store = await openStore(join(dir, `h${n++}.db`));
      let run: Promise<void> | null = null;
      let f: Follower | null = null;
      try {
        if (when === "on resume") await follower(store, up, true).run();
        else {
          f = follower(store, up, false);
          run = f.run();
          await expect.poll(async () => (await store.getLedgerInfo(true))?.ledgerVersion, { timeout: 30_000 }).toBe(up.ledgerVersion);
        }
        const held = (await store.getLedgerInfo(true))!.ledgerVersion;
        const [ours] = await store.getFingerprints(held, held);
        // A reset chain with the same chain id, grown past the ledger.
        await up.swapChain(60, "reset");
        expect(up.ledgerVersion).toBeGreaterThan(held);
        if (when === "on resume") run = follower(store, up, true).run();
        const e = await settled(run!, 10_000);
        const theirs = (JSON.parse(up.txns[Number(held)]!) as { hash: string }).hash;
        // The head the follower last read: the new chain's, or the old chain's (the version it holds)
        // when it checks that version before it reads the head again.
        const message = new RegExp(`at version ${held} the ledger holds transaction 0x${Buffer.from(ours!.hash).toString("hex")}, the upstream \\(head version (\\d+)\\) ${theirs}`);
        const found = message.exec(String((e as Error).message ?? e));
        expect(found, String((e as Error).message ?? e)).not.toBeNull();
        expect(BigInt(found![1]!)).toBeGreaterThanOrEqual(held);
        expect(BigInt(found![1]!)).toBeLessThanOrEqual(up.ledgerVersion);
        expect(e).toBeInstanceOf(HistoryDivergedError);
        expect((await store.getLedgerInfo(true))?.ledgerVersion).toBe(held);
      } finally {
        f?.stop();
        await run?.catch(() => undefined);
        await store.close();
        await up.close();
      }
    }, 60_000);
  }
});

describe("a replica started at the head", () => {
  it("estimates gas exactly as the upstream from its first answer, with full blocks at raised prices before the head", async () => {
    requireBuiltCli();
    // The last 16 of every 40 blocks full at raised prices; the head block ends such a run.
    const up = await FakeUpstream.start({ blocks: 239, chain: { burstEvery: 40, burstLength: 16 } });
    const dir = mkdtempSync(join(tmpdir(), "ledger-node-gas-"));
    const theirs = await ask(up.base, "/estimate_gas_price");
    const replica = await startServe([...replicaArgs(up, join(dir, "r.db")), "--from", "latest"]);
    try {
      const answers: Answer[] = [];
      let caughtUp = false;
      while (!caughtUp) {
        caughtUp = (await info(replica.base)).ledger_version === String(up.ledgerVersion);
        answers.push(await ask(replica.base, "/estimate_gas_price"));
      }
      // Before the history is in, 503; never another estimate than the upstream's.
      expect(answers.filter((a) => a.status !== 503)).toEqual(answers.filter((a) => a.status !== 503).map(() => theirs));
      expect(await ask(replica.base, "/estimate_gas_price")).toEqual(theirs);
      // The raised prices are in the estimate: a ledger without the history answers the minimum, 0.
      expect((JSON.parse(Buffer.from(theirs.body, "hex").toString()) as { gas_estimate: number }).gas_estimate).toBeGreaterThan(0);
    } finally {
      await replica.stop();
      await up.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
