/**
 * An official Node binary of any version, from the npm registry's `node-<platform>-<arch>` package
 * (the binary and headers of a release), for tests that run the CLI on another Node than their own.
 * Kept in `$LEDGER_NODE_CACHE` (default `$XDG_CACHE_HOME/ledger-node` or `~/.cache/ledger-node`),
 * where `.ci/run` keeps the Node lines it tests: fetched once, then reused.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** A line older than `engines` in package.json: what a user who has not upgraded still runs. */
export const OLD_NODE_VERSION = "20.20.2";

const cacheDir = () => process.env.LEDGER_NODE_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "ledger-node");

/** The path of Node `version`'s `bin/node`, fetched with npm into the cache when it is not there. */
export function nodeRelease(version: string): string {
  const pkg = `node-${process.platform}-${process.arch}`;
  const dir = join(cacheDir(), `node-${version}`);
  const bin = join(dir, "node_modules", pkg, "bin", "node");
  if (existsSync(bin)) return bin;
  mkdirSync(cacheDir(), { recursive: true });
  // Installed beside the cache entry and renamed into place, so a run stopped halfway leaves none.
  const partial = mkdtempSync(`${dir}.partial-`);
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ["npm"];
  const r = spawnSync(npm[0]!, [...npm.slice(1), "install", "--prefix", partial, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", `${pkg}@${version}`], {
    encoding: "utf8",
  });
  if (r.status !== 0) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(`could not fetch Node ${version} (npm install ${pkg}@${version}): ${r.error?.message ?? r.stderr}`);
  }
  try {
    renameSync(partial, dir);
  } catch (e) {
    // Another run put it in place meanwhile.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(bin)) throw e;
  }
  return bin;
}
