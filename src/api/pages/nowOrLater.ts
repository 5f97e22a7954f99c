import type { ImmediateReads } from "../../storage/contracts/pageReads.js";

/**
 * A value now or later: what version resolution passes on when the store may answer in the
 * calling turn (`PageReads.immediate`). Only the handler, the context's position reads and the
 * page strategy (`Pages`) chain such values (`after`, `guard`); an operation's code is plain
 * values or plain async.
 */
export type NowOrLater<T> = T | Promise<T>;

/**
 * The store's reads that fix a ledger position, as the store answers them: at once (SQLite) or
 * through a promise. An operation's `resolve` only passes the answer on.
 */
export type PositionReads = {
  [K in keyof ImmediateReads]: (...args: Parameters<ImmediateReads[K]>) => NowOrLater<ReturnType<ImmediateReads[K]>>;
};

/** `next(value)` at once when the value is here, else when it resolves; a throw stays a throw. */
export function after<T, U>(value: NowOrLater<T>, next: (v: T) => NowOrLater<U>): NowOrLater<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** `next()`, with a throw or a rejection of it mapped by `failed` (which throws). */
export function guard<T>(next: () => NowOrLater<T>, failed: (e: unknown) => never): NowOrLater<T> {
  let value: NowOrLater<T>;
  try {
    value = next();
  } catch (e) {
    failed(e);
  }
  return value instanceof Promise ? value.catch(failed) : value;
}
