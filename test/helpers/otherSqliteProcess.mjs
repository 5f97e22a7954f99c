/**
 * Another process touching a SQLite ledger a node has open, as operators' tools do, then exiting:
 * better-sqlite3 directly (SQLite's own locking, nothing of ours). Prints one line saying what it
 * did; exits 0 unless the action itself failed.
 *
 *   read        a monitoring script: open, read the newest block height, close
 *   exclusive   a tool in `PRAGMA locking_mode = EXCLUSIVE`: SQLite refuses it (SQLITE_BUSY) while
 *               any other process holds its lock on the file; when it gets the file it checkpoints
 *               and deletes the WAL on close, as any last connection does. Prints `busy` or `got`
 *   backup      SQLite's online backup API into OUT
 *   vacuum      `VACUUM INTO` OUT
 *
 * Run: node test/helpers/otherSqliteProcess.mjs <action> <db> [out]
 */
import Database from "better-sqlite3";
import { rmSync } from "node:fs";

const [action, db, out] = process.argv.slice(2);
const conn = new Database(db, { timeout: action === "exclusive" ? 50 : 5000 });
try {
  switch (action) {
    case "read":
      process.stdout.write(`height ${conn.prepare("SELECT max(height) FROM blocks").pluck().get()}\n`);
      break;
    case "exclusive":
      conn.pragma("locking_mode = EXCLUSIVE");
      try {
        conn.prepare("SELECT max(height) FROM blocks").pluck().get();
        process.stdout.write("got\n");
      } catch (e) {
        if (e.code !== "SQLITE_BUSY") throw e;
        process.stdout.write("busy\n");
      }
      break;
    case "backup":
      rmSync(out, { force: true });
      await conn.backup(out);
      process.stdout.write("backed up\n");
      break;
    case "vacuum":
      rmSync(out, { force: true });
      conn.prepare("VACUUM INTO ?").run(out);
      process.stdout.write("vacuumed\n");
      break;
    default:
      throw new Error(`unknown action ${action}`);
  }
} finally {
  conn.close();
}
