/**
 * The follower's page parser: a page parsed on its thread gives the transactions parsing them here
 * gives, and a page's shape and a refused transaction come back for the follower's checks.
 */
import { afterAll, describe, expect, it } from "vitest";
import { parseAptosTransaction } from "../aptosJson.js";
import { DevnetChain, defaultDevnetChainOptions } from "../devnetChain.js";
import { PageParser } from "./pages.js";
import { plain } from "../../../test/helpers/plain.js";

const chain = DevnetChain.fresh(defaultDevnetChainOptions);
const json: unknown[] = [...chain.genesis()];
for (let b = 0; b < 3; b++) json.push(...chain.nextBlock(1_700_000_000_000_000n + BigInt(b)));
const body = (v: unknown) => Buffer.from(JSON.stringify(v));

describe("PageParser (the follower's pages parsed off its thread)", () => {
  const parser = new PageParser();
  afterAll(() => parser.close());

  it("gives a page's first `limit` transactions as parsing them here does, and the page's length and first version", async () => {
    const page = await parser.parse(body(json), 40);
    expect(page).toMatchObject({ t: "page", length: json.length, firstVersion: '"0"', refused: null });
    const here = json.slice(0, 40).map((t, i) => parseAptosTransaction(t, i));
    expect(plain((page as { txns: unknown }).txns)).toEqual(plain(here));
  });

  it("stops at a transaction the importer refuses, with the ones before it and why", async () => {
    const bad = [...json.slice(0, 5), { version: "5", type: "user_transaction", hash: "0x12" }, ...json.slice(6, 10)];
    const page = await parser.parse(body(bad), 10);
    expect(page).toMatchObject({ t: "page", length: 10, refused: expect.stringContaining("version 5: hash") });
    expect((page as { txns: unknown[] }).txns).toHaveLength(5);
  });

  it("tells a body that is not JSON, and JSON that is not an array, from a page", async () => {
    expect(await parser.parse(Buffer.from("<html>bad gateway</html>"), 10)).toMatchObject({ t: "notJson", message: expect.stringContaining('"<html>bad gateway</html>"') });
    expect(await parser.parse(body({ message: "no" }), 10)).toEqual({ t: "notArray" });
    expect(await parser.parse(body([]), 10)).toEqual({ t: "page", length: 0, firstVersion: "undefined", txns: [], refused: null });
  });
});
