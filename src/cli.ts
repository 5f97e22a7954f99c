#!/usr/bin/env node
/**
 * `ledger-node serve | import | prune | compact | devnet` — docs/operating.md describes the settings.
 */
import { Command, InvalidArgumentError } from "commander";
import cluster from "node:cluster";
import { createWriteStream } from "node:fs";
import { finished } from "node:stream/promises";
import { optionsFromEnvironment } from "./cliEnvironment.js";
import { describeUnknown, IngestError } from "./ingest/aptosJson.js";
import { DevnetChain, defaultDevnetChainOptions } from "./ingest/devnet/chain.js";
import { checkReadable } from "./ingest/files/readInput.js";
import type { FollowFrom } from "./ingest/follow/sync.js";
import { formatPruneWindow, parsePruneWindow } from "./ledger/pruning.js";
import { PACKAGE_VERSION, followUpstream, importIntoLedger, isWriterProcess, pruneLedger, serveWorkers, startNode } from "./server.js";
import { compactLedger, displayDb, isPostgresUrl, postgresUrlProblem } from "./storage/open.js";
import { SQLITE_CACHE_SIZE_MIB, SQLITE_MMAP_SIZE_MIB } from "./storage/sqlite/SqliteStore.js";

function intOption(name: string, min: number, max: number) {
  return (v: string): number => {
    if (!/^[0-9]+$/.test(v) || Number(v) < min || Number(v) > max) {
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
    }
    return Number(v);
  };
}

function windowOption(v: string): string {
  try {
    return formatPruneWindow(parsePruneWindow(v));
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

/** An archival endpoint: an absolute http(s) URL, as the official SDK accepts one (docs/decisions.md §19). */
function endpointOption(v: string): string {
  const url = v.length <= 2048 && URL.canParse(v) ? new URL(v) : null;
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new InvalidArgumentError(`--archival-endpoint must be an absolute http or https URL (such as https://archive.example/v1), got ${JSON.stringify(v.slice(0, 100))}`);
  }
  return v;
}

const program = new Command()
  .name("ledger-node")
  .description("An Aptos-compatible read API (REST v1) over a versioned, pruned ledger")
  .version(PACKAGE_VERSION);

const serve = program
  .command("serve")
  .description("serve the read API over a ledger (optionally with a devnet feeding it)")
  .option("--db <path>", "SQLite file path, or a postgres:// URL", "./data/ledger.db")
  .option("--host <host>", "address to listen on", "127.0.0.1")
  .option("--port <port>", "port to listen on", intOption("--port", 0, 65535), 8080)
  .option("--aptos-headers", "also send the ledger headers as X-Aptos-* (for the official Aptos SDKs)", false)
  .option("--prune-window <window>", "versions (90000000) or chain time (7d, 12h) to keep; default 90000000, 2000 with --devnet", windowOption)
  .option("--devnet", "write a local devnet into the ledger: genesis, then a block every --block-interval ms", false)
  .option("--block-interval <ms>", "devnet block interval", intOption("--block-interval", 10, 3_600_000), 1000)
  .option("--chain-id <id>", "chain id of a new ledger", intOption("--chain-id", 0, 255), 4)
  .option("--workers <n>", "serve from N processes sharing the port; the devnet and the pruner run in the first", intOption("--workers", 1, 256), 1)
  .option("--no-compression", "never compress responses (default: br/gzip/deflate when the client accepts it)")
  .option("--compression-threshold <bytes>", "smallest body that is compressed", intOption("--compression-threshold", 0, 1 << 30), 1024)
  .option("--plain-misses", "send a page read for its request uncompressed when the client accepts identity (cached pages stay compressed)", false)
  .option("--page-cache-mb <mb>", "memory for encoded module and summary pages served again (0: off)", intOption("--page-cache-mb", 0, 1 << 20), 64)
  .option("--module-cache-mb <mb>", "memory for module records (bytecode and ABI JSON) that module pages list again (0: off)", intOption("--module-cache-mb", 0, 1 << 20), 32)
  .option("--sqlite-cache-mb <mb>", `SQLite: each connection's page cache (default ${SQLITE_CACHE_SIZE_MIB})`, intOption("--sqlite-cache-mb", 0, 1 << 20))
  .option("--sqlite-mmap-mb <mb>", `SQLite: how much of the file each connection reads through a memory map; counts in RSS as it is touched (0: none; default ${SQLITE_MMAP_SIZE_MIB})`, intOption("--sqlite-mmap-mb", 0, 1 << 22))
  .option("--request-timeout <ms>", "a request's headers and body must arrive within this, else 408 and close (0: none)", intOption("--request-timeout", 0, 3_600_000), 30_000)
  .option("--headers-timeout <ms>", "a request's headers must arrive within this, else 408 and close", intOption("--headers-timeout", 1, 3_600_000), 15_000)
  .option("--max-connections <n>", "answer connections beyond this 503 and close them (0: no cap; default: open-file limit less 128)", intOption("--max-connections", 0, 10_000_000))
  .option("--max-streams <n>", "answer transaction streams beyond this many open 503 with Retry-After (default: half of --max-connections, at most 10000)", intOption("--max-streams", 1, 10_000_000))
  .option("--max-streams-per-client <n>", "answer a client's transaction streams beyond this many open 429 with Retry-After (a client: its address, behind --trust-proxy the forwarded one; default: a tenth of --max-streams)", intOption("--max-streams-per-client", 1, 10_000_000))
  .option("--stream-buffer-kb <kb>", "end a transaction stream whose client has not taken this much (a slow client; it resumes with Last-Event-ID)", intOption("--stream-buffer-kb", 1, 1 << 20), 256)
  .option("--stream-heartbeat-ms <ms>", "a transaction stream with nothing to send sends a heartbeat this often", intOption("--stream-heartbeat-ms", 100, 3_600_000), 15_000)
  .option("--cors-origins <list>", "comma-separated origins allowed credentials (echoed, Access-Control-Allow-Credentials: true); default: * without credentials")
  .option("--metrics-port <port>", "serve GET /metrics (Prometheus) on this port instead of the API port", intOption("--metrics-port", 0, 65535))
  .option("--quiet", "log only warnings and errors", false)
  .option("--log-requests", "log every request and response (costs throughput)", false)
  .option("--create", "create the SQLite file when it does not exist (--devnet always may)", false)
  .option("--no-prune", "no built-in pruner; without --devnet the database is then opened read-only")
  .option("--follow <url>", "follow this Aptos node (REST API v1) into the ledger while serving it (see `follow`)");
addFollowOptions(serve, "with --follow: ")
  .option("--upstream-timeout <ms>", "with --follow: a read waiting on the upstream answers 503 after this; a proxied request sent upstream and not answered by then, 504 (and an answer that stalls this long is cut)", intOption("--upstream-timeout", 1, 600_000), 5000)
  .option("--proxy", "with --follow: pass the /v1 routes this node does not serve (transactions, view, ...) to the upstream, under --api-key", false)
  .option("--proxy-max-rps <n>", "with --proxy: at most this many proxied requests a second (a budget apart from --max-rps)", intOption("--proxy-max-rps", 1, 100_000), 50)
  .option("--base-fetches-per-client <n>", "with --follow: state fetched from the upstream for reads, at most N new fetches a second per client address (429 past it)", intOption("--base-fetches-per-client", 1, 100_000), 10)
  .option("--base-fetches <n>", "with --follow: at most N fetches of state from the upstream at once, all clients together (503 past it)", intOption("--base-fetches", 1, 10_000), 32)
  .option("--archival-endpoint <url>", "every 410 (pruned history or state) names this node API URL as archival_endpoint, where the official SDK retries once", endpointOption)
  .option("--primary <url>", "with --db on a PostgreSQL hot standby: its primary's URL, heard for each commit so transaction streams look as the standby replays it (else every 10 ms)")
  .option("--trust-proxy <list>", "comma-separated addresses or CIDRs of the proxies in front of this node: a client is then the right-most X-Forwarded-For address not in the list (default: the connection's peer)")
  .action(async (o) => {
    // Never an open proxy by accident: the pass-through exists only towards the followed node.
    if (o.proxy && !o.follow) throw new Error("--proxy needs --follow URL: it passes requests to the node this one follows, and to no other");
    if (o.follow && (o.devnet || o.workers > 1)) throw new Error("--follow cannot be combined with --devnet or --workers");
    if (o.primary !== undefined) {
      const problem = isPostgresUrl(o.db) ? postgresUrlProblem(String(o.primary)) : "the ledger (--db) is not PostgreSQL";
      if (problem !== null) throw new Error(`--primary needs a postgres:// --db (a hot standby) and the postgres:// URL of its primary: ${problem}`);
    }
    if (o.workers > 1 && cluster.isPrimary) {
      const code = await serveWorkers(o.workers, (msg) => console.error(msg));
      process.exit(code);
    }
    const node = await startNode({
      ...(o.follow
        ? {
            follow: {
              upstream: o.follow,
              apiKey: o.apiKey ?? null,
              from: o.from,
              concurrency: o.concurrency,
              maxRequestsPerSecond: o.maxRps,
              pollMs: o.poll,
              upstreamTimeoutMs: o.upstreamTimeout,
              proxy: o.proxy ? { maxRequestsPerSecond: o.proxyMaxRps } : null,
              baseFetches: { perClientPerSecond: o.baseFetchesPerClient, concurrent: o.baseFetches },
            },
          }
        : {}),
      writer: isWriterProcess(),
      db: o.db,
      ...(o.primary !== undefined ? { primary: o.primary } : {}),
      host: o.host,
      port: o.port,
      aptosHeaders: o.aptosHeaders,
      pruneWindow: o.pruneWindow,
      devnet: o.devnet ? { blockIntervalMs: o.blockInterval, chainId: o.chainId } : false,
      chainId: o.chainId,
      logger: { level: o.quiet ? "warn" : "info" },
      logRequests: o.logRequests,
      metricsPort: o.metricsPort,
      prune: o.prune,
      create: o.create || o.devnet || Boolean(o.follow),
      sqliteMemory: { ...(o.sqliteCacheMb !== undefined ? { cacheSizeMiB: o.sqliteCacheMb } : {}), ...(o.sqliteMmapMb !== undefined ? { mmapSizeMiB: o.sqliteMmapMb } : {}) },
      api: {
        compression: o.compression,
        compressionThreshold: o.compressionThreshold,
        plainMisses: o.plainMisses,
        pageCacheBytes: o.pageCacheMb * 1024 * 1024,
        moduleCacheBytes: o.moduleCacheMb * 1024 * 1024,
        requestTimeoutMs: o.requestTimeout,
        headersTimeoutMs: o.headersTimeout,
        ...(o.maxConnections !== undefined ? { maxConnections: o.maxConnections } : {}),
        ...(o.maxStreams !== undefined ? { maxStreams: o.maxStreams } : {}),
        ...(o.maxStreamsPerClient !== undefined ? { maxStreamsPerClient: o.maxStreamsPerClient } : {}),
        streamBufferBytes: o.streamBufferKb * 1024,
        streamHeartbeatMs: o.streamHeartbeatMs,
        corsOrigins: o.corsOrigins ? String(o.corsOrigins).split(",").map((s: string) => s.trim()).filter(Boolean) : [],
        trustProxy: o.trustProxy ? String(o.trustProxy).split(",").map((s: string) => s.trim()).filter(Boolean) : [],
        archivalEndpoint: o.archivalEndpoint ?? null,
      },
    });
    console.log(`ledger-node ${PACKAGE_VERSION} serving ${displayDb(o.db)} at ${node.url}/v1 (explorer: ${node.url}/v1/spec, metrics: ${node.metricsUrl ?? `${node.url}/metrics`})`);
    const shutdown = () => {
      node.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once("SIGINT", shutdown);
    process.once("SIGTERM", shutdown);
  });

program
  .command("import")
  .description("import Aptos REST JSON transactions (NDJSON or a JSON array; - for stdin)")
  .argument("<files...>", "input files")
  .requiredOption("--db <path>", "SQLite file path (created when missing), or a postgres:// URL")
  .option("--chain-id <id>", "chain id of a new ledger", intOption("--chain-id", 0, 255), 4)
  .option("--prune-window <window>", "prune to this window after the import", windowOption)
  .option("--require-data", "fail (exit 1) when the input holds no transaction", false)
  .action(async (files: string[], o) => {
    for (const f of files) await checkReadable(f);
    const tty = process.stderr.isTTY;
    const started = performance.now();
    let lastDraw = 0;
    let drawn = false;
    const logged = new Set<string>();
    let result: Awaited<ReturnType<typeof importIntoLedger>>;
    try {
      result = await importIntoLedger(o.db, files, {
        chainId: o.chainId,
        pruneWindow: o.pruneWindow ? parsePruneWindow(o.pruneWindow) : undefined,
        onUnknown: (u, version) => {
          const key = `${u.what}:${u.type}`;
          if (logged.has(key)) return;
          logged.add(key);
          process.stderr.write(`${tty ? "\n" : ""}version ${version}: ${describeUnknown(u)}; going on (counted as ${key}, logged once)\n`);
        },
        onProgress: (n, version) => {
          if (!tty || performance.now() - lastDraw <= 200) return;
          lastDraw = performance.now();
          drawn = true;
          const rate = Math.round(n / ((lastDraw - started) / 1000));
          process.stderr.write(`\rimporting: ${n} transactions read, version ${version ?? "-"}, ${rate} versions/s   `);
        },
      });
    } finally {
      if (drawn) process.stderr.write("\n");
    }
    const s = result.stats;
    if (!s) {
      const what = files.map((f) => (f === "-" ? "stdin" : f)).join(", ");
      if (o.requireData) throw new IngestError(`nothing to import: ${what} held no transaction (--require-data)`);
      console.log(`nothing to import: ${what} held no transaction`);
      return;
    }
    const secs = (performance.now() - started) / 1000;
    let line =
      `imported ${s.committedTxns} transactions in ${s.committedBlocks} blocks, skipped ${s.skippedTxns} already committed` +
      `, ledger version ${result.ledgerVersion ?? "none"}, ${Math.round((s.committedTxns + s.skippedTxns) / Math.max(secs, 1e-9))} versions/s`;
    if (s.pendingTxns > 0) line += `; ${s.pendingTxns} transactions of an unfinished last block were held back`;
    const unknown = Object.entries(s.unknownKinds);
    if (unknown.length > 0) line += `; of kinds unknown here (stored generically or skipped): ${unknown.map(([k, n]) => `${n} ${k}`).join(", ")}`;
    if (result.pruned) line += `; pruned to version ${result.pruned.oldestVersion}`;
    console.log(line);
  });

function fromOption(v: string): FollowFrom {
  if (v === "genesis" || v === "latest") return { kind: v };
  if (/^[0-9]{1,20}$/.test(v) && BigInt(v) < 1n << 64n) return { kind: "version", version: BigInt(v) };
  throw new InvalidArgumentError(`--from must be genesis, latest or a version (u64), got ${JSON.stringify(v)}`);
}

/** The follower's options, for `follow` and for `serve --follow` (`note` starts their help there). */
function addFollowOptions(cmd: Command, note: string): Command {
  return cmd
    .option("--from <where>", `${note}where an empty ledger starts: genesis, latest, or a version (its block's first version); a ledger with blocks resumes after its last`, fromOption, { kind: "latest" })
    .option("--api-key <key>", `${note}sent as Authorization: Bearer <key>`)
    .option("--concurrency <n>", `${note}pages of transactions in flight`, intOption("--concurrency", 1, 64), 4)
    .option("--max-rps <n>", `${note}at most this many upstream requests per second`, intOption("--max-rps", 1, 100_000), 50)
    .option("--poll <ms>", `${note}how often the head is asked for once caught up`, intOption("--poll", 10, 600_000), 1000);
}

const follow = program
  .command("follow")
  .description("follow an Aptos node over its REST API v1: sync its transactions into the ledger and keep up with its head")
  .requiredOption("--upstream <url>", "the node's REST API, e.g. https://api.mainnet.aptoslabs.com/v1")
  .requiredOption("--db <path>", "SQLite file path (created when missing), or a postgres:// URL");
addFollowOptions(follow, "")
  .option("--exit-at-head", "stop once the ledger holds the upstream's head", false)
  .option("--quiet", "log only warnings and errors", false)
  .action(async (o) => {
    const log = {
      info: (m: string) => {
        if (!o.quiet) console.log(m);
      },
      warn: (m: string) => console.error(m),
    };
    const following = await followUpstream({
      upstream: o.upstream,
      db: o.db,
      apiKey: o.apiKey ?? null,
      from: o.from,
      concurrency: o.concurrency,
      maxRequestsPerSecond: o.maxRps,
      pollMs: o.poll,
      exitAtHead: o.exitAtHead,
      log,
      // Exits 1 after a permanent stop whatever ends the process, even one whose event loop empties during the cleanup.
      onStopped: () => {
        process.exitCode = 1;
      },
    });
    process.once("SIGINT", following.stop);
    process.once("SIGTERM", following.stop);
    await following.done;
  });

program
  .command("prune")
  .description("prune the ledger to a window now (safe while a server reads the same database)")
  .requiredOption("--db <path>", "SQLite file path, or a postgres:// URL")
  .requiredOption("--window <window>", "versions (90000000) or chain time (7d, 12h)", windowOption)
  .action(async (o) => {
    const r = await pruneLedger(o.db, parsePruneWindow(o.window));
    console.log(
      r
        ? `pruned to version ${r.oldestVersion} (block ${r.oldestBlockHeight}): ${r.transactionsDeleted} transactions, ${r.blocksDeleted} blocks, ${r.stateRowsDeleted} state rows removed`
        : "nothing to prune",
    );
  });

program
  .command("compact")
  .description("rewrite a SQLite ledger with its module tables first, where a node's memory map reads them (stop the node first)")
  .requiredOption("--db <path>", "SQLite file path")
  .action((o) => {
    const r = compactLedger(o.db);
    const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
    console.log(`compacted ${o.db}: ${mib(r.bytesBefore)} MiB -> ${mib(r.bytesAfter)} MiB; tables in order: ${r.tables.join(", ")}`);
  });

program
  .command("devnet")
  .description("write a devnet chain as NDJSON (for tests and benchmarks)")
  .requiredOption("--out <file>", "output file (- for stdout)")
  .option("--blocks <n>", "blocks after genesis", intOption("--blocks", 0, 100_000_000), 100)
  .option("--chain-id <id>", "chain id", intOption("--chain-id", 0, 255), 4)
  .option("--max-txns <n>", "most user transactions in an ordinary block", intOption("--max-txns", 1, 10_000), defaultDevnetChainOptions.maxTxnsPerBlock)
  .action(async (o) => {
    const out = o.out === "-" ? process.stdout : createWriteStream(o.out);
    // A write error (missing directory, full disk) fails the command naming the file.
    const cannotWrite = (e: Error) => new Error(`cannot write ${o.out}: ${e.message}`);
    const failed = new Promise<never>((_, reject) => out.once("error", (e: Error) => reject(cannotWrite(e))));
    failed.catch(() => undefined);
    const chain = DevnetChain.fresh({ ...defaultDevnetChainOptions, chainId: o.chainId, maxTxnsPerBlock: o.maxTxns });
    const write = (s: string) =>
      out.write(s) ? Promise.resolve() : Promise.race([failed, new Promise<void>((r) => out.once("drain", () => r()))]);
    for (const t of chain.genesis()) await write(JSON.stringify(t) + "\n");
    const t0 = 1_700_000_000_000_000n;
    for (let b = 0; b < o.blocks; b++) {
      let buf = "";
      for (const t of chain.nextBlock(t0 + BigInt(b) * 1_000_000n)) buf += JSON.stringify(t) + "\n";
      await write(buf);
    }
    // Writes that all fit the stream's buffer never wait on `failed`: an error (the file could not
    // even be opened) surfaces only here, where finished() rejects with it.
    if (out !== process.stdout) {
      out.end();
      await finished(out).catch((e: Error) => {
        throw cannotWrite(e);
      });
    }
    console.error(`wrote genesis and ${o.blocks} blocks, ${chain.pos.version} transactions`);
  });

// Last, so that it covers every option defined above.
optionsFromEnvironment(program, "LEDGER_NODE_");

program.parseAsync().catch((e: unknown) => {
  const msg = e instanceof IngestError || e instanceof Error ? e.message : String(e);
  console.error(`ledger-node: ${msg}`);
  process.exit(1);
});
