/**
 * What the plain-node bench tools (threadTime, pairTime, wireDiff) share: their `--name value`
 * options, a started server's URL, and the request mixes of bench:scale's rows by short name,
 * drawn from the targets scale.bench.ts saves beside a ledger (`<db>.targets.json`).
 */

import { readFileSync } from "node:fs";

/**
 * The `serve` flags that let one client (these benches' stream clients, all on 127.0.0.1) hold `n`
 * transaction streams; the per-client share only where the build at `dist` has the flag.
 */
export function streamCapFlags(dist, n) {
  const flags = ["--max-connections", "0", "--max-streams", String(n)];
  if (readFileSync(`${dist}/dist/cli.js`, "utf8").includes("--max-streams-per-client")) flags.push("--max-streams-per-client", String(n));
  return flags;
}

/** The value after `--name` on the command line, or `def`. */
export function option(name, def) {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? def : argv[i + 1];
}

/**
 * The URL a started server (`child`, output piped) prints on stdout or stderr; `output()` is all it
 * printed so far, kept after the URL too. Rejects, naming `label`, if it exits first.
 */
export function serverUrl(child, label) {
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      output += d.toString();
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(output);
      if (m) resolve({ url: m[0], output: () => output });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${label} exited (${code}): ${output}`)));
  });
}

/** The rows' mixes, as bench/loadgen.mjs takes them. */
export function rowMixes(targets) {
  const range = [targets.oldest, targets.latest];
  const accounts = targets.senders.map((account) => ({ account }));
  const raw = (choices, versioned) => ({
    method: "POST",
    path: `/v1/tables/{handle}/raw_item${versioned ? "?ledger_version={version}" : ""}`,
    body: '{"key":"{key}"}',
    headers: { "content-type": "application/json", accept: "application/x-bcs" },
    choices,
    ...(versioned ? { versions: range } : {}),
  });
  const summaries = "/v1/accounts/{account}/transaction_summaries";
  return {
    modules: { method: "GET", path: "/v1/accounts/{account}/modules?limit=25&ledger_version={version}", choices: targets.moduleAccounts.map((m) => ({ account: m.address })), versions: range },
    history: { method: "GET", path: "/v1/accounts/{account}/modules?limit=25&ledger_version={version}", choices: [{ account: targets.history.address }], versions: range },
    "summaries-hot": { method: "GET", path: `${summaries}?limit=25`, choices: accounts.slice(0, 1) },
    "summaries-latest": { method: "GET", path: `${summaries}?limit=25`, choices: accounts },
    "by-version": { method: "GET", path: "/v1/transactions/by_version/{version}", choices: [{}], versions: range },
    "transactions-100": { method: "GET", path: "/v1/transactions?start={version}&limit=100", choices: [{}], versions: range },
    "summaries-25": { method: "GET", path: `${summaries}?limit=25&end_version={version}`, choices: accounts, versions: range },
    "summaries-100": { method: "GET", path: `${summaries}?limit=100&end_version={version}`, choices: accounts, versions: range },
    "summaries-100-sdk": {
      method: "GET",
      path: `${summaries}?limit=100&end_version={version}`,
      headers: { "accept-encoding": "gzip, deflate, br" },
      choices: accounts,
      versions: range,
    },
    raw: raw(targets.items.map((i) => ({ handle: i.handle, key: i.key })), true),
    "raw-hot": raw(targets.items.slice(0, 1).map((i) => ({ handle: i.handle, key: i.key })), false),
    missing: raw(targets.missing, false),
  };
}
