/** The seven ledger headers every data response carries (docs/decisions.md §4), as they appear on the wire. */
export const LEDGER_HEADERS = [
  "x-node-chain-id",
  "x-node-ledger-version",
  "x-node-ledger-oldest-version",
  "x-node-ledger-timestampusec",
  "x-node-epoch",
  "x-node-block-height",
  "x-node-oldest-block-height",
];
