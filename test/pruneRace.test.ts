/**
 * Reads racing the pruner: while `ledger-node prune` (another process) raises the oldest version
 * step by step, concurrent reads at every version answer either the exact value of that version
 * or 410 — never a wrong value, never a 5xx. Seeded (`TEST_SEED=n`; the seed is in the test's name).
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendFactories } from "./helpers/backends.js";
import { ChainBuilder, addr, u64le, writeTable } from "./helpers/chain.js";
import { CLI, requireBuiltCli } from "./helpers/cli.js";
import { serveChain, stopNode, type TestNode } from "./helpers/node.js";
import { prng, testSeed } from "./helpers/seed.js";

const H = addr("7ab1e");
const KEYS = 4;
const SEED = testSeed(4_2026);

function pruneCli(db: string, window: number): Promise<number> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, "prune", "--db", db, "--window", String(window)], { stdio: "ignore" });
    p.once("exit", (code) => resolve(code ?? -1));
  });
}

for (const factory of backendFactories) {
  const backend = factory();
  describe(`reads racing the pruner (${backend.name})`, () => {
    let node: TestNode;
    const chain = new ChainBuilder().genesis();
    /** Expected value of each key at each version: the last write at or below it. */
    const writes: Array<{ version: bigint; key: number; value: bigint }> = [];
    beforeAll(async () => {
      requireBuiltCli();
      for (let b = 0; b < 150; b++) {
        const key = b % KEYS;
        writes.push({ version: chain.nextUserVersion, key, value: BigInt(b) });
        chain.block([{ sender: addr("b0b"), seq: b, changes: [writeTable(H, u64le(key), u64le(b))] }]);
      }
      node = await serveChain(backend, chain);
    });
    afterAll(() => stopNode(node, backend));

    const expected = (key: number, at: bigint): bigint | null => {
      let v: bigint | null = null;
      for (const w of writes) if (w.key === key && w.version <= at) v = w.value;
      return v;
    };

    it(`answers the exact value or 410 while the window shrinks (seed ${SEED})`, async () => {
      const random = prng(SEED);
      const latest = chain.version - 1n;
      let stop = false;
      const counts = { ok: 0, gone: 0, missing: 0 };
      const reader = async () => {
        while (!stop) {
          const at = BigInt(Math.floor(random() * Number(latest + 1n)));
          const key = Math.floor(random() * KEYS);
          const res = await fetch(`${node.base}/tables/${H}/raw_item?ledger_version=${at}`, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/x-bcs" },
            body: JSON.stringify({ key: u64le(key) }),
          });
          const body = Buffer.from(await res.arrayBuffer());
          const want = expected(key, at);
          // 200 with the value written, 404 where none was, or 410 once pruned past `at`.
          const got = res.status === 200 ? body.readBigUInt64LE(0) : res.status === 404 ? null : res.status === 410 ? "gone" : `status ${res.status}`;
          expect([want, "gone"], `key ${key} at ${at}: ${res.status} ${body}`).toContain(got);
          counts[got === "gone" ? "gone" : got === null ? "missing" : "ok"]++;
        }
      };
      const readers = Array.from({ length: 8 }, reader);
      for (const window of [500, 400, 300, 200, 100, 50]) expect(await pruneCli(node.db, window)).toBe(0);
      stop = true;
      await Promise.all(readers);
      const info = await (await fetch(`${node.base}/estimate_gas_price`)).headers;
      const oldest = BigInt(info.get("x-node-ledger-oldest-version")!);
      expect(oldest).toBeGreaterThan(latest - 60n);
      expect(counts.ok).toBeGreaterThan(0);
      expect(counts.gone).toBeGreaterThan(0);
      // After pruning, every key still reads its newest value at the oldest kept version.
      for (let key = 0; key < KEYS; key++) {
        const res = await fetch(`${node.base}/tables/${H}/raw_item?ledger_version=${oldest}`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/x-bcs" },
          body: JSON.stringify({ key: u64le(key) }),
        });
        expect(Buffer.from(await res.arrayBuffer()).readBigUInt64LE(0)).toBe(expected(key, oldest));
      }
    });
  });
}
