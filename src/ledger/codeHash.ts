import { createHash } from "node:crypto";

/** The length of a `codeHash`: sha256's 32 bytes as hex digits. */
export const CODE_HASH_DIGITS = 64;

/**
 * The content hash of a module's bytecode: sha256, lowercase hex. Storage keeps bytecode once per
 * hash and lists modules by it; the API's ABI cache is keyed by it.
 */
export function codeHash(bytecode: Uint8Array): string {
  return createHash("sha256").update(bytecode).digest("hex");
}
