/**
 * Domain types of the ledger. u64 values are `bigint` everywhere inside the program
 * (docs/decisions.md §8); they become decimal strings only at the JSON edge.
 */

/** The ledger's position, as sent in the `X-NODE-*` headers. */
export interface LedgerInfo {
  chainId: number;
  /** Newest committed version. */
  ledgerVersion: bigint;
  /** First version of the first block kept whole (docs/decisions.md §9). */
  oldestVersion: bigint;
  /** Chain time of the newest block, microseconds. */
  timestampUsec: bigint;
  epoch: bigint;
  blockHeight: bigint;
  oldestBlockHeight: bigint;
}

/** The block epilogue's limit flags (Aptos `BlockEndInfo`). */
export interface BlockEndInfo {
  blockGasLimitReached: boolean;
  blockOutputLimitReached: boolean;
}

/** One committed block: versions [firstVersion, lastVersion], both inclusive. */
export interface BlockInfo {
  height: bigint;
  epoch: bigint;
  timestampUsec: bigint;
  firstVersion: bigint;
  lastVersion: bigint;
  /** Present when the block carried a `block_epilogue_transaction` with `block_end_info`. */
  endInfo: BlockEndInfo | null;
}

/** What the gas estimator needs of one user transaction. */
export interface UserTxnGas {
  version: bigint;
  gasUnitPrice: bigint;
  gasUsed: bigint;
  /** Address of the entry function's module (the shuffler's "use case"), null for others. */
  contractAddress: string | null;
}

/** `replay_protector` of a transaction summary (docs/decisions.md §5). */
export type ReplayProtector =
  | { type: "sequence_number"; value: bigint }
  | { type: "nonce"; value: bigint };

/** One committed user transaction sent by an account. */
export interface TransactionSummary {
  /** 32 raw bytes. */
  sender: Uint8Array;
  version: bigint;
  /**
   * The hash as lowercase hex without 0x, 64 digits (zeros when the source blanked the hash): the
   * store reads it in the form the JSON page sends, with no byte buffer per row.
   */
  hashHex: string;
  replayProtector: ReplayProtector;
}

/** One module at a version, in state-key order. */
export interface ModuleEntry {
  /** The module's state key bytes (see `src/ledger/stateKey.ts`), also the paging cursor. */
  stateKey: Uint8Array;
  name: string;
  /** sha256 hex of the bytecode, computed at ingest; `LedgerReader.getModuleCode` gives the bytes. */
  codeHash: string;
  /** The bytecode, when a read asked for it and the store read it with the list (`LedgerReader.readModules`). */
  bytecode?: Uint8Array;
  /**
   * The ABI JSON text stored with the bytecode when it was written (`moduleAbiJson` in
   * `src/move/abi.ts`: what the API sends for `abi`, `null` included), read with `bytecode`. Absent
   * when the store has none for it (a row written before it was kept): derive it from the bytecode.
   */
  abi?: string;
  /**
   * The module as the modules operation sends it in JSON, `{"bytecode":"0x…","abi":…}` (the
   * `MoveModuleBytecode` schema's bytes), when a read asked for that form and the store wrote it
   * (`LedgerReader.readModules`); `bytecode` is then absent.
   */
  record?: string;
}
