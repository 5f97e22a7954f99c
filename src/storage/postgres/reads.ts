/**
 * The PostgreSQL store's reads: each ONE named statement (`sql.ts`), so it sees one snapshot. The
 * position reads at the newest version answer from the memo for a bounded lag (`PositionMemo`);
 * every snapshot read tells the memo the position it saw. The wire reads' JSON is written by the
 * page statements.
 */
import { formatAddress } from "../../ledger/address.js";
import type { BlockInfo, LedgerInfo, ModuleEntry, TransactionSummary, UserTxnGas } from "../../ledger/types.js";
import { moduleStateKey } from "../../ledger/stateKey.js";
import type { AccountTransactionsQuery, EventsPage, EventsQuery, ModulesPage, ResourcesPage, Snapshot, SummariesPage, SummaryQuery, TransactionTexts, VersionTexts } from "../contracts/reader.js";
import type { SummariesJsonPage, WantsCode, WireReads } from "../contracts/pageReads.js";
import type { StoredTxnFingerprint } from "../contracts/writer.js";
import { historyRange, textsFrom, textsOfVersions, type StoredChunk } from "../common/history.js";
import { resourcesPage, type StoredResource } from "../common/resourcesPage.js";
import { unpackResourceValue } from "../common/resourceValue.js";
import {
  blockOf,
  fingerprintOf,
  LEDGER_COLUMNS,
  ledgerInfoOf,
  moduleEntryOf,
  snapshotValue,
  summaryOf,
  userTxnGasOf,
  type BlockRow,
  type FingerprintRow,
  type LedgerTuple,
  type ModuleCodeForm,
  type SnapshotTuple,
  type SummaryTuple,
  type UserTxnGasRow,
} from "../common/rows.js";
import { memoKeys } from "../common/memoKeys.js";
import { optionalVersion, PG_COLUMNS, u64FromColumn, u64Param, versionSnapshot } from "./columns.js";
import type { NamedStatements } from "./connection.js";
import { askedOnce, ListedCode } from "./listedCode.js";
import type { PositionMemo } from "./positionMemo.js";

export class PostgresReads {
  /** The code hashes each account's module pages last listed (`modulesPage`). */
  private readonly listedCode = new ListedCode();

  constructor(
    private readonly sql: NamedStatements,
    private readonly memo: PositionMemo,
  ) {}

  async getLedgerInfo(fresh = false): Promise<LedgerInfo | null> {
    const held = fresh ? null : this.memo.ledger();
    if (held) return held;
    const asked = this.memo.asking();
    const row = (await this.sql.tuples<LedgerTuple<string>>("ledger", []))[0];
    const info = row ? ledgerInfoOf(row, PG_COLUMNS) : null;
    if (info) this.memo.saw(info, asked);
    return info;
  }

  /**
   * A snapshot read through the memo: at the newest version (`key` given), the memoized answer
   * while it is trusted; any read's position renews or moves the memo's (`PositionMemo.saw`).
   */
  private async memoized<T>(key: string | null, read: () => Promise<Snapshot<T> | null>, valueBytes?: (v: T) => number): Promise<Snapshot<T> | null> {
    if (key !== null) {
      const held = this.memo.get<T>(key);
      if (held) return held;
    }
    const asked = this.memo.asking();
    const answer = await read();
    if (answer && this.memo.saw(answer.info, asked) && key !== null) this.memo.remember(key, answer, valueBytes?.(answer.value));
    return answer;
  }

  async readTableItem(handle: Uint8Array, key: Uint8Array, version: bigint | undefined): Promise<Snapshot<Uint8Array | null> | null> {
    return this.memoized(
      memoKeys.tableItem(handle, key, version),
      async () => {
        const row = (await this.sql.tuples<SnapshotTuple<string, Buffer>>("tableItemAt", [handle, key, optionalVersion(version)]))[0];
        return row ? { info: ledgerInfoOf(row, PG_COLUMNS), value: snapshotValue(row, (v) => v) } : null;
      },
      (v) => v?.length ?? 0,
    );
  }

  async readModules(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number, code?: WantsCode): Promise<Snapshot<ModulesPage> | null> {
    return this.memoized(null, () => this.modulesPage(address, version, start, limit, code, "bytecode"));
  }

  /** The API's JSON written by the page statements (`SQL.summariesJson…`, a module's record). */
  readonly wire: WireReads = {
    readSummaries: (q) => this.memoized(null, () => this.summariesJsonPage(q)),
    readModules: (address, version, start, limit, code) => this.memoized(null, () => this.modulesPage(address, version, start, limit, code, "record")),
  };

  /**
   * The page in one statement, with the code of every listed module when `code` is given (in
   * `form`), kept for the rows `code` says yes to. The code comes from the module rows the page
   * reads anyway, where a second statement for it cost a round trip (bench/results/archive.md). The
   * statement leaves out the code of the modules the account's last page listed that `code` does
   * not want (`ListedCode`); those it lists for the first time carry theirs whether wanted or not.
   */
  private async modulesPage(
    address: Uint8Array,
    version: bigint | undefined,
    start: Uint8Array | null,
    limit: number,
    code: WantsCode | undefined,
    form: ModuleCodeForm,
  ): Promise<Snapshot<ModulesPage> | null> {
    const account = Buffer.from(address.buffer, address.byteOffset, address.byteLength).toString("hex");
    const wants = code && askedOnce(code);
    const values = [address, start ?? Buffer.alloc(0), optionalVersion(version), limit, code ? form : null, this.listedCode.unwanted(account, wants)];
    const rows = await this.sql.tuples<ModulesPageTuple>("modulesPage", values);
    const first = rows[0];
    if (!first) return null;
    const modules: ModuleEntry[] = [];
    const hashes: string[] = [];
    for (const r of rows) {
      const [stateKey, name, codeHash, record, bytecode, abi] = r.slice(LEDGER_COLUMNS.length + 1) as ModuleColumns;
      if (stateKey === null) continue;
      const m = moduleEntryOf({ state_key: stateKey, name, code_hash: codeHash });
      hashes.push(m.codeHash);
      if (wants?.(m.codeHash)) {
        if (record !== null) m.record = record;
        if (bytecode !== null) m.bytecode = bytecode;
        if (abi !== null) m.abi = abi;
      }
      modules.push(m);
    }
    this.listedCode.saw(account, hashes);
    const changed = first[LEDGER_COLUMNS.length];
    return { info: ledgerInfoOf(first, PG_COLUMNS), value: { changed: changed === null ? null : u64FromColumn(changed), rows: modules } };
  }

  async readResource(address: Uint8Array, type: string, version: bigint | undefined): Promise<Snapshot<string | null> | null> {
    return this.memoized(null, async () => {
      const row = (await this.sql.tuples<SnapshotTuple<string, Buffer>>("resourceAt", [address, type, optionalVersion(version)]))[0];
      return row ? { info: ledgerInfoOf(row, PG_COLUMNS), value: snapshotValue(row, (v) => unpackResourceValue(address, v)) } : null;
    });
  }

  async readResources(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number): Promise<Snapshot<ResourcesPage> | null> {
    return this.memoized(null, async () => {
      const rows = await this.sql.tuples<[...LedgerTuple<string>, string | null, string | null, Buffer | null]>("accountResources", [address, optionalVersion(version)]);
      const first = rows[0];
      if (!first) return null;
      const stored: StoredResource[] = [];
      let changed: bigint | null = null;
      for (const r of rows) {
        const [type, v, value] = r.slice(LEDGER_COLUMNS.length) as [string | null, string | null, Buffer | null];
        if (type === null || v === null) continue;
        const at = u64FromColumn(v);
        if (changed === null || at > changed) changed = at;
        if (value !== null) stored.push({ type, value });
      }
      return { info: ledgerInfoOf(first, PG_COLUMNS), value: { changed, rows: resourcesPage(address, stored, start, limit) } };
    });
  }

  async readModule(address: Uint8Array, name: string, version: bigint | undefined): Promise<Snapshot<ModuleEntry | null> | null> {
    return this.memoized(null, async () => {
      const stateKey = moduleStateKey(address, name);
      const row = (await this.sql.tuples<[...LedgerTuple<string>, string | null, Buffer | null, string | null]>("moduleAt", [address, stateKey, optionalVersion(version)]))[0];
      if (!row) return null;
      const [codeHash, bytecode, abi] = row.slice(LEDGER_COLUMNS.length) as [string | null, Buffer | null, string | null];
      if (codeHash === null) return { info: ledgerInfoOf(row, PG_COLUMNS), value: null };
      const entry: ModuleEntry = { stateKey, name, codeHash };
      if (bytecode !== null) entry.bytecode = bytecode;
      if (abi !== null) entry.abi = abi;
      return { info: ledgerInfoOf(row, PG_COLUMNS), value: entry };
    });
  }

  async readTransactions(start: bigint, limit: number, maxBytes?: number): Promise<Snapshot<TransactionTexts> | null> {
    return this.memoized(null, async () => {
      const rows = await this.sql.tuples<[...LedgerTuple<string>, ...ChunkColumns]>("transactionsFrom", [u64Param(start), limit]);
      const first = rows[0];
      if (!first) return null;
      const info = ledgerInfoOf(first, PG_COLUMNS);
      const chunks = rows.map((r) => r.slice(LEDGER_COLUMNS.length) as ChunkColumns);
      return { info, value: { start, texts: textsOfChunks(chunks, start, limit, info.ledgerVersion, maxBytes) } };
    });
  }

  async readTransactionByHash(hash: Uint8Array): Promise<Snapshot<TransactionTexts | null> | null> {
    return this.memoized(null, async () => {
      const row = (await this.sql.tuples<[...LedgerTuple<string>, version: string | null, ...ChunkColumns]>("transactionByHash", [hash]))[0];
      if (!row) return null;
      const info = ledgerInfoOf(row, PG_COLUMNS);
      const [version, ...chunk] = row.slice(LEDGER_COLUMNS.length) as [string | null, ...ChunkColumns];
      if (version === null) return { info, value: null };
      const start = u64FromColumn(version);
      return { info, value: { start, texts: textsOfChunks([chunk], start, 1, info.ledgerVersion) } };
    });
  }

  async readAccountTransactions(q: AccountTransactionsQuery): Promise<Snapshot<VersionTexts> | null> {
    return this.memoized(null, async () => {
      const limit = Math.max(0, q.limit);
      const rows =
        q.start === undefined
          ? await this.sql.tuples<AccountTransactionsTuple>("accountTransactionsNewest", [q.sender, limit])
          : await this.sql.tuples<AccountTransactionsTuple>("accountTransactionsFrom", [q.sender, u64Param(q.start), limit]);
      const first = rows[0];
      if (!first) return null;
      const versions: bigint[] = [];
      let firstSequence: bigint | null = null;
      // Each row's chunk by its version; a body comes with the first row of its chunk only.
      const bodies = new Map<string, Buffer>();
      const chunkOf = new Map<bigint, StoredChunk>();
      for (const r of rows) {
        const [version, sequence, chunkFirst, body] = r.slice(LEDGER_COLUMNS.length) as AccountTransactionColumns;
        if (version === null) continue;
        const v = u64FromColumn(version);
        versions.push(v);
        firstSequence ??= u64FromColumn(sequence);
        if (chunkFirst === null) continue;
        if (body !== null) bodies.set(chunkFirst, body);
        const held = bodies.get(chunkFirst);
        if (held) chunkOf.set(v, { firstVersion: u64FromColumn(chunkFirst), body: held });
      }
      return { info: ledgerInfoOf(first, PG_COLUMNS), value: { versions, firstSequence, texts: textsOfVersions(versions, (v) => chunkOf.get(v) ?? null) } };
    });
  }

  async readEvents(q: EventsQuery): Promise<Snapshot<EventsPage> | null> {
    return this.memoized(null, async () => {
      const limit = Math.max(0, q.limit);
      const creation = u64Param(q.creationNumber);
      const rows =
        q.start === undefined
          ? await this.sql.tuples<HandleEventsTuple>("eventsNewest", [q.account, creation, limit])
          : await this.sql.tuples<HandleEventsTuple>("eventsFrom", [q.account, creation, u64Param(q.start), limit]);
      const first = rows[0];
      if (!first) return null;
      const events: EventsPage["events"] = [];
      // Each row's chunk by its version; a body comes with the first row of its chunk only.
      const bodies = new Map<string, Buffer>();
      const chunkOf = new Map<bigint, StoredChunk>();
      for (const r of rows) {
        const [version, index, sequence, chunkFirst, body] = r.slice(LEDGER_COLUMNS.length) as HandleEventColumns;
        if (version === null) continue;
        const v = u64FromColumn(version);
        events.push({ sequenceNumber: u64FromColumn(sequence), version: v, index });
        if (chunkFirst === null) continue;
        if (body !== null) bodies.set(chunkFirst, body);
        const held = bodies.get(chunkFirst);
        if (held) chunkOf.set(v, { firstVersion: u64FromColumn(chunkFirst), body: held });
      }
      const texts = textsOfVersions(
        events.map((e) => e.version),
        (v) => chunkOf.get(v) ?? null,
        q.maxBytes,
      );
      return { info: ledgerInfoOf(first, PG_COLUMNS), value: { events, texts } };
    });
  }

  async getModuleCode(codeHash: string): Promise<Uint8Array | null> {
    const rows = await this.sql.rows<{ bytecode: Buffer }>("moduleCode", [codeHash]);
    return rows[0]?.bytecode ?? null;
  }

  async readModulesVersion(address: Uint8Array, version: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    return this.memoized(memoKeys.modulesVersion(address, version), async () => {
      const row = (await this.sql.tuples<SnapshotTuple<string, string>>("modulesVersionAt", [address, optionalVersion(version)]))[0];
      return row ? versionSnapshot(row) : null;
    });
  }

  async readSummariesVersion(sender: Uint8Array, end: bigint | undefined): Promise<Snapshot<bigint | null> | null> {
    return this.memoized(memoKeys.summariesVersion(sender, end), async () => {
      const row = (await this.sql.tuples<SnapshotTuple<string, string>>("summariesVersionAt", [sender, optionalVersion(end)]))[0];
      return row ? versionSnapshot(row) : null;
    });
  }

  async getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null> {
    const value = (await this.sql.rows<{ value: Buffer | null }>("resource", [address, type, u64Param(version)]))[0]?.value ?? null;
    return value === null ? null : unpackResourceValue(address, value);
  }

  async readSummaries(q: SummaryQuery): Promise<Snapshot<SummariesPage> | null> {
    return this.memoized(null, () => this.summariesPage(q));
  }

  private async summariesPage(q: SummaryQuery): Promise<Snapshot<SummariesPage> | null> {
    // The window rules run on the snapshot's own ledger version, which the statement reads itself:
    // `summaryRange` with an unbounded ledger version gives the same direction and bounds.
    if (q.limit <= 0) {
      const row = (await this.sql.tuples<SnapshotTuple<string, string>>("summariesVersionAt", [q.sender, optionalVersion(q.start === undefined ? q.end : undefined)]))[0];
      return row ? { info: ledgerInfoOf(row, PG_COLUMNS), value: { newest: snapshotValue(row, u64FromColumn), rows: [] } } : null;
    }
    const rows =
      q.start !== undefined
        ? await this.sql.tuples<SummariesPageTuple>("summariesPageForward", [q.sender, u64Param(q.start), q.limit])
        : await this.sql.tuples<SummariesPageTuple>("summariesPageBackward", [q.sender, optionalVersion(q.end), q.limit]);
    const first = rows[0];
    if (!first) return null;
    const sender = Buffer.from(q.sender);
    const summaries: TransactionSummary[] = [];
    for (const r of rows) {
      const summary = r.slice(LEDGER_COLUMNS.length + 1) as SummaryTuple<string> | [null, null, null, null];
      if (summary[0] !== null) summaries.push(summaryOf(sender, summary, PG_COLUMNS));
    }
    const newest = first[LEDGER_COLUMNS.length];
    return { info: ledgerInfoOf(first, PG_COLUMNS), value: { newest: newest === null ? null : u64FromColumn(newest), rows: summaries } };
  }

  private async summariesJsonPage(q: SummaryQuery): Promise<Snapshot<SummariesJsonPage> | null> {
    if (q.limit <= 0) {
      const empty = await this.summariesPage(q);
      return empty && { info: empty.info, value: { newest: empty.value.newest, first: null, json: "[]" } };
    }
    const sender = formatAddress(q.sender);
    const rows =
      q.start !== undefined
        ? await this.sql.tuples<SummariesJsonTuple>("summariesJsonForward", [q.sender, u64Param(q.start), q.limit, sender])
        : await this.sql.tuples<SummariesJsonTuple>("summariesJsonBackward", [q.sender, optionalVersion(q.end), q.limit, sender]);
    const row = rows[0];
    if (!row) return null;
    const [newest, first, json] = row.slice(LEDGER_COLUMNS.length) as [string | null, string | null, string | null];
    return {
      info: ledgerInfoOf(row, PG_COLUMNS),
      value: { newest: newest === null ? null : u64FromColumn(newest), first: first === null ? null : u64FromColumn(first), json: `[${json ?? ""}]` },
    };
  }

  async getBlockByVersion(version: bigint): Promise<BlockInfo | null> {
    return this.block("blockByVersion", version);
  }

  async getBlockByHeight(height: bigint): Promise<BlockInfo | null> {
    return this.block("blockByHeight", height);
  }

  async getFirstBlockAtOrAfter(timestampUsec: bigint): Promise<BlockInfo | null> {
    return this.block("blockAtTime", timestampUsec);
  }

  private async block(name: "blockByVersion" | "blockByHeight" | "blockAtTime", param: bigint): Promise<BlockInfo | null> {
    const row = (await this.sql.rows<BlockRow<string, boolean>>(name, [u64Param(param)]))[0];
    return row ? blockOf(row, PG_COLUMNS) : null;
  }

  async getUserTxnGas(first: bigint, last: bigint): Promise<UserTxnGas[]> {
    const rows = await this.sql.rows<UserTxnGasRow<string>>("userGas", [u64Param(first), u64Param(last)]);
    return rows.map((row) => userTxnGasOf(row, PG_COLUMNS));
  }

  async getFingerprints(from: bigint, to: bigint): Promise<StoredTxnFingerprint[]> {
    const rows = await this.sql.rows<FingerprintRow<string>>("fingerprints", [u64Param(from), u64Param(to)]);
    return rows.map((row) => fingerprintOf(row, PG_COLUMNS));
  }

}

/** A history chunk of the transactions statements: its first version and packed texts (both null for none). */
type ChunkColumns = [firstVersion: string, body: Buffer] | [null, null];

/** The texts of up to `limit` versions from `start` on, to `ledgerVersion`, from the chunks a statement read. */
function textsOfChunks(chunks: ChunkColumns[], start: bigint, limit: number, ledgerVersion: bigint, maxBytes?: number): Uint8Array[] {
  const range = historyRange(start, limit, ledgerVersion);
  if (range === null) return [];
  const stored = chunks.flatMap(([firstVersion, body]) => (firstVersion === null ? [] : [{ firstVersion: u64FromColumn(firstVersion), body }]));
  return textsFrom(stored, start, range.count, maxBytes);
}

/** A transaction of an account's page: version, sequence number, its chunk's first version and body (body null: an earlier row's chunk; all null: none). */
type AccountTransactionColumns = [version: string, sequence: string, chunkFirst: string | null, body: Buffer | null] | [null, null, null, null];

/** An event of a handle's page: version, index in its transaction's events, sequence number, its chunk's first version and body (as `AccountTransactionColumns`). */
type HandleEventColumns =
  | [version: string, index: number, sequence: string, chunkFirst: string | null, body: Buffer | null]
  | [null, null, null, null, null];

/** A row of the events statements: the ledger columns, then an event (`HandleEventColumns`). */
type HandleEventsTuple = [...LedgerTuple<string>, ...HandleEventColumns];

/** A row of the account transactions statements: the ledger columns, then a transaction (`AccountTransactionColumns`). */
type AccountTransactionsTuple = [...LedgerTuple<string>, ...AccountTransactionColumns];

/** A row of a summaries page statement: the ledger columns, the newest version, a summary (all null for none). */
type SummariesPageTuple = [...LedgerTuple<string>, newest: string | null, ...(SummaryTuple<string> | [null, null, null, null])];

/** A row of the summaries JSON statements: the ledger columns, the newest version, a summary's version and JSON (both null for none). */
type SummariesJsonTuple = [...LedgerTuple<string>, newest: string | null, first: string | null, json: string | null];

/** A module of the module page statement: state key, name, code hash, then its code (`modulesPage`). */
type ModuleColumns = [Buffer, string, string, record: string | null, bytecode: Buffer | null, abi: string | null] | [null, null, null, null, null, null];

/** A row of the module page statement: the ledger columns, the changed version, a module (all null for none). */
type ModulesPageTuple = [...LedgerTuple<string>, changed: string | null, ...ModuleColumns];

