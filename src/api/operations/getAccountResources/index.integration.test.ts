/**
 * GET /v1/accounts/{address}/resources: every resource of an account in the reference's
 * state-key order, paged with cursors as modules are, the same on both backends; bad input 400.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseStructTag, type StructTag } from "../../../ledger/structTag.js";
import { resourceStateKey } from "../../../ledger/stateKey.js";
import { ChainBuilder, addr, deleteResource, writeResource } from "../../../../test/helpers/chain.js";
import { serveOnEveryBackend, type TestNode } from "../../../../test/helpers/node.js";

const ALICE = addr("a11ce");
const ALICE_BYTES = Buffer.from(ALICE.slice(2), "hex");
const TYPES = ["0x1::account::Account", "0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>", "0x1::a::B", "0x1::m::C<u8>", "0x1::m::C<vector<u64>>", `${addr("cafe")}::shop::Cart`];
const keyOf = (type: string) => resourceStateKey(ALICE_BYTES, parseStructTag(type) as StructTag).toString("hex");
/** The types in the reference's order: by their state keys' bytes. */
const ORDERED = [...TYPES].sort((a, b) => Buffer.compare(Buffer.from(keyOf(a), "hex"), Buffer.from(keyOf(b), "hex")));

describe("resources on every backend", () => {
  let served: Awaited<ReturnType<typeof serveOnEveryBackend>> | undefined;
  const chain = new ChainBuilder().genesis(TYPES.map((t, i) => writeResource(ALICE, t, { n: String(i) })));
  let deletedAt = 0n;
  beforeAll(async () => {
    deletedAt = chain.nextUserVersion;
    chain.block([{ sender: ALICE, changes: [deleteResource(ALICE, "0x1::a::B"), writeResource(ALICE, TYPES[1]!, { n: "changed" })] }]);
    served = await serveOnEveryBackend(chain);
  });
  afterAll(() => served?.stop());

  const get = (node: TestNode, query: string, accept = "application/json") => fetch(`${node.base}/accounts/${ALICE}/resources${query}`, { headers: { accept } });

  it("lists every resource in state-key order, each as the reference writes it, with no cursor on the last page", async () => {
    for (const node of served!.nodes) {
      const res = await get(node, "?ledger_version=0");
      expect(res.status).toBe(200);
      expect(res.headers.get("x-node-cursor")).toBeNull();
      expect(await res.text()).toBe(`[${ORDERED.map((t) => `{"type":"${t}","data":{"n":"${TYPES.indexOf(t)}"}}`).join(",")}]`);
      const now = (await (await get(node, "")).json()) as Array<{ type: string; data: { n: string } }>;
      expect(now.map((r) => r.type)).toEqual(ORDERED.filter((t) => t !== "0x1::a::B"));
      expect(now.find((r) => r.type === TYPES[1])!.data.n).toBe("changed");
    }
  });

  it("pages through each resource exactly once, the cursor the state key of the next page's first", async () => {
    for (const node of served!.nodes) {
      for (const limit of [1, 2, 4]) {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const res: Response = await get(node, `?ledger_version=${deletedAt - 1n}&limit=${limit}${cursor ? `&start=${cursor}` : ""}`);
          expect(res.status).toBe(200);
          const page = (await res.json()) as Array<{ type: string }>;
          expect(page.length).toBeLessThanOrEqual(limit);
          seen.push(...page.map((r) => r.type));
          cursor = res.headers.get("x-node-cursor");
          const next = ORDERED[seen.length];
          expect(cursor).toBe(next === undefined ? null : keyOf(next));
        } while (cursor);
        expect(seen).toEqual(ORDERED);
      }
    }
  });

  it("answers [] for an account without resources, and the same bytes on both backends", async () => {
    const [sqlite, postgres] = served!.nodes as [TestNode, TestNode];
    const empty = await fetch(`${sqlite.base}/accounts/0xdead/resources`);
    expect(empty.status).toBe(200);
    expect(await empty.text()).toBe("[]");
    for (const q of ["", "?limit=3", `?ledger_version=${deletedAt}&limit=2`, `?start=${keyOf(ORDERED[2]!)}`]) {
      const a = await get(sqlite, q);
      const b = await get(postgres, q);
      expect([b.status, b.headers.get("x-node-cursor"), await b.text()], q).toEqual([a.status, a.headers.get("x-node-cursor"), await a.text()]);
    }
  });

  it("refuses a zero limit, a cursor that is not a resource key of the account, and BCS", async () => {
    const [node] = served!.nodes as [TestNode];
    const zero = await get(node, "?limit=0");
    expect(zero.status).toBe(400);
    expect(await zero.json()).toEqual({ message: "Given limit value (0) must not be zero", error_code: "invalid_input" });
    const foreign = resourceStateKey(Buffer.from(addr("b0b").slice(2), "hex"), parseStructTag("0x1::a::B") as StructTag).toString("hex");
    for (const [start, mention] of [["zz", "state key cursor"], ["00", "not a resource state key"], [foreign, "belongs to account 0xb0b"]] as const) {
      const res = await get(node, `?start=${start}`);
      expect(res.status, start).toBe(400);
      const body = (await res.json()) as { message: string; error_code: string };
      expect(body.error_code).toBe("web_framework_error");
      expect(body.message, start).toContain(mention);
    }
    const bcs = await get(node, "", "application/x-bcs");
    expect(bcs.status).toBe(406);
    expect(((await bcs.json()) as { error_code: string }).error_code).toBe("bcs_not_supported");
  });
});
