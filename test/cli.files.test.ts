/**
 * The built CLI (`node dist/cli.js`, as `npm test` builds it first) and its database and input
 * files: a missing `--db` is created only where that is the point (import, serve --devnet,
 * serve --create) and never by prune; a directory, an empty or a non-SQLite file is refused naming
 * the path and left as it was; serve opens read-only when it does not write; an NDJSON parse
 * error commits the whole blocks before it; an empty import says so.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { SqliteStore } from "../src/storage/sqlite/SqliteStore.js";
import { CLI, requireBuiltCli } from "./helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-cli-"));
const running: ChildProcess[] = [];

const run = (args: string[], input?: string) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", input, timeout: 60_000 });

async function ledgerOf(db: string) {
  const s = new SqliteStore(db, { readonly: true });
  try {
    return await s.getLedgerInfo(true);
  } finally {
    await s.close();
  }
}

/**
 * Starts `serve` and waits for its "serving … at URL/v1" line; resolves with the URL and
 * `printed(text)`, which waits until the output holds `text` (stdout and stderr arrive
 * independently: a line on one may come after the other's), rejecting if the process exits first.
 */
function serve(args: string[]): Promise<{ url: string; child: ChildProcess; printed: (text: string) => Promise<void> }> {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  running.push(child);
  let out = "";
  const waiters = new Set<() => void>();
  const printed = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (out.includes(text)) {
          waiters.delete(check);
          resolve();
        } else if (child.exitCode !== null) {
          waiters.delete(check);
          reject(new Error(`serve exited before printing ${JSON.stringify(text)}: ${out}`));
        }
      };
      waiters.add(check);
      check();
    });
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  child.once("exit", wake);
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      wake();
      const m = / at (http:\/\/[0-9.:]+)\/v1/.exec(out);
      if (m) resolve({ url: m[1]!, child, printed });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

describe("the CLI and its files (built dist/cli.js)", () => {
  const chainFile = join(dir, "chain.ndjson");
  let lines: string[] = [];
  beforeAll(() => {
    requireBuiltCli();
    const r = run(["devnet", "--out", chainFile, "--blocks", "12"]);
    expect(r.status, r.stderr).toBe(0);
    lines = readFileSync(chainFile, "utf8").trim().split("\n");
  });
  afterAll(async () => {
    for (const c of running) await stop(c);
    rmSync(dir, { recursive: true, force: true });
  });

  it("prune never creates a database: a mistyped path is an error naming it", () => {
    const db = join(dir, "typo", "ledger.db");
    const r = run(["prune", "--db", db, "--window", "100"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`database ${db} does not exist`);
    expect(r.stdout).not.toContain("nothing to prune");
    expect(existsSync(db)).toBe(false);
    expect(existsSync(join(dir, "typo"))).toBe(false);
  });

  it("serve refuses a missing database unless --devnet or --create asks for it", async () => {
    const db = join(dir, "serve-missing.db");
    const r = run(["serve", "--db", db, "--port", "0"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`database ${db} does not exist; pass --create`);
    expect(existsSync(db)).toBe(false);

    const created = await serve(["--db", db, "--create"]);
    expect(existsSync(db)).toBe(true);
    // A new database holds no block yet: info says so, and the health check fails.
    const info = (await (await fetch(`${created.url}/v1/info`)).json()) as { ledger_version: string | null };
    expect(info.ledger_version).toBeNull();
    expect((await fetch(`${created.url}/v1/-/healthy`)).status).toBe(503);
    await stop(created.child);

    const devnetDb = join(dir, "serve-devnet.db");
    const dev = await serve(["--db", devnetDb, "--devnet", "--block-interval", "3600000"]);
    const devInfo = (await (await fetch(`${dev.url}/v1/info`)).json()) as { ledger_version: string };
    expect(devInfo.ledger_version).toBe("0");
    await stop(dev.child);
  });

  it("refuses a directory, an empty file and a file that is not SQLite, naming the path and leaving the file alone", () => {
    const empty = join(dir, "empty.db");
    writeFileSync(empty, "");
    const text = join(dir, "notes.db");
    writeFileSync(text, "these are my notes, not a database\n");
    const folder = join(dir, "folder.db");
    mkdirSync(folder);
    const cases: Array<[string, string]> = [
      [empty, "is an empty file (0 bytes), not a SQLite database"],
      [text, "is not a SQLite database"],
      [folder, "is a directory"],
    ];
    for (const [db, why] of cases) {
      for (const args of [
        ["serve", "--db", db, "--port", "0"],
        ["serve", "--db", db, "--port", "0", "--devnet"],
        ["prune", "--db", db, "--window", "10"],
        ["import", "--db", db, chainFile],
      ]) {
        const r = run(args);
        expect(r.status, `${args.join(" ")}: ${r.stdout}`).toBe(1);
        expect(r.stderr, args.join(" ")).toContain(`database ${db} ${why}`);
      }
    }
    expect(statSync(empty).size).toBe(0);
    expect(readFileSync(text, "utf8")).toBe("these are my notes, not a database\n");
  });

  it("an NDJSON parse error commits the whole blocks before it, then fails naming the line", async () => {
    // The epilogue of block 5 and a line in the middle of block 8: versions are line numbers.
    const epilogues = lines.map((l, i) => [JSON.parse(l).type, i] as const).filter(([t]) => t === "block_epilogue_transaction").map(([, i]) => i);
    const endOf5 = epilogues[4]!;
    const midOf8 = epilogues[6]! + 2;
    for (const [cut, committed] of [
      [endOf5 + 1, endOf5], // right after a whole block: it commits
      [midOf8, epilogues[6]!], // inside a block: the blocks before it commit, not the half block
    ] as const) {
      const file = join(dir, `bad-${cut}.ndjson`);
      writeFileSync(file, [...lines.slice(0, cut), "{this is not json", ...lines.slice(cut)].join("\n") + "\n");
      const db = join(dir, `bad-${cut}.db`);
      const r = run(["import", "--db", db, file]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`${file}:${cut + 1}: not a JSON object`);
      expect(r.stderr).toContain(`ledger version ${committed}`);
      expect((await ledgerOf(db))!.ledgerVersion).toBe(BigInt(committed));
      // The rest imports once the line is fixed, with nothing lost or repeated.
      const fixed = run(["import", "--db", db, chainFile]);
      expect(fixed.status, fixed.stderr).toBe(0);
      expect(fixed.stdout).toContain(`skipped ${committed + 1} already committed`);
      expect((await ledgerOf(db))!.ledgerVersion).toBe(BigInt(lines.length - 1));
    }
  });

  it("an empty import says 'nothing to import' and exits 0, or 1 with --require-data; it creates no database", () => {
    const empty = join(dir, "empty.ndjson");
    writeFileSync(empty, "\n\n");
    const db = join(dir, "never.db");
    const r = run(["import", "--db", db, empty]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`nothing to import: ${empty} held no transaction`);
    const stdin = run(["import", "--db", db, "-"], "");
    expect(stdin.status, stdin.stderr).toBe(0);
    expect(stdin.stdout).toContain("nothing to import: stdin held no transaction");
    const strict = run(["import", "--db", db, "--require-data", empty]);
    expect(strict.status).toBe(1);
    expect(strict.stderr).toContain(`nothing to import: ${empty} held no transaction (--require-data)`);
    expect(existsSync(db)).toBe(false);
  });

  it("import and prune run without loading the API's modules (Fastify): only serve needs them", () => {
    // The CLI run as usual, with a hook that counts the Fastify files Node loaded, at exit.
    const hook = join(dir, "count-fastify.mjs");
    writeFileSync(
      hook,
      `import { createRequire } from "node:module";
       import { writeSync } from "node:fs";
       const { cache } = createRequire(import.meta.url);
       process.on("exit", () => writeSync(2, "\\nfastify files: " + Object.keys(cache).filter((k) => k.includes("/node_modules/fastify/")).length + "\\n"));`,
    );
    const countFastify = (args: string[]) => spawnSync(process.execPath, ["--import", hook, CLI, ...args], { encoding: "utf8", timeout: 60_000 });
    const db = join(dir, "no-api.db");
    const imported = countFastify(["import", "--db", db, chainFile]);
    expect(imported.status, imported.stderr).toBe(0);
    expect(imported.stdout).toContain(`ledger version ${lines.length - 1}`);
    expect(imported.stderr).toContain("fastify files: 0\n");
    const pruned = countFastify(["prune", "--db", db, "--window", "100000"]);
    expect(pruned.status, pruned.stderr).toBe(0);
    expect(pruned.stderr).toContain("fastify files: 0\n");
  });

  it("names the file on every input and output file error", () => {
    const missing = join(dir, "nope.ndjson");
    const r = run(["import", "--db", join(dir, "x.db"), missing]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`cannot read ${missing}`);
    const r2 = run(["import", "--db", join(dir, "x.db"), dir]);
    expect(r2.status).toBe(1);
    expect(r2.stderr).toContain(`cannot read ${dir}: it is a directory`);
    const out = join(dir, "no-such-dir", "chain.ndjson");
    const d = run(["devnet", "--out", out, "--blocks", "1"]);
    expect(d.status).toBe(1);
    expect(d.stderr).toContain(`cannot write ${out}`);
  });

  it("serve --no-prune without --devnet opens the database read-only and says so", async () => {
    const db = join(dir, "noprune.db");
    expect(run(["import", "--db", db, chainFile]).status).toBe(0);
    const s = await serve(["--db", db, "--no-prune"]);
    const info = (await (await fetch(`${s.url}/v1/info`)).json()) as { ledger_version: string };
    expect(info.ledger_version).toBe(String(lines.length - 1));
    await s.printed(`serving ${db} read-only (no devnet, pruner off)`);
    await stop(s.child);
  });

  it("serve --sqlite-mmap-mb sets how much of the file is memory-mapped (0: none), and refuses a bad value naming it", async () => {
    const db = join(dir, "mmap.db");
    expect(run(["import", "--db", db, chainFile]).status).toBe(0);
    const bad = run(["serve", "--db", db, "--no-prune", "--sqlite-mmap-mb", "-1"]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain("--sqlite-mmap-mb");
    // The process's own mappings show whether SQLite reads the file through a memory map.
    // Linux's /proc: this test runs where CI does, and says so when it cannot look.
    expect(existsSync("/proc/self/maps"), "/proc/<pid>/maps (Linux) shows a process's memory maps").toBe(true);
    const mapsFile = (pid: number) => readFileSync(`/proc/${pid}/maps`, "utf8").split("\n").filter((l) => l.endsWith(db));
    for (const [mb, mapped] of [["0", false], ["16", true]] as const) {
      const s = await serve(["--db", db, "--no-prune", "--sqlite-mmap-mb", mb, "--sqlite-cache-mb", "4"]);
      expect((await fetch(`${s.url}/v1/accounts/0x1/modules?limit=5`)).status).toBe(200);
      expect(mapsFile(s.child.pid!).length > 0, `mappings of ${db} with --sqlite-mmap-mb ${mb}`).toBe(mapped);
      await stop(s.child);
    }
  });

  // A file this process may not write. Root writes through any file mode, so under root the file
  // is reached through a read-only bind mount (EROFS for everyone); a reader of a WAL database
  // there needs its -wal and -shm files, which a connection held open here keeps in place. Any
  // other user is refused by the file mode.
  it("serve of a database file it may not write serves it read-only, without the pruner", async () => {
    const src = join(dir, "rw");
    mkdirSync(src);
    const srcDb = join(src, "ledger.db");
    expect(run(["import", "--db", srcDb, chainFile]).status).toBe(0);
    const asRoot = process.getuid?.() === 0;
    let db = srcDb;
    let holder: Database.Database | null = null;
    const ro = join(dir, "ro");
    if (asRoot) {
      holder = new Database(srcDb);
      holder.prepare("SELECT count(*) FROM blocks").get();
      mkdirSync(ro);
      const bind = spawnSync("mount", ["--bind", src, ro]);
      const remount = bind.status === 0 ? spawnSync("mount", ["-o", "remount,bind,ro", ro]) : bind;
      if (remount.status !== 0) throw new Error(`mounting ${ro} read-only failed (${remount.status}): ${remount.stderr}`);
      db = join(ro, "ledger.db");
    } else {
      chmodSync(srcDb, 0o444);
    }
    try {
      const before = readFileSync(db);
      const s = await serve(["--db", db, "--prune-window", "10"]);
      const res = await fetch(`${s.url}/v1/info`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { ledger_version: string }).ledger_version).toBe(String(lines.length - 1));
      await s.printed(`${db} is read-only for this process: serving it read-only, without the pruner`);
      await stop(s.child);
      expect(readFileSync(db).equals(before)).toBe(true);
    } finally {
      if (asRoot) spawnSync("umount", [ro]);
      holder?.close();
    }
  });
});
