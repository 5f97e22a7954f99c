/**
 * What ingest writes through: the chain's id, whole blocks (atomically), and pruning. Both dialects
 * implement it; the importer, the devnet, the follower and the pruner use it.
 *
 * - A block commits atomically: readers see all of it or none of it.
 * - Pruning never removes the newest value of a key at or below the new oldest version, so every
 *   read at V >= the oldest version stays exact, at every moment of a prune.
 */
import type { BlockInfo, ReplayProtector } from "../../ledger/types.js";

/** Kinds of transaction kept per version (so a re-import can check what it skips). */
export type TxnKind =
  | "genesis_transaction"
  | "block_metadata_transaction"
  | "user_transaction"
  | "state_checkpoint_transaction"
  | "block_epilogue_transaction"
  | "validator_transaction"
  /** A type added to the chain after this version of the reader (`UNKNOWN_TXN_KIND`). */
  | "unknown_transaction";

export interface UserTxnWrite {
  sender: Uint8Array; // 32 bytes
  replayProtector: ReplayProtector;
  gasUnitPrice: bigint;
  gasUsed: bigint;
  success: boolean;
  contractAddress: string | null;
}

export interface TxnWrite {
  version: bigint;
  kind: TxnKind;
  /** 32 bytes; all zeros when the source had no hash (the shared fixture blanks hashes). */
  hash: Uint8Array;
  user: UserTxnWrite | null;
  /**
   * The transaction's REST JSON text as the source gave it, kept and served as the history
   * (docs/decisions.md §20); absent for a synthetic row (a test's or a benchmark's), whose version
   * then has no history kept.
   */
  json?: string;
  /**
   * The transaction's events that belong to an event handle, in the order of its `events` (module
   * events, which have none, are left out); absent when it has none (docs/decisions.md §22).
   */
  events?: EventWrite[];
}

/** An event of an event handle: the handle's GUID, its sequence number, and where it is in its transaction's `events`. */
export interface EventWrite {
  account: Uint8Array; // 32 bytes
  creationNumber: bigint;
  sequenceNumber: bigint;
  /** Its position in the transaction's `events` array. */
  index: number;
}

export interface ModuleWrite {
  version: bigint;
  address: Uint8Array; // 32 bytes
  name: string;
  stateKey: Uint8Array;
  bytecode: Uint8Array | null; // null: deleted
  /**
   * The source's ABI as JSON text, stored (and served) in place of the decoded one when the
   * bytecode does not decode here (a bytecode version newer than the decoder).
   */
  upstreamAbi?: string;
}

export interface TableItemWrite {
  version: bigint;
  handle: Uint8Array; // 32 bytes
  key: Uint8Array;
  value: Uint8Array | null; // null: deleted
}

export interface ResourceWrite {
  version: bigint;
  address: Uint8Array; // 32 bytes
  /** Struct tag as the source printed it, e.g. `0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>`. */
  type: string;
  /**
   * The value as JSON text, or already in its stored form (`packResourceValue` of that text: the
   * follower packs on the thread that parsed it); null: deleted.
   */
  json: string | Uint8Array | null;
}

/** Everything one block writes. Versions are contiguous and follow the stored ledger. */
export interface BlockWrite {
  block: BlockInfo;
  transactions: TxnWrite[];
  /**
   * The block's history chunks, packed where its transactions were parsed (an import's or a
   * follower's parsing thread); absent: packed from the transactions' texts when prepared.
   */
  history?: HistoryChunk[];
  modules: ModuleWrite[];
  tableItems: TableItemWrite[];
  resources: ResourceWrite[];
}

/** A module write with its code's content hash and the ABI text stored with the code. */
export interface PreparedModuleWrite {
  readonly write: ModuleWrite;
  /** `codeHash` of the bytecode; null for a deletion. */
  readonly codeHash: string | null;
  /** The ABI text stored with the code (null for a deletion); may be decoded at the first ask. */
  readonly abi: string | null;
}

/** A resource write with its value in the stored form (null: deleted). */
export interface PreparedResource {
  write: ResourceWrite;
  value: Buffer | null;
}

/** The state rows of a block, or of a follower's base state, prepared (`prepareBlock.ts`). */
export interface PreparedState {
  modules: PreparedModuleWrite[];
  tableItems: TableItemWrite[];
  resources: PreparedResource[];
}

/** Consecutive versions `[firstVersion, lastVersion]` of one block and their JSON texts, packed (`history.ts`). */
export interface HistoryChunk {
  firstVersion: bigint;
  lastVersion: bigint;
  body: Buffer;
}

/** A block as a dialect writes it: the last write of each key kept, code hashed, values and history packed. */
export interface PreparedBlock extends PreparedState {
  block: BlockInfo;
  transactions: TxnWrite[];
  history: HistoryChunk[];
}

export interface StoredTxnFingerprint {
  version: bigint;
  kind: TxnKind;
  hash: Uint8Array;
}

export interface PruneTarget {
  /** First version kept: the first version of block `oldestBlockHeight`. */
  oldestVersion: bigint;
  oldestBlockHeight: bigint;
}

export interface PruneResult {
  transactionsDeleted: number;
  stateRowsDeleted: number;
  blocksDeleted: number;
}

export interface LedgerWriter {
  /** Sets the chain id once; throws if a different one is stored. */
  initChain(chainId: number): Promise<void>;
  /** Kinds and hashes of stored versions in [from, to], ascending: what a re-import checks it skips. */
  getFingerprints(from: bigint, to: bigint): Promise<StoredTxnFingerprint[]>;
  /** Commits one block atomically. */
  commitBlock(write: BlockWrite): Promise<void>;
  /** Commits consecutive whole blocks in one atomic commit (bulk import: fewer syncs). */
  commitBlocks(writes: BlockWrite[]): Promise<void>;
  /**
   * The first half of `commitBlocks`: everything done to the blocks before a row is written (the
   * last write of a key, code hashes, packed resource values); writes nothing, so it may run
   * while an earlier commit is being written (the Importer prepares the next batch meanwhile).
   */
  prepareBlocks(writes: BlockWrite[]): Promise<PreparedBlock[]>;
  /** The second half: writes blocks `prepareBlocks` gave, in one atomic commit. */
  commitPrepared(blocks: PreparedBlock[]): Promise<void>;
  /**
   * Raises the oldest kept version and removes what no read at or above it can see, in steps of
   * their own commits (each leaves a correct ledger; a prune cut off anywhere is resumed by the next).
   */
  prune(target: PruneTarget): Promise<PruneResult>;
}
