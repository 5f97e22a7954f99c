/**
 * What storing each module's ABI text saves on a read and costs on a write, per module, over every
 * code row of a SQLite ledger of schema 5 (a copy: `cp bench/out/scale-1000000.db /tmp/x.db`, then
 * open it once with this build to migrate it): `node bench/moduleAbi.mjs --db /tmp/x.db`. Checks
 * first that every stored text is the API's MoveModule serializer's bytes for its bytecode. CPU
 * (process.cpuUsage) per module, three rounds: `moduleAbiJson` (the write), a record built by
 * decoding and from stored text (`ModuleRecords`, a miss each), a code row read with and without
 * its ABI in random order, with the store's memory settings.
 */
import Database from "better-sqlite3";

const ROOT = new URL("../", import.meta.url).pathname;
const argv = process.argv.slice(2);
const DB = argv[argv.indexOf("--db") + 1];
if (argv.indexOf("--db") === -1 || !DB) throw new Error("--db PATH: a copy of a bench ledger, migrated to schema 5");
const { moduleAbi, moduleAbiJson } = await import(`${ROOT}dist/move/abi.js`);
const { jsonSerializer } = await import(`${ROOT}dist/api/http/serialize.js`);
const { ref } = await import(`${ROOT}dist/api/http/operation.js`);
const { moveModule } = await import(`${ROOT}dist/api/schemas.js`);
const { ModuleRecords } = await import(`${ROOT}dist/api/pages/moduleRecords.js`);

const db = new Database(DB, { readonly: true });
db.pragma("cache_size = -32768");
db.pragma("mmap_size = 268435456");
const rows = db.prepare("SELECT code_hash, bytecode, abi FROM code").raw().all();
const serialize = jsonSerializer(ref(moveModule));
const differ = rows.filter(([, bytecode, abi]) => {
  const decoded = moduleAbi(bytecode);
  return (decoded === null ? "null" : serialize(decoded)) !== abi;
}).length;
console.log(`${rows.length} code rows; stored ABI text other than the serializer's bytes: ${differ}`);
if (differ > 0) process.exitCode = 1;

// The hashes in a fixed random order (Fisher-Yates over a small LCG): a page's modules are not neighbours.
let seed = 7;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const shuffled = rows.map((r) => r[0]);
for (let i = shuffled.length - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
}
const perModule = (f) => {
  const c0 = process.cpuUsage();
  f();
  const c = process.cpuUsage(c0);
  return ((c.user + c.system) / rows.length).toFixed(2);
};
const bytecodeOnly = db.prepare("SELECT bytecode FROM code WHERE code_hash = ?").raw();
const withAbi = db.prepare("SELECT bytecode, abi FROM code WHERE code_hash = ?").raw();
let sink = 0;
for (let round = 0; round < 3; round++) {
  const write = perModule(() => {
    for (const [, bytecode] of rows) sink += moduleAbiJson(bytecode).length;
  });
  const decoded = perModule(() => {
    const records = new ModuleRecords(1);
    for (const [hash, bytecode] of rows) sink += records.record(hash, bytecode).length;
  });
  const stored = perModule(() => {
    const records = new ModuleRecords(1);
    for (const [hash, bytecode, abi] of rows) sink += records.record(hash, bytecode, abi ?? undefined).length;
  });
  const readBytecode = perModule(() => {
    for (const hash of shuffled) sink += bytecodeOnly.get(hash)[0].length;
  });
  const readBoth = perModule(() => {
    for (const hash of shuffled) sink += withAbi.get(hash)[0].length;
  });
  console.log(
    `round ${round}, µs CPU a module: moduleAbiJson ${write}; record decoded ${decoded}, from stored text ${stored}; code read ${readBytecode}, with its ABI ${readBoth}`,
  );
}
db.close();
if (sink === 0) console.log("(nothing read)");
