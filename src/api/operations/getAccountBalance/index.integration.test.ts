/**
 * GET /v1/accounts/{address}/balance/{asset_type} over real HTTP on SQLite: a coin's CoinStore plus
 * its paired fungible asset's primary store, a fungible asset by its metadata address, the
 * concurrent balance where the store's own is 0, 0 for what is missing, at a version, JSON and BCS.
 * The primary store's address is checked against a recorded one: the real block in test/fixtures
 * holds 0xa's FungibleStore at 0xa5a7…ef61, an object owned by 0x34bf…afaf.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr, writeResource } from "../../../../test/helpers/chain.js";
import { serveChain, stopNode, type TestNode } from "../../../../test/helpers/node.js";
import { pairedMetadata, primaryStore } from "./read.js";

const backend = sqliteBackend();
const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString("hex")}`;
const bytes = (a: string) => Buffer.from(a.slice(2).padStart(64, "0"), "hex");
const ALICE = addr("a11ce");
const BOB = addr("b0b");
const APT = "0x1::aptos_coin::AptosCoin";
const USDX = "0xcafe::usdx::USDX";

describe(`account balance (${backend.name})`, () => {
  let node: TestNode;
  const chain = new ChainBuilder().genesis();
  let before: bigint;
  beforeAll(async () => {
    const aliceApt = hex(primaryStore(bytes(ALICE), pairedMetadata(APT)));
    const bobUsdx = hex(primaryStore(bytes(BOB), pairedMetadata(USDX)));
    const coinStore = (value: string) => ({ coin: { value }, deposit_events: { counter: "0" }, frozen: false, withdraw_events: { counter: "0" } });
    chain.block([
      {
        sender: ALICE,
        seq: 0,
        changes: [
          writeResource(ALICE, `0x1::coin::CoinStore<${APT}>`, coinStore("1000")),
          writeResource(aliceApt, "0x1::fungible_asset::FungibleStore", { balance: "25", frozen: false, metadata: { inner: "0xa" } }),
        ],
      },
    ]);
    before = chain.version - 1n;
    chain.block([
      {
        sender: BOB,
        seq: 0,
        changes: [
          writeResource(ALICE, `0x1::coin::CoinStore<${APT}>`, coinStore("18446744073709551000")),
          writeResource(bobUsdx, "0x1::fungible_asset::FungibleStore", { balance: "0", frozen: false, metadata: { inner: hex(pairedMetadata(USDX)) } }),
          writeResource(bobUsdx, "0x1::fungible_asset::ConcurrentFungibleBalance", { balance: { max_value: "18446744073709551615", value: "77" } }),
        ],
      },
    ]);
    node = await serveChain(backend, chain);
  });
  afterAll(() => stopNode(node, backend));

  const get = async (who: string, asset: string, q = "", headers: Record<string, string> = {}) => {
    const res = await fetch(`${node.base}/accounts/${who}/balance/${encodeURIComponent(asset)}${q}`, { headers });
    return { status: res.status, type: res.headers.get("content-type"), body: Buffer.from(await res.arrayBuffer()) };
  };

  it("derives a primary store's address as the framework does: the recorded one", () => {
    const owner = bytes("0x34bf7e2d17674feb234371a7ea58efd715f0e56ba20ebf13789480d9d643afaf");
    expect(hex(primaryStore(owner, pairedMetadata(APT)))).toBe("0xa5a7c7e10f3329999eb018de4dd05d03829f79585327b3df63121a8526acef61");
  });

  it("sums a coin's store and its paired fungible store, at a version and at the latest, as a bare integer", async () => {
    const then = await get(ALICE, APT, `?ledger_version=${before}`);
    expect(then.status).toBe(200);
    expect(then.type).toMatch(/^application\/json/);
    expect(then.body.toString()).toBe("1025");
    // A u64 past 2^53 printed exactly.
    expect((await get(ALICE, APT)).body.toString()).toBe("18446744073709551025");
    // The fungible asset alone, by its metadata address.
    expect((await get(ALICE, "0xa")).body.toString()).toBe("25");
  });

  it("reads the concurrent balance where the store's own is 0, and counts 0 for what is missing", async () => {
    expect((await get(BOB, USDX)).body.toString()).toBe("77");
    expect((await get(BOB, APT)).body.toString()).toBe("0");
    expect((await get(addr("dead"), "0xa")).body.toString()).toBe("0");
  });

  it("answers BCS as a u64, and refuses an asset type that is neither an address nor a struct tag", async () => {
    const bcs = await get(ALICE, APT, `?ledger_version=${before}`, { accept: "application/x-bcs" });
    expect(bcs.type).toBe("application/x-bcs");
    expect(bcs.body.readBigUInt64LE(0)).toBe(1025n);
    const bad = await get(ALICE, "not a type");
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body.toString())).toMatchObject({ error_code: "web_framework_error" });
    expect(JSON.parse(bad.body.toString()).message).toContain('failed to parse path `asset_type`: failed to parse "string(AssetType)"');
    expect((await get(ALICE, APT, "?ledger_version=100000")).status).toBe(404);
  });
});
