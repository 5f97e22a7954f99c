import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readTransactions, readTransactionsBlocking } from "./readInput.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-read-input-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a reader gives for a file holding `text`: its values, then its error's message if any. */
async function read(reader: (path: string) => AsyncGenerator<unknown>, text: string, name: string): Promise<unknown[]> {
  const path = join(dir, name);
  writeFileSync(path, text);
  const out: unknown[] = [];
  try {
    for await (const v of reader(path)) out.push(v);
  } catch (e) {
    out.push(`error: ${(e as Error).message}`);
  }
  return out;
}

describe("the parsing thread's blocking reads of a file", () => {
  const inputs: Array<[string, string]> = [
    ["LF and UTF-8", '{"a":1}\n{"b":"ünï ✓"}\n'],
    ["CRLF, a blank line, no final newline", '{"a":1}\r\n\r\n{"b":2}'],
    ["lone CRs", '{"a":1}\r{"b":2}\r'],
    ["a JSON array over lines", '[\n{"a":1},\n{"b":2}\n]\n'],
    ["a line longer than the read buffer", `{"x":"${"y".repeat(3_000_000)}"}\n{"c":3}\n`],
    ["a bad line, named by its number", '{"a":1}\r\n\n{bad\n{"c":3}\n'],
  ];
  for (const [what, text] of inputs) {
    it(`gives what the streamed reader gives: ${what}`, async () => {
      const name = what.replace(/[^a-z]+/gi, "-");
      const blocking = await read(readTransactionsBlocking, text, `${name}.ndjson`);
      expect(blocking.length).toBeGreaterThan(1);
      expect(blocking).toEqual(await read(readTransactions, text, `${name}.ndjson`));
    });
  }

  it("names the file it cannot read", async () => {
    const missing = join(dir, "missing.ndjson");
    await expect(readTransactionsBlocking(missing).next()).rejects.toThrow(`cannot read ${missing}`);
  });
});
