/**
 * One error class with a closed set of codes (docs/decisions.md §7, §18). Every error the API sends is an
 * `ApiError` rendered as `{"message", "error_code", "vm_error_code"?}` (docs/decisions.md §7).
 */
import type { LedgerInfo } from "../../ledger/types.js";
import { withoutStack } from "../../storage/contracts/errors.js";

/** The closed list of `error_code` values (docs/decisions.md §7). Adding one breaks old clients: don't. */
export const ERROR_CODES = [
  "account_not_found",
  "resource_not_found",
  "module_not_found",
  "struct_field_not_found",
  "version_not_found",
  "transaction_not_found",
  "table_item_not_found",
  "block_not_found",
  "state_value_not_found",
  "version_pruned",
  "block_pruned",
  "invalid_input",
  "invalid_transaction_update",
  "sequence_number_too_old",
  "vm_error",
  "rejected_by_filter",
  "health_check_failed",
  "mempool_is_full",
  "internal_error",
  "web_framework_error",
  "bcs_not_supported",
  "api_disabled",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** How much of a bad value an error message quotes. */
export const QUOTE_MAX = 100;
/**
 * A message as a whole is cut here: a guard for any message that quotes a value without `clip`
 * (a 7.9 MB table key was once echoed whole); the messages we write are a few hundred characters.
 */
const MESSAGE_MAX = 1024;

/** At most `max` characters of `text`, with an ellipsis when cut. */
export function clip(text: string, max = QUOTE_MAX): string {
  return text.length > max ? text.slice(0, max) + "…" : text;
}

/** A bad value as a message quotes it: JSON string syntax, clipped. */
export function quote(value: unknown): string {
  return JSON.stringify(clip(typeof value === "string" ? value : String(value)));
}


export interface ApiErrorBody {
  message: string;
  error_code: ErrorCode;
  vm_error_code?: number;
  hint?: string;
  oldest_ledger_version?: string;
  archival_endpoint?: string;
}

/** The `hint` of a 410 that names an archival endpoint, in the words of Aptos's own gateway (docs/decisions.md §19). */
export const ARCHIVAL_HINT =
  "The requested data has been pruned from this node. Retry your request against the archival endpoint to access full history.";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: ErrorCode,
    message: string,
    /** Ledger position to send as headers; null when the ledger could not be read. */
    readonly ledger: LedgerInfo | null = null,
    options?: { cause?: unknown; vmErrorCode?: number; fault?: boolean; headers?: readonly string[] },
  ) {
    super(clip(message, MESSAGE_MAX), options);
    this.name = "ApiError";
    this.vmErrorCode = options?.vmErrorCode;
    this.fault = options?.fault ?? (status >= 500 && (status < 502 || status > 504));
    this.headers = options?.headers;
  }
  readonly vmErrorCode: number | undefined;
  /**
   * The node's own failure (a bug, the store failing), logged at error with its cause's stack; by
   * default every 5xx but the 502–504 of an upstream or a state this node waits for (`ErrorLog`).
   */
  readonly fault: boolean;
  /** Headers of the answer, a flat list of names and values (`Retry-After` of a 429). */
  readonly headers: readonly string[] | undefined;

  /**
   * The error object. A 410 with an archival endpoint set (`ApiConfig.archivalEndpoint`) adds the
   * hint, the oldest version kept (`ledger`'s, when read) and the endpoint (docs/decisions.md §19).
   */
  body(archivalEndpoint: string | null = null, ledger: LedgerInfo | null = null): ApiErrorBody {
    const b: ApiErrorBody = { message: this.message, error_code: this.errorCode };
    if (this.vmErrorCode !== undefined) b.vm_error_code = this.vmErrorCode;
    if (archivalEndpoint !== null && this.status === 410) {
      b.hint = ARCHIVAL_HINT;
      if (ledger) b.oldest_ledger_version = String(ledger.oldestVersion);
      b.archival_endpoint = archivalEndpoint;
    }
    return b;
  }

  // The 4xx below are answers to what was asked, made without a stack trace (`withoutStack`).

  /** 400 for a path, query or body that does not parse (docs/decisions.md §2). */
  static badParam(message: string, ledger: LedgerInfo | null = null): ApiError {
    return withoutStack(() => new ApiError(400, "web_framework_error", message, ledger));
  }
  /** 400 for a value that parses but is semantically wrong. */
  static invalidInput(message: string, ledger: LedgerInfo | null): ApiError {
    return withoutStack(() => new ApiError(400, "invalid_input", message, ledger));
  }
  static versionNotFound(version: bigint, ledger: LedgerInfo): ApiError {
    return withoutStack(() => new ApiError(404, "version_not_found", `Ledger version not found by Ledger version(${version})`, ledger));
  }
  static versionPruned(version: bigint, ledger: LedgerInfo | null, cause?: unknown): ApiError {
    return withoutStack(() => new ApiError(410, "version_pruned", `Ledger version(${version}) has been pruned`, ledger, { cause }));
  }
  /** 406 for BCS asked of what this node holds as JSON only (a resource's value, a transaction). */
  static bcsNotSupported(what: string, ledger: LedgerInfo | null, held = "resource values"): ApiError {
    return withoutStack(
      () =>
        new ApiError(
          406,
          "bcs_not_supported",
          `${what} is not available as BCS from this node: it holds ${held} as JSON only (ask with Accept: application/json)`,
          ledger,
        ),
    );
  }
  /**
   * A base-state fetch refused by the fairness bound (docs/following.md, "The replica's base state, decided"):
   * 429 when the client is over its share, 503 when the node's fetches are all in use; both with
   * `Retry-After`, as a rate limiter answers.
   */
  static fetchRefused(scope: "client" | "node", message: string, retryAfterSec: number): ApiError {
    const options = { headers: ["retry-after", String(retryAfterSec)] };
    return withoutStack(() =>
      scope === "client" ? new ApiError(429, "web_framework_error", message, null, options) : new ApiError(503, "internal_error", message, null, options),
    );
  }
  /** 503 for what the node cannot answer yet (an empty ledger, an upstream that could not give state). */
  static unavailable(message: string, cause?: unknown): ApiError {
    return new ApiError(503, "internal_error", message, null, { cause });
  }
  /** 503 for a store that cannot be read: the node's own fault, unlike `unavailable`. */
  static storageUnavailable(message: string, cause: unknown): ApiError {
    return new ApiError(503, "internal_error", message, null, { cause, fault: true });
  }
  static internal(message: string, ledger: LedgerInfo | null, cause?: unknown): ApiError {
    return new ApiError(500, "internal_error", message, ledger, { cause });
  }
}

/** The JSON schema of the error object, shared by every route's error responses. */
export const errorSchema = {
  $id: "AptosError",
  type: "object",
  description: "The error object of every error response.",
  required: ["message", "error_code"],
  properties: {
    message: { type: "string", description: "A message describing the error" },
    error_code: { type: "string", enum: [...ERROR_CODES] },
    vm_error_code: { type: "integer", format: "uint64", description: "A code providing VM error details when submitting transactions to the VM" },
    hint: { type: "string", description: "On a 410 with an archival endpoint: what to do instead" },
    oldest_ledger_version: { type: "string", format: "uint64", description: "On a 410 with an archival endpoint: the oldest version this node keeps" },
    archival_endpoint: {
      type: "string",
      description: "On a 410, where the pruned history and state can be read instead (the node's --archival-endpoint), when the operator set one",
    },
  },
} as const;
