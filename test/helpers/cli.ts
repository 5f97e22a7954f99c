/**
 * The built CLI, as users run it: `node dist/cli.js …`. `npm test` builds `dist/` first (its
 * `pretest`); a run without it fails here, saying so, instead of testing stale or missing code.
 */
import { existsSync } from "node:fs";

/** Absolute path of `dist/cli.js`. */
export const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

/** Throws unless `dist/cli.js` exists (call in a beforeAll of a suite that spawns it). */
export function requireBuiltCli(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (\`npm test\` does)`);
}
