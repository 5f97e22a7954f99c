/**
 * The codes both stores write for what they store (transaction kinds, replay protectors), the ABI
 * text kept with a module's code, and the chain id check after the first import.
 */
import type { ReplayProtector } from "../../ledger/types.js";
import { moduleAbiJson } from "../../move/abi.js";
import type { ModuleWrite, TxnKind } from "../contracts/writer.js";

/** Stored kind codes: the index in this list. Append only. */
export const TXN_KINDS: readonly TxnKind[] = [
  "genesis_transaction",
  "block_metadata_transaction",
  "user_transaction",
  "state_checkpoint_transaction",
  "block_epilogue_transaction",
  "validator_transaction",
  "unknown_transaction",
];

export function txnKindCode(kind: TxnKind): number {
  return TXN_KINDS.indexOf(kind);
}

/**
 * The ABI text stored with a module's bytecode: decoded here (`moduleAbiJson`), or the source's
 * own when the bytecode does not decode and the source sent one. Null for a deletion.
 */
export function storedAbiText(m: ModuleWrite): string | null {
  if (!m.bytecode) return null;
  const decoded = moduleAbiJson(m.bytecode);
  return decoded === "null" && m.upstreamAbi !== undefined ? m.upstreamAbi : decoded;
}

/** Stored `replay_kind`: 0 for a nonce, 1 for a sequence number. */
export function replayKindCode(p: ReplayProtector): number {
  return p.type === "nonce" ? 0 : 1;
}


/** After "insert the chain id unless one is stored": the stored one must be the one asked for. */
export function checkChainId(stored: number | null, chainId: number): void {
  if (stored !== chainId) throw new Error(`this ledger has chain id ${stored}, not ${chainId}`);
}
