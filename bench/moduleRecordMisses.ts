/**
 * Why a random module page misses records at 10M and not at 1M (issue 35, target 2): the records
 * ring (`ModuleRecords`) replayed over the records that one server's random module pages list.
 *
 *   node --import tsx bench/moduleRecordMisses.ts [--versions 1000000,10000000] [--requests 6000]
 *                                                 [--ring-mb 32] [--dir bench/out/]
 *
 * For each ledger (DIR/scale-N.db, read-only) it draws `--requests` pages as `bench:scale` draws the
 * random modules row (limit 25, random account and version), lists each page's modules with the
 * store's own statement (`moduleKeys`) and replays the code ids through a model of the ring: records
 * of their JSON size written one after another into `--ring-mb`, the oldest overwritten first, a
 * record listed again while among the oldest quarter of the places written again (as
 * `ModuleRecords.keep` and `aging` do). Reported for the second half of the requests (a warmed
 * server): records a page, misses a page, and of them the first asks (a record no earlier request
 * listed: no cache can hold it, whatever its size); then the same with the ring filled before the
 * first request with the records in effect over the most versions (what a cache warmed at start
 * would hold).
 */
import { prng } from "../src/ingest/devnet/chain.js";
import { openDatabase } from "../src/storage/sqlite/connection.js";
import { prepareStatements } from "../src/storage/sqlite/statements.js";
import { CODE_HASH_DIGITS } from "../src/ledger/codeHash.js";
import { OUT, argOption } from "./common.js";
import { readTargets } from "./scaleRows.js";

const argv = process.argv.slice(2);
const opt = argOption(argv);
const SIZES = opt("versions", "1000000,10000000").split(",").map(Number);
const REQUESTS = Number(opt("requests", "6000"));
const RING_BYTES = Number(opt("ring-mb", "32")) * 1024 * 1024;
const DIR = opt("dir", OUT).replace(/\/?$/, "/");
const NO_KEY = Buffer.alloc(0);

/** The ring's places, as `ModuleRecords` keeps them: where each record lies and which is newest. */
class RingModel {
  private readonly index = new Map<number, number>();
  private readonly places: Array<{ id: number; offset: number; length: number }> = [];
  private oldest = 0;
  private head = 0;

  constructor(private readonly maxBytes: number) {}

  /** Whether the record is held; a held one among the oldest quarter is written again, as the ring does. */
  hit(id: number, length: number): boolean {
    const serial = this.index.get(id);
    if (serial === undefined) return false;
    if ((serial - this.oldest) * 4 < this.places.length - this.oldest) this.keep(id, length);
    return true;
  }

  keep(id: number, length: number): void {
    let at = this.head;
    if (at + length > this.maxBytes) {
      while (this.oldest < this.places.length && this.places[this.oldest]!.offset >= at) this.drop();
      at = 0;
    }
    while (this.oldest < this.places.length && this.places[this.oldest]!.offset >= at && this.places[this.oldest]!.offset < at + length) this.drop();
    this.places.push({ id, offset: at, length });
    this.index.set(id, this.places.length - 1);
    this.head = at + length;
  }

  private drop(): void {
    const { id } = this.places[this.oldest]!;
    if (this.index.get(id) === this.oldest) this.index.delete(id);
    this.oldest++;
  }
}

for (const versions of SIZES) {
  const file = `${DIR}scale-${versions}.db`;
  const t = readTargets(file);
  const db = openDatabase(file, { readonly: true });
  const st = prepareStatements(db);
  const recordBytes = db.prepare<[number], number>(`SELECT 24 + 2 * length(bytecode) + coalesce(length(abi), 4) FROM code WHERE id = ?`).pluck();
  const accounts = t.moduleAccounts.map((m) => Buffer.from(m.address.slice(2).padStart(64, "0"), "hex"));
  const random = prng(11);
  const pages: number[][] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const address = accounts[Math.floor(random() * accounts.length)]!;
    const version = BigInt(t.oldest + Math.floor(random() * (t.latest - t.oldest + 1)));
    const ids: number[] = [];
    for (const [, , codeOf] of st.moduleKeys.all(version, address, NO_KEY, 26)) if (codeOf !== null && ids.length < 25) ids.push(Number(codeOf.slice(CODE_HASH_DIGITS)));
    pages.push(ids);
  }
  const size = new Map<number, number>();
  const sizeOf = (id: number) => size.get(id) ?? size.set(id, recordBytes.get(id)!).get(id)!;
  // the records in effect over the most versions first (summed over the module rows naming them)
  const ranked = db
    .prepare<[number], number>(
      `SELECT code_id FROM (SELECT code_id, coalesce(lead(version) OVER (PARTITION BY address, state_key ORDER BY version), ? + 1) - version AS span FROM modules)
       WHERE code_id IS NOT NULL GROUP BY code_id ORDER BY sum(span) DESC`,
    )
    .pluck()
    .all(t.latest);
  const warm: number[] = [];
  for (let bytes = 0, i = 0; i < ranked.length && bytes + sizeOf(ranked[i]!) <= RING_BYTES; i++) {
    bytes += sizeOf(ranked[i]!);
    warm.push(ranked[i]!);
  }

  const replay = (prefill: boolean) => {
    const ring = new RingModel(RING_BYTES);
    // the least useful first, so that the most useful are the last overwritten
    if (prefill) for (let i = warm.length - 1; i >= 0; i--) ring.keep(warm[i]!, sizeOf(warm[i]!));
    const asked = new Set<number>();
    let listed = 0;
    let misses = 0;
    let first = 0;
    pages.forEach((ids, r) => {
      const counted = r >= REQUESTS / 2;
      for (const id of ids) {
        const miss = !ring.hit(id, sizeOf(id));
        if (miss) ring.keep(id, sizeOf(id));
        if (counted) {
          listed++;
          if (miss) misses++;
          if (miss && !asked.has(id)) first++;
        }
        asked.add(id);
      }
    });
    const n = REQUESTS - Math.ceil(REQUESTS / 2);
    return `${(listed / n).toFixed(2)} records a page, ${(misses / n).toFixed(2)} misses a page, ${(first / n).toFixed(2)} of them first asks`;
  };
  console.log(`${versions.toLocaleString("en")} versions (${ranked.length.toLocaleString("en")} records; ring ${RING_BYTES / 1048576} MiB):`);
  console.log(`  the ring as it is:         ${replay(false)}`);
  console.log(`  warmed with ${warm.length.toLocaleString("en")} records: ${replay(true)}`);
  db.close();
}
