#!/usr/bin/env node
/**
 * The `ledger-node` command. It checks the running Node against `engines` in package.json before
 * anything else is loaded: static imports run first, so the CLI (and the native SQLite module it
 * loads) is imported only once the runtime is known to be one it supports. On an older Node every
 * command exits 1 with one line naming the Node found and the Node needed.
 */
import { readFileSync } from "node:fs";

const engines = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).engines.node as string;
const [, major, minor = "0"] = /^>=(\d+)(?:\.(\d+))?$/.exec(engines) ?? [];
const [foundMajor = 0, foundMinor = 0] = process.versions.node.split(".").map(Number);

if (!(foundMajor > Number(major) || (foundMajor === Number(major) && foundMinor >= Number(minor)))) {
  console.error(`ledger-node needs Node ${engines}; this is Node ${process.versions.node} (${process.execPath})`);
  process.exit(1);
}
await import("./cli.js");
