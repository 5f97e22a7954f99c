/**
 * Interned ids of a SQLite connection: each address (or table handle) stored once in `addresses`,
 * each resource type once in `resource_types`, rows referring to them by id. The ids seen are kept
 * in memory; new ones are inserted inside the write transaction that needs them.
 */
import { memoKeyOf } from "../common/memoKeys.js";
import type { Statements } from "./statements.js";

/** Interned ids a connection keeps in memory at most, per kind (addresses, resource types). */
const INTERNED_IDS_MAX = 1_000_000;

export class Interner {
  /** Ids of addresses (by `memoKeyOf`) and resource types this connection has seen (`addressId`). */
  private readonly addressIds = new Map<string, number>();
  private readonly typeIds = new Map<string, number>();
  /** Ids of addresses by their 64 lowercase hex digits (`hexAddressId`). */
  private readonly hexAddressIds = new Map<string, number>();
  /** Ids inserted by the write transaction running now, forgotten if it fails (`interning`). */
  private readonly internedInTx: Array<[Map<string, number>, string]> = [];

  constructor(private readonly statements: Statements) {}

  /**
   * The id of an address or table handle, interned in `addresses` (inside the caller's write
   * transaction) when new. Ids are never deleted or reused once committed, so the map of this
   * connection stays right whatever other connections write; an id this connection inserted is
   * only known to be committed when its transaction is (see `interning`).
   */
  addressId(address: Uint8Array): number {
    const key = memoKeyOf(address);
    const id = this.addressIds.get(key);
    if (id !== undefined) return id;
    return this.intern(this.addressIds, key, () => this.statements.addressId.get(address), () => this.statements.insertAddress.run(address));
  }

  /**
   * `addressId` of an address given as 64 lowercase hex digits (a transaction's contract, as the
   * importer gives it), found by that text: no decoding and key building for one seen before.
   */
  hexAddressId(hex: string): number {
    const known = this.hexAddressIds.get(hex);
    if (known !== undefined) return known;
    const id = this.addressId(Buffer.from(hex, "hex"));
    if (this.hexAddressIds.size >= INTERNED_IDS_MAX) this.hexAddressIds.clear();
    this.hexAddressIds.set(hex, id);
    // Forgotten, as the id may be, when the transaction running now fails.
    this.internedInTx.push([this.hexAddressIds, hex]);
    return id;
  }

  /** The id of a resource type, interned in `resource_types` like `addressId`. */
  typeId(type: string): number {
    const id = this.typeIds.get(type);
    if (id !== undefined) return id;
    return this.intern(this.typeIds, type, () => this.statements.typeId.get(type), () => this.statements.insertType.run(type));
  }

  private intern(ids: Map<string, number>, key: string, find: () => number | undefined, insert: () => { lastInsertRowid: number | bigint }): number {
    let id = find();
    if (id === undefined) {
      id = Number(insert().lastInsertRowid);
      this.internedInTx.push([ids, key]);
    }
    // A bound on memory for a chain of many accounts: the map is refilled from the table as needed.
    if (ids.size >= INTERNED_IDS_MAX) ids.clear();
    ids.set(key, id);
    return id;
  }

  /**
   * Runs a write transaction that may intern new ids: when it fails (rolled back, or its commit
   * failed), the ids it inserted are forgotten, since another row may get them later.
   */
  interning<T>(tx: () => T): T {
    this.internedInTx.length = 0;
    try {
      return tx();
    } catch (e) {
      for (const [ids, key] of this.internedInTx) ids.delete(key);
      throw e;
    } finally {
      this.internedInTx.length = 0;
    }
  }
}
