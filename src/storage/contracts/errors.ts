/**
 * Storage failures, each with a typed `kind` the API maps to a status without reading message text:
 * - `unavailable`: the database cannot be reached or refused the work (503);
 * - `corrupt`: the database is damaged (500, and /-/healthy says so until a restart);
 * - `pruned`: the state a read needs at a version in the window is gone (410);
 * - `before-base`: a replica started at a chain's head holds no state for the key before its first
 *   synced block (the caller may fetch it and read again);
 * - `upstream-unavailable`: the upstream a replica fetches that state from could not give it (503,
 *   but not a database fault: `/-/healthy` and the database-error metric do not count it);
 * - `standby`: a write (or a writer starting) on a database that is a read-only hot standby;
 * - `recovery-conflict`: a hot standby cancelled a read because it replayed a change under it (a
 *   prune on the primary); the store retries the read, and only a read that keeps being cancelled
 *   fails so (503, not a database fault).
 * Each dialect maps its driver's errors to these kinds by error code (`errorKind` of the reader).
 */
export type StorageErrorKind = "unavailable" | "corrupt" | "pruned" | "before-base" | "upstream-unavailable" | "standby" | "recovery-conflict";

export class StorageError extends Error {
  constructor(
    readonly kind: StorageErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "StorageError";
  }
}

/** The store could not be reached or failed (503 at the API edge). */
export class StorageUnavailableError extends StorageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("unavailable", message, options);
    this.name = "StorageUnavailableError";
  }
}

/** The database is damaged, or the file is not a database of this kind. */
export class StorageCorruptError extends StorageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("corrupt", message, options);
    this.name = "StorageCorruptError";
  }
}

/**
 * The state a read asked for at `version` cannot be answered exactly, though the version is in the
 * ledger's window: the history it needs is gone (a follower's upstream pruned it). Maps to 410.
 */
export class StatePrunedError extends StorageError {
  constructor(
    readonly version: bigint,
    message: string,
  ) {
    super("pruned", message);
    this.name = "StatePrunedError";
  }
}

/** What a replica's base miss names: the state a read needed that no synced block wrote. */
export type BaseStateKey =
  | { kind: "modules"; address: Uint8Array }
  | { kind: "resources"; address: Uint8Array }
  | { kind: "table_item"; handle: Uint8Array; key: Uint8Array }
  | { kind: "resource"; address: Uint8Array; type: string };

/**
 * A read of state at `version`, on a ledger started at a chain's head, for a key no synced block
 * wrote and whose base state was never fetched: the store cannot say whether it is absent. A
 * base-state service fetches `missing` from the upstream as of `base` (the version just before the
 * first synced block), stores it and runs the read again.
 */
export class StateBeforeBaseError extends StorageError {
  constructor(
    readonly missing: BaseStateKey,
    readonly version: bigint,
    readonly base: bigint,
    message: string,
  ) {
    super("before-base", message);
    this.name = "StateBeforeBaseError";
  }
}

/**
 * The upstream could not be reached or kept failing (network, 5xx, 429, an answer that is not its
 * own) past the attempts or the deadline: the follower retries; a read waiting on it answers 503.
 */
export class UpstreamUnavailableError extends StorageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("upstream-unavailable", message, options);
    this.name = "UpstreamUnavailableError";
  }
}

/**
 * A base-state fetch refused before anything was asked of the upstream: the client that needed it
 * is over its share (`client`: 429 at the API) or the node's fetches at once are all in use
 * (`node`: 503). `retryAfterSec`: when asking again may be admitted. Not a storage failure.
 */
export class FetchRefusedError extends Error {
  constructor(
    readonly scope: "client" | "node",
    readonly retryAfterSec: number,
    message: string,
  ) {
    super(message);
    this.name = "FetchRefusedError";
  }
}

/**
 * The database is a hot standby (in recovery, read-only): `what` writes and must run against the
 * primary. Thrown before anything is written.
 */
export class StandbyWriteError extends StorageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("standby", message, options);
    this.name = "StandbyWriteError";
  }
}

/**
 * A read a hot standby kept cancelling because it replayed the primary's changes (a prune) under
 * it, after the store's bounded retries (503: the next attempt is likely to succeed).
 */
export class RecoveryConflictError extends StorageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("recovery-conflict", message, options);
    this.name = "RecoveryConflictError";
  }
}

/** The kind of a failure already typed by a dialect, or null for an error no dialect classified. */
export function typedKind(e: unknown): StorageErrorKind | null {
  return e instanceof StorageError ? e.kind : null;
}

/**
 * An error made without capturing a stack trace: for the errors that are answers, not faults (a
 * missing key, a pruned or future version, a bad parameter). The trace of a request's deep async
 * stack was a large part of what such a 404 cost.
 */
export function withoutStack<E extends Error>(make: () => E): E {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
