/**
 * The SQLite store's reads: each a statement or a few in one read transaction (`readTransactions.ts`), the
 * position reads at the newest version through the memo (`dataVersionMemo.ts`), answered in the calling turn
 * (`immediate`); the wire reads' JSON written by the statements (`SUMMARY_JSON`, `codeRecord`).
 */
import { formatAddress } from "../../ledger/address.js";
import { CODE_HASH_DIGITS } from "../../ledger/codeHash.js";
import type { BlockInfo, LedgerInfo, ModuleEntry, TransactionSummary, UserTxnGas } from "../../ledger/types.js";
import { moduleStateKey } from "../../ledger/stateKey.js";
import type { AccountTransactionsQuery, EventsPage, EventsQuery, ModulesPage, ResourcesPage, Snapshot, SummariesPage, SummaryQuery, TransactionTexts, VersionTexts } from "../contracts/reader.js";
import type { ImmediateReads, SummariesJsonPage, WantsCode, WireReads } from "../contracts/pageReads.js";
import type { StoredTxnFingerprint } from "../contracts/writer.js";
import { historyRange, textsFrom, textsOfVersions } from "../common/history.js";
import { resourcesPage, type StoredResource } from "../common/resourcesPage.js";
import { unpackResourceValue } from "../common/resourceValue.js";
import { blockOf, fingerprintOf, ledgerInfoOf, snapshotValue, summaryOf, userTxnGasOf, type ModuleCodeForm } from "../common/rows.js";
import { memoKeys } from "../common/memoKeys.js";
import { summaryRange, summaryWindow, type SummaryWindow } from "../common/summaryWindow.js";
import { SQLITE_COLUMNS, timestampToSql, u64FromSql, u64ToSql, versionParam, versionSnapshot } from "./columns.js";
import type { DataVersionMemo } from "./dataVersionMemo.js";
import type { Statements } from "./statements.js";
import type { ReadTurns } from "./readTransactions.js";

const NO_KEY = Buffer.alloc(0);
const ZERO_BYTE = Buffer.alloc(1);

/** The ledger row read by `statements`, or null before the first block. */
export function ledgerInfoReader(statements: Statements): () => LedgerInfo | null {
  return () => {
    const row = statements.ledger.get();
    return row ? ledgerInfoOf(row, SQLITE_COLUMNS) : null;
  };
}

export class SqliteReads {
  private readonly readLedgerInfo: () => LedgerInfo | null;

  constructor(
    private readonly statements: Statements,
    private readonly turns: ReadTurns,
    private readonly memo: DataVersionMemo,
  ) {
    this.readLedgerInfo = ledgerInfoReader(statements);
  }

  /** The snapshot reads in the calling turn: better-sqlite3 reads synchronously in process. */
  readonly immediate: ImmediateReads = {
    getLedgerInfo: (fresh = false) => this.memo.read("ledger", this.readLedgerInfo, undefined, fresh),
    readTableItem: (handle, key, version) => {
      const read = (): Snapshot<Uint8Array | null> | null => {
        const row = this.statements.tableItemAt.get(handle, key, version === undefined ? null : versionParam(version));
        return row ? { info: ledgerInfoOf(row, SQLITE_COLUMNS), value: snapshotValue(row, (v) => v) } : null;
      };
      const memoKey = memoKeys.tableItem(handle, key, version);
      return memoKey === null ? this.turns.inTurn(read) : this.memo.read(memoKey, read, (snap) => snap.value?.length ?? 0);
    },
    readModulesVersion: (address, version) => {
      const read = () => {
        const row = this.statements.modulesVersionAt.get(address, version === undefined ? null : versionParam(version));
        return row ? versionSnapshot(row) : null;
      };
      const memoKey = memoKeys.modulesVersion(address, version);
      return memoKey === null ? this.turns.inTurn(read) : this.memo.read(memoKey, read);
    },
    readSummariesVersion: (sender, end) => {
      const read = () => {
        const row = this.statements.summariesVersionAt.get(sender, end === undefined ? null : versionParam(end));
        return row ? versionSnapshot(row) : null;
      };
      const memoKey = memoKeys.summariesVersion(sender, end);
      return memoKey === null ? this.turns.inTurn(read) : this.memo.read(memoKey, read);
    },
  };

  async readTransactions(start: bigint, limit: number, maxBytes?: number): Promise<Snapshot<TransactionTexts> | null> {
    return this.turns.readTx(() => {
      const info = this.readLedgerInfo();
      return info ? { info, value: { start, texts: this.texts(start, limit, info.ledgerVersion, maxBytes) } } : null;
    });
  }

  async readTransactionByHash(hash: Uint8Array): Promise<Snapshot<TransactionTexts | null> | null> {
    return this.turns.readTx(() => {
      const info = this.readLedgerInfo();
      if (!info) return null;
      const version = this.statements.versionByHash.get(hash, hash);
      if (version === undefined || version > info.ledgerVersion) return { info, value: null };
      return { info, value: { start: version, texts: this.texts(version, 1, info.ledgerVersion) } };
    });
  }

  async readAccountTransactions(q: AccountTransactionsQuery): Promise<Snapshot<VersionTexts> | null> {
    return this.turns.readTx(() => {
      const info = this.readLedgerInfo();
      if (!info) return null;
      const st = this.statements;
      const rows = q.start === undefined ? st.sequencedNewest.all(q.sender, q.limit).reverse() : st.sequencedFrom.all(q.sender, versionParam(q.start), q.limit);
      const versions = rows.map(([version]) => version);
      const texts = textsOfVersions(versions, (v) => {
        const c = st.historyAt.get(v);
        return c ? { firstVersion: c[0], body: c[1] } : null;
      });
      return { info, value: { versions, firstSequence: rows.length > 0 ? u64FromSql(rows[0]![1]) : null, texts } };
    });
  }

  async readEvents(q: EventsQuery): Promise<Snapshot<EventsPage> | null> {
    return this.turns.readTx(() => {
      const info = this.readLedgerInfo();
      if (!info) return null;
      const st = this.statements;
      const creation = u64ToSql(q.creationNumber);
      const rows =
        q.start === undefined ? st.eventsNewest.all(q.account, creation, q.limit).reverse() : st.eventsFrom.all(q.account, creation, versionParam(q.start), q.limit);
      const events = rows.map(([version, index, sequence]) => ({ sequenceNumber: u64FromSql(sequence), version, index: Number(index) }));
      const texts = textsOfVersions(
        events.map((e) => e.version),
        (v) => {
          const c = st.historyAt.get(v);
          return c ? { firstVersion: c[0], body: c[1] } : null;
        },
        q.maxBytes,
      );
      return { info, value: { events, texts } };
    });
  }

  /** The texts of up to `limit` versions from `start` on, to `ledgerVersion` (inside a read transaction). */
  private texts(start: bigint, limit: number, ledgerVersion: bigint, maxBytes?: number): Uint8Array[] {
    const range = historyRange(start, limit, ledgerVersion);
    if (range === null) return [];
    const chunks = this.statements.historyFrom.all(versionParam(start), versionParam(range.end));
    return textsFrom(chunks.map(([firstVersion, body]) => ({ firstVersion, body })), start, range.count, maxBytes);
  }

  async readModules(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number, code?: WantsCode): Promise<Snapshot<ModulesPage> | null> {
    return this.modulesPage(address, version, start, limit, code, "bytecode");
  }

  /** `readModules`, the listed code in either form (see `moduleList`). */
  private modulesPage(
    address: Uint8Array,
    version: bigint | undefined,
    start: Uint8Array | null,
    limit: number,
    code: WantsCode | undefined,
    form: ModuleCodeForm,
  ): Snapshot<ModulesPage> | null {
    return this.turns.readTx(() => {
      const row = this.statements.modulesVersionAt.get(address, version === undefined ? null : versionParam(version));
      if (!row) return null;
      const { info, value: changed } = versionSnapshot(row);
      const rows = this.moduleList(address, versionParam(version ?? info.ledgerVersion), start, limit, code, form);
      return { info, value: { changed, rows } };
    });
  }

  /**
   * Up to `limit` modules of `address` at `version` from state key `start`, in state-key order,
   * skipping keys without a module there (not yet written, or deleted): pages of keys
   * (`moduleKeys`) until `limit` modules are found or the keys end. The code of the rows `code`
   * says yes to is read by id: the JSON record when `form` is "record" and the ABI text is stored,
   * else the bytecode and ABI text. Call inside a read transaction: the page is several statements.
   */
  private moduleList(
    address: Uint8Array,
    version: bigint,
    start: Uint8Array | null,
    limit: number,
    code: WantsCode | undefined,
    form: ModuleCodeForm,
  ): ModuleEntry[] {
    const st = this.statements;
    const out: ModuleEntry[] = [];
    let from = start ?? NO_KEY;
    while (out.length < limit) {
      const wanted = limit - out.length;
      const rows = st.moduleKeys.all(version, address, from, wanted);
      for (const [stateKey, name, codeOf] of rows) {
        if (codeOf === null) continue;
        const codeHash = codeOf.slice(0, CODE_HASH_DIGITS);
        const entry: ModuleEntry = { stateKey, name, codeHash };
        // (an empty id, a row no migration gave one, reads no code here: the API reads it by hash)
        if (code?.(codeHash) && codeOf.length > CODE_HASH_DIGITS) this.readCode(entry, Number(codeOf.slice(CODE_HASH_DIGITS)), form);
        out.push(entry);
      }
      if (rows.length < wanted) break;
      // the next key after the last: the same bytes and a zero byte
      from = Buffer.concat([rows[rows.length - 1]![0], ZERO_BYTE]);
    }
    return out;
  }

  /** A listed module's code, by id, into `entry` (see `moduleList`). */
  private readCode(entry: ModuleEntry, id: number, form: ModuleCodeForm): void {
    if (form === "record") {
      const found = this.statements.codeRecord.get(id);
      if (typeof found === "string") entry.record = found;
      else if (found) entry.bytecode = found;
      return;
    }
    const found = this.statements.codeAndAbi.get(id);
    if (found) {
      entry.bytecode = found[0];
      if (found[1] !== null) entry.abi = found[1];
    }
  }

  async getModuleCode(codeHash: string): Promise<Uint8Array | null> {
    return this.statements.code.get(codeHash)?.bytecode ?? null;
  }




  async readResource(address: Uint8Array, type: string, version: bigint | undefined): Promise<Snapshot<string | null> | null> {
    const row = this.turns.inTurn(() => this.statements.resourceAt.get(address, type, version === undefined ? null : versionParam(version)));
    return row ? { info: ledgerInfoOf(row, SQLITE_COLUMNS), value: snapshotValue(row, (v) => unpackResourceValue(address, v)) } : null;
  }

  async readResources(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number): Promise<Snapshot<ResourcesPage> | null> {
    return this.turns.readTx(() => {
      const info = this.turns.snapshotLedgerInfo();
      if (!info) return null;
      const stored: StoredResource[] = [];
      let changed: bigint | null = null;
      for (const [type, v, value] of this.statements.accountResources.all(address, versionParam(version ?? info.ledgerVersion))) {
        const at = u64FromSql(v);
        if (changed === null || at > changed) changed = at;
        if (value !== null) stored.push({ type, value });
      }
      return { info, value: { changed, rows: resourcesPage(address, stored, start, limit) } };
    });
  }

  async readModule(address: Uint8Array, name: string, version: bigint | undefined, code?: WantsCode): Promise<Snapshot<ModuleEntry | null> | null> {
    return this.turns.readTx(() => {
      const info = this.turns.snapshotLedgerInfo();
      if (!info) return null;
      const stateKey = moduleStateKey(address, name);
      const row = this.statements.moduleAt.get(address, stateKey, versionParam(version ?? info.ledgerVersion));
      if (!row || row[0] === null) return { info, value: null };
      const entry: ModuleEntry = { stateKey, name, codeHash: row[0] };
      // (a module whose code the caller holds reads none: its JSON record is the caller's)
      if (code && !code(row[0])) return { info, value: entry };
      if (row[1] !== null) this.readCode(entry, row[1], "bytecode");
      else {
        const code = this.statements.code.get(row[0]);
        if (code) entry.bytecode = code.bytecode;
      }
      return { info, value: entry };
    });
  }

  async getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null> {
    const value = this.statements.resource.get(address, type, versionParam(version))?.value ?? null;
    return value === null ? null : unpackResourceValue(address, value);
  }

  async readSummaries(q: SummaryQuery): Promise<Snapshot<SummariesPage> | null> {
    return this.turns.readTx(() => {
      const page = this.summariesPage(q, (full) => this.summaryRows(full), (row) => row.version);
      return page && { info: page.info, value: { newest: page.newest, rows: page.rows } };
    });
  }

  /** The API's JSON written by the statements (`SUMMARY_JSON`, `codeRecord`): cheaper than rows and their encoding. */
  readonly wire: WireReads = {
    readSummaries: async (q) => this.summariesJsonPage(q),
    readModules: async (address, version, start, limit, code) => this.modulesPage(address, version, start, limit, code, "record"),
  };

  private summariesJsonPage(q: SummaryQuery): Snapshot<SummariesJsonPage> | null {
    return this.turns.readTx(() => {
      const sender = formatAddress(q.sender);
      // each row starts `{"sender":"<sender>","version":"<digits>"`
      const at = 24 + sender.length;
      const versionOf = (row: string) => BigInt(row.slice(at, row.indexOf('"', at)));
      const page = this.summariesPage(q, (full) => this.summaryJsonRows(full, sender), versionOf);
      if (!page) return null;
      const { info, newest, rows } = page;
      return { info, value: { newest, first: rows.length > 0 ? versionOf(rows[0]!) : null, json: `[${rows.join(",")}]` } };
    });
  }

  /**
   * The reads of a summaries page (`readSummaries`), its rows in either form: the ledger row, the
   * page and its newest version. Call inside a read transaction.
   */
  private summariesPage<R>(q: SummaryQuery, read: (q: SummaryWindow) => R[], versionOf: (row: R) => bigint) {
    if (q.start === undefined && q.limit > 0) {
      // A backward page ends at the sender's newest row at or below the bound, so that row is
      // the page's last: the ledger row alone, and no second seek for it (the position read
      // before the page made the first).
      const info = this.turns.snapshotLedgerInfo();
      if (!info) return null;
      const rows = read(summaryWindow(q, info.ledgerVersion));
      return { info, newest: rows.length > 0 ? versionOf(rows[rows.length - 1]!) : null, rows };
    }
    const bound = q.start === undefined ? q.end : undefined;
    const row = this.statements.summariesVersionAt.get(q.sender, bound === undefined ? null : versionParam(bound));
    if (!row) return null;
    const { info, value: newest } = versionSnapshot(row);
    return { info, newest, rows: read(summaryWindow(q, info.ledgerVersion)) };
  }

  /** A page's rows as their JSON text (`SUMMARY_JSON`), ascending; `sender` formatted. */
  private summaryJsonRows(q: SummaryWindow, sender: string): string[] {
    const range = summaryRange(q);
    if (!range) return [];
    const st = this.statements;
    return range.direction === "forward"
      ? st.summariesJsonForward.all(sender, q.sender, versionParam(range.from), versionParam(range.to), range.limit)
      : st.summariesJsonBackward.all(sender, q.sender, versionParam(range.to), range.limit).reverse();
  }

  private summaryRows(q: SummaryWindow): TransactionSummary[] {
    const range = summaryRange(q);
    if (!range) return [];
    const rows =
      range.direction === "forward"
        ? this.statements.summariesForward.all(q.sender, versionParam(range.from), versionParam(range.to), range.limit)
        : this.statements.summariesBackward.all(q.sender, versionParam(range.to), range.limit).reverse();
    const sender = Buffer.from(q.sender);
    return rows.map((row) => summaryOf(sender, row, SQLITE_COLUMNS));
  }

  async getBlockByVersion(version: bigint): Promise<BlockInfo | null> {
    const row = this.statements.blockByVersion.get(versionParam(version));
    if (!row) return null;
    const block = blockOf(row, SQLITE_COLUMNS);
    return block.lastVersion >= version ? block : null;
  }

  async getBlockByHeight(height: bigint): Promise<BlockInfo | null> {
    const row = this.statements.blockByHeight.get(versionParam(height));
    return row ? blockOf(row, SQLITE_COLUMNS) : null;
  }

  async getFirstBlockAtOrAfter(timestampUsec: bigint): Promise<BlockInfo | null> {
    const row = this.statements.blockAtTime.get(timestampToSql(timestampUsec < 0n ? 0n : timestampUsec));
    return row ? blockOf(row, SQLITE_COLUMNS) : null;
  }

  async getUserTxnGas(first: bigint, last: bigint): Promise<UserTxnGas[]> {
    return this.statements.userGas.all(versionParam(first), versionParam(last)).map((row) => userTxnGasOf(row, SQLITE_COLUMNS));
  }

  async getFingerprints(from: bigint, to: bigint): Promise<StoredTxnFingerprint[]> {
    return this.statements.fingerprints.all(versionParam(from), versionParam(to)).map((row) => fingerprintOf(row, SQLITE_COLUMNS));
  }

}
