/**
 * One execution of a named statement as a node-postgres submittable (`client.query(submittable)`,
 * the extension point pg-cursor uses). node-postgres's own `Query` sends Bind + Describe(portal) +
 * Execute + Sync on every execution and builds the row parsers from the RowDescription each time;
 * here a connection that has parsed and described the statement sends Bind + Execute + Sync only,
 * and rows are parsed with the type parsers built once from the description that connection
 * remembers. The statement is parsed again (after a Close of its name) when the server says its
 * cached plan's result type changed (SQLSTATE 0A000, after a migration: on every connection), or
 * when a failure leaves it unknown whether this connection holds it (a Parse that failed, 26000).
 */
import pg from "pg";
import { isChangedResultType, isMissingStatement } from "./errors.js";

/** A column's text value turned into what the reads expect (node-postgres's type parsers). */
type Parser = (text: string) => unknown;

/** What one connection knows of a statement since it last parsed it. */
interface Prepared {
  /** The statement's generation the Parse was of (`NamedStatement.generation`). */
  readonly generation: number;
  /** Set when a failure leaves it unknown whether the connection holds the statement. */
  unsure: boolean;
  /** The result's column names and parsers, once a Describe answered. */
  columns: { names: string[]; parsers: Parser[] } | null;
}

/** A statement the reads send by name; what each connection holds of it is kept here. */
export class NamedStatement {
  /** Bumped when the server says the statement's result type changed: every connection parses it again. */
  generation = 0;
  /** Per connection (node-postgres's `Connection`, one a client): what it holds of this statement. */
  readonly prepared = new WeakMap<object, Prepared>();

  constructor(
    readonly name: string,
    readonly text: string,
  ) {}
}

/** How an execution ends: its rows (arrays in select-list order, or objects by column name), or its error. */
export type Answered = (err: Error | null | undefined, rows?: unknown[]) => void;

/** The part of node-postgres's `Connection` a submittable writes to (the messages of the extended protocol). */
interface Wire {
  readonly stream: { cork?: () => void; uncork?: () => void };
  parse(msg: { name: string; text: string }): void;
  bind(msg: { statement: string; values: unknown[]; valueMapper: (v: unknown) => unknown }): void;
  describe(msg: { type: "P" }): void;
  execute(msg?: object): void;
  close(msg: { type: "S"; name: string }): void;
  sync(): void;
}

interface FieldDescription {
  name: string;
  dataTypeID: number;
}

/**
 * A parameter as the statements bind it: bytes as binary, null as NULL, anything else (text,
 * numbers, decimal strings) as its text, as node-postgres's own value mapping does for these.
 */
function bindValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof Buffer) return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return String(v);
}

/**
 * node-postgres's `Query` as the base class: in pipeline mode its client refuses any submittable
 * that is not a `Query` (it guards against cursors holding a portal open across round trips; this
 * one ends every execution with its own Sync). Typed as a constructor only: every method the
 * client calls on a query is this class's own.
 */
const PipelineQuery = pg.Query as unknown as new (text: string) => object;

export class PreparedRead extends PipelineQuery {
  /** Called once with the rows or the error; node-postgres wraps it (its read timeout) or sets it (the pool). */
  declare callback: Answered | undefined;
  private readonly answer: unknown[] = [];
  /** What this execution relies on: the connection's state of the statement when it was sent. */
  private prepared: Prepared | null = null;
  /** Set when this execution sent the Parse. */
  private parsed = false;
  private columns: { names: string[]; parsers: Parser[] } | null = null;
  /** A row that could not be parsed: reported when the statement's answer ends. */
  private failure: Error | null = null;

  /** `values` bound to `statement`; rows as arrays when `arrays`, else objects by column name. */
  constructor(
    private readonly statement: NamedStatement,
    private readonly values: unknown[],
    private readonly arrays: boolean,
  ) {
    super("");
  }

  /**
   * Writes the execution's messages in one write: Parse and Describe only when the connection
   * needs them. (@types/pg's `Connection` declares an older form of these methods.)
   */
  submit(client: pg.Connection): null {
    const connection = client as unknown as Wire;
    const s = this.statement;
    let prepared = s.prepared.get(connection);
    connection.stream.cork?.();
    try {
      if (prepared === undefined || prepared.unsure || prepared.generation !== s.generation) {
        // Closing a name the connection does not hold is no error.
        if (prepared !== undefined) connection.close({ type: "S", name: s.name });
        connection.parse({ name: s.name, text: s.text });
        prepared = { generation: s.generation, unsure: false, columns: null };
        s.prepared.set(connection, prepared);
        this.parsed = true;
      }
      this.prepared = prepared;
      this.columns = prepared.columns;
      connection.bind({ statement: s.name, values: this.values, valueMapper: bindValue });
      if (this.columns === null) connection.describe({ type: "P" });
      connection.execute();
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  /** The Describe's answer: the parsers, kept for the connection's next executions. */
  handleRowDescription(msg: { fields: FieldDescription[] }): void {
    const names = msg.fields.map((f) => f.name);
    const parsers = msg.fields.map((f) => pg.types.getTypeParser(f.dataTypeID, "text") as Parser);
    this.columns = { names, parsers };
    if (this.prepared !== null && this.prepared.columns === null) this.prepared.columns = this.columns;
  }

  /** A row: arrays are the message's own field list, parsed in place. */
  handleDataRow(msg: { fields: (string | null)[] }): void {
    if (this.failure !== null) return;
    const columns = this.columns;
    if (columns === null) {
      this.failure = new Error(`${this.statement.name}: a row arrived before its description`);
      return;
    }
    const fields = msg.fields;
    try {
      if (this.arrays) {
        for (let i = 0; i < fields.length; i++) if (fields[i] !== null) fields[i] = columns.parsers[i]!(fields[i]!) as string;
        this.answer.push(fields);
      } else {
        const row: Record<string, unknown> = {};
        for (let i = 0; i < fields.length; i++) row[columns.names[i]!] = fields[i] === null ? null : columns.parsers[i]!(fields[i]!);
        this.answer.push(row);
      }
    } catch (e) {
      this.failure = e instanceof Error ? e : new Error(String(e));
    }
  }

  handleCommandComplete(): void {}

  handleEmptyQuery(): void {}

  handleReadyForQuery(): void {
    if (this.failure !== null) this.callback?.(this.failure);
    else this.callback?.(null, this.answer);
  }

  /**
   * The statement failed (the server's error, or the connection's loss). A changed result type
   * makes every connection parse the statement again; a missing statement, or a failure between
   * this execution's Parse and its description, makes this connection do so.
   */
  handleError(err: Error): void {
    const prepared = this.prepared;
    if (prepared !== null && isChangedResultType(err)) {
      if (prepared.generation === this.statement.generation) this.statement.generation++;
    } else if (prepared !== null && (isMissingStatement(err) || (this.parsed && prepared.columns === null))) prepared.unsure = true;
    this.callback?.(err);
  }
}
