/**
 * The `ledger-node` entry (`dist/main.js`, package.json's `bin`) on a Node older than `engines`:
 * every command exits 1 with one line naming the Node found and the Node needed, before the CLI or
 * a native module is loaded, and writes nothing. On the Node running the tests it runs the CLI.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, requireBuiltCli } from "./helpers/cli.js";
import { nodeRelease, OLD_NODE_VERSION } from "./helpers/nodeRelease.js";

const engines = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).engines.node as string;
const dir = mkdtempSync(join(tmpdir(), "ledger-node-version-"));
let oldNode = "";

beforeAll(() => {
  requireBuiltCli();
  oldNode = nodeRelease(OLD_NODE_VERSION);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (node: string, args: string[]) => spawnSync(node, [CLI, ...args], { encoding: "utf8", timeout: 60_000, cwd: dir });

describe("ledger-node on a Node older than engines", () => {
  it("is a Node engines refuses", () => {
    expect(engines).toBe(">=22.15");
    const r = spawnSync(oldNode, ["-p", "process.versions.node"], { encoding: "utf8" });
    expect(r.stdout.trim()).toBe(OLD_NODE_VERSION);
    expect(Number(OLD_NODE_VERSION.split(".")[0])).toBeLessThan(22);
  });

  it("every command exits 1 with one line naming the Node found and the Node needed, and writes nothing", () => {
    const db = join(dir, "ledger.db");
    const input = join(dir, "in.ndjson");
    writeFileSync(input, "");
    const out = join(dir, "chain.ndjson");
    const commands = [
      [],
      ["--help"],
      ["--version"],
      ["no-such-command"],
      ["serve", "--devnet", "--db", db, "--port", "0"],
      ["serve", "--db", db, "--create", "--port", "0"],
      ["import", "--db", db, input],
      ["follow", "--upstream", "http://127.0.0.1:9", "--db", db],
      ["prune", "--db", db, "--window", "10"],
      ["compact", "--db", db],
      ["devnet", "--out", out, "--blocks", "1"],
      ["help", "serve"],
    ];
    for (const args of commands) {
      const r = run(oldNode, args);
      expect({ args, status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
        args,
        status: 1,
        stdout: "",
        stderr: `ledger-node needs Node ${engines}; this is Node ${OLD_NODE_VERSION} (${oldNode})\n`,
      });
    }
    expect(existsSync(db)).toBe(false);
    expect(existsSync(out)).toBe(false);
  });
});

describe("ledger-node on the Node running the tests", () => {
  it("runs the CLI: --version, and a devnet file written", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string; bin: Record<string, string> };
    expect(pkg.bin["ledger-node"]).toBe("dist/main.js");
    const v = run(process.execPath, ["--version"]);
    expect(v.status).toBe(0);
    expect(v.stdout).toBe(`${pkg.version}\n`);
    const out = join(dir, "now.ndjson");
    const d = run(process.execPath, ["devnet", "--out", out, "--blocks", "2"]);
    expect(d.status).toBe(0);
    expect(readFileSync(out, "utf8").trim().split("\n").length).toBeGreaterThan(2);
  });
});
