/**
 * The ledger headers (docs/decisions.md §4): `X-NODE-*` always, and the same values as `X-Aptos-*` when
 * `--aptos-headers` is on, because the official SDKs read only `x-aptos-cursor`.
 */
import type { LedgerInfo } from "../../ledger/types.js";

const FIELDS = [
  ["CHAIN-ID", "Chain-Id"],
  ["LEDGER-VERSION", "Ledger-Version"],
  ["LEDGER-OLDEST-VERSION", "Ledger-Oldest-Version"],
  ["LEDGER-TIMESTAMPUSEC", "Ledger-TimestampUsec"],
  ["EPOCH", "Epoch"],
  ["BLOCK-HEIGHT", "Block-Height"],
  ["OLDEST-BLOCK-HEIGHT", "Oldest-Block-Height"],
] as const;

export const NODE_HEADER_NAMES = [...FIELDS.map(([n]) => `X-NODE-${n}`), "X-NODE-CURSOR"];
export const APTOS_HEADER_NAMES = [...FIELDS.map(([, a]) => `X-Aptos-${a}`), "X-Aptos-Cursor"];

export interface HeaderWriter {
  /** The ledger headers as a flat list of names and values (shared: do not modify it). */
  ledger(info: LedgerInfo): readonly string[];
  /** The cursor headers as a flat list of names and values. */
  cursor(hex: string): string[];
  /** Names to expose through CORS. */
  exposed: string[];
}

/** Builds the header writer once; per request it only fills values. */
export function headerWriter(aptosHeaders: boolean): HeaderWriter {
  const names = FIELDS.map(([node, aptos]) => [`x-node-${node.toLowerCase()}`, `x-aptos-${aptos.toLowerCase()}`] as const);
  // Printed once per ledger position, not per request: every field follows from the ledger
  // version and the oldest version. The returned list is shared: read it only.
  let lastVersion = -1n;
  let lastOldest = -1n;
  let last: string[] = [];
  return {
    ledger(i: LedgerInfo): readonly string[] {
      if (i.ledgerVersion === lastVersion && i.oldestVersion === lastOldest) return last;
      const values = [i.chainId, i.ledgerVersion, i.oldestVersion, i.timestampUsec, i.epoch, i.blockHeight, i.oldestBlockHeight];
      const h: string[] = [];
      for (let k = 0; k < names.length; k++) {
        const v = String(values[k]);
        h.push(names[k]![0], v);
        if (aptosHeaders) h.push(names[k]![1], v);
      }
      lastVersion = i.ledgerVersion;
      lastOldest = i.oldestVersion;
      last = h;
      return h;
    },
    cursor(hex: string): string[] {
      return aptosHeaders ? ["x-node-cursor", hex, "x-aptos-cursor", hex] : ["x-node-cursor", hex];
    },
    exposed: aptosHeaders ? [...NODE_HEADER_NAMES, ...APTOS_HEADER_NAMES] : NODE_HEADER_NAMES,
  };
}

/** OpenAPI description of the ledger headers on a 200 (required) or an error (optional). */
export function ledgerHeaderSchemas(withCursor: boolean): Record<string, unknown> {
  const d: Record<string, { type: string; format?: string; description: string }> = {
    "X-NODE-CHAIN-ID": { type: "integer", format: "uint8", description: "Chain ID of the current chain" },
    "X-NODE-LEDGER-VERSION": { type: "integer", format: "uint64", description: "Current ledger version of the chain" },
    "X-NODE-LEDGER-OLDEST-VERSION": { type: "integer", format: "uint64", description: "Oldest non-pruned ledger version of the chain" },
    "X-NODE-LEDGER-TIMESTAMPUSEC": { type: "integer", format: "uint64", description: "Current timestamp of the chain" },
    "X-NODE-EPOCH": { type: "integer", format: "uint64", description: "Current epoch of the chain" },
    "X-NODE-BLOCK-HEIGHT": { type: "integer", format: "uint64", description: "Current block height of the chain" },
    "X-NODE-OLDEST-BLOCK-HEIGHT": { type: "integer", format: "uint64", description: "Oldest non-pruned block height of the chain" },
  };
  if (withCursor) {
    d["X-NODE-CURSOR"] = { type: "string", description: "Cursor for the next page: pass it as the `start` query parameter" };
  }
  return d;
}
