/**
 * Writing blocks and a follower's base state into SQLite: prepared statements inside one
 * transaction, new ids interned in it (`intern.ts`), code stored once per hash with its ABI text.
 */
import type { Database as Db } from "better-sqlite3";
import { codeHash } from "../../ledger/codeHash.js";
import type { BlockWrite } from "../writer.js";
import { packResourceValue } from "../resourceValue.js";
import { replayKindCode, storedAbiText, txnKindCode } from "../rules.js";
import { timestampToSql, u64ToSql } from "./columns.js";
import type { Interner } from "./intern.js";
import type { Statements } from "./statements.js";

/** A contract address stored by id: the form the importer gives, 64 lowercase hex digits. */
const CANONICAL_CONTRACT = /^[0-9a-f]{64}$/;

/** Packed resource values of a commit, taken in the order of its non-null resource writes. */
export class PackedValues {
  private at = 0;
  constructor(private readonly values: readonly Buffer[]) {}
  next(): Buffer {
    const v = this.values[this.at++];
    if (v === undefined) throw new Error("internal: fewer packed resource values than resource writes");
    return v;
  }
}

/** The state rows of a block or of a follower's base state. */
export type StateWrite = Pick<BlockWrite, "modules" | "tableItems" | "resources">;

export class BlockCommitter {
  /** One block in one transaction. */
  readonly commitTx: (w: BlockWrite) => void;
  /** Consecutive blocks in one transaction, their resource values packed already. */
  readonly commitManyTx: (ws: BlockWrite[], packed: PackedValues) => void;

  constructor(
    db: Db,
    private readonly statements: Statements,
    private readonly ids: Interner,
  ) {
    this.commitTx = db.transaction((w: BlockWrite) => this.commitInTx(w));
    this.commitManyTx = db.transaction((ws: BlockWrite[], packed: PackedValues) => {
      for (const w of ws) this.commitInTx(w, packed);
    });
  }

  private commitInTx(w: BlockWrite, packed: PackedValues | null = null): void {
    const st = this.statements;
    const b = w.block;
    const flag = (on: boolean): number => (on ? 1 : 0);
    st.insertBlock.run(
      b.height,
      b.epoch,
      timestampToSql(b.timestampUsec),
      b.firstVersion,
      b.lastVersion,
      b.endInfo ? flag(b.endInfo.blockGasLimitReached) : null,
      b.endInfo ? flag(b.endInfo.blockOutputLimitReached) : null,
    );
    for (const t of w.transactions) {
      const u = t.user;
      if (!u) {
        st.insertTxn.run(t.version, txnKindCode(t.kind), t.hash, null, null, null, null, null, null, null, null);
        continue;
      }
      const senderId = this.ids.addressId(u.sender);
      const contract = u.contractAddress;
      const contractId = contract !== null && CANONICAL_CONTRACT.test(contract) ? this.ids.addressId(Buffer.from(contract, "hex")) : null;
      st.insertTxn.run(
        t.version,
        txnKindCode(t.kind),
        t.hash,
        senderId,
        replayKindCode(u.replayProtector),
        u64ToSql(u.replayProtector.value),
        u64ToSql(u.gasUnitPrice),
        u64ToSql(u.gasUsed),
        flag(u.success),
        contractId,
        contractId === null ? contract : null,
      );
      st.insertAccountTxn.run(senderId, t.version, t.hash, replayKindCode(u.replayProtector), u64ToSql(u.replayProtector.value));
    }
    this.insertState(w, packed);
    st.setLedger.run(b.lastVersion, timestampToSql(b.timestampUsec), b.epoch, b.height, b.firstVersion, b.height);
  }

  /** The state rows of a block or of a follower's base state (inside the caller's transaction). */
  insertState(w: StateWrite, packed: PackedValues | null = null): void {
    const st = this.statements;
    for (const m of w.modules) {
      const hash = m.bytecode ? codeHash(m.bytecode) : null;
      let id: number | null = null;
      if (m.bytecode) {
        // The ABI is computed once per new hash, here and not on reads.
        id = st.codeId.get(hash!) ?? Number(st.insertCode.run(hash!, m.bytecode, storedAbiText(m)!).lastInsertRowid);
      }
      st.insertModuleKey.run(m.address, m.stateKey, m.name);
      st.insertModule.run(m.address, m.stateKey, m.version, m.name, hash, id);
    }
    for (const t of w.tableItems) st.insertTableItem.run(this.ids.addressId(t.handle), t.key, t.version, t.value);
    for (const r of w.resources) {
      const value = r.json === null ? null : packed ? packed.next() : packResourceValue(r.address, r.json);
      st.insertResource.run(this.ids.addressId(r.address), this.ids.typeId(r.type), r.version, value);
    }
  }
}
