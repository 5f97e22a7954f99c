/**
 * `parsePage`, what the follower's page thread runs on each body (and the follower itself where no
 * thread runs): the first `limit` transactions as the importer's parser reads them, the page's
 * length and first version for the follower's checks, the transaction it refuses and why, and a
 * body that is not a page told apart. The thread around it is tested in `pages.integration.test.ts`.
 */
import { describe, expect, it } from "vitest";
import { parseAptosTransaction } from "../aptosJson.js";
import { DevnetChain, defaultDevnetChainOptions } from "../devnet/chain.js";
import { parsePage } from "./pages.js";
import { plain } from "../../../test/helpers/plain.js";

const chain = DevnetChain.fresh(defaultDevnetChainOptions);
const json: unknown[] = [...chain.genesis()];
for (let b = 0; b < 3; b++) json.push(...chain.nextBlock(1_700_000_000_000_000n + BigInt(b)));
const body = (v: unknown) => Buffer.from(JSON.stringify(v));

describe("parsePage (a follower's page body)", () => {
  it("gives the page's first `limit` transactions as the importer's parser reads them, and the page's length and first version", () => {
    const page = parsePage(body(json), 40);
    expect(page).toMatchObject({ t: "page", length: json.length, firstVersion: '"0"', refused: null });
    expect(plain((page as { txns: unknown }).txns)).toEqual(plain(json.slice(0, 40).map((t, i) => parseAptosTransaction(t, i))));
  });

  it("stops at a transaction the importer refuses, with the ones before it and why", () => {
    const bad = [...json.slice(0, 5), { version: "5", type: "user_transaction", hash: "0x12" }, ...json.slice(6, 10)];
    const page = parsePage(body(bad), 10);
    expect(page).toMatchObject({ t: "page", length: 10, refused: expect.stringContaining("version 5: hash") });
    expect((page as { txns: unknown[] }).txns).toHaveLength(5);
  });

  it("tells a body that is not JSON, and JSON that is not an array, from a page", () => {
    expect(parsePage(Buffer.from("<html>bad gateway</html>"), 10)).toMatchObject({ t: "notJson", head: "<html>bad gateway</html>" });
    expect(parsePage(body({ message: "no" }), 10)).toEqual({ t: "notArray" });
    expect(parsePage(body([]), 10)).toMatchObject({ t: "page", length: 0, firstVersion: "undefined", txns: [] });
  });
});
