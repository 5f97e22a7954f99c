/** Another process holding SQLite's write lock, for tests of what waits on it. */
import { spawn, type ChildProcess } from "node:child_process";

/** Another process holding SQLite's write lock on `db` until `release()`. */
export async function holdWriteLock(db: string): Promise<{ child: ChildProcess; release(): Promise<number | null> }> {
  const script = `
    const c = new (require("better-sqlite3"))(process.argv[1]);
    c.exec("BEGIN EXCLUSIVE");
    process.stdout.write("locked\\n");
    process.stdin.once("data", () => { c.exec("COMMIT"); c.close(); process.exit(0); });`;
  const child = spawn(process.execPath, ["-e", script, db], { cwd: new URL("../..", import.meta.url).pathname, stdio: ["pipe", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`lock holder exited ${code}`)));
  });
  return {
    child,
    release: () => new Promise((resolve) => {
      child.once("exit", (code) => resolve(code));
      child.stdin!.write("release\n");
    }),
  };
}
