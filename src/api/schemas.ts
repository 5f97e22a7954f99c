/**
 * Named schemas shared by the routes. They become `components.schemas` of the generated OpenAPI
 * document, under the same names as the reference node's (MoveModuleBytecode, GasEstimation, …).
 */
import { errorSchema } from "./http/apiError.js";

/**
 * The OpenAPI formats these schemas name for documentation only: ajv (validation) and
 * fast-json-stringify (serialization) accept any value for them; validation is by type and pattern.
 */
export const DOC_FORMATS: Readonly<Record<string, true>> = Object.fromEntries(
  ["hex", "uint8", "uint16", "uint32", "uint64", "binary"].map((f) => [f, true]),
);

const ability = { type: "string", enum: ["copy", "drop", "store", "key"] } as const;
const genericParam = {
  type: "object",
  required: ["constraints"],
  properties: { constraints: { type: "array", items: ability } },
} as const;
const field = {
  type: "object",
  required: ["name", "type"],
  properties: { name: { type: "string" }, type: { type: "string", description: "A Move type tag" } },
} as const;

/** The body of raw_item. */
export const rawTableItemRequest = {
  $id: "RawTableItemRequest",
  type: "object",
  description: "Table Item request for the GetTableItemRaw API",
  required: ["key"],
  properties: { key: { type: "string", format: "hex", description: "The BCS-serialized table key, hex encoded" } },
} as const;

/** The body of the table item read: the key as JSON, and the Move types of the key and the value. */
export const tableItemRequest = {
  $id: "TableItemRequest",
  type: "object",
  description: "Table Item request for the GetTableItem API",
  required: ["key_type", "value_type", "key"],
  properties: {
    key_type: { type: "string", description: "The Move type of the table's keys, e.g. `address` or `0x1::string::String`" },
    value_type: { type: "string", description: "The Move type of the table's values, e.g. `u128`" },
    key: { description: "The key as JSON, as the node writes a Move value of the key type" },
  },
} as const;

/** `MoveModule`: the ABI of a module (its functions and structs are shared schemas). */
export const moveModule = {
  $id: "MoveModule",
  type: "object",
  description: "A Move module (ABI)",
  required: ["address", "name", "friends", "exposed_functions", "structs"],
  properties: {
    address: { type: "string", format: "hex" },
    name: { type: "string" },
    friends: { type: "array", items: { type: "string" }, description: "Friends of the module" },
    exposed_functions: { type: "array", items: { $ref: "MoveFunction#" }, description: "Public functions of the module" },
    structs: { type: "array", items: { $ref: "MoveStruct#" }, description: "Structs of the module" },
  },
} as const;

export const moveModuleBytecode = {
  $id: "MoveModuleBytecode",
  type: "object",
  description: "Move module bytecode along with its ABI",
  required: ["bytecode", "abi"],
  properties: {
    bytecode: { type: "string", format: "hex", description: "All bytes (Vec<u8>) data is represented as hex-encoded string prefixed with `0x`" },
    abi: { anyOf: [{ $ref: "MoveModule#" }, { type: "null" }] },
  },
} as const;

/** `MoveResource`: a resource's type and its value as JSON. */
export const moveResource = {
  $id: "MoveResource",
  type: "object",
  description: "A parsed Move resource",
  required: ["type", "data"],
  properties: {
    type: { type: "string", description: "String representation of a MoveStructTag, e.g. `0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>`" },
    data: { type: "object", additionalProperties: true, description: "The resource's top level fields by name, as JSON" },
  },
} as const;

/** `AccountData`: an account's sequence number and authentication key. */
export const accountData = {
  $id: "AccountData",
  type: "object",
  description: "Account data: a simplified version of the onchain Account resource",
  required: ["sequence_number", "authentication_key"],
  properties: {
    sequence_number: { type: "string", format: "uint64", description: "Next sequence number of the account" },
    authentication_key: { type: "string", format: "hex", description: "Authentication key of the account" },
  },
} as const;

/**
 * A committed transaction as the reference's REST JSON prints it, one of its variants tagged by
 * `type`: served as the source gave it (docs/decisions.md §20), so described, not serialized, here.
 */
export const transaction = {
  $id: "Transaction",
  type: "object",
  description:
    "A committed transaction, tagged by `type` (`user_transaction`, `block_metadata_transaction`, `genesis_transaction`, " +
    "`state_checkpoint_transaction`, `block_epilogue_transaction`, `validator_transaction`), as the node it was ingested from printed it",
  required: ["type"],
  properties: {
    type: { type: "string", description: "The variant of the transaction" },
    version: { type: "string", format: "uint64", description: "Ledger version of the transaction" },
    hash: { type: "string", format: "hex", description: "Hash of the transaction" },
  },
  additionalProperties: true,
} as const;

/** `VersionedEvent`: an event of an event handle with its transaction's version (docs/decisions.md §22). */
export const versionedEvent = {
  $id: "VersionedEvent",
  type: "object",
  description: "An event from a transaction with a version",
  required: ["version", "guid", "sequence_number", "type", "data"],
  properties: {
    version: { type: "string", format: "uint64", description: "Ledger version of the transaction that emitted it" },
    guid: {
      type: "object",
      description: "The globally unique identifier of the event stream: the account and the creation number of its event handle",
      required: ["creation_number", "account_address"],
      properties: {
        creation_number: { type: "string", format: "uint64" },
        account_address: { $ref: "Address#" },
      },
    },
    sequence_number: { type: "string", format: "uint64", description: "The sequence number of the event in its stream" },
    type: { type: "string", description: "String representation of the event's Move type" },
    data: { description: "The JSON representation of the event" },
  },
} as const;

/** A block: its height, hash, timestamp and versions, and its transactions when asked for (else null). */
export const block = {
  $id: "Block",
  type: "object",
  description: "A Block with or without transactions",
  required: ["block_height", "block_hash", "block_timestamp", "first_version", "last_version"],
  properties: {
    block_height: { type: "string", format: "uint64" },
    block_hash: { type: "string", format: "hex" },
    block_timestamp: { type: "string", format: "uint64" },
    first_version: { type: "string", format: "uint64" },
    last_version: { type: "string", format: "uint64" },
    transactions: { type: ["array", "null"], items: { $ref: "Transaction#" }, description: "The transactions in the block in sequential order" },
  },
} as const;

export const transactionSummary = {
  $id: "TransactionSummary",
  type: "object",
  description: "A summary of a committed transaction sent by an account",
  required: ["sender", "version", "transaction_hash", "replay_protector"],
  properties: {
    sender: { type: "string", format: "hex", description: "Sender of the transaction" },
    version: { type: "string", format: "uint64", description: "Ledger version of the transaction" },
    transaction_hash: { type: "string", format: "hex", description: "Hash of the transaction" },
    replay_protector: {
      description: "Sequence number or nonce, tagged by `type`",
      oneOf: [
        {
          type: "object",
          required: ["type", "sequence_number"],
          properties: { type: { type: "string", enum: ["sequence_number"] }, sequence_number: { type: "string", format: "uint64" } },
        },
        {
          type: "object",
          required: ["type", "nonce"],
          properties: { type: { type: "string", enum: ["nonce"] }, nonce: { type: "string", format: "uint64" } },
        },
      ],
    },
  },
} as const;

export const gasEstimation = {
  $id: "GasEstimation",
  type: "object",
  description: "Struct holding the outputs of the estimate gas API",
  required: ["deprioritized_gas_estimate", "gas_estimate", "prioritized_gas_estimate"],
  properties: {
    deprioritized_gas_estimate: { type: "integer", format: "uint64", description: "The deprioritized estimate for the gas unit price" },
    gas_estimate: { type: "integer", format: "uint64", description: "The current estimate for the gas unit price" },
    prioritized_gas_estimate: { type: "integer", format: "uint64", description: "The prioritized estimate for the gas unit price" },
  },
} as const;

export const sharedSchemas = [
  errorSchema,
  {
    $id: "Address",
    type: "string",
    format: "hex",
    description:
      "A hex encoded 32 byte account address: 0x and 1 to 64 hex digits (leading zeros may be left out), or 64 hex digits without 0x. " +
      "Printed with leading zeros stripped, e.g. 0x1.",
  },
  {
    $id: "MoveStructTag",
    type: "string",
    description: "A Move struct tag, `address::module::Name<TypeArgs>`, e.g. `0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>`",
  },
  {
    $id: "IdentifierWrapper",
    type: "string",
    description: "A Move identifier, e.g. the name of a module",
  },
  {
    $id: "U64",
    type: "string",
    format: "uint64",
    // Validation happens here, so a bad value is refused before the handler with the parse error.
    pattern: "^[0-9]{1,20}$",
    description: "A 64-bit unsigned integer as a decimal string",
  },
  {
    $id: "HashValue",
    type: "string",
    description: "A 32-byte hash as 64 hex digits, with or without a 0x prefix",
  },
  {
    $id: "StateKeyWrapper",
    type: "string",
    pattern: "^(0x)?[0-9a-fA-F]{2,1024}$",
    description: "A state key as hex, used only as a pagination cursor",
  },
  {
    $id: "MoveFunction",
    type: "object",
    description: "Move function",
    required: ["name", "visibility", "is_entry", "is_view", "generic_type_params", "params", "return"],
    properties: {
      name: { type: "string" },
      visibility: { type: "string", enum: ["private", "public", "friend"] },
      is_entry: { type: "boolean", description: "Whether the function can be called as an entry function directly in a transaction" },
      is_view: { type: "boolean", description: "Whether the function is a view function or not" },
      generic_type_params: { type: "array", items: genericParam, description: "Generic type params associated with the Move function" },
      params: { type: "array", items: { type: "string" }, description: "Parameters associated with the move function" },
      return: { type: "array", items: { type: "string" }, description: "Return type of the function" },
    },
  },
  {
    $id: "MoveStruct",
    type: "object",
    description: "A move struct",
    required: ["name", "is_native", "is_event", "is_enum", "abilities", "generic_type_params", "fields", "variants"],
    properties: {
      name: { type: "string" },
      is_native: { type: "boolean", description: "Whether the struct is a native struct of Move" },
      is_event: { type: "boolean", description: "Whether the struct is marked with the #[event] annotation" },
      is_enum: { type: "boolean", description: "Whether the struct is an enum" },
      abilities: { type: "array", items: ability },
      generic_type_params: { type: "array", items: genericParam },
      fields: { type: "array", items: field },
      variants: {
        type: "array",
        items: { type: "object", required: ["name", "fields"], properties: { name: { type: "string" }, fields: { type: "array", items: field } } },
      },
    },
  },
  moveModule,
  moveModuleBytecode,
  moveResource,
  accountData,
  transactionSummary,
  transaction,
  versionedEvent,
  block,
  gasEstimation,
  rawTableItemRequest,
  tableItemRequest,
] as const;

