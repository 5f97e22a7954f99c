/**
 * `ledger-node import` as a user runs it (the built `dist/cli.js`, a real process on real SQLite files): idempotent
 * re-import, errors naming the version, stdin, a trailing half block, and kill -9 mid-way.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/storage/sqlite/SqliteStore.js";
import { CLI, requireBuiltCli } from "./helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-import-"));
const run = (args: string[], input?: string) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", input, timeout: 120_000 });

async function ledgerOf(db: string) {
  const s = new SqliteStore(db, { readonly: true });
  try {
    return await s.getLedgerInfo();
  } finally {
    await s.close();
  }
}

describe("ledger-node import", () => {
  const chainFile = join(dir, "chain.ndjson");
  let lines: string[] = [];
  beforeAll(() => {
    requireBuiltCli();
    const r = run(["devnet", "--out", chainFile, "--blocks", "120"]);
    expect(r.status, `${r.signal} ${r.stderr}`).toBe(0);
    lines = readFileSync(chainFile, "utf8").trim().split("\n");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("imports a devnet stream, then skips it whole when imported again", async () => {
    const db = join(dir, "a.db");
    const first = run(["import", "--db", db, chainFile]);
    expect(first.status, `${first.signal} ${first.stderr}`).toBe(0);
    expect(first.stdout).toContain(`imported ${lines.length} transactions in 121 blocks`);
    const info = await ledgerOf(db);
    expect(info?.ledgerVersion).toBe(BigInt(lines.length - 1));
    expect(info?.blockHeight).toBe(120n);
    const again = run(["import", "--db", db, chainFile]);
    expect(again.status, `${again.signal} ${again.stderr}`).toBe(0);
    expect(again.stdout).toContain(`imported 0 transactions in 0 blocks, skipped ${lines.length} already committed`);
  });

  it("reads a JSON array from stdin", async () => {
    const db = join(dir, "stdin.db");
    const arr = "[" + lines.slice(0, 200).join(",\n") + "]";
    const r = run(["import", "--db", db, "-"], arr);
    expect(r.status, `${r.signal} ${r.stderr}`).toBe(0);
    const info = await ledgerOf(db);
    // The 200th line may cut a block: only whole blocks are committed.
    expect(info).not.toBeNull();
    const last = JSON.parse(lines[Number(info!.ledgerVersion)]!);
    expect(["block_epilogue_transaction", "genesis_transaction"]).toContain(last.type);
  });

  it("holds back a trailing half block and commits it when the rest arrives", async () => {
    const db = join(dir, "half.db");
    const cut = lines.findIndex((l, i) => i > 10 && JSON.parse(l).type === "user_transaction");
    writeFileSync(join(dir, "head.ndjson"), lines.slice(0, cut + 1).join("\n"));
    const r = run(["import", "--db", db, join(dir, "head.ndjson")]);
    expect(r.status, `${r.signal} ${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/transactions of an unfinished last block were held back/);
    const before = await ledgerOf(db);
    expect(before!.ledgerVersion).toBeLessThan(BigInt(cut));
    const rest = run(["import", "--db", db, chainFile]);
    expect(rest.status, `${rest.signal} ${rest.stderr}`).toBe(0);
    expect((await ledgerOf(db))!.ledgerVersion).toBe(BigInt(lines.length - 1));
  });

  it("stops at a gap, a repeat or a mismatch with an error naming the version, writing nothing of that block", async () => {
    const db = join(dir, "bad.db");
    const gap = [...lines.slice(0, 30), ...lines.slice(31)];
    writeFileSync(join(dir, "gap.ndjson"), gap.join("\n"));
    const g = run(["import", "--db", db, join(dir, "gap.ndjson")]);
    expect(g.status, `${g.signal} ${g.stderr}`).toBe(1);
    expect(g.stderr).toContain("gap before version 31: expected version 30");
    const info = await ledgerOf(db);
    expect(info!.ledgerVersion).toBeLessThan(30n);

    writeFileSync(join(dir, "repeat.ndjson"), [...lines.slice(0, 40), lines[39]].join("\n"));
    const rep = run(["import", "--db", join(dir, "rep.db"), join(dir, "repeat.ndjson")]);
    expect(rep.status, `${rep.signal} ${rep.stderr}`).toBe(1);
    expect(rep.stderr).toContain("version 39 repeats or goes back: expected version 40");

    const tampered = lines.slice(0, 20).map((l) => JSON.parse(l));
    tampered[5].hash = "0x" + "ab".repeat(32);
    writeFileSync(join(dir, "tampered.ndjson"), tampered.map((t) => JSON.stringify(t)).join("\n"));
    const t = run(["import", "--db", db, join(dir, "tampered.ndjson")]);
    expect(t.status, `${t.signal} ${t.stderr}`).toBe(1);
    expect(t.stderr).toContain("version 5 does not match the ledger");

    const bad = run(["import", "--db", db, join(dir, "nope.ndjson")]);
    expect(bad.status, `${bad.signal} ${bad.stderr}`).toBe(1);
    expect(bad.stderr).toContain("cannot read");
    writeFileSync(join(dir, "garbage.ndjson"), lines[0] + "\n{not json\n");
    const garbage = run(["import", "--db", join(dir, "garbage.db"), join(dir, "garbage.ndjson")]);
    expect(garbage.status, `${garbage.signal} ${garbage.stderr}`).toBe(1);
    expect(garbage.stderr).toContain("garbage.ndjson:2");
  });

  it("survives kill -9 mid-import: every block whole, and a second import continues to the end", async () => {
    const big = join(dir, "big.ndjson");
    // ~48,000 transactions: a few seconds of import, so the kill lands mid-way with room on both sides.
    const gen = run(["devnet", "--out", big, "--blocks", "800", "--max-txns", "20"]);
    expect(gen.status, `${gen.signal} ${gen.stderr}`).toBe(0);
    const total = readFileSync(big, "utf8").trim().split("\n").length;
    const db = join(dir, "killed.db");
    const child = spawn(process.execPath, [CLI, "import", "--db", db, big], { stdio: "ignore" });
    // Wait until it has committed some blocks, then kill it without warning.
    const deadline = Date.now() + 60_000;
    for (;;) {
      await new Promise((r) => setTimeout(r, 20));
      const info = await ledgerOf(db).catch(() => null);
      if (info && info.ledgerVersion > 2000n) break;
      if (Date.now() > deadline) throw new Error("import made no progress");
    }
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const mid = await ledgerOf(db);
    expect(mid!.ledgerVersion).toBeLessThan(BigInt(total - 1));
    const s = new SqliteStore(db);
    const lastBlock = await s.getBlockByHeight(mid!.blockHeight);
    expect(lastBlock!.lastVersion).toBe(mid!.ledgerVersion);
    const fps = await s.getFingerprints(0n, mid!.ledgerVersion);
    expect(fps).toHaveLength(Number(mid!.ledgerVersion) + 1);
    expect(fps[fps.length - 1]!.kind).toBe("block_epilogue_transaction");
    await s.close();

    const again = run(["import", "--db", db, big]);
    expect(again.status, `${again.signal} ${again.stderr}`).toBe(0);
    expect(again.stdout).toContain(`skipped ${Number(mid!.ledgerVersion) + 1} already committed`);
    expect((await ledgerOf(db))!.ledgerVersion).toBe(BigInt(total - 1));
  });
});
