/**
 * The calls each dialect answers in objects of its own (its reads, `sqlite/reads.ts` and
 * `postgres/reads.ts`; its follow-base bookkeeping, `followBase.ts`) and its store passes through
 * unchanged, and a bulk commit as the dialect's two halves of it: written once here, as the base of
 * both stores.
 */
import type { BlockInfo, ModuleEntry, UserTxnGas } from "../ledger/types.js";
import type { LedgerReader, ModulesPage, ResourcesPage, Snapshot, SummariesPage, SummaryQuery } from "./reader.js";
import type { PageReads, WantsCode } from "./pageReads.js";
import type { BaseStateWrite, FollowBase, StateKeyRef } from "./followBase.js";
import type { BlockWrite, LedgerWriter, PreparedBlock, StoredTxnFingerprint } from "./writer.js";

/** What a dialect's reads object answers for its store. */
export type PassedReads = Pick<
  LedgerReader,
  | "getModuleCode"
  | "readSummaries"
  | "readResource"
  | "readResources"
  | "getResource"
  | "getBlockByVersion"
  | "getBlockByHeight"
  | "getFirstBlockAtOrAfter"
  | "getUserTxnGas"
> &
  Pick<PageReads, "readModules" | "readModule"> &
  Pick<LedgerWriter, "getFingerprints">;

export abstract class PassThrough implements PassedReads, FollowBase {
  protected abstract readonly reads: PassedReads;
  protected abstract readonly followBase: FollowBase;

  abstract prepareBlocks(writes: BlockWrite[]): Promise<PreparedBlock[]>;
  abstract commitPrepared(blocks: PreparedBlock[]): Promise<void>;

  /** Several consecutive blocks in one atomic commit (bulk import): prepared, then written. */
  async commitBlocks(writes: BlockWrite[]): Promise<void> {
    return this.commitPrepared(await this.prepareBlocks(writes));
  }

  readModules(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number, code?: WantsCode): Promise<Snapshot<ModulesPage> | null> {
    return this.reads.readModules(address, version, start, limit, code);
  }

  getModuleCode(codeHash: string): Promise<Uint8Array | null> {
    return this.reads.getModuleCode(codeHash);
  }

  readSummaries(q: SummaryQuery): Promise<Snapshot<SummariesPage> | null> {
    return this.reads.readSummaries(q);
  }

  readResource(address: Uint8Array, type: string, version: bigint | undefined): Promise<Snapshot<string | null> | null> {
    return this.reads.readResource(address, type, version);
  }

  readResources(address: Uint8Array, version: bigint | undefined, start: Uint8Array | null, limit: number): Promise<Snapshot<ResourcesPage> | null> {
    return this.reads.readResources(address, version, start, limit);
  }

  readModule(address: Uint8Array, name: string, version: bigint | undefined, code?: WantsCode): Promise<Snapshot<ModuleEntry | null> | null> {
    return this.reads.readModule(address, name, version, code);
  }

  getResource(address: Uint8Array, type: string, version: bigint): Promise<string | null> {
    return this.reads.getResource(address, type, version);
  }

  getBlockByVersion(version: bigint): Promise<BlockInfo | null> {
    return this.reads.getBlockByVersion(version);
  }

  getBlockByHeight(height: bigint): Promise<BlockInfo | null> {
    return this.reads.getBlockByHeight(height);
  }

  getFirstBlockAtOrAfter(timestampUsec: bigint): Promise<BlockInfo | null> {
    return this.reads.getFirstBlockAtOrAfter(timestampUsec);
  }

  getUserTxnGas(first: bigint, last: bigint): Promise<UserTxnGas[]> {
    return this.reads.getUserTxnGas(first, last);
  }

  getFingerprints(from: bigint, to: bigint): Promise<StoredTxnFingerprint[]> {
    return this.reads.getFingerprints(from, to);
  }

  getBaseRecord(what: string): Promise<bigint | null> {
    return this.followBase.getBaseRecord(what);
  }

  writeBaseState(w: BaseStateWrite): Promise<void> {
    return this.followBase.writeBaseState(w);
  }

  newestStateVersion(key: StateKeyRef, upTo: bigint): Promise<bigint | null> {
    return this.followBase.newestStateVersion(key, upTo);
  }
}
