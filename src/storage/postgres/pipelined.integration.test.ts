/**
 * The reads' pipelined connections (`pipelined.ts`) on a real server: how many the store opens,
 * that the server ending them costs only the statements in flight, and that a statement past its
 * timeout fails alone on a connection other statements are pipelined on, and that the statements
 * of requests read in one turn of the event loop leave in one write.
 */
import { Socket, createServer, type Server } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBackend } from "../../../test/helpers/postgres.js";
import { clientConfig } from "./connection.js";
import { isUnavailableError } from "./errors.js";
import { PipelinedConnections } from "./pipelined.js";
import { NamedStatement, PreparedRead } from "./preparedRead.js";
import { PostgresStore } from "./PostgresStore.js";
import { DEFAULT_POSTGRES_SETTINGS } from "./settings.js";
import { SQL } from "./sql.js";

const backend = postgresBackend();
let url: string;
let admin: pg.Client;

beforeAll(async () => {
  url = await backend.newDb();
  admin = new pg.Client({ connectionString: url, application_name: "pipelined-test-admin" });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await backend.cleanup();
});

/** Backends of the test's database whose last statement was the ledger position read. */
async function ledgerReaders(): Promise<number[]> {
  const r = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = $1 ORDER BY pid", [SQL.ledger]);
  return r.rows.map((row) => row.pid);
}

let statements = 0;
/** Runs `text` as a statement of its own name on `connections`; rows by column name. */
function run<R>(connections: PipelinedConnections, text: string, values: unknown[] = []): Promise<R[]> {
  const statement = new NamedStatement(`test_${++statements}`, text);
  return new Promise((resolve, reject) => connections.send(new PreparedRead(statement, values, false), (err, rows) => (err ? reject(err) : resolve(rows as R[]))));
}

/** Forty position reads at once, each asking the database. */
const concurrentReads = (store: PostgresStore) => Promise.all(Array.from({ length: 40 }, () => store.getLedgerInfo(true)));

describe("PostgreSQL reads on pipelined connections", () => {
  it("spreads concurrent reads over read_connections connections, and opens them again after the server ends them", async () => {
    const store = await PostgresStore.connect(`${url}?read_connections=2&pool_size=10`);
    try {
      await concurrentReads(store);
      const first = await ledgerReaders();
      expect(first).toHaveLength(2);
      await admin.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [first]);
      await sleep(200);
      await expect(concurrentReads(store)).resolves.toHaveLength(40);
      const second = await ledgerReaders();
      expect(second).toHaveLength(2);
      expect(second.filter((pid) => first.includes(pid))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("sends the reads through the pool with read_connections=0", async () => {
    const store = await PostgresStore.connect(`${url}?read_connections=0&pool_size=6`);
    try {
      await concurrentReads(store);
      expect((await ledgerReaders()).length).toBeGreaterThan(2);
    } finally {
      await store.close();
    }
  });

  it("fails a statement past its timeout alone, and a connection's death only the statements it had in flight", async () => {
    const connections = new PipelinedConnections(clientConfig(url, { ...DEFAULT_POSTGRES_SETTINGS, statementTimeoutMs: 300 }), 1);
    try {
      const slow = run(connections, "SELECT pg_sleep(2)");
      const behind = run<{ n: number }>(connections, "SELECT 7 AS n");
      await expect(slow).rejects.toMatchObject({ code: "57014" });
      expect(await behind).toEqual([{ n: 7 }]);

      // (settled from the start: they fail while the test is still ending their connection)
      const inFlight = Promise.allSettled([run(connections, "SELECT pg_sleep(0.25)"), run(connections, "SELECT 8 AS n")]);
      await sleep(50);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'SELECT pg_sleep(0.25)'");
      const failures = await inFlight;
      expect(failures.map((f) => f.status)).toEqual(["rejected", "rejected"]);
      expect(failures.every((f) => f.status === "rejected" && isUnavailableError(f.reason))).toBe(true);
      await sleep(50);
      expect(await run<{ n: number }>(connections, "SELECT 9 AS n")).toEqual([{ n: 9 }]);
    } finally {
      await connections.end();
    }
  });

  it("sends the statements of requests read in one turn of the event loop in one write, each still failing alone", async () => {
    // The connection's socket, counting the writes it hands to the kernel (one `_write` or `_writev` each).
    let writes = 0;
    class CountingSocket extends Socket {
      override _write(chunk: unknown, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
        writes++;
        super._write(chunk, encoding, callback);
      }
      override _writev(chunks: { chunk: unknown; encoding: BufferEncoding }[], callback: (error?: Error | null) => void): void {
        writes++;
        super._writev!(chunks, callback);
      }
    }
    const connections = new PipelinedConnections({ ...clientConfig(url, DEFAULT_POSTGRES_SETTINGS), stream: () => new CountingSocket() }, 1);
    const statement = new NamedStatement("test_grouped", "SELECT 12 / $1::int AS n");
    const send = (divisor: number) =>
      new Promise<unknown[]>((resolve, reject) => connections.send(new PreparedRead(statement, [divisor], false), (err, rows) => (err ? reject(err) : resolve(rows!))));
    // Eight "requests", each a socket whose data, read in its own I/O callback, sends one statement.
    const answers: Promise<unknown>[] = [];
    const requests = [1, 2, 3, 0, 4, 6, 12, 2];
    let server: Server | undefined;
    const clients: Socket[] = [];
    try {
      expect(await send(4)).toEqual([{ n: 3 }]); // connected, the statement parsed and described
      server = createServer((socket) => socket.on("data", (d) => answers.push(send(requests[d[0]!]!).catch((e: { code?: string }) => e.code))));
      await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
      const { port } = server.address() as { port: number };
      for (let i = 0; i < requests.length; i++) {
        const c = new Socket();
        await new Promise<void>((resolve) => c.connect(port, "127.0.0.1", resolve));
        clients.push(c);
      }
      await sleep(50); // the server has accepted every client
      writes = 0;
      for (const [i, c] of clients.entries()) c.write(Buffer.from([i]));
      while (answers.length < requests.length) await sleep(5);
      expect(await Promise.all(answers)).toEqual([
        [{ n: 12 }],
        [{ n: 6 }],
        [{ n: 4 }],
        "22012",
        [{ n: 3 }],
        [{ n: 2 }],
        [{ n: 1 }],
        [{ n: 6 }],
      ]);
      expect(writes).toBe(1);
      // A statement sent alone leaves at the end of its turn, not held for company.
      expect(await send(3)).toEqual([{ n: 4 }]);
      expect(writes).toBe(2);
    } finally {
      for (const c of clients) c.destroy();
      server?.close();
      await connections.end();
    }
  });
});
