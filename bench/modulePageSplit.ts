/**
 * Where a random module page's store work goes, statement by statement, at each ledger size
 * (issue 35, target 2):
 *
 *   node --import tsx bench/modulePageSplit.ts [--versions 1000000,10000000] [--pages 3000] [--rounds 3]
 *                                              [--mmap-mb 256] [--cache-mb 32] [--dir bench/out/]
 *   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=bench/out/callgrind/split.%p \
 *     node --import tsx bench/modulePageSplit.ts --callgrind [--rounds 1] …
 *
 * One process opens each ledger (DIR/scale-N.db, read-only, the store's pragmas) and reads the
 * statements of random module pages as the node reads a page its page cache has not seen (limit 25
 * and one more, random account and version, the draw of `bench:scale`), inside one read
 * transaction, one statement kind at a time over the same pages: the position with the account's
 * newest module change (`modulesVersionAt`), the page's keys with each key's newest row
 * (`moduleKeys`), and each listed module's JSON record (`codeRecord`, which the node runs only for
 * the records its ring does not hold); then the same code rows read in other forms (the seek alone,
 * the two columns, the record without `lower()`), what a record's parts cost. A first pass over
 * other pages warms the map and SQLite's cache. Reported: CPU µs a page (process CPU time, medians
 * of the rounds), and with `--callgrind` (run under callgrind, instrumentation off) the
 * instructions a page of each, the process switching instrumentation on around each kind alone.
 * Also reported: how often a request's page-cache key (account and the newest change at its
 * version) repeats within the first 6,000 requests (about what one `bench:scale` server answers),
 * and how the modules table's leaf pages hold an account's rows.
 */
import Database from "better-sqlite3";
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { promisify } from "node:util";
import { CODE_HASH_DIGITS } from "../src/ledger/codeHash.js";
import { prng } from "../src/ingest/devnet/chain.js";
import { openDatabase } from "../src/storage/sqlite/connection.js";
import { prepareStatements } from "../src/storage/sqlite/statements.js";
import { OUT, argOption, median } from "./common.js";
import { readTargets } from "./scaleRows.js";

const argv = process.argv.slice(2);
const opt = argOption(argv);
const SIZES = opt("versions", "1000000,10000000").split(",").map(Number);
const PAGES = Number(opt("pages", "3000"));
const ROUNDS = Number(opt("rounds", "3"));
const MMAP_MB = Number(opt("mmap-mb", "256"));
const CACHE_MB = Number(opt("cache-mb", "32"));
const DIR = opt("dir", OUT).replace(/\/?$/, "/");
const CALLGRIND = argv.includes("--callgrind");
const STORED_HEX = argv.includes("--stored-hex");
/** Where callgrind writes this process's dumps (its `--callgrind-out-file`, as above). */
const DUMPS = `${OUT}callgrind/`;
/** Requests one `bench:scale` server answers in a row's warm-up and a round, about. */
const SERVER_REQUESTS = 6_000;
const ZERO_BYTE = Buffer.alloc(1);
/** Bytes of the records read (printed, so no read is optimized away). */
let sink = 0;

interface Phase {
  name: string;
  /** Statements a page (or code rows a page, for the records). */
  per: (pages: Page[]) => number;
  run: (pages: Page[]) => void;
}
interface Page {
  address: Buffer;
  version: bigint;
  /** The code ids of the listed modules (the page's first 25), filled by the keys phase. */
  ids: number[];
}

const run = promisify(execFile);
/** Under callgrind: instrumentation on around `fn` alone, then the instructions it ran (a dump of its own). */
async function counted(fn: () => void): Promise<number | null> {
  if (!CALLGRIND) {
    fn();
    return null;
  }
  const pid = String(process.pid);
  // (callgrind takes a command when the process next runs: a turn of the event loop after each)
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
  await run("callgrind_control", ["--instr=on", pid]);
  await settle();
  await run("callgrind_control", ["--zero", pid]);
  await settle();
  fn();
  await run("callgrind_control", ["--dump", pid]);
  await settle();
  await run("callgrind_control", ["--instr=off", pid]);
  await settle();
  const dumps = readdirSync(DUMPS)
    .filter((f) => f.startsWith(`split.${pid}.`))
    .map((f) => `${DUMPS}${f}`);
  const newest = dumps.sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop())).pop()!;
  const totals = /^(?:totals|summary): (\d+)/m.exec(readFileSync(newest, "utf8"));

  for (const f of dumps) rmSync(f);
  return totals ? Number(totals[1]) : null;
}

for (const versions of SIZES) {
  const file = `${DIR}scale-${versions}.db`;
  const t = readTargets(file);
  const db = openDatabase(file, { readonly: true, mmapSizeMiB: MMAP_MB, cacheSizeMiB: CACHE_MB });
  const st = prepareStatements(db);
  const accounts = t.moduleAccounts.map((m) => Buffer.from(m.address.slice(2).padStart(64, "0"), "hex"));
  const random = prng(11);
  const draw = (): Page => ({
    address: accounts[Math.floor(random() * accounts.length)]!,
    version: BigInt(t.oldest + Math.floor(random() * (t.latest - t.oldest))),
    ids: [],
  });

  // the page cache's view: how often a key repeats within one server's requests, and how often
  // it would be a hit (the cache keeps a page offered a second time, so a key's third ask on)
  const keys = new Map<string, number>();
  let repeats = 0;
  let hits = 0;
  for (let i = 0; i < SERVER_REQUESTS; i++) {
    const { address, version } = draw();
    const row = st.modulesVersionAt.get(address, version)!;
    const key = `${address.toString("hex")}@${String(row[row.length - 1])}`;
    const seen = keys.get(key) ?? 0;
    if (seen >= 1) repeats++;
    if (seen >= 2) hits++;
    keys.set(key, seen + 1);
  }

  const withoutLower = db
    .prepare<[number], unknown[]>(`SELECT '{"bytecode":"0x' || hex(bytecode) || '","abi":' || abi || '}' FROM code WHERE id = ?`)
    .raw(true);
  const seek = db.prepare<[number], unknown[]>("SELECT id FROM code WHERE id = ?").raw(true);
  // the bytecode's hex in upper case from SQL, lowered in JavaScript (`toLowerCase`, one pass
  // over ASCII) instead of by SQL's lower()
  const upperHex = db
    .prepare<[number], [string, string]>(`SELECT '{"bytecode":"0x' || hex(bytecode), '","abi":' || abi || '}' FROM code WHERE id = ?`)
    .raw(true);
  // `--stored-hex`: the record from a copy of the code rows holding the bytecode as lower-case hex
  // text (a TEMP table of this connection: what a schema storing it would read)
  if (STORED_HEX) db.exec("CREATE TEMP TABLE code_hex AS SELECT id, lower(hex(bytecode)) AS hex, abi FROM code ORDER BY id");
  const storedHex = STORED_HEX
    ? db.prepare<[number], unknown[]>(`SELECT '{"bytecode":"0x' || hex || '","abi":' || abi || '}' FROM temp.code_hex WHERE rowid = ?`).raw(true)
    : null;
  const lowerInJs = {
    get(id: number): unknown {
      const row = upperHex.get(id)!;
      return row[0].toLowerCase() + row[1];
    },
  };
  const listed = (pages: Page[]) => pages.reduce((n, p) => n + p.ids.length, 0) / pages.length;
  // each record's UTF-8 length taken, as the node's join does (flattening a concatenated string)
  const eachId = (statement: { get(id: number): unknown }) => (pages: Page[]) => {
    for (const p of pages)
      for (const id of p.ids) {
        const got = statement.get(id);
        if (typeof got === "string") sink += Buffer.byteLength(got, "utf8");
        else if (Array.isArray(got) && typeof got[0] === "string") sink += Buffer.byteLength(got[0], "utf8");
      }
  };
  let keyStatements = 0;
  const phases: Phase[] = [
    // what the measuring itself costs (subtracted from the others' instructions)
    { name: "nothing", per: () => 0, run: () => {} },
    {
      name: "position and newest change (modulesVersionAt)",
      per: () => 1,
      run: (pages) => {
        for (const p of pages) st.modulesVersionAt.get(p.address, p.version);
      },
    },
    {
      name: "keys and each key's newest row (moduleKeys)",
      per: (pages) => keyStatements / pages.length,
      run: (pages) => {
        keyStatements = 0;
        for (const p of pages) {
          p.ids = [];
          let from = Buffer.alloc(0);
          for (;;) {
            const wanted = 26 - p.ids.length;
            const rows = st.moduleKeys.all(p.version, p.address, from, wanted);
            keyStatements++;
            for (const [, , codeOf] of rows) if (codeOf !== null) p.ids.push(Number(codeOf.slice(CODE_HASH_DIGITS)));
            if (rows.length < wanted || p.ids.length >= 26) break;
            from = Buffer.concat([rows[rows.length - 1]![0], ZERO_BYTE]);
          }
          p.ids.length = Math.min(p.ids.length, 25);
        }
      },
    },
    { name: "every listed module's record (codeRecord)", per: listed, run: eachId(st.codeRecord) },
    { name: "… the code rows' seek alone", per: listed, run: eachId(seek) },
    { name: "… bytecode and ABI text (codeAndAbi)", per: listed, run: eachId(st.codeAndAbi) },
    { name: "… the record without lower()", per: listed, run: eachId(withoutLower) },
    { name: "… the record, its hex lowered by toLowerCase()", per: listed, run: eachId(lowerInJs) },
    ...(storedHex ? [{ name: "… the record from stored lower-case hex (TEMP copy)", per: listed, run: eachId(storedHex) }] : []),
  ];
  const cpu = new Map<string, number[]>(phases.map((p) => [p.name, []]));
  const instructions = new Map<string, number[]>(phases.map((p) => [p.name, []]));
  const per = new Map<string, number>();
  db.prepare("BEGIN").run();
  for (let round = 0; round <= ROUNDS; round++) {
    const pages = Array.from({ length: PAGES }, draw);
    for (const phase of phases) {
      const c0 = process.cpuUsage();
      const n = await counted(() => phase.run(pages));
      const c = process.cpuUsage(c0);
      if (round === 0) continue; // the warm-up pass
      cpu.get(phase.name)!.push((c.user + c.system) / PAGES);
      if (n !== null) instructions.get(phase.name)!.push(n / PAGES);
      per.set(phase.name, phase.per(pages));
    }
  }
  db.prepare("COMMIT").run();

  // how the modules table's leaf pages hold an account's rows
  const d = new Database(file, { readonly: true, fileMustExist: true });
  const shape = d
    .prepare<[], { rows: number; accounts: number; leaves: number; payload: number }>(
      `SELECT (SELECT count(*) FROM modules) AS rows, (SELECT count(DISTINCT address) FROM modules) AS accounts,
              (SELECT count(*) FROM dbstat WHERE name = 'modules' AND pagetype = 'leaf') AS leaves,
              (SELECT sum(payload) FROM dbstat WHERE name = 'modules' AND pagetype = 'leaf') AS payload`,
    )
    .get()!;
  const depth = d.prepare<[], { depth: number }>("SELECT max(length(path) - length(replace(path, '/', ''))) AS depth FROM dbstat WHERE name = 'modules'").get()!;
  d.close();
  db.close();

  console.log(`${versions.toLocaleString("en")} versions (${file}, mmap ${MMAP_MB} MiB, cache ${CACHE_MB} MiB), ${PAGES} pages a round, medians of ${ROUNDS} rounds:`);
  console.log("| statement | a page | CPU µs a page (rounds) | instructions a page |");
  console.log("|---|---|---|---|");
  const overhead = instructions.get("nothing")!.length ? median(instructions.get("nothing")!) : 0;
  for (const phase of phases.slice(1)) {
    const us = cpu.get(phase.name)!;
    const ins = instructions.get(phase.name)!.map((n) => n - overhead);
    console.log(
      `| ${phase.name} | ${per.get(phase.name)!.toFixed(2)} | ${median(us).toFixed(1)} (${us.map((x) => x.toFixed(1)).join(", ")}) | ${ins.length ? `${(median(ins) / 1000).toFixed(1)}k` : "–"} |`,
    );
  }
  console.log(`(${sink} bytes of records read)`);
  console.log(`page-cache keys: ${repeats} of the first ${SERVER_REQUESTS} requests repeat an earlier key (${keys.size} distinct), ${hits} would find the page cached`);
  console.log(
    `modules table: ${shape.rows.toLocaleString("en")} rows, ${(shape.rows / shape.accounts).toFixed(1)} an account, ${shape.leaves.toLocaleString("en")} leaf pages, ${(shape.payload / shape.rows).toFixed(0)} bytes a row, depth ${depth.depth}; an account's rows span about ${((shape.leaves * (shape.rows / shape.accounts)) / shape.rows).toFixed(1)} leaf pages`,
  );
  console.log("");
}
