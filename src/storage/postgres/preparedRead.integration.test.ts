/**
 * `PreparedRead` on a real server: which protocol messages each execution writes (recorded from
 * the connections' sockets), that rows parsed with a remembered description are the rows, and the
 * statement parsed again when the server's answer says the connection's copy cannot be used.
 */
import { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../../../test/helpers/postgres.js";
import { clientConfig } from "./connection.js";
import { PipelinedConnections } from "./pipelined.js";
import { NamedStatement, PreparedRead } from "./preparedRead.js";
import { DEFAULT_POSTGRES_SETTINGS } from "./settings.js";

const backend = postgresBackend();
let url: string;
let admin: pg.Client;

beforeAll(async () => {
  url = await backend.newDb();
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query("CREATE TABLE item (id int PRIMARY KEY, label text, body bytea, amount numeric(20,0), flag boolean)");
  await admin.query("INSERT INTO item SELECT i, 'item ' || i, decode(lpad(to_hex(i), 4, '0'), 'hex'), 18446744073709551615 - i, i % 2 = 0 FROM generate_series(1, 20) i");
  await admin.query("UPDATE item SET label = NULL WHERE id = 3");
});

afterAll(async () => {
  await admin?.end();
  await backend.cleanup();
});

/** Protocol messages written on the connections, by their type letter (P, B, D, E, S, C...). */
const written: string[] = [];

/**
 * A socket that records the type of each message node-postgres writes on it (one buffer a
 * message; a corked execution's messages reach `_writev` together).
 */
class RecordingSocket extends Socket {
  override _write(chunk: Buffer, encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    written.push(String.fromCharCode(chunk[0]!));
    super._write(chunk, encoding, done);
  }

  override _writev(chunks: Array<{ chunk: Buffer; encoding: BufferEncoding }>, done: (error?: Error | null) => void): void {
    for (const c of chunks) written.push(String.fromCharCode(c.chunk[0]!));
    super._writev!(chunks, done);
  }
}

/** `count` pipelined connections whose messages `written` records. */
const recordedConnections = (count: number) => new PipelinedConnections({ ...clientConfig(url, DEFAULT_POSTGRES_SETTINGS), stream: () => new RecordingSocket() }, count);

function run<R>(connections: PipelinedConnections, statement: NamedStatement, values: unknown[], arrays = true): Promise<R[]> {
  return new Promise((resolve, reject) => connections.send(new PreparedRead(statement, values, arrays), (err, rows) => (err ? reject(err) : resolve(rows as R[]))));
}

/** The messages written since `from` (an index into `written`), in order, joined. */
const since = (from: number) => written.slice(from).join("");

const byId = new NamedStatement("t_item", "SELECT id, label, body, amount, flag FROM item WHERE id = $1");
const count = new NamedStatement("t_count", "SELECT count(*)::int AS n FROM item WHERE id <= $1");

/** What `byId` answers for `id`, as node-postgres's own Query parses it. */
async function expected(id: number): Promise<unknown[]> {
  const r = await admin.query<unknown[]>({ text: byId.text, values: [id], rowMode: "array" });
  return r.rows[0]!;
}

describe("PreparedRead", () => {
  it("on a connection that described a statement, sends Bind, Execute and Sync alone, and parses the rows with the remembered description", async () => {
    const connections = recordedConnections(1);
    try {
      // First round: both statements pipelined on one connection before any answer arrives.
      let mark = written.length;
      const ids = [1, 2, 3, 4, 5];
      const first = await Promise.all([...ids.map((id) => run(connections, byId, [id])), ...ids.map((id) => run(connections, count, [id]))]);
      const firstRound = since(mark).replace(/^.*?P/, "P"); // the connection's startup messages before
      expect(firstRound.match(/P/g)).toHaveLength(2);
      expect(firstRound.match(/D/g)).toHaveLength(10);

      mark = written.length;
      const second = await Promise.all([...ids.map((id) => run(connections, byId, [id])), ...ids.map((id) => run(connections, count, [id]))]);
      expect(since(mark)).toBe("BES".repeat(10));

      const rows: unknown[][] = [];
      for (const id of ids) rows.push(await expected(id));
      expect(first.slice(0, 5)).toEqual(rows.map((r) => [r]));
      expect(second.slice(0, 5)).toEqual(rows.map((r) => [r]));
      expect(second.slice(5)).toEqual(ids.map((id) => [[id]]));
      expect(second[2]).toEqual([[3, null, Buffer.from([0, 3]), "18446744073709551612", false]]);
      // Rows by column name, from the same remembered description.
      await expect(run(connections, byId, [4], false)).resolves.toEqual([{ id: 4, label: "item 4", body: Buffer.from([0, 4]), amount: "18446744073709551611", flag: true }]);
    } finally {
      await connections.end();
    }
  });

  it("parses and describes a statement again on a connection opened after the server ended the one that had it", async () => {
    const connections = recordedConnections(1);
    try {
      await run(connections, byId, [6]);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
      await sleep(200);
      const mark = written.length;
      await expect(run(connections, byId, [7])).resolves.toEqual([await expected(7)]);
      expect(since(mark)).toMatch(/PBDES$/);
    } finally {
      await connections.end();
    }
  });

  it("closes and parses again a statement whose first execution failed after its Parse, before its description", async () => {
    const connections = recordedConnections(1);
    const typed = new NamedStatement("t_typed", "SELECT $1::int + 1 AS n");
    try {
      await expect(run(connections, typed, ["not a number"])).rejects.toMatchObject({ code: "22P02" });
      const mark = written.length;
      await expect(run(connections, typed, [41])).resolves.toEqual([[42]]);
      expect(since(mark)).toBe("CPBDES");
      await expect(run(connections, typed, [1])).resolves.toEqual([[2]]);
    } finally {
      await connections.end();
    }
  });

  it("parses a statement again on every connection once a migration changed its result type (SQLSTATE 0A000)", async () => {
    await admin.query("CREATE TABLE counter (id int PRIMARY KEY, v int)");
    await admin.query("INSERT INTO counter VALUES (1, 7)");
    const connections = recordedConnections(2);
    const read = new NamedStatement("t_counter", "SELECT * FROM counter WHERE id = $1");
    try {
      // Four at once: both connections parse and describe it.
      await expect(Promise.all([1, 1, 1, 1].map((id) => run(connections, read, [id])))).resolves.toEqual(Array(4).fill([[1, 7]]));
      await admin.query("ALTER TABLE counter ALTER COLUMN v TYPE text");
      await expect(run(connections, read, [1])).rejects.toMatchObject({ code: "0A000" });
      const mark = written.length;
      await expect(Promise.all([1, 1, 1, 1].map((id) => run(connections, read, [id])))).resolves.toEqual(Array(4).fill([[1, "7"]]));
      expect(since(mark).match(/CP/g)).toHaveLength(2);
    } finally {
      await connections.end();
    }
  });
});
