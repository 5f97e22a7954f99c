/**
 * A replica's base bookkeeping on SQLite (`FollowBase`): the record of what was fetched from the
 * upstream, the fetched rows written with it in one transaction, and the newest version of a key.
 * Its statements are prepared at first use: a store that never follows never needs them.
 */
import type { Database as Db } from "better-sqlite3";
import type { BaseStateWrite, FollowBase, StateKeyRef } from "../contracts/followBase.js";
import { prepareState } from "../common/prepareBlock.js";
import type { BlockCommitter } from "./commit.js";
import { versionParam } from "./columns.js";
import type { Interner } from "./intern.js";
import { prepareFollowStatements, type FollowStatements } from "./statements.js";

export class SqliteFollowBase implements FollowBase {
  private statements: FollowStatements | null = null;

  constructor(
    private readonly db: Db,
    private readonly committer: BlockCommitter,
    private readonly ids: Interner,
    /** Runs one write of the store (file checks, the memo cleared). */
    private readonly write: <T>(f: () => T) => T,
  ) {}

  private follow(): FollowStatements {
    this.statements ??= prepareFollowStatements(this.db);
    return this.statements;
  }

  async getBaseRecord(what: string): Promise<bigint | null> {
    return this.follow().record.get(what)?.version ?? null;
  }

  async writeBaseState(w: BaseStateWrite): Promise<void> {
    const f = this.follow();
    this.write(() =>
      this.ids.interning(() =>
        this.db.transaction(() => {
          if (f.insertRecord.run(w.what, w.fetchedAt).changes === 0) return;
          this.committer.insertState(prepareState(w));
        })(),
      ),
    );
  }

  async newestStateVersion(key: StateKeyRef, upTo: bigint): Promise<bigint | null> {
    const f = this.follow();
    const row =
      key.kind === "table_item"
        ? f.newestTableItem.get(key.handle, key.key, versionParam(upTo))
        : f.newestResource.get(key.address, key.type, versionParam(upTo));
    return row?.v ?? null;
  }
}
