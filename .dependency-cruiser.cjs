// Import boundaries between the layers (issue 15, item 4). `npm run lint:deps` checks src/ against
// these rules; every rule is an error, so CI fails on the first import that crosses a boundary.
//
// The layers, innermost first:
//   src/ledger, src/move   domain: ledger info, pruning policy, gas estimator, Move binary format
//   src/storage            the reader, writer and follow-base contracts (contracts/), what every
//                          backend shares (common/), the replica's reads (replica/), one folder per
//                          backend (sqlite/, postgres/); open.ts picks a backend from a URL
//   src/ingest             import, devnet chain, follower, writers: write through the storage
//                          contracts (the writer thread, writerThread.ts, opens its own store
//                          through open.ts)
//   src/api                the Fastify app: reads through the storage contracts, never SQL
//   src/server.ts, cli.ts  composition root: the only place that wires a backend to the app
//
// Paths are matched after resolution, so `../storage/sqlite/SqliteStore.js` is
// src/storage/sqlite/SqliteStore.ts and `pg` is node_modules/pg/... (or node_modules/@types/pg/...
// for a type-only import; ../main/node_modules/pg/... in a worktree whose node_modules is a symlink,
// hence the unanchored `node_modules/`). Type-only imports count: a type from the wrong layer still
// couples it.

/** An npm package (its code or its @types), as a resolved path. */
const pkg = (names) => `(^|/)node_modules/(@types/)?(${names.join("|")})/`;
const FASTIFY = [pkg(["fastify", "@fastify/[^/]+"])];
const SQL_DRIVERS = [pkg(["better-sqlite3", "pg"])];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment:
        "Modules must not import each other in a cycle: a cycle makes load order (and which side sees " +
        "`undefined` at import time) depend on the entry point, and the two modules can only change together.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "src-not-to-test-or-bench",
      comment:
        "Shipped code (dist/ is built from src/ without *.test.ts) must not depend on test helpers, " +
        "fixtures or benches: they are not in the package. Colocated unit tests (src/**/*.test.ts) may use test/helpers.",
      severity: "error",
      from: { path: "^src/", pathNot: "\\.test\\.ts$" },
      to: { path: "^(test|bench)/" },
    },
    {
      name: "domain-not-to-adapters",
      comment:
        "src/ledger and src/move are the domain: pure rules and formats. They must not know about HTTP " +
        "(src/api, fastify), a storage backend (sqlite/, postgres/, their drivers) or ingestion; they may " +
        "use the storage contracts. This keeps them testable without a server or a database.",
      severity: "error",
      from: { path: "^src/(ledger|move)/" },
      to: {
        path: ["^src/api/", "^src/storage/(sqlite|postgres)/", "^src/ingest/", ...FASTIFY, ...SQL_DRIVERS],
      },
    },
    {
      name: "storage-not-to-api-or-ingest",
      comment:
        "Storage is below the API and ingestion: it serves both through the storage contracts and must not " +
        "depend on either of them, nor on the HTTP framework.",
      severity: "error",
      from: { path: "^src/storage/" },
      to: { path: ["^src/api/", "^src/ingest/", ...FASTIFY] },
    },
    {
      name: "storage-shared-not-to-backends",
      comment:
        "What src/storage/ holds besides the backends (the contracts, the helpers every backend shares, " +
        "the replica) sits above them: it must not import one, so a backend is a folder that can be added " +
        "or removed alone. Only open.ts, which picks a backend from a URL, and colocated tests may.",
      severity: "error",
      from: { path: "^src/storage/([^/]+\\.ts$|(contracts|common|replica)/)", pathNot: ["^src/storage/open\\.ts$", "\\.test\\.ts$"] },
      to: { path: "^src/storage/(sqlite|postgres)/" },
    },
    {
      name: "backends-not-to-each-other",
      comment:
        "A backend folder must not import another: what two backends share belongs above them in " +
        "src/storage/, written once, not reached from one dialect into the other.",
      severity: "error",
      from: { path: "^src/storage/(sqlite|postgres)/" },
      to: { path: "^src/storage/(sqlite|postgres)/", pathNot: "^src/storage/$1/" },
    },
    {
      name: "operations-not-to-later",
      comment:
        "An operation's code is plain values or plain async: the sync-or-async plumbing of version " +
        "resolution (src/api/pages/nowOrLater.ts: NowOrLater, after, guard) belongs to the handler, the " +
        "context and the page strategy only. " +
        "Operations get the position reads' type from operation.ts.",
      severity: "error",
      from: { path: "^src/api/operations/" },
      to: { path: "^src/api/pages/nowOrLater\\.ts$" },
    },
    {
      name: "api-not-to-sql",
      comment:
        "SQL lives in storage: the API talks to the storage contracts only, so it must not import a " +
        "backend (sqlite/, postgres/), a driver (better-sqlite3, pg) or src/storage/open.ts (choosing a " +
        "backend from a URL is the composition root's job: src/server.ts and src/cli.ts). An operation's " +
        "tests, beside it, open a real backend as every HTTP test does.",
      severity: "error",
      from: { path: "^src/api/", pathNot: "\\.test\\.ts$" },
      to: { path: ["^src/storage/(sqlite|postgres)/", "^src/storage/open\\.ts$", ...SQL_DRIVERS] },
    },
    {
      name: "api-and-domain-never-reach-sql",
      comment:
        "The two rules above forbid direct imports; this one closes the detour: no chain of imports from " +
        "shipped API or domain code may end in a backend, a driver or open.ts (e.g. via an ingest module " +
        "that opens a store). Colocated tests may use a real backend.",
      severity: "error",
      from: { path: "^src/(api|ledger|move)/", pathNot: "\\.test\\.ts$" },
      to: { path: ["^src/storage/(sqlite|postgres)/", "^src/storage/open\\.ts$", ...SQL_DRIVERS], reachable: true },
    },
    {
      name: "ingest-not-to-api",
      comment:
        "Ingestion writes the ledger and runs without an HTTP server (the import CLI, the writer thread): " +
        "it must not depend on the API layer.",
      severity: "error",
      from: { path: "^src/ingest/" },
      to: { path: "^src/api/" },
    },
  ],
  options: {
    // Count `import type` too (see the header), and resolve NodeNext `.js` specifiers to the .ts sources.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    // Record that src imports a package, but do not walk into node_modules.
    doNotFollow: { path: "(^|/)node_modules/" },
    moduleSystems: ["es6", "cjs"],
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
  },
};
