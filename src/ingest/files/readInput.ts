/**
 * Reads Aptos REST JSON transactions from a file or stdin (`-`): NDJSON (one object per line) or
 * one JSON array. NDJSON is streamed, so files larger than memory import fine.
 */
import { closeSync, createReadStream, openSync, readSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { IngestError } from "../aptosJson.js";

export async function* readTransactions(path: string): AsyncGenerator<unknown> {
  try {
    const input = new TransactionLines(path);
    const stream: Readable = path === "-" ? process.stdin : createReadStream(path);
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) yield* input.line(line);
    yield* input.end();
  } catch (e) {
    throw readError(path, e);
  }
}

/**
 * `readTransactions` with blocking reads of a file into one reused buffer, for a thread that does
 * nothing else meanwhile (the import's parsing thread): no stream, no string per chunk. Stdin is
 * read as `readTransactions` reads it.
 */
export async function* readTransactionsBlocking(path: string): AsyncGenerator<unknown> {
  if (path === "-") {
    yield* readTransactions(path);
    return;
  }
  try {
    const input = new TransactionLines(path);
    for (const line of fileLines(path)) yield* input.line(line);
    yield* input.end();
  } catch (e) {
    throw readError(path, e);
  }
}

/** A read error (a file removed or unreadable mid-way) names the file, as parse errors do. */
function readError(path: string, e: unknown): unknown {
  if (e instanceof IngestError) return e;
  return new IngestError(`cannot read ${path === "-" ? "stdin" : path}: ${(e as Error).message}`);
}

/** The lines of a file as `readline` splits them (LF, CRLF or a lone CR), read with blocking reads. */
function* fileLines(path: string): Generator<string> {
  const fd = openSync(path, "r");
  try {
    let buf = Buffer.allocUnsafe(1 << 20);
    let have = 0;
    let eof = false;
    while (!eof) {
      const got = readSync(fd, buf, have, buf.length - have, null);
      eof = got === 0;
      have += got;
      let start = 0;
      for (;;) {
        let nl = buf.indexOf(10, start);
        if (nl >= have) nl = -1;
        if (nl === -1 && !(eof && start < have)) break;
        const end = nl === -1 ? have : nl;
        const line = buf.toString("utf8", start, end > start && buf[end - 1] === 13 ? end - 1 : end);
        // A lone CR also ends a line for readline: rare enough to split here only when met.
        if (line.includes("\r")) yield* line.split("\r");
        else yield line;
        start = nl === -1 ? have : nl + 1;
      }
      buf.copy(buf, 0, start, have);
      have -= start;
      if (have === buf.length) {
        // A line longer than the buffer (a large module bundle): the buffer grows to hold it.
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, have);
        buf = bigger;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** NDJSON (one object per line) or one JSON array, fed line by line. */
class TransactionLines {
  private first = true;
  private array: string[] | null = null;
  private lineNo = 0;

  constructor(private readonly path: string) {}

  *line(line: string): Generator<unknown> {
    this.lineNo++;
    if (this.array) {
      this.array.push(line);
      return;
    }
    const t = line.trim();
    if (t === "") return;
    if (this.first && t.startsWith("[")) {
      this.array = [line];
      return;
    }
    this.first = false;
    try {
      yield JSON.parse(t);
    } catch (e) {
      throw new IngestError(`${this.path}:${this.lineNo}: not a JSON object: ${(e as Error).message}`);
    }
  }

  *end(): Generator<unknown> {
    if (!this.array) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(this.array.join("\n"));
    } catch (e) {
      throw new IngestError(`${this.path}: not a JSON array of transactions: ${(e as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new IngestError(`${this.path}: expected a JSON array of transactions`);
    yield* parsed;
  }
}

/** Fails early with a clear message when a path cannot be read. */
export async function checkReadable(path: string): Promise<void> {
  if (path === "-") return;
  try {
    await (await open(path, "r")).close();
  } catch (e) {
    throw new IngestError(`cannot read ${path}: ${(e as Error).message}`);
  }
  if ((await stat(path)).isDirectory()) throw new IngestError(`cannot read ${path}: it is a directory, not a file of transactions`);
}
