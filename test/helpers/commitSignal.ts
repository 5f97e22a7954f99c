/** What the tests of a node told of other processes' commits share (test/streamCommitSignal.test.ts, postgres.standby). */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { addr, type ChainBuilder } from "./chain.js";
import { runCli } from "./cli.js";
import { parsePrometheus } from "./prometheus.js";

/** A counter of the node serving at `url` (its metrics on the API port). */
export const metricOf = async (node: { url: string }, name: string): Promise<number> =>
  parsePrometheus(await (await fetch(`${node.url}/metrics`)).text()).value(name, {}) ?? 0;

/** The looks the node's feed takes in 2 s with a stream open and nothing committed (after 300 ms for its first look and the signal's set-up). */
export async function quietLooks(node: { url: string }): Promise<number> {
  await sleep(300);
  const looks = await metricOf(node, "ledger_node_stream_feed_looks_total");
  await sleep(2_000);
  return (await metricOf(node, "ledger_node_stream_feed_looks_total")) - looks;
}

/** Three more blocks of `chain`, imported into `db` by `ledger-node import` in a process of its own (its file in `dir`); their versions. */
export async function importMore(chain: ChainBuilder, db: string, dir: string): Promise<{ first: number; last: number }> {
  const first = Number(chain.version);
  for (let i = 0; i < 3; i++) chain.block([{ sender: addr("b0b"), seq: Number(chain.height) }]);
  const file = join(dir, `more-${first}-${Date.now()}.ndjson`);
  writeFileSync(file, chain.ndjson());
  const imported = await runCli(["import", "--db", db, file]);
  expect(imported.code, imported.stderr).toBe(0);
  return { first, last: Number(chain.version) - 1 };
}
