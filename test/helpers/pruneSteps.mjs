/**
 * A pruner in its own process for race tests, stepped by the test: for each line on stdin it
 * prunes the ledger at `--db` by one block (the store's real prune, one commit) and prints
 * `pruned <oldestVersion>`, or `done` once the oldest kept block has reached `floorHeight` (then
 * it prints `done` for every further line). It exits when stdin closes. Plain JavaScript over the
 * built `dist/` (as `npm test` builds it), so that it starts without a TypeScript loader.
 *
 * Run: node test/helpers/pruneSteps.mjs <db> <floorHeight>
 */
import { createInterface } from "node:readline";

const { openStore } = await import(new URL("../../dist/storage/open.js", import.meta.url).href);
const [db, floorArg] = process.argv.slice(2);
const floor = BigInt(floorArg);
const store = await openStore(db);
let done = false;
try {
  for await (const _ of createInterface({ input: process.stdin })) {
    if (!done) {
      const info = await store.getLedgerInfo(true);
      const next = info && info.oldestBlockHeight + 1n < floor ? await store.getBlockByHeight(info.oldestBlockHeight + 1n) : null;
      if (next) {
        await store.prune({ oldestVersion: next.firstVersion, oldestBlockHeight: next.height });
        process.stdout.write(`pruned ${next.firstVersion}\n`);
        continue;
      }
      done = true;
    }
    process.stdout.write("done\n");
  }
} finally {
  await store.close();
}
