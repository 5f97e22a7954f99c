/**
 * transaction_summaries racing a prune in another process, on both backends: requests with
 * `start_version` / `end_version` near the oldest version (and latest pages of an account whose
 * page is short, so it reaches down to the oldest version) while a pruner process raises the
 * oldest version one block at a time, 249 commits. The pruner is stepped by the answers, not by a
 * clock: one prune commit per `ANSWERS_PER_STEP` answers, each commit racing the `IN_FLIGHT`
 * requests still open, so the race is as dense on a fast machine as on a loaded one. Every answer
 * must be exactly the page an oracle built from the chain gives for the ledger position in the
 * answer's own headers, or 410. Never a short or empty 200 where rows were due, never a page
 * starting past `start_version`. Seeded (`TEST_SEED=n`; the seed is in the test's name).
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendFactories } from "./helpers/backends.js";
import { ChainBuilder, addr } from "./helpers/chain.js";
import { requireBuiltCli } from "./helpers/cli.js";
import { serveChain, stopNode, type TestNode } from "./helpers/node.js";
import { prng, testSeed } from "./helpers/seed.js";

const IN_FLIGHT = 32;
const BLOCKS = 300;
/** The pruner stops this many blocks before the newest. */
const KEEP_BLOCKS = 50;
/** Prune commits: one per block from genesis up to `BLOCKS - KEEP_BLOCKS`. */
const STEPS = BLOCKS - KEEP_BLOCKS - 1;
/** Answers between two prune commits. */
const ANSWERS_PER_STEP = 10;
const PRUNER = new URL("./helpers/pruneSteps.mjs", import.meta.url).pathname;
const SEED = testSeed(20_260_315);

/** S sends in every third block (so pages near the oldest version are sometimes empty); T rarely (short pages). */
const S = addr("5e" + "1".repeat(62));
const T = addr("7e" + "2".repeat(62));

interface Sent {
  version: bigint;
  hash: string;
  seq: number;
}

interface Summary {
  sender: string;
  version: string;
  transaction_hash: string;
  replay_protector: { type: string; sequence_number?: string };
}


for (const factory of backendFactories) {
  const backend = factory();
  describe(`transaction_summaries racing a prune (${backend.name})`, () => {
    let node: TestNode;
    const chain = new ChainBuilder().genesis();
    const sent = new Map<string, Sent[]>([
      [S, []],
      [T, []],
    ]);
    beforeAll(async () => {
      const seq = new Map([
        [S, 0],
        [T, 0],
      ]);
      for (let b = 1; b <= BLOCKS; b++) {
        const senders = [...(b % 3 === 0 ? [S] : []), ...(b % 40 === 0 ? [T] : [])];
        let v = chain.nextUserVersion;
        for (const s of senders) {
          // The chain builder hashes a user transaction as sha256("u/<version>").
          sent.get(s)!.push({ version: v, hash: "", seq: seq.get(s)! });
          v++;
        }
        chain.block(
          senders.map((s) => {
            const next = seq.get(s)!;
            seq.set(s, next + 1);
            return { sender: s, seq: next };
          }),
        );
      }
      // The hashes as the chain holds them, not as this test would compute them.
      const byVersion = new Map(chain.txns.map((t) => [String(t.version), t]));
      for (const list of sent.values()) {
        for (const x of list) {
          const t = byVersion.get(String(x.version))!;
          expect(t.type).toBe("user_transaction");
          x.hash = t.hash as string;
        }
      }
      node = await serveChain(backend, chain);
    });
    afterAll(() => stopNode(node, backend));

    /** The page the ledger at (oldest, latest) answers, or "410". */
    function oracle(sender: string, q: { start?: bigint; end?: bigint; limit: number }, oldest: bigint, latest: bigint): Sent[] | "410" {
      const all = sent.get(sender)!.filter((x) => x.version >= oldest && x.version <= latest);
      if (q.start !== undefined) {
        if (q.start < oldest) return "410";
        return all.filter((x) => x.version >= q.start!).slice(0, q.limit);
      }
      if (q.end !== undefined && q.end < oldest) return "410";
      const end = q.end !== undefined && q.end < latest ? q.end : latest;
      const upTo = all.filter((x) => x.version <= end);
      return q.limit === 0 ? [] : upTo.slice(-q.limit);
    }

    it(`answers every request exactly or 410 while another process prunes ${STEPS} times (seed ${SEED})`, { timeout: 150_000 }, async () => {
      requireBuiltCli(); // the pruner runs on dist/
      const random = prng(SEED);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
      const pruner = spawn(process.execPath, [PRUNER, node.db, String(BLOCKS - KEEP_BLOCKS)], { stdio: ["pipe", "pipe", "inherit"] });
      let prunes = 0;
      let prunerDone = false;
      /** Resolves at the pruner's next line (`pruned …` or `done`). */
      let stepped: () => void = () => undefined;
      pruner.stdout!.on("data", (d: Buffer) => {
        const text = d.toString();
        prunes += text.match(/^pruned /gm)?.length ?? 0;
        if (/^done$/m.test(text)) prunerDone = true;
        stepped();
      });
      const prunerExit = new Promise<number | null>((resolve) => pruner.once("exit", (code) => {
          prunerDone = true;
          stepped();
          resolve(code);
        }),
      );
      let answered = 0;
      /** Resolves once `answered` reaches the given count. */
      let waitingFor: { count: number; resolve: () => void } | null = null;
      const answers = (count: number) =>
        new Promise<void>((resolve) => {
          if (answered >= count) resolve();
          else waitingFor = { count, resolve };
        });
      /** One prune commit per ANSWERS_PER_STEP answers, until the pruner reaches its floor. */
      const driver = (async () => {
        while (!prunerDone) {
          await answers(answered + ANSWERS_PER_STEP);
          const line = new Promise<void>((resolve) => (stepped = resolve));
          pruner.stdin!.write("step\n");
          await line;
        }
      })();

      let oldestSeen = 0n;
      let issued = 0;
      const counts = { exact: 0, empty: 0, gone: 0, wrong: 0, duringPrune: 0 };
      const wrongExamples: string[] = [];
      const client = async () => {
        while (!prunerDone) {
          issued++;
          const sender = random() < 0.8 ? S : T;
          const mode = pick(["start", "start", "end", "end", "none"] as const);
          const around = oldestSeen + BigInt(Math.floor(random() * 60) - 15);
          const q = {
            limit: pick([0, 1, 2, 3, 5, 10, 100]),
            ...(mode === "start" ? { start: around < 0n ? 0n : around } : {}),
            ...(mode === "end" ? { end: around < 0n ? 0n : around } : {}),
          };
          const url =
            `${node.base}/accounts/${sender}/transaction_summaries?limit=${q.limit}` +
            (q.start !== undefined ? `&start_version=${q.start}` : "") +
            (q.end !== undefined ? `&end_version=${q.end}` : "");
          const res = await fetch(url);
          const text = await res.text();
          answered++;
          if (waitingFor && answered >= waitingFor.count) waitingFor.resolve();
          // Answered while the pruner was still committing (it may have ended during the request).
          if (!prunerDone) counts.duringPrune++;
          const oldest = BigInt(res.headers.get("x-node-ledger-oldest-version") ?? "-1");
          const latest = BigInt(res.headers.get("x-node-ledger-version") ?? "-1");
          if (oldest > oldestSeen) oldestSeen = oldest;
          if (res.status === 410) {
            counts.gone++;
            continue;
          }
          const want = oracle(sender, q, oldest, latest);
          let ok = false;
          if (res.status === 200 && want !== "410") {
            const got = JSON.parse(text) as Summary[];
            ok =
              got.length === want.length &&
              got.every(
                (g, i) =>
                  BigInt(g.sender) === BigInt(sender) &&
                  g.version === String(want[i]!.version) &&
                  g.transaction_hash === want[i]!.hash &&
                  g.replay_protector.type === "sequence_number" &&
                  g.replay_protector.sequence_number === String(want[i]!.seq),
              );
            if (ok && got.length === 0) counts.empty++;
          }
          if (ok) counts.exact++;
          else {
            counts.wrong++;
            if (wrongExamples.length < 5) {
              wrongExamples.push(`${url} -> ${res.status} (oldest ${oldest}, latest ${latest}) ${text.slice(0, 300)}; oracle: ${JSON.stringify(want === "410" ? want : want.map((x) => String(x.version)))}`);
            }
          }
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, client));
      // Clients stop once the pruner is done (or gone): release a driver still waiting for answers.
      (waitingFor as { resolve: () => void } | null)?.resolve();
      await driver;
      pruner.stdin!.end();
      expect(await prunerExit).toBe(0);
      console.log(
        `${backend.name}: ${issued} requests, ${counts.duringPrune} while the pruner ran (${prunes} prune commits): ` +
          `${counts.exact} exact (${counts.empty} empty), ${counts.gone} 410, ${counts.wrong} wrong`,
      );
      expect(wrongExamples).toEqual([]);
      expect(counts.wrong).toBe(0);
      expect(counts.exact + counts.gone).toBe(issued);
      // The race was real: the pruner committed every step while requests ran, and both outcomes,
      // including empty pages, occurred.
      expect(prunes).toBe(STEPS);
      expect(issued).toBeGreaterThanOrEqual(STEPS * ANSWERS_PER_STEP);
      expect(counts.duringPrune).toBeGreaterThan(issued / 2);
      expect(counts.gone).toBeGreaterThan(0);
      expect(counts.exact).toBeGreaterThan(0);
      expect(counts.empty).toBeGreaterThan(0);
    });
  });
}
