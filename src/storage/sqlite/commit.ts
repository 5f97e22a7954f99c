/**
 * Writing blocks and a follower's base state into SQLite: prepared statements inside one
 * transaction, new ids interned in it (`intern.ts`), code stored once per hash with its ABI text.
 */
import type { Database as Db } from "better-sqlite3";
import type { PreparedBlock, PreparedState } from "../common/prepareBlock.js";
import { replayKindCode, txnKindCode } from "../common/storedCodes.js";
import { timestampToSql, u64ToSql } from "./columns.js";
import type { Interner } from "./intern.js";
import type { Statements } from "./statements.js";

/** A contract address stored by id: the form the importer gives, 64 lowercase hex digits. */
const CANONICAL_CONTRACT = /^[0-9a-f]{64}$/;

export class BlockCommitter {
  /** One block in one transaction. */
  readonly commitTx: (w: PreparedBlock) => void;
  /** Consecutive blocks in one transaction. */
  readonly commitManyTx: (ws: PreparedBlock[]) => void;

  constructor(
    db: Db,
    private readonly statements: Statements,
    private readonly ids: Interner,
  ) {
    this.commitTx = db.transaction((w: PreparedBlock) => this.commitInTx(w));
    this.commitManyTx = db.transaction((ws: PreparedBlock[]) => {
      for (const w of ws) this.commitInTx(w);
    });
  }

  private commitInTx(w: PreparedBlock): void {
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
      if (t.events) for (const e of t.events) st.insertEvent.run(t.version, e.index, this.ids.addressId(e.account), u64ToSql(e.creationNumber), u64ToSql(e.sequenceNumber));
      const u = t.user;
      if (!u) {
        st.insertTxn.run(t.version, txnKindCode(t.kind), t.hash, null, null, null, null, null, null, null, null);
        continue;
      }
      const senderId = this.ids.addressId(u.sender);
      const contract = u.contractAddress;
      const contractId = contract !== null && CANONICAL_CONTRACT.test(contract) ? this.ids.hexAddressId(contract) : null;
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
    for (const c of w.history) st.insertHistory.run(c.firstVersion, c.lastVersion, c.body);
    this.insertState(w);
    st.setLedger.run(b.lastVersion, timestampToSql(b.timestampUsec), b.epoch, b.height, b.firstVersion, b.height);
  }

  /** The state rows of a block or of a follower's base state (inside the caller's transaction). */
  insertState(w: PreparedState): void {
    const st = this.statements;
    for (const m of w.modules) {
      const { address, stateKey, version, name, bytecode } = m.write;
      const hash = m.codeHash;
      let id: number | null = null;
      if (bytecode) {
        // Code is stored once per hash: the ABI text is asked (and decoded) for new code only.
        id = st.codeId.get(hash!) ?? Number(st.insertCode.run(hash!, bytecode, m.abi!).lastInsertRowid);
      }
      st.insertModuleKey.run(address, stateKey, name);
      st.insertModule.run(address, stateKey, version, name, hash, id);
    }
    for (const t of w.tableItems) st.insertTableItem.run(this.ids.addressId(t.handle), t.key, t.version, t.value);
    for (const r of w.resources) st.insertResource.run(this.ids.addressId(r.write.address), this.ids.typeId(r.write.type), r.write.version, r.value);
  }
}
