/**
 * Loaded into `ledger-node compact` (`node --import <this> dist/main.js compact …`) by the crash
 * test: it announces each step of the compaction on stderr as it is reached, before the step runs
 * (`compact phase: copy <table>`, `checkpoint`, `leave wal`, `rename`), and with
 * `COMPACT_HOLD_AT=<phase>` it stops the process there for good, so that a kill lands at a known
 * step. The steps are found by what the compaction does (the SQL it runs on its connection, the
 * rename of its temporary file), not by its source: a step the compaction no longer takes is never
 * announced, and the test waiting for it fails saying so.
 */
import fs from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";

// The same module instance the CLI imports (the CommonJS cache is shared with ESM imports).
const Database = createRequire(new URL("../../package.json", import.meta.url))("better-sqlite3");
const holdAt = process.env.COMPACT_HOLD_AT ?? "";

function reached(phase) {
  fs.writeSync(2, `compact phase: ${phase}\n`);
  // Blocks this thread for good: the process stays at this step until it is killed.
  if (phase === holdAt) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

const exec = Database.prototype.exec;
Database.prototype.exec = function (sql) {
  const copy = /^INSERT INTO compacted\."([^"]+)"/.exec(sql);
  if (copy) reached(`copy ${copy[1]}`);
  return exec.call(this, sql);
};

const pragma = Database.prototype.pragma;
Database.prototype.pragma = function (source, options) {
  if (/^compacted\.wal_checkpoint/.test(source)) reached("checkpoint");
  if (/^journal_mode\s*=\s*DELETE$/i.test(source)) reached("leave wal");
  return pragma.call(this, source, options);
};

const renameSync = fs.renameSync;
fs.renameSync = function (from, to) {
  if (String(from).endsWith(".compact-tmp")) reached("rename");
  return renameSync.call(this, from, to);
};
syncBuiltinESMExports();
