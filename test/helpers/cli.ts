/**
 * The built CLI, as users run it: `node dist/main.js …` (package.json's `bin`, which checks the
 * Node version and then loads `dist/cli.js`). `npm test` builds `dist/` first (its
 * `pretest`); a run without it fails here, saying so, instead of testing stale or missing code.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";

/** Absolute path of `dist/main.js`. */
export const CLI = new URL("../../dist/main.js", import.meta.url).pathname;

/** Throws unless `dist/main.js` exists (call in a beforeAll of a suite that spawns it). */
export function requireBuiltCli(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (\`npm test\` does)`);
}

/** Runs the built CLI with `args` to its exit: its exit code and what it printed. */
export function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
