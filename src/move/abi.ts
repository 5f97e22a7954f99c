/**
 * The module ABI exactly as the Aptos node prints it (`MoveModule`, api/types `move_types.rs` and
 * `bytecode.rs`), with the current node's enum support (`is_enum`, `variants`) and `to_hex_literal`
 * addresses (docs/decisions.md §6). Key order of every object is the node's.
 */

import { formatAddress } from "../ledger/address.js";
import { decodeModule } from "./decoder.js";
import { moduleAttributes } from "./metadata.js";
import { typeString } from "./typeString.js";
import type { CompiledModule, FieldDef } from "./types.js";

/** `"copy" | "drop" | "store" | "key"`. */
export type MoveAbility = "copy" | "drop" | "store" | "key";

/** `MoveFunction`. */
export interface MoveFunctionAbi {
  name: string;
  visibility: "private" | "public" | "friend";
  is_entry: boolean;
  is_view: boolean;
  generic_type_params: { constraints: MoveAbility[] }[];
  params: string[];
  return: string[];
}

/** `MoveStructField`. */
export interface MoveStructFieldAbi {
  name: string;
  type: string;
}

/** `MoveStruct` (poem form: struct type parameters carry no `is_phantom`). */
export interface MoveStructAbi {
  name: string;
  is_native: boolean;
  is_event: boolean;
  is_enum: boolean;
  abilities: MoveAbility[];
  generic_type_params: { constraints: MoveAbility[] }[];
  fields: MoveStructFieldAbi[];
  variants: { name: string; fields: MoveStructFieldAbi[] }[];
}

/** `MoveModule`. */
export interface MoveModuleAbi {
  address: string;
  name: string;
  friends: string[];
  exposed_functions: MoveFunctionAbi[];
  structs: MoveStructAbi[];
}

/**
 * The ABI of a module, as `GET /v1/accounts/{address}/modules` shows it.
 *
 * @example
 * ```ts
 * const abi = moduleAbi(bytecode); // null when the node would print "abi": null
 * ```
 * @param bytecode - module bytes.
 * @returns the ABI, or `null` when the bytes are not a module the node's deserializer accepts.
 *   Never throws; time and memory are linear in the input.
 */
export function moduleAbi(bytecode: Uint8Array): MoveModuleAbi | null {
  try {
    const m = decodeModule(bytecode);
    return m ? buildAbi(m) : null;
  } catch {
    return null;
  }
}

/**
 * The ABI of a module as the JSON text the modules operation sends for `abi`: what the
 * `MoveModule` schema's serializer writes for `moduleAbi(bytecode)`, or `null`. Storage keeps it
 * beside the bytecode (computed once, when the code is written), so a read sends it as it is.
 *
 * `JSON.stringify` is that serializer's output here: every object is built with its properties in
 * the schema's order, and every value is a string, boolean or array of them (the API's
 * `moduleRecords.test.ts` checks the bytes on every module the fixtures and the devnet hold).
 *
 * @param bytecode - module bytes.
 * @returns JSON text; never throws.
 */
export function moduleAbiJson(bytecode: Uint8Array): string {
  const abi = moduleAbi(bytecode);
  return abi === null ? "null" : JSON.stringify(abi);
}

const ABILITY_NAMES: readonly MoveAbility[] = ["copy", "drop", "store", "key"];

/** Ability bits in the node's order: copy, drop, store, key. */
export function abilityList(bits: number): MoveAbility[] {
  const out: MoveAbility[] = [];
  for (let i = 0; i < 4; i++) if (bits & (1 << i)) out.push(ABILITY_NAMES[i]!);
  return out;
}

/** `From<CompiledModule> for MoveModule`. */
export function buildAbi(m: CompiledModule): MoveModuleAbi {
  const attrs = moduleAttributes(m);
  const addresses = new Map<number, string>();
  const addr = (i: number): string => {
    let s = addresses.get(i);
    if (s === undefined) {
      s = formatAddress(m.address(i));
      addresses.set(i, s);
    }
    return s;
  };
  const self = m.moduleHandles[m.selfHandle]!;
  const ty = typeString(m, addr);
  const fields = (fs: readonly FieldDef[]): MoveStructFieldAbi[] =>
    fs.map((f) => ({ name: m.identifier(f.name), type: ty(f.type) }));

  // Many handles share a signature; print each once.
  const sigStrings: (string[] | undefined)[] = [];
  const sig = (i: number): string[] => {
    let s = sigStrings[i];
    if (s === undefined) {
      s = m.signatures[i]!.map(ty);
      sigStrings[i] = s;
    }
    return s.slice();
  };

  const exposed: MoveFunctionAbi[] = [];
  for (const def of m.functionDefs) {
    // Exposed: entry, public or friend, and (current node, test_abi) private #[view] functions too.
    const h = m.functionHandles[def.handle]!;
    const name = m.identifier(h.name);
    if (!def.isEntry && def.visibility === "private" && !attrs.views.has(name)) continue;
    exposed.push({
      name,
      visibility: def.visibility,
      is_entry: def.isEntry,
      is_view: attrs.views.has(name),
      generic_type_params: h.typeParams.map((c) => ({ constraints: abilityList(c) })),
      params: sig(h.params),
      return: sig(h.returns),
    });
  }

  const structs: MoveStructAbi[] = m.structDefs.map((def) => {
    const h = m.structHandles[def.handle]!;
    const name = m.identifier(h.name);
    return {
      name,
      is_native: def.kind === "native",
      is_event: attrs.events.has(name),
      is_enum: def.kind === "variants",
      abilities: abilityList(h.abilities),
      generic_type_params: h.typeParams.map((p) => ({ constraints: abilityList(p.constraints) })),
      fields: fields(def.fields),
      variants: def.variants.map((v) => ({ name: m.identifier(v.name), fields: fields(v.fields) })),
    };
  });

  return {
    address: addr(self.address),
    name: m.identifier(self.name),
    friends: m.friends.map((f) => `${addr(f.address)}::${m.identifier(f.name)}`),
    exposed_functions: exposed,
    structs,
  };
}
