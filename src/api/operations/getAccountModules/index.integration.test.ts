/**
 * GET /v1/accounts/{address}/modules over real HTTP and a real database: the real genesis, paging,
 * BCS, time travel across a module upgrade, and undecodable bytecode; the bytes sent from the ABI
 * stored at write, and from code stored without it, are the bytes of decoding it on the read. On SQLite: the store's
 * module reads are pinned on every backend by the store suite and the PostgreSQL parity test; the
 * last suite pins PostgreSQL's pages (its position read brings the page) against SQLite's over HTTP.
 */
import { bcs } from "@mysten/bcs";
import Database from "better-sqlite3";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonSerializer } from "../../http/serialize.js";
import { ref } from "../../http/operation.js";
import { moveModuleBytecode } from "../../../api/schemas.js";
import { moduleStateKey } from "../../../ledger/stateKey.js";
import { moduleAbi } from "../../../move/abi.js";
import { buildModule } from "../../../move/builder.js";
import { Importer } from "../../../ingest/importer.js";
import { readTransactions } from "../../../ingest/files/readInput.js";
import { openStore } from "../../../storage/open.js";
import { sqliteBackend } from "../../../../test/helpers/backends.js";
import { ChainBuilder, addr, deleteModule, writeModule } from "../../../../test/helpers/chain.js";
import { FIXTURES, serveOnEveryBackend, startTestNode, type TestNode } from "../../../../test/helpers/node.js";

const GENESIS = `${FIXTURES}genesis_transaction.json`;
type Json = Record<string, any>;

/** The fixture's modules per account, with the ABI the real node printed. */
function fixtureModules(): Map<string, Json[]> {
  const g = JSON.parse(readFileSync(GENESIS, "utf8"))[0];
  const out = new Map<string, Json[]>();
  for (const c of g.changes) {
    if (c.type !== "write_module") continue;
    const list = out.get(c.address) ?? [];
    list.push(c.data);
    out.set(c.address, list);
  }
  return out;
}

/** Keeps only the keys the 2022 ABI shape has, recursively, so old and new shapes compare. */
function project(ours: any, theirs: any): any {
  if (Array.isArray(theirs)) return (ours as any[]).map((o, i) => project(o, theirs[i]));
  if (theirs && typeof theirs === "object") {
    const out: Json = {};
    for (const k of Object.keys(theirs)) out[k] = project(ours?.[k], theirs[k]);
    return out;
  }
  return ours;
}

/**
 * The body the read path sent before the ABI was stored, for the modules of `body` in its order:
 * each module's ABI decoded from its bytecode, every record written by the MoveModuleBytecode
 * schema's serializer.
 */
const serializeRecord = jsonSerializer<{ bytecode: string; abi: unknown }>(ref(moveModuleBytecode));
function decodePathBody(body: Buffer): Buffer {
  const mods = JSON.parse(body.toString("utf8")) as Array<{ bytecode: string }>;
  const records = mods.map((m) => serializeRecord({ bytecode: m.bytecode, abi: moduleAbi(Buffer.from(m.bytecode.slice(2), "hex")) }));
  return Buffer.from(`[${records.join(",")}]`, "utf8");
}
const bodyOf = async (url: string): Promise<Buffer> => {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
};

async function importGenesis(db: string): Promise<void> {
  const store = await openStore(db);
  const imp = await Importer.open(store, 4);
  for await (const t of readTransactions(GENESIS)) await imp.push(t);
  await imp.finish();
  await store.close();
}

const backend = sqliteBackend();
describe(`modules (${backend.name})`, () => {
  let node: TestNode;
  beforeAll(async () => {
    const db = await backend.newDb();
    await importGenesis(db);
    node = await startTestNode(db);
  });
  afterAll(() => node?.close());

  it("lists every genesis module of 0x1 and 0x3 with the ABI the real node printed", async () => {
    const expected = fixtureModules();
    for (const [address, mods] of expected) {
      const res = await fetch(`${node.base}/accounts/${address}/modules`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-node-ledger-version")).toBe("0");
      expect(res.headers.get("x-node-cursor")).toBeNull();
      const body = (await res.json()) as Json[];
      expect(body).toHaveLength(mods.length);
      const byCode = new Map(body.map((m) => [m.bytecode, m]));
      for (const m of mods) {
        const ours = byCode.get(m.bytecode);
        expect(ours, `${address} module ${m.abi.name}`).toBeDefined();
        expect(project(ours!.abi, m.abi)).toEqual(m.abi);
        // The fields the 2022 shape lacks are present, as the current node prints them.
        expect(ours!.abi.exposed_functions.every((f: Json) => f.is_view === false)).toBe(true);
        expect(ours!.abi.structs.every((s: Json) => s.is_enum === false && Array.isArray(s.variants))).toBe(true);
      }
    }
  });

  it("sends, from the stored ABI, the bytes the decode path sent: every page of 0x1 and 0x3", async () => {
    for (const address of ["0x1", "0x3"]) {
      for (const q of ["", "?limit=1", "?limit=7", "?limit=1000"]) {
        const body = await bodyOf(`${node.base}/accounts/${address}/modules${q}`);
        expect(body.length).toBeGreaterThan(2);
        expect(body.equals(decodePathBody(body)), `${address} ${q}`).toBe(true);
      }
    }
  });

  it("decodes the ABI of code stored without it (a row no migration filled), to the same bytes", async () => {
    const db = await backend.newDb();
    await importGenesis(db);
    const file = new Database(db);
    try {
      expect(file.prepare("UPDATE code SET abi = NULL").run().changes).toBeGreaterThan(60);
    } finally {
      file.close();
    }
    const legacy = await startTestNode(db);
    try {
      for (const address of ["0x1", "0x3"]) {
        const body = await bodyOf(`${legacy.base}/accounts/${address}/modules?limit=1000`);
        expect(body.equals(await bodyOf(`${node.base}/accounts/${address}/modules?limit=1000`)), address).toBe(true);
        expect(body.equals(decodePathBody(body)), address).toBe(true);
      }
    } finally {
      await legacy.close();
    }
  });

  it("orders modules by state key (shorter names first) and pages through each exactly once", async () => {
    const all = (await (await fetch(`${node.base}/accounts/0x1/modules`)).json()) as Json[];
    const names = all.map((m) => m.abi.name as string);
    const sorted = [...names].sort((a, b) => a.length - b.length || Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(names).toEqual(sorted);
    for (const limit of [1, 2, 7, 25]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = cursor ? `?limit=${limit}&start=${cursor}` : `?limit=${limit}`;
        const res: Response = await fetch(`${node.base}/accounts/0x1/modules${q}`);
        expect(res.status).toBe(200);
        const page = (await res.json()) as Json[];
        expect(page.length).toBeLessThanOrEqual(limit);
        seen.push(...page.map((m) => m.abi.name));
        cursor = res.headers.get("x-node-cursor");
        // The cursor is the state key of the first module of the next page; the last page has none.
        const next = names[seen.length];
        expect(cursor).toBe(next === undefined ? null : Buffer.from(moduleStateKey(Buffer.from(addr("1").slice(2), "hex"), next)).toString("hex"));
        pages++;
      } while (cursor && pages < 200);
      expect(seen).toEqual(names);
    }
  });

  it("accepts the address with or without 0x, short or long, and answers [] for an account without modules", async () => {
    const short = await (await fetch(`${node.base}/accounts/0x1/modules?limit=3`)).text();
    const long = await (await fetch(`${node.base}/accounts/${addr("1")}/modules?limit=3`)).text();
    const bare = await (await fetch(`${node.base}/accounts/${addr("1").slice(2)}/modules?limit=3`)).text();
    expect(long).toBe(short);
    expect(bare).toBe(short);
    const empty = await fetch(`${node.base}/accounts/0xdead/modules`);
    expect(empty.status).toBe(200);
    expect(await empty.json()).toEqual([]);
  });

  it("answers BCS: a map from <address>::<name> to bytecode in serialized-key order, with the cursor", async () => {
    const json = (await (await fetch(`${node.base}/accounts/0x1/modules?limit=5`)).json()) as Json[];
    const res = await fetch(`${node.base}/accounts/0x1/modules?limit=5`, { headers: { accept: "application/x-bcs" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-bcs");
    expect(res.headers.get("x-node-cursor")).not.toBeNull();
    const decoded = bcs.vector(bcs.tuple([bcs.string(), bcs.byteVector()])).parse(new Uint8Array(await res.arrayBuffer()));
    const expectedKeys = json.map((m) => `0x1::${m.abi.name}`).sort((a, b) => {
      const ka = Buffer.from(bcs.string().serialize(a).toBytes());
      const kb = Buffer.from(bcs.string().serialize(b).toBytes());
      return Buffer.compare(ka, kb);
    });
    expect(decoded.map(([k]) => k)).toEqual(expectedKeys);
    for (const [k, code] of decoded) {
      const m = json.find((j) => `0x1::${j.abi.name}` === k)!;
      expect("0x" + Buffer.from(code).toString("hex")).toBe(m.bytecode);
    }
  });
});

describe(`modules across versions (${backend.name})`, () => {
  let node: TestNode;
  const app = addr("cafe");
  const v1 = buildModule({ address: app, name: "shop", functions: [{ name: "buy", entry: true, params: ["&signer", "u64"] }] });
  const v2 = buildModule({
    address: app,
    name: "shop",
    functions: [
      { name: "buy", entry: true, params: ["&signer", "u64"] },
      { name: "price", view: true, returns: ["u64"] },
    ],
  });
  const chain = new ChainBuilder().genesis();
  let publishedAt = 0n;
  let upgradedAt = 0n;
  let brokenAt = 0n;
  let deletedAt = 0n;
  beforeAll(async () => {
    publishedAt = chain.nextUserVersion;
    chain.block([{ sender: app, changes: [writeModule(app, v1)] }]);
    upgradedAt = chain.nextUserVersion;
    chain.block([{ sender: app, seq: 1, changes: [writeModule(app, v2)] }]);
    brokenAt = chain.nextUserVersion;
    chain.block([{ sender: app, seq: 2, changes: [writeModule(app, "0xa11ceb0b030000", "broken")] }]);
    deletedAt = chain.nextUserVersion;
    chain.block([{ sender: app, seq: 3, changes: [deleteModule(app, "broken")] }]);
    const db = await backend.newDb();
    await chain.importInto(db);
    node = await startTestNode(db);
  });
  afterAll(async () => {
    await node?.close();
    await backend.cleanup();
  });

  const at = async (v: bigint) => (await (await fetch(`${node.base}/accounts/${app}/modules?ledger_version=${v}`)).json()) as Json[];

  it("serves the bytecode and ABI of each version at that version", async () => {
    expect(await at(publishedAt - 1n)).toEqual([]);
    const first = await at(publishedAt);
    expect(first.map((m) => m.bytecode)).toEqual(["0x" + Buffer.from(v1).toString("hex")]);
    expect(first[0]!.abi.exposed_functions.map((f: Json) => f.name)).toEqual(["buy"]);
    expect((await at(upgradedAt - 1n))[0]!.bytecode).toBe(first[0]!.bytecode);
    const second = await at(upgradedAt);
    expect(second[0]!.abi.exposed_functions.map((f: Json) => [f.name, f.is_view])).toEqual([
      ["buy", false],
      ["price", true],
    ]);
    expect(second[0]!.abi.address).toBe("0xcafe");
  });

  it("sends at every version the bytes the decode path sent", async () => {
    for (const v of [publishedAt, upgradedAt, brokenAt, deletedAt]) {
      const body = await bodyOf(`${node.base}/accounts/${app}/modules?ledger_version=${v}`);
      expect(body.equals(decodePathBody(body)), `at ${v}`).toBe(true);
    }
  });

  it("gives abi null for bytecode that does not decode, and forgets a deleted module", async () => {
    const withBroken = await at(brokenAt);
    expect(withBroken).toContainEqual({ bytecode: "0xa11ceb0b030000", abi: null });
    expect(withBroken).toHaveLength(2);
    const afterDelete = await at(deletedAt);
    expect(afterDelete).toHaveLength(1);
    expect(afterDelete[0]!.abi.name).toBe("shop");
  });
});

/**
 * On PostgreSQL the position read of a page may bring the page itself (`readModulesVersion`'s
 * `page`), and the handler then sends that: every page, cursor and error must be SQLite's.
 */
describe("modules on PostgreSQL, page by page as on SQLite", () => {
  let served: Awaited<ReturnType<typeof serveOnEveryBackend>> | undefined;
  const app = addr("beef");
  const mod = (name: string, n: number) =>
    buildModule({ address: app, name, functions: Array.from({ length: n }, (_, i) => ({ name: `f${i}`, entry: true, params: ["&signer", "u64"] })) });
  const chain = new ChainBuilder().genesis();
  const versions: bigint[] = [];
  beforeAll(async () => {
    versions.push(chain.nextUserVersion);
    chain.block([{ sender: app, changes: ["a", "bb", "c", "dd", "e"].map((n) => writeModule(app, mod(n, 1))) }]);
    versions.push(chain.nextUserVersion);
    chain.block([{ sender: app, seq: 1, changes: [writeModule(app, mod("bb", 2)), deleteModule(app, "c")] }]);
    versions.push(chain.nextUserVersion);
    chain.block([{ sender: app, seq: 2, changes: [writeModule(app, mod("c", 3)), writeModule(app, "0xa11ceb0b030000", "zz")] }]);
    served = await serveOnEveryBackend(chain);
  });
  afterAll(() => served?.stop());

  const answer = async (node: TestNode, query: string, accept: string) => {
    const res = await fetch(`${node.base}/accounts/${app}/modules${query}`, { headers: { accept } });
    return {
      status: res.status,
      cursor: res.headers.get("x-node-cursor"),
      ledger: res.headers.get("x-node-ledger-version"),
      body: Buffer.from(await res.arrayBuffer()).toString("hex"),
    };
  };

  it("walks every page at every version in both formats, each asked twice (a miss, then a page the cache may keep)", async () => {
    const [sqlite, postgres] = served!.nodes as [TestNode, TestNode];
    let pages = 0;
    for (const accept of ["application/json", "application/x-bcs"])
      for (const version of [...versions.map((v) => `&ledger_version=${v}`), ""])
        for (const limit of [1, 2, 4, 100]) {
          let cursor: string | null = null;
          do {
            const query: string = `?limit=${limit}${version}${cursor ? `&start=${cursor}` : ""}`;
            const expected = await answer(sqlite, query, accept);
            expect(expected.status, query).toBe(200);
            for (let i = 0; i < 2; i++) expect(await answer(postgres, query, accept), `${query} ${accept} (${i})`).toEqual(expected);
            cursor = expected.cursor;
            pages++;
          } while (cursor);
        }
    expect(pages).toBeGreaterThan(50);
  });

  it("refuses what SQLite refuses, with the same error", async () => {
    const [sqlite, postgres] = served!.nodes as [TestNode, TestNode];
    const foreign = Buffer.from(moduleStateKey(Buffer.from(addr("1").slice(2), "hex"), "coin")).toString("hex");
    for (const query of ["?limit=0", "?start=zz", `?start=${foreign}`, "?ledger_version=99999999", "?limit=0&ledger_version=99999999", "?start=zz&ledger_version=99999999"]) {
      const expected = await answer(sqlite, query, "application/json");
      expect(expected.status, query).toBeGreaterThanOrEqual(400);
      expect(await answer(postgres, query, "application/json"), query).toEqual(expected);
    }
  });
});
