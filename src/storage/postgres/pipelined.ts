/**
 * The reads' connections: a few long-lived clients in node-postgres's pipeline mode, each read
 * sent on the one with the fewest answers outstanding. Statements from concurrent requests share
 * a connection without waiting for each other's answers, where the pool lent a connection to one
 * statement at a time (an acquire and a release, with their timers, per statement); the backend
 * finds the next statement already in its socket, and the node reads several answers at once.
 * The statements sent on a connection in one turn of the event loop leave in one write (`cork`).
 * Each statement carries its own Sync, so one that fails fails alone. A connection that dies
 * (server restart, failover, a client-side read timeout) fails what it had in flight and is
 * opened again by the next read. Transactions and writes stay on the pool (`connection.ts`).
 */
import pg from "pg";
import type { StatementSender } from "./connection.js";
import type { Answered, PreparedRead } from "./preparedRead.js";

interface Slot {
  /** The client, once connected; null while none is (never opened, connecting, or died). */
  client: pg.Client | null;
  /** Its socket while corked for the current turn of the event loop (`cork`), else null. */
  corked: { uncork(): void } | null;
  /** The connection being opened, while it is. */
  opening: Promise<pg.Client> | null;
  /** Statements sent on it and not yet answered. */
  outstanding: number;
}

export class PipelinedConnections implements StatementSender {
  private readonly slots: Slot[];
  private closed = false;

  /** `count` connections, opened at their first read, with the pool's client settings (`config`). */
  constructor(
    private readonly config: pg.ClientConfig,
    count: number,
  ) {
    this.slots = Array.from({ length: count }, () => ({ client: null, corked: null, opening: null, outstanding: 0 }));
  }

  /** The slots whose sockets are corked in this turn. */
  private readonly corked: Slot[] = [];

  /** Uncorks every socket corked in this turn: each sends what its statements wrote in one write. */
  private readonly uncorkAll = (): void => {
    for (const slot of this.corked) {
      slot.corked?.uncork();
      slot.corked = null;
    }
    this.corked.length = 0;
  };

  /** Sends one statement on the connection with the fewest answers outstanding. */
  send(read: PreparedRead, done: Answered): void {
    let slot = this.slots[0]!;
    for (let i = 1; i < this.slots.length; i++) if (this.slots[i]!.outstanding < slot.outstanding) slot = this.slots[i]!;
    slot.outstanding++;
    read.callback = (err, rows) => {
      slot.outstanding--;
      done(err, rows);
    };
    const client = slot.client;
    if (client !== null) {
      if (slot.corked === null) this.cork(slot, client);
      client.query(read);
    } else
      void this.open(slot).then(
        (c) => c.query(read),
        (e: unknown) => {
          slot.outstanding--;
          done(e instanceof Error ? e : new Error(String(e)));
        },
      );
  }

  /**
   * Corks the slot's socket until the loop's check phase (`setImmediate`), after every I/O callback
   * of this turn ran: the statements of all the requests read in one poll leave in one write, and
   * the backend finds them together in its socket. (`process.nextTick` and microtasks run after each
   * callback, so they would group only one request's statements.) Each keeps its own Sync, so each
   * still fails alone.
   */
  private cork(slot: Slot, client: pg.Client): void {
    const stream = client.connection.stream;
    stream.cork();
    slot.corked = stream;
    if (this.corked.length === 0) setImmediate(this.uncorkAll);
    this.corked.push(slot);
  }

  /** The slot's connection, opening it; a failure leaves the slot empty for the next read to try. */
  private open(slot: Slot): Promise<pg.Client> {
    if (slot.opening !== null) return slot.opening;
    if (this.closed) return Promise.reject(new Error("the store is closed"));
    const client = new pg.Client({ ...this.config, pipeline: true });
    // A connection that dies fails what it had in flight (node-postgres does) and leaves its slot.
    const gone = () => {
      if (slot.client === client) slot.client = null;
    };
    client.on("error", gone);
    client.on("end", gone);
    slot.opening = client.connect().then(
      () => {
        slot.opening = null;
        if (this.closed) {
          void client.end().catch(() => undefined);
          throw new Error("the store is closed");
        }
        slot.client = client;
        return client;
      },
      (e: unknown) => {
        slot.opening = null;
        void client.end().catch(() => undefined);
        throw e;
      },
    );
    return slot.opening;
  }

  /** Ends every connection once the statements it has in flight are answered. */
  async end(): Promise<void> {
    this.closed = true;
    const clients = this.slots.map((s) => s.client).filter((c): c is pg.Client => c !== null);
    for (const s of this.slots) s.client = null;
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}
