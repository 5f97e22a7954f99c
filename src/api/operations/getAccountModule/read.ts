/**
 * The read of the single-module operation: the module's newest row at the version with its code,
 * in one snapshot with the ledger position (the name comes checked: `identifierPath`).
 */
import { formatAddress } from "../../../ledger/address.js";
import type { LedgerInfo, ModuleEntry } from "../../../ledger/types.js";
import type { NodeContext } from "../../context.js";
import { ApiError, clip } from "../../http/apiError.js";
import { withoutStack } from "../../../storage/contracts/errors.js";
import type { WireFormat } from "../../http/negotiate.js";
import type { Answer, Position } from "../../http/operation.js";

/** The reference's 404 for a module the account does not have at the version. */
export function moduleNotFound(address: Uint8Array, name: string, version: bigint, info: LedgerInfo): ApiError {
  return withoutStack(
    () => new ApiError(404, "module_not_found", `Module not found by Address(${formatAddress(address)}), Module name(${clip(name)}) and Ledger version(${version})`, info),
  );
}

/**
 * The module as an answer: JSON, its record (bytecode and ABI, the bytes the modules page sends
 * for it), read without its code when the records hold it; BCS, the bytecode itself, as the
 * reference sends the stored bytes.
 */
export async function readAccountModule(ctx: NodeContext, address: Uint8Array, name: string, at: Position, format: WireFormat): Promise<Answer> {
  const snap = await ctx.pages.readModule(address, name, at.version, format);
  if (!snap) throw ApiError.unavailable("the ledger is empty: no block has been committed yet");
  const { info, value: module } = snap;
  if (!module) return { error: moduleNotFound(address, name, at.version, info), exactAt: info };
  if (format === "json" && module.bytecode === undefined) {
    // held when the row was read; overwritten since, its code is read by hash below
    const held = ctx.pages.records.held(module.codeHash);
    if (held) return { body: held, exactAt: info };
  }
  const bytecode = module.bytecode ?? (await codeOf(ctx, module));
  if (format === "bcs") return { body: Buffer.from(bytecode.buffer, bytecode.byteOffset, bytecode.byteLength), exactAt: info };
  return { body: ctx.pages.records.record(module.codeHash, bytecode, module.abi), exactAt: info };
}

async function codeOf(ctx: NodeContext, module: ModuleEntry): Promise<Uint8Array> {
  const bytes = await ctx.store.getModuleCode(module.codeHash);
  if (!bytes) throw new Error(`module bytecode ${module.codeHash} of ${module.name} is missing from storage`);
  return bytes;
}
