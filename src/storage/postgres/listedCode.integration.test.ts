/**
 * `ListedCode` on a real server: a module page read of an account whose last page listed modules
 * the caller does not want the code of (it holds their records) gets an answer without that code:
 * the database neither builds nor sends it. Measured as the bytes the reads' connection receives.
 */
import { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../../../test/helpers/postgres.js";
import { genesisModules } from "../../../test/helpers/moveFixtures.js";
import { moduleStateKey } from "../../ledger/stateKey.js";
import { clientConfig, NamedStatements } from "./connection.js";
import { PipelinedConnections } from "./pipelined.js";
import { PositionMemo } from "./positionMemo.js";
import { PostgresStore } from "./PostgresStore.js";
import { PostgresReads } from "./reads.js";
import { DEFAULT_POSTGRES_SETTINGS } from "./settings.js";

const backend = postgresBackend();
let url: string;
const ACCOUNT = Buffer.alloc(32, 0xab);
const MODULES = genesisModules().slice(0, 8);

beforeAll(async () => {
  url = await backend.newDb();
  const store = await PostgresStore.connect(url, { writer: "test" });
  try {
    await store.initChain(4);
    await store.commitBlock({
      block: { height: 0n, epoch: 0n, timestampUsec: 0n, firstVersion: 0n, lastVersion: 0n, endInfo: null },
      transactions: [{ version: 0n, kind: "genesis_transaction", hash: Buffer.alloc(32, 1), user: null }],
      modules: MODULES.map((m, i) => {
        const name = `m${i}`;
        return { version: 0n, address: ACCOUNT, name, stateKey: moduleStateKey(ACCOUNT, name), bytecode: Buffer.from(m.bytecode) };
      }),
      tableItems: [],
      resources: [],
    });
  } finally {
    await store.close();
  }
});

afterAll(async () => {
  await backend.cleanup();
});

/** Bytes received on the connections since the last `take()`. */
let received = 0;
const take = () => {
  const n = received;
  received = 0;
  return n;
};

class CountingSocket extends Socket {
  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk instanceof Buffer) received += chunk.length;
    return super.push(chunk, encoding);
  }
}

describe("ListedCode", () => {
  it("leaves out of a page's answer the code of the modules the account's last page listed that the caller does not want", async () => {
    const connections = new PipelinedConnections({ ...clientConfig(url, DEFAULT_POSTGRES_SETTINGS), stream: () => new CountingSocket() }, 1);
    const reads = new PostgresReads(new NamedStatements(connections), new PositionMemo(0));
    try {
      const all = () => true;
      // The first read of the account: every record travels (the store knows none of its hashes).
      await reads.wire.readModules(ACCOUNT, undefined, null, 100, all);
      take();
      const first = await reads.wire.readModules(ACCOUNT, undefined, null, 100, all);
      const withRecords = take();
      const records = first!.value.rows.map((m) => m.record!);
      expect(records).toHaveLength(MODULES.length);
      const recordBytes = records.reduce((n, r) => n + Buffer.byteLength(r), 0);

      // The caller holds all but the first module's record: only that one travels.
      const heldHashes = new Set(first!.value.rows.slice(1).map((m) => m.codeHash));
      const held = await reads.wire.readModules(ACCOUNT, undefined, null, 100, (hash) => !heldHashes.has(hash));
      const withOne = take();
      expect(held!.value.rows.map((m) => m.name)).toEqual(first!.value.rows.map((m) => m.name));
      expect(held!.value.rows.map((m) => m.record ?? null)).toEqual([records[0], ...records.slice(1).map(() => null)]);
      // The page minus the held records' bytes, give or take the hashes the statement was sent.
      expect(withOne).toBeLessThan(withRecords - recordBytes + Buffer.byteLength(records[0]!) + 200);

      // A caller that wants them all again gets them all.
      const again = await reads.wire.readModules(ACCOUNT, undefined, null, 100, all);
      expect(again!.value.rows.map((m) => m.record)).toEqual(records);
      expect(take()).toBe(withRecords);
    } finally {
      await connections.end();
    }
  });
});
