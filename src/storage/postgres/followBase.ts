/**
 * A replica's base bookkeeping on PostgreSQL (`FollowBase`): the record of what was fetched from
 * the upstream, the fetched rows written with it in one transaction, and the newest version of a key.
 */
import type pg from "pg";
import type { BaseStateWrite, FollowBase, StateKeyRef } from "../contracts/followBase.js";
import { prepareState } from "../common/prepareBlock.js";
import { u64FromColumn, u64Param } from "./columns.js";
import { inTransaction } from "./connection.js";
import { storageError } from "./errors.js";
import { ADDRESS_ID, INTERN_ADDRESS, INTERN_TYPE, TYPE_ID } from "./sql.js";

export class PostgresFollowBase implements FollowBase {
  constructor(private readonly pool: pg.Pool) {}

  async getBaseRecord(what: string): Promise<bigint | null> {
    try {
      const r = await this.pool.query<{ version: string }>("SELECT version FROM follow_base WHERE what = $1", [what]);
      return r.rows[0] ? u64FromColumn(r.rows[0].version) : null;
    } catch (e) {
      throw storageError(e, "getBaseRecord");
    }
  }

  async writeBaseState(w: BaseStateWrite): Promise<void> {
    await inTransaction(this.pool, "writeBaseState", async (c) => {
      const recorded = await c.query("INSERT INTO follow_base (what, version) VALUES ($1, $2::numeric) ON CONFLICT (what) DO NOTHING RETURNING what", [
        w.what,
        u64Param(w.fetchedAt),
      ]);
      if (recorded.rowCount === 0) return;
      const state = prepareState(w);
      for (const { write: m, codeHash, abi } of state.modules) {
        await c.query(
          `INSERT INTO modules (address, state_key, version, name, bytecode, code_hash, abi) VALUES ($1, $2, $3::numeric, $4, $5, $6, $7)
           ON CONFLICT (address, state_key, version) DO NOTHING`,
          [m.address, m.stateKey, u64Param(m.version), m.name, m.bytecode, codeHash, abi],
        );
      }
      for (const t of state.tableItems) {
        await c.query(
          `WITH ${INTERN_ADDRESS("$1::bytea")} INSERT INTO table_items (handle_id, key, version, value)
           SELECT id, $2, $3::numeric, $4 FROM interned ON CONFLICT DO NOTHING`,
          [t.handle, t.key, u64Param(t.version), t.value],
        );
      }
      for (const { write: r, value } of state.resources) {
        await c.query(
          `WITH ${INTERN_ADDRESS("$1::bytea")}, ${INTERN_TYPE("$2::text")}
           INSERT INTO resources (address_id, type_id, version, value)
           SELECT interned.id, interned_type.id, $3::numeric, $4 FROM interned, interned_type ON CONFLICT DO NOTHING`,
          [r.address, r.type, u64Param(r.version), value],
        );
      }
    });
  }

  async newestStateVersion(key: StateKeyRef, upTo: bigint): Promise<bigint | null> {
    try {
      const r =
        key.kind === "table_item"
          ? await this.pool.query<{ v: string | null }>(`SELECT max(version) AS v FROM table_items WHERE handle_id = ${ADDRESS_ID("$1")} AND key = $2 AND version <= $3::numeric`, [
              key.handle,
              key.key,
              u64Param(upTo),
            ])
          : await this.pool.query<{ v: string | null }>(
              `SELECT max(version) AS v FROM resources WHERE address_id = ${ADDRESS_ID("$1")} AND type_id = ${TYPE_ID("$2")} AND version <= $3::numeric`,
              [
              key.address,
              key.type,
              u64Param(upTo),
            ]);
      const v = r.rows[0]?.v;
      return v === null || v === undefined ? null : u64FromColumn(v);
    } catch (e) {
      throw storageError(e, "newestStateVersion");
    }
  }
}
