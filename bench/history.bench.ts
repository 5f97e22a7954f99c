/**
 * The stored history's size and cost (docs/decisions.md §20): each committed transaction's JSON
 * text, packed in chunks as the stores write them (`historyChunks`, src/storage/common/history.ts),
 * against the JSON bytes received, on the devnet mix and on the real transactions in
 * test/fixtures; beside it the alternatives measured for the choice (chunk size, DEFLATE level, a
 * preset dictionary, DEFLATE, zstd's default window). A row: stored bytes as a share of the JSON,
 * bytes a version, CPU µs a version to pack, and µs to unpack one chunk (what a read of one version
 * inflates).
 *
 *   npm run build && node --import tsx bench/history.bench.ts [--blocks 3000] [--rounds 3]
 */
import { readdirSync, readFileSync } from "node:fs";
import zlib from "node:zlib";
import { DevnetChain } from "../src/ingest/devnet/chain.js";
import { CHUNK_TEXT_BYTES, historyChunks, unpackTexts } from "../src/storage/common/history.js";
import type { TxnWrite } from "../src/storage/contracts/writer.js";
import { median } from "./common.js";

const arg = (name: string): string | null => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? null : (process.argv[i + 1] ?? null);
};
const BLOCKS = Number(arg("blocks") ?? 3000);
const ROUNDS = Number(arg("rounds") ?? 3);
const FIXTURES = new URL("../test/fixtures/", import.meta.url).pathname;

type Block = string[];

/** Devnet blocks as texts, past genesis (its modules are one text apart from the mix). */
function devnetBlocks(): Block[] {
  const chain = DevnetChain.fresh();
  chain.genesis();
  const blocks: Block[] = [];
  let t = 1_700_000_000_000_000n;
  for (let i = 0; i < BLOCKS; i++, t += 500_000n) blocks.push(chain.nextBlock(t).map((x) => JSON.stringify(x)));
  return blocks;
}

/** The real transactions of test/fixtures: the genesis, and the recorded transaction files (one block each). */
function fixtureBlocks(): Block[] {
  const blocks: Block[] = [[JSON.stringify((JSON.parse(readFileSync(`${FIXTURES}genesis_transaction.json`, "utf8")) as unknown[])[0])]];
  let dir: string[] = [];
  try {
    dir = readdirSync(`${FIXTURES}transactions`).filter((f) => f.endsWith(".json"));
  } catch {
    // no recorded transactions beside the genesis
  }
  for (const f of dir) {
    const v = JSON.parse(readFileSync(`${FIXTURES}transactions/${f}`, "utf8")) as unknown;
    const txns = (Array.isArray(v) ? v : [v]) as Array<{ version?: unknown }>;
    const committed = txns.filter((t) => typeof t === "object" && t !== null && t.version !== undefined);
    if (committed.length > 0) blocks.push(committed.map((t) => JSON.stringify(t)));
  }
  return blocks;
}

/** A way to pack a block's texts: chunks as bodies. */
type Packer = (texts: Block) => Buffer[];
type Unpacker = (body: Buffer) => unknown;

/** Chunks of `cap` bytes of text (the store's cut), each joined by newlines and packed by `pack`. */
function chunked(cap: number, pack: (joined: Buffer) => Buffer): Packer {
  return (texts) => {
    const out: Buffer[] = [];
    let cur: string[] = [];
    let bytes = 0;
    for (const t of texts) {
      cur.push(t);
      bytes += Buffer.byteLength(t) + 1;
      if (bytes >= cap) {
        out.push(pack(Buffer.from(cur.join("\n"))));
        cur = [];
        bytes = 0;
      }
    }
    if (cur.length > 0) out.push(pack(Buffer.from(cur.join("\n"))));
    return out;
  };
}

const asWritten = (texts: Block): TxnWrite[] => texts.map((json, i) => ({ version: BigInt(i), kind: "user_transaction", hash: new Uint8Array(32), user: null, json }));

function rows(sample: Block[]): Array<[string, Packer, Unpacker]> {
  // A preset dictionary of the mix's own first texts (the most it could gain; a fixed one would gain less).
  const dictionary = Buffer.from(sample.slice(0, 20).flat().join("\n")).subarray(-32 * 1024);
  const deflate = (level: number, dict?: Buffer) => (b: Buffer) => zlib.deflateRawSync(b, dict ? { level, dictionary: dict } : { level });
  const out: Array<[string, Packer, Unpacker]> = [
    ["stored: historyChunks (16 KiB, DEFLATE 1; zstd 1 from 64 KiB)", (texts) => historyChunks(asWritten(texts)).map((c) => c.body), (b) => unpackTexts(b)],
    ["each transaction alone, DEFLATE 1", chunked(1, deflate(1)), (b) => zlib.inflateRawSync(b)],
    ["8 KiB chunks, DEFLATE 1", chunked(8 * 1024, deflate(1)), (b) => zlib.inflateRawSync(b)],
    ["16 KiB chunks, DEFLATE 1", chunked(CHUNK_TEXT_BYTES, deflate(1)), (b) => zlib.inflateRawSync(b)],
    ["16 KiB chunks, DEFLATE 6", chunked(CHUNK_TEXT_BYTES, deflate(6)), (b) => zlib.inflateRawSync(b)],
    ["32 KiB chunks, DEFLATE 1", chunked(32 * 1024, deflate(1)), (b) => zlib.inflateRawSync(b)],
    ["16 KiB chunks, DEFLATE 1 + preset dictionary", chunked(CHUNK_TEXT_BYTES, deflate(1, dictionary)), (b) => zlib.inflateRawSync(b, { dictionary })],
  ];
  {
    const level = { [zlib.constants.ZSTD_c_compressionLevel]: 1 };
    out.push(["16 KiB chunks, zstd 1, its default window", chunked(CHUNK_TEXT_BYTES, (b) => zlib.zstdCompressSync(b, { params: level })), (b) => zlib.zstdDecompressSync(b)]);
  }
  return out;
}

function measure(name: string, blocks: Block[]): void {
  const json = blocks.reduce((n, b) => n + b.reduce((m, t) => m + Buffer.byteLength(t), 0), 0);
  const versions = blocks.reduce((n, b) => n + b.length, 0);
  console.log(`\n${name}: ${versions} versions, ${json} JSON bytes (${(json / versions).toFixed(0)} a version), median of ${ROUNDS}`);
  console.log("| packing | stored ÷ JSON | bytes a version | pack, CPU µs a version | unpack one chunk, µs |");
  console.log("|---|---|---|---|---|");
  for (const [label, pack, unpack] of rows(blocks)) {
    const packUs: number[] = [];
    const unpackUs: number[] = [];
    let stored = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = process.cpuUsage();
      const bodies = blocks.flatMap((b) => pack(b));
      const t1 = process.cpuUsage(t0);
      packUs.push((t1.user + t1.system) / versions);
      stored = bodies.reduce((n, b) => n + b.length, 0);
      const u0 = process.cpuUsage();
      for (const b of bodies) unpack(b);
      const u1 = process.cpuUsage(u0);
      unpackUs.push((u1.user + u1.system) / bodies.length);
    }
    console.log(`| ${label} | ${((100 * stored) / json).toFixed(1)}% | ${(stored / versions).toFixed(0)} | ${median(packUs).toFixed(2)} | ${median(unpackUs).toFixed(1)} |`);
  }
}

measure("devnet mix", devnetBlocks());
measure("real transactions (test/fixtures)", fixtureBlocks());
