/**
 * A block as the parameters of the PostgreSQL `commit` statement (`SQL.commit`): one statement
 * per block, its addresses and resource types numbered in it, arrays for `unnest`.
 */
import { parseAddress } from "../../ledger/address.js";
import type { PreparedBlock } from "../common/prepareBlock.js";
import { replayKindCode, txnKindCode } from "../common/storedCodes.js";
import { u64Param } from "./columns.js";

/**
 * Numbers the distinct addresses (or type names) a block names, from 1 in order of first use: the
 * positions the `commit` statement's rows refer to.
 */
class Interned<K> {
  readonly values: K[] = [];
  private readonly index = new Map<string, number>();
  constructor(private readonly keyOf: (v: K) => string) {}
  ord(v: K): number {
    const k = this.keyOf(v);
    let i = this.index.get(k);
    if (i === undefined) {
      i = this.values.push(v);
      this.index.set(k, i);
    }
    return i;
  }
}

const hexOf = (a: Uint8Array): string => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString("hex");

/**
 * A user transaction's contract address as 32 bytes. The importer gives 64 hex digits; any form
 * `parseAddress` takes is accepted, and it is read back as 64 lowercase hex digits.
 */
function contractBytes(text: string): Uint8Array {
  const bytes = parseAddress(text);
  if (!bytes) throw new Error(`contract address ${JSON.stringify(text.slice(0, 100))} is not an address`);
  return bytes;
}

/**
 * The parameters of the `commit` statement for one block (`prepareBlock`: the last write of a key
 * wins); `toldVersion`: the last version of the transaction it commits in, which its notice names.
 */
export function commitValues(w: PreparedBlock, toldVersion: bigint = w.block.lastVersion): unknown[] {
  const b = w.block;
  const txns = w.transactions;
  const modules = w.modules;
  const items = w.tableItems;
  const resources = w.resources;
  const addresses = new Interned<Uint8Array>(hexOf);
  const types = new Interned<string>((t) => t);
  const senderOrds = txns.map((t) => (t.user ? addresses.ord(t.user.sender) : null));
  const contractOrds = txns.map((t) => (t.user?.contractAddress != null ? addresses.ord(contractBytes(t.user.contractAddress)) : null));
  const handleOrds = items.map((t) => addresses.ord(t.handle));
  const ownerOrds = resources.map((r) => addresses.ord(r.write.address));
  const typeOrds = resources.map((r) => types.ord(r.write.type));
  const events = txns.flatMap((t) => (t.events ? t.events.map((e) => ({ version: t.version, e })) : []));
  const accountOrds = events.map(({ e }) => addresses.ord(e.account));
  return [
    u64Param(b.height),
    u64Param(b.epoch),
    u64Param(b.timestampUsec),
    u64Param(b.firstVersion),
    u64Param(b.lastVersion),
    b.endInfo ? b.endInfo.blockGasLimitReached : null,
    b.endInfo ? b.endInfo.blockOutputLimitReached : null,
    addresses.values,
    types.values,
    txns.map((t) => u64Param(t.version)),
    senderOrds,
    contractOrds,
    txns.map((t) => txnKindCode(t.kind)),
    txns.map((t) => (t.user ? replayKindCode(t.user.replayProtector) : null)),
    txns.map((t) => (t.user ? t.user.success : null)),
    txns.map((t) => t.hash),
    txns.map((t) => (t.user ? u64Param(t.user.replayProtector.value) : null)),
    txns.map((t) => (t.user ? u64Param(t.user.gasUnitPrice) : null)),
    txns.map((t) => (t.user ? u64Param(t.user.gasUsed) : null)),
    modules.map((m) => m.write.address),
    modules.map((m) => m.write.stateKey),
    modules.map((m) => u64Param(m.write.version)),
    modules.map((m) => m.write.name),
    modules.map((m) => m.write.bytecode),
    modules.map((m) => m.codeHash),
    handleOrds,
    items.map((t) => t.key),
    items.map((t) => u64Param(t.version)),
    items.map((t) => t.value),
    ownerOrds,
    typeOrds,
    resources.map((r) => u64Param(r.write.version)),
    resources.map((r) => r.value),
    modules.map((m) => m.abi),
    w.history.map((c) => u64Param(c.firstVersion)),
    w.history.map((c) => u64Param(c.lastVersion)),
    w.history.map((c) => c.body),
    events.map(({ version }) => u64Param(version)),
    events.map(({ e }) => e.index),
    accountOrds,
    events.map(({ e }) => u64Param(e.creationNumber)),
    events.map(({ e }) => u64Param(e.sequenceNumber)),
    toldVersion.toString(),
  ];
}
