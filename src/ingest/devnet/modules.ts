/**
 * The devnet's modules, built by the module builder (no hand-typed bytecode): a few
 * framework-like modules at 0x1 and an app module at the devnet's app address that is upgraded
 * from time to time (each upgrade adds a function, so old versions serve the old ABI).
 */
import { buildModule, type FunctionDesc, type ModuleDesc } from "../../move/builder.js";

const FRAMEWORK: ModuleDesc[] = [
  {
    address: "0x1",
    name: "string",
    structs: [{ name: "String", abilities: ["copy", "drop", "store"], fields: [{ name: "bytes", type: "vector<u8>" }] }],
    functions: [
      { name: "utf8", params: ["vector<u8>"], returns: ["0x1::string::String"] },
      { name: "length", params: ["&0x1::string::String"], returns: ["u64"] },
      { name: "bytes", params: ["&0x1::string::String"], returns: ["&vector<u8>"] },
    ],
  },
  {
    address: "0x1",
    name: "option",
    structs: [
      {
        name: "Option",
        abilities: ["copy", "drop", "store"],
        typeParams: [{}],
        fields: [{ name: "vec", type: "vector<T0>" }],
      },
    ],
    functions: [
      { name: "none", typeParams: [{}], returns: ["0x1::option::Option<T0>"] },
      { name: "some", typeParams: [{}], params: ["T0"], returns: ["0x1::option::Option<T0>"] },
      { name: "is_some", typeParams: [{}], params: ["&0x1::option::Option<T0>"], returns: ["bool"] },
    ],
  },
  {
    address: "0x1",
    name: "account",
    friends: ["0x1::aptos_account"],
    structs: [
      {
        name: "Account",
        abilities: ["key", "store"],
        fields: [
          { name: "authentication_key", type: "vector<u8>" },
          { name: "sequence_number", type: "u64" },
          { name: "guid_creation_num", type: "u64" },
        ],
      },
      {
        name: "KeyRotation",
        abilities: ["drop", "store"],
        event: true,
        fields: [
          { name: "account", type: "address" },
          { name: "old_authentication_key", type: "vector<u8>" },
          { name: "new_authentication_key", type: "vector<u8>" },
        ],
      },
    ],
    functions: [
      { name: "create_account", visibility: "friend", params: ["address"], returns: ["signer"] },
      { name: "exists_at", view: true, params: ["address"], returns: ["bool"] },
      { name: "get_sequence_number", view: true, params: ["address"], returns: ["u64"] },
      { name: "rotate_authentication_key", entry: true, visibility: "private", params: ["&signer", "u8", "vector<u8>"] },
    ],
  },
  {
    address: "0x1",
    name: "aptos_account",
    functions: [
      { name: "transfer", entry: true, params: ["&signer", "address", "u64"] },
      {
        name: "transfer_coins",
        entry: true,
        typeParams: [{}],
        params: ["&signer", "address", "u64"],
      },
      { name: "batch_transfer", entry: true, params: ["&signer", "vector<address>", "vector<u64>"] },
    ],
  },
  {
    address: "0x1",
    name: "table",
    structs: [
      {
        name: "Table",
        abilities: ["store"],
        typeParams: [{ constraints: ["copy", "drop"], phantom: true }, { phantom: true }],
        fields: [{ name: "handle", type: "address" }],
      },
      { name: "Box", abilities: ["drop", "store", "key"], typeParams: [{}], fields: [{ name: "val", type: "T0" }] },
    ],
    functions: [
      {
        name: "contains",
        typeParams: [{ constraints: ["copy", "drop"] }, {}],
        params: ["&0x1::table::Table<T0, T1>", "T0"],
        returns: ["bool"],
      },
      {
        name: "borrow_mut",
        typeParams: [{ constraints: ["copy", "drop"] }, {}],
        params: ["&mut 0x1::table::Table<T0, T1>", "T0"],
        returns: ["&mut T1"],
      },
    ],
  },
];

/** The framework modules written at genesis (bytecode v6). */
export function frameworkModules(): Uint8Array[] {
  return FRAMEWORK.map((d) => buildModule(d, { version: 6 }));
}

/** The app module `registry` at its `upgrade`-th version (v7: it has an enum). */
export function appModuleBytecode(upgrade: number): Uint8Array {
  const functions: FunctionDesc[] = [
    { name: "set", entry: true, params: ["&signer", "u64", "u64"] },
    { name: "remove", entry: true, params: ["&signer", "u64"] },
    { name: "get", view: true, params: ["u64"], returns: ["0x1::option::Option<u64>"] },
  ];
  for (let i = 1; i <= upgrade && i <= 50; i++) {
    functions.push({ name: `feature_${i}`, view: true, returns: ["u64"] });
  }
  return buildModule(
    {
      address: "0xa11ce",
      name: "registry",
      structs: [
        {
          name: "Registry",
          abilities: ["key"],
          fields: [
            { name: "items", type: "0x1::table::Table<u64, u64>" },
            { name: "owner", type: "address" },
          ],
        },
        {
          name: "Status",
          abilities: ["copy", "drop", "store"],
          variants: [{ name: "Active" }, { name: "Retired", fields: [{ name: "at_version", type: "u64" }] }],
        },
        { name: "ItemSet", abilities: ["drop", "store"], event: true, fields: [{ name: "key", type: "u64" }, { name: "value", type: "u64" }] },
      ],
      functions,
    },
    { version: 7 },
  );
}
