/**
 * `ListedCode` on a real server: a module page read of an account whose last page listed modules
 * the caller does not want the code of (it holds their records) gets an answer without that code:
 * the database neither builds nor sends it. Measured as the bytes the reads' connection receives
 * (and, for the names the statement is sent, the bytes it sends).
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
/** An account whose one module is published again with other code at versions 1, 2 and 3. */
const HISTORY = Buffer.alloc(32, 0xcd);

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
    for (const v of [1n, 2n, 3n]) {
      await store.commitBlock({
        block: { height: v, epoch: 0n, timestampUsec: v, firstVersion: v, lastVersion: v, endInfo: null },
        transactions: [{ version: v, kind: "block_metadata_transaction", hash: Buffer.alloc(32, Number(v) + 1), user: null }],
        modules: [{ version: v, address: HISTORY, name: "h", stateKey: moduleStateKey(HISTORY, "h"), bytecode: Buffer.from(MODULES[Number(v)]!.bytecode) }],
        tableItems: [],
        resources: [],
      });
    }
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
/** Bytes sent on the connections since the last `taken()`. */
let sent = 0;
const taken = () => {
  const n = sent;
  sent = 0;
  return n;
};

class CountingSocket extends Socket {
  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk instanceof Buffer) received += chunk.length;
    return super.push(chunk, encoding);
  }

  // Counted where the socket's writes reach the kernel: one chunk (or a corked batch) at a time.
  override _write(chunk: Buffer, encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    sent += chunk.length;
    super._write(chunk, encoding, done);
  }

  override _writev(chunks: { chunk: Buffer; encoding: BufferEncoding }[], done: (err?: Error | null) => void): void {
    for (const c of chunks) sent += c.chunk.length;
    super._writev!(chunks, done);
  }
}

/** A store's reads over one counted connection. */
function countedReads(): { reads: PostgresReads; connections: PipelinedConnections } {
  const connections = new PipelinedConnections({ ...clientConfig(url, DEFAULT_POSTGRES_SETTINGS), stream: () => new CountingSocket() }, 1);
  return { reads: new PostgresReads(new NamedStatements(connections), new PositionMemo(0)), connections };
}

describe("ListedCode", () => {
  it("leaves out of a page's answer the code of the modules the account's last page listed that the caller does not want", async () => {
    const { reads, connections } = countedReads();
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

  it("sends no names for an account whose last page listed none of the hashes of the page before it, and names again once one repeats", async () => {
    const held = new Set<string>();
    const holds = (hash: string) => !held.has(hash);
    const read = async (reads: PostgresReads, version: bigint) => {
      const page = await reads.wire.readModules(HISTORY, version, null, 26, holds);
      for (const m of page!.value.rows) held.add(m.codeHash);
      return page!.value.rows[0]!;
    };
    // What the statement at version 3 sends naming nothing: a store that never read the account.
    const fresh = countedReads();
    const plain = countedReads();
    try {
      await read(fresh.reads, 3n);
      taken();
      await read(fresh.reads, 3n);
      const namingOne = taken();
      held.clear();
      await read(plain.reads, 1n);
      await read(plain.reads, 2n);
      taken();
      // Version 2's page listed no hash of version 1's: version 3's statement names nothing.
      const third = await read(plain.reads, 3n);
      expect(third.record).toBeDefined();
      const namingNone = taken();
      expect(namingOne - namingNone).toBe(Buffer.byteLength(third.codeHash));
      // Version 3 again lists a hash of the page before: the read after it names it, and gets no record.
      await read(plain.reads, 3n);
      taken();
      const again = await read(plain.reads, 3n);
      expect(again.record).toBeUndefined();
      expect(taken()).toBe(namingOne);
    } finally {
      await fresh.connections.end();
      await plain.connections.end();
    }
  });
});
