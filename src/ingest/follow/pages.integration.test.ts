/**
 * The follower's page parser: a page parsed on its thread gives the transactions parsing them here
 * gives, a page's shape and a refused transaction come back for the follower's checks, and a
 * closed parser refuses the pages still in flight instead of starting a thread again.
 *
 * An integration test: the thread runs the built `dist/ingest/follow/pageThread.js` (a worker does
 * not run TypeScript sources), so `npm run build` comes first (`npm test` does). `parsePage`
 * itself, the same function on either side of the thread, is unit-tested in `pages.test.ts`.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAptosTransaction } from "../aptosJson.js";
import { DevnetChain, defaultDevnetChainOptions } from "../devnet/chain.js";
import { PageParser, type PendingPage, pageTxns } from "./pages.js";
import { plain } from "../../../test/helpers/plain.js";
import { historyChunks } from "../../storage/common/history.js";
import { packResourceValue } from "../../storage/common/resourceValue.js";

const chain = DevnetChain.fresh(defaultDevnetChainOptions);
const json: unknown[] = [...chain.genesis()];
for (let b = 0; b < 3; b++) json.push(...chain.nextBlock(1_700_000_000_000_000n + BigInt(b)));
const body = (v: unknown) => Buffer.from(JSON.stringify(v));
const txnsOf = (p: PendingPage) => (p.t === "page" ? pageTxns(p.txns) : null);

const BUILT_THREAD = new URL("../../../dist/ingest/follow/pageThread.js", import.meta.url);

describe("PageParser (the follower's pages parsed off its thread)", () => {
  beforeAll(() => {
    // Without the build the parser parses here, and these tests would fail on what looks like a fault.
    if (!existsSync(BUILT_THREAD)) throw new Error(`${BUILT_THREAD.pathname} is missing: run \`npm run build\` first (\`npm test\` does)`);
  });
  const parser = new PageParser();
  afterAll(() => parser.close());

  it("gives a page's first `limit` transactions as parsing them here does, resource values and texts packed into their stored forms, and the page's length and first version", async () => {
    const page = await parser.parse(body(json), 40);
    expect(page).toMatchObject({ t: "page", length: json.length, firstVersion: '"0"', refused: null });
    // Flat from the thread: decoded only when the follower takes the page.
    expect(Array.isArray((page as { txns: unknown }).txns)).toBe(false);
    const here = json.slice(0, 40).map((t, i) => parseAptosTransaction(t, i));
    // The texts travel as the history chunks they make, each with the transaction it ends at.
    const chunks = new Map(historyChunks(here.map((p) => p.txn)).map((c) => [c.lastVersion, c]));
    expect(chunks.size).toBeGreaterThan(3);
    const packed = here.map((p) => {
      const { json: _text, ...txn } = p.txn;
      const chunk = chunks.get(txn.version);
      return {
        ...p,
        txn,
        resources: p.resources.map((r) => ({ ...r, json: typeof r.json === "string" ? packResourceValue(r.address, r.json) : r.json })),
        ...(chunk ? { history: chunk } : {}),
      };
    });
    expect(here.some((p) => p.resources.some((r) => typeof r.json === "string"))).toBe(true);
    expect(plain(txnsOf(page))).toEqual(plain(packed));
  });

  it("stops at a transaction the importer refuses, with the ones before it and why", async () => {
    const bad = [...json.slice(0, 5), { version: "5", type: "user_transaction", hash: "0x12" }, ...json.slice(6, 10)];
    const page = await parser.parse(body(bad), 10);
    expect(page).toMatchObject({ t: "page", length: 10, refused: expect.stringContaining("version 5: hash") });
    expect(txnsOf(page)).toHaveLength(5);
  });

  it("tells a body that is not JSON, and JSON that is not an array, from a page", async () => {
    expect(await parser.parse(Buffer.from("<html>bad gateway</html>"), 10)).toMatchObject({ t: "notJson", head: "<html>bad gateway</html>" });
    expect(await parser.parse(body({ message: "no" }), 10)).toEqual({ t: "notArray" });
    expect(txnsOf(await parser.parse(body([]), 10))).toEqual([]);
  });

  it("once closed, refuses a page in flight and every later one (no thread is started again)", async () => {
    const own = new PageParser();
    const inFlight = expect(own.parse(body(json), 100)).rejects.toThrow("the page parsing thread was closed");
    await own.close();
    await inFlight;
    await expect(own.parse(body(json), 100)).rejects.toThrow("the page parser was closed");
  });
});
