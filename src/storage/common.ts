/** Pieces every backend shares. */
import type { TxnKind } from "./LedgerStore.js";

export { codeHash } from "../move/abiCache.js";

/** Stored kind codes: the index in this list. Append only. */
export const TXN_KINDS: readonly TxnKind[] = [
  "genesis_transaction",
  "block_metadata_transaction",
  "user_transaction",
  "state_checkpoint_transaction",
  "block_epilogue_transaction",
  "validator_transaction",
];
