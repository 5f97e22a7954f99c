/**
 * The request mixes of the scale benchmarks (`scale.bench.ts`, `instructions.bench.ts`): what a
 * ledger holds to ask about (its targets, read once and kept next to the file) and the rows asking it.
 */
import Database from "better-sqlite3";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";

/** What the official SDK sends (see bench/api.bench.ts). */
export const SDK_ENCODING = { "accept-encoding": "gzip, deflate, br" };

// ---------------------------------------------------------------------------------------------
// Targets: what exists in the ledger
// ---------------------------------------------------------------------------------------------

export interface Targets {
  oldest: number;
  latest: number;
  senders: string[];
  /** Accounts with modules, with how many. */
  moduleAccounts: Array<{ address: string; modules: number }>;
  /** The account whose one module has the most versions, and how many. */
  history: { address: string; versions: number };
  items: Array<{ handle: string; key: string }>;
  missing: Array<{ handle: string; key: string }>;
}

const hex = (b: Buffer) => `0x${b.toString("hex")}`;

export function readTargets(db: string): Targets {
  const cache = `${db}.targets.json`;
  const stamp = `${statSync(db).size}/${statSync(db).mtimeMs}`;
  if (existsSync(cache)) {
    const saved = JSON.parse(readFileSync(cache, "utf8")) as { stamp: string; targets: Targets };
    if (saved.stamp === stamp) return saved.targets;
  }
  const t0 = performance.now();
  const d = new Database(db, { readonly: true });
  const ledger = d.prepare("SELECT oldest_version AS oldest, ledger_version AS latest FROM ledger").get() as { oldest: number; latest: number };
  // addresses and table handles are stored once, in addresses, and referred to by id (issue 17 item 5)
  const senders = d.prepare("SELECT address FROM addresses WHERE id IN (SELECT DISTINCT sender_id FROM account_transactions)").pluck().all() as Buffer[];
  const moduleAccounts = d.prepare("SELECT address, count(DISTINCT state_key) AS n FROM modules GROUP BY address").all() as Array<{ address: Buffer; n: number }>;
  const h = d.prepare("SELECT address, count(*) AS n FROM modules GROUP BY address, state_key ORDER BY n DESC LIMIT 1").get() as { address: Buffer; n: number };
  const items = d.prepare("SELECT DISTINCT a.address AS handle, t.key FROM table_items t JOIN addresses a ON a.id = t.handle_id").all() as Array<{ handle: Buffer; key: Buffer }>;
  d.close();
  const targets = targetsOf({ ...ledger, senders, moduleAccounts, history: h, items });
  writeFileSync(cache, JSON.stringify({ stamp, targets }));
  console.error(`read the targets of ${db} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return targets;
}

/** What a ledger holds that the targets are made from, as either backend reads it. */
export interface LedgerTargets {
  oldest: number;
  latest: number;
  senders: Buffer[];
  moduleAccounts: Array<{ address: Buffer; n: number }>;
  history: { address: Buffer; n: number };
  items: Array<{ handle: Buffer; key: Buffer }>;
}

/** The targets from what a ledger holds; the missing keys drawn at random. */
export function targetsOf(raw: LedgerTargets): Targets {
  const ledger = { oldest: raw.oldest, latest: raw.latest };
  const senders = raw.senders.map(hex);
  const moduleAccounts = raw.moduleAccounts.map((r) => ({ address: hex(r.address), modules: r.n }));
  const h = raw.history;
  const items = raw.items.map((r) => ({ handle: hex(r.handle), key: hex(r.key) }));
  // keys of the same handles that were never written: 8 random bytes, checked against the ledger's
  const have = new Set(items.map((i) => `${i.handle}/${i.key}`));
  const handles = [...new Set(items.map((i) => i.handle))];
  const missing: Targets["missing"] = [];
  for (let i = 0; missing.length < 5_000; i++) {
    const handle = handles[i % handles.length]!;
    const key = hex(Buffer.from(Array.from({ length: 8 }, () => Math.floor(Math.random() * 256))));
    if (!have.has(`${handle}/${key}`)) missing.push({ handle, key });
  }
  return { ...ledger, senders, moduleAccounts, history: { address: hex(h.address), versions: h.n }, items, missing };
}

// ---------------------------------------------------------------------------------------------
// Rows: request mixes
// ---------------------------------------------------------------------------------------------

export interface Mix {
  method: "GET" | "POST";
  /** `{name}`: a field of a random choice; `{version}`: a random version of `versions`. */
  path: string;
  body?: string;
  headers?: Record<string, string>;
  choices: Array<Record<string, string>>;
  versions?: [number, number];
}
export interface Row {
  name: string;
  mix: Mix;
}

export function rowsOf(t: Targets, only: RegExp | null = null): Row[] {
  const range: [number, number] = [t.oldest, t.latest];
  const accounts = t.senders.map((account) => ({ account }));
  const hot = [{ account: t.senders[0]! }];
  const moduleAccounts = t.moduleAccounts.map((m) => ({ account: m.address }));
  const items = t.items.map((i) => ({ handle: i.handle, key: i.key }));
  const raw = (choices: Array<Record<string, string>>, versioned: boolean): Mix => ({
    method: "POST",
    path: `/v1/tables/{handle}/raw_item${versioned ? "?ledger_version={version}" : ""}`,
    body: '{"key":"{key}"}',
    headers: { "content-type": "application/json", accept: "application/x-bcs" },
    choices,
    ...(versioned ? { versions: range } : {}),
  });
  const summaries = "/v1/accounts/{account}/transaction_summaries";
  const modules = "/v1/accounts/{account}/modules";
  const rows: Row[] = [
    { name: "summaries limit=25, one account, latest (hot)", mix: { method: "GET", path: `${summaries}?limit=25`, choices: hot } },
    { name: "summaries limit=25, random sender, latest", mix: { method: "GET", path: `${summaries}?limit=25`, choices: accounts } },
    {
      name: "summaries limit=25, random sender, random end_version",
      mix: { method: "GET", path: `${summaries}?limit=25&end_version={version}`, choices: accounts, versions: range },
    },
    {
      name: "summaries limit=100, random sender, random end_version",
      mix: { method: "GET", path: `${summaries}?limit=100&end_version={version}`, choices: accounts, versions: range },
    },
    {
      name: "… same, Accept-Encoding: gzip, deflate, br (SDK)",
      mix: { method: "GET", path: `${summaries}?limit=100&end_version={version}`, headers: SDK_ENCODING, choices: accounts, versions: range },
    },
    { name: "modules limit=25, 0x1, latest (hot)", mix: { method: "GET", path: `${modules}?limit=25`, choices: [{ account: "0x1" }] } },
    {
      name: "modules limit=25, random account, random ledger_version",
      mix: { method: "GET", path: `${modules}?limit=25&ledger_version={version}`, choices: moduleAccounts, versions: range },
    },
    {
      name: `modules of the account with ${t.history.versions.toLocaleString("en")} versions of one module, random ledger_version`,
      mix: { method: "GET", path: `${modules}?limit=25&ledger_version={version}`, choices: [{ account: t.history.address }], versions: range },
    },
    { name: "raw_item, one key, latest (hot)", mix: raw(items.slice(0, 1), false) },
    { name: "raw_item, random key, random ledger_version", mix: raw(items, true) },
    { name: "raw_item, random missing key (404)", mix: raw(t.missing, false) },
    { name: "transaction by_version, random version", mix: { method: "GET", path: "/v1/transactions/by_version/{version}", choices: [{}], versions: range } },
    {
      name: "transactions limit=100, random start",
      mix: { method: "GET", path: "/v1/transactions?start={version}&limit=100", choices: [{}], versions: [t.oldest, Math.max(t.oldest, t.latest - 99)] },
    },
  ];
  return only ? rows.filter((r) => only.test(r.name)) : rows;
}

/** One request of a mix, drawn as the load generator draws them (`random`: a source in [0, 1)). */
export function sample(mix: Mix, random: () => number = Math.random): { path: string; body?: string } {
  const pick = mix.choices[Math.floor(random() * mix.choices.length)]!;
  const v = mix.versions ? String(mix.versions[0] + Math.floor(random() * (mix.versions[1] - mix.versions[0] + 1))) : "";
  const fill = (s: string) => s.replace(/\{(\w+)\}/gu, (_, name: string) => (name === "version" ? v : pick[name]!));
  return { path: fill(mix.path), ...(mix.body === undefined ? {} : { body: fill(mix.body) }) };
}
