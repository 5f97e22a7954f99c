/**
 * A pruner in its own process for race tests: prunes the ledger at `--db` one block at a time
 * (the store's real prune, each step its own commit), pausing `pauseMs` between steps, until the
 * oldest kept block reaches `floorHeight` or stdin closes. Prints one line per step,
 * `pruned <oldestVersion>`, and `done` when it stops pruning; it exits when stdin closes.
 *
 * Run: node --import tsx test/helpers/pruneSteps.ts <db> <floorHeight> <pauseMs>
 */
import { openStore } from "../../src/storage/open.js";

const [db, floorArg, pauseArg] = process.argv.slice(2);
const floor = BigInt(floorArg!);
const pauseMs = Number(pauseArg);
let stop = false;
process.stdin.on("data", () => undefined);
process.stdin.once("end", () => (stop = true));
const store = await openStore(db!);
try {
  while (!stop) {
    const info = await store.getLedgerInfo(true);
    if (!info || info.oldestBlockHeight + 1n >= floor) break;
    const next = await store.getBlockByHeight(info.oldestBlockHeight + 1n);
    if (!next) break;
    await store.prune({ oldestVersion: next.firstVersion, oldestBlockHeight: next.height });
    process.stdout.write(`pruned ${next.firstVersion}\n`);
    await new Promise((r) => setTimeout(r, pauseMs));
  }
} finally {
  await store.close();
  process.stdout.write("done\n");
}
