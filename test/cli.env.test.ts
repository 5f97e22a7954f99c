/**
 * Settings as environment variables, on the built CLI (`node dist/cli.js`): `serve` from
 * LEDGER_NODE_DB and LEDGER_NODE_PORT alone serves that database on that port; a flag wins over
 * its variable; a bad variable stops the command with one line naming it; `follow` takes its
 * upstream, database and API key from variables, the key reaches the upstream as the
 * Authorization header and stands nowhere in the process's argv.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/storage/sqlite/SqliteStore.js";
import { CLI, requireBuiltCli } from "./helpers/cli.js";
import { FakeUpstream } from "./helpers/fakeUpstream.js";

const dir = mkdtempSync(join(tmpdir(), "ledger-node-cli-env-"));

/** The environment of a child: this one's without any LEDGER_NODE_ setting, then `vars`. */
function envWith(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LEDGER_NODE_")));
  return { ...env, ...vars };
}

const run = (args: string[], vars: Record<string, string>) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: envWith(vars), timeout: 60_000 });

/** A port free on 127.0.0.1 a moment ago (the kernel's pick for port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts `serve` with `args` and `vars`; resolves with the URL it printed and a `stop`. */
function serve(args: string[], vars: Record<string, string>): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [CLI, "serve", ...args], { stdio: ["ignore", "pipe", "pipe"], env: envWith(vars) });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  };
  let out = "";
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = / at (http:\/\/[0-9.:]+)\/v1/.exec(out);
      if (m) resolve({ url: m[1]!, stop });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

async function ledgerVersionOf(db: string): Promise<bigint | null> {
  const s = new SqliteStore(db, { readonly: true });
  try {
    return (await s.getLedgerInfo(true))?.ledgerVersion ?? null;
  } finally {
    await s.close();
  }
}

describe("settings as LEDGER_NODE_* environment variables (built dist/cli.js)", () => {
  const db = join(dir, "ledger.db");
  let version: string;
  beforeAll(() => {
    requireBuiltCli();
    const chain = join(dir, "chain.ndjson");
    expect(run(["devnet", "--out", chain, "--blocks", "5"], {}).status).toBe(0);
    const imported = run(["import", "--db", db, chain], {});
    expect(imported.status, imported.stderr).toBe(0);
    version = /ledger version (\d+)/.exec(imported.stdout)![1]!;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serve with LEDGER_NODE_DB and LEDGER_NODE_PORT and no flags serves that database on that port", async () => {
    const port = await freePort();
    const node = await serve([], { LEDGER_NODE_DB: db, LEDGER_NODE_PORT: String(port), LEDGER_NODE_QUIET: "1" });
    try {
      expect(node.url).toBe(`http://127.0.0.1:${port}`);
      const info = (await (await fetch(`http://127.0.0.1:${port}/v1`)).json()) as { ledger_version: string };
      expect(info.ledger_version).toBe(version);
    } finally {
      await node.stop();
    }
  });

  it("a flag wins over its variable, which is then not even parsed, while the other variables hold", async () => {
    const vars = { LEDGER_NODE_DB: join(dir, "no-such.db"), LEDGER_NODE_PORT: "abc", LEDGER_NODE_QUIET: "1", LEDGER_NODE_APTOS_HEADERS: "true" };
    const node = await serve(["--db", db, "--port", "0"], vars);
    try {
      const res = await fetch(`${node.url}/v1`);
      expect(((await res.json()) as { ledger_version: string }).ledger_version).toBe(version);
      expect(res.headers.get("x-aptos-ledger-version")).toBe(version);
    } finally {
      await node.stop();
    }
  });

  it("a bad LEDGER_NODE_PORT or a bad switch spelling exits 1 with one line naming the variable", () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ LEDGER_NODE_PORT: "abc" }, `error: LEDGER_NODE_PORT: --port must be an integer from 0 to 65535, got "abc"\n`],
      [{ LEDGER_NODE_PORT: "65536" }, `error: LEDGER_NODE_PORT: --port must be an integer from 0 to 65535, got "65536"\n`],
      [{ LEDGER_NODE_DEVNET: "yes" }, `error: LEDGER_NODE_DEVNET must be true or 1 (as --devnet) or false or 0 (as without it), got "yes"\n`],
      [
        { LEDGER_NODE_ARCHIVAL_ENDPOINT: "ftp://archive.example/v1" },
        `error: LEDGER_NODE_ARCHIVAL_ENDPOINT: --archival-endpoint must be an absolute http or https URL (such as https://archive.example/v1), got "ftp://archive.example/v1"\n`,
      ],
    ];
    for (const [vars, line] of cases) {
      const r = run(["serve"], { LEDGER_NODE_DB: db, ...vars });
      expect(r.status, JSON.stringify(vars)).toBe(1);
      expect(r.stderr).toBe(line);
      expect(r.stdout).toBe("");
    }
  });

  it("follow takes its upstream, database and API key from variables: the key reaches the upstream and stands nowhere in argv", async () => {
    const key = "operator-secret-key-46";
    const replica = join(dir, "replica.db");
    const up = await FakeUpstream.start({ blocks: 20 });
    const child = spawn(process.execPath, [CLI, "follow"], {
      stdio: ["ignore", "ignore", "pipe"],
      env: envWith({ LEDGER_NODE_UPSTREAM: up.base, LEDGER_NODE_DB: replica, LEDGER_NODE_API_KEY: key, LEDGER_NODE_FROM: "genesis", LEDGER_NODE_POLL: "50", LEDGER_NODE_MAX_RPS: "2000" }),
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    try {
      // Followed to the upstream's head: the variables named the upstream and the database.
      for (let waited = 0; waited < 60_000; waited += 50) {
        if (child.exitCode !== null) throw new Error(`follow exited ${child.exitCode}: ${stderr}`);
        if (up.received.length > 0 && (await ledgerVersionOf(replica).catch(() => null)) === up.ledgerVersion) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await ledgerVersionOf(replica)).toBe(up.ledgerVersion);
      expect(up.received.length).toBeGreaterThan(0);
      for (const r of up.received) expect(r.headers.authorization, r.url).toBe(`Bearer ${key}`);
      // What `ps` shows: the process's argv, read while it runs.
      const argv = readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      expect(argv).toEqual([process.execPath, CLI, "follow"]);
    } finally {
      child.kill("SIGTERM");
      await exited;
      await up.close();
    }
    expect(child.exitCode).toBe(0);
  });
});
