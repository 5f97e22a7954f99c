/**
 * Reads Aptos REST JSON transactions from a file or stdin (`-`): NDJSON (one object per line) or
 * one JSON array. NDJSON is streamed, so files larger than memory import fine.
 */
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { IngestError } from "./aptosJson.js";

export async function* readTransactions(path: string): AsyncGenerator<unknown> {
  try {
    yield* parseTransactions(path);
  } catch (e) {
    // A read error (a file removed or unreadable mid-way) names the file, as parse errors do.
    if (e instanceof IngestError) throw e;
    throw new IngestError(`cannot read ${path === "-" ? "stdin" : path}: ${(e as Error).message}`);
  }
}

async function* parseTransactions(path: string): AsyncGenerator<unknown> {
  const stream: Readable = path === "-" ? process.stdin : createReadStream(path);
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let first = true;
  let array: string[] | null = null;
  let lineNo = 0;
  for await (const line of lines) {
    lineNo++;
    if (array) {
      array.push(line);
      continue;
    }
    const t = line.trim();
    if (t === "") continue;
    if (first && t.startsWith("[")) {
      array = [line];
      continue;
    }
    first = false;
    try {
      yield JSON.parse(t);
    } catch (e) {
      throw new IngestError(`${path}:${lineNo}: not a JSON object: ${(e as Error).message}`);
    }
  }
  if (array) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(array.join("\n"));
    } catch (e) {
      throw new IngestError(`${path}: not a JSON array of transactions: ${(e as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new IngestError(`${path}: expected a JSON array of transactions`);
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
