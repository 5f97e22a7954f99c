import { describe, expect, it } from "vitest";
import { ApiError } from "../../http/apiError.js";
import { tableItemTypes, typeText } from "./request.js";

const refusal = (k: string, v: string) => {
  try {
    tableItemTypes(k, v);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    const err = e as ApiError;
    expect(err.status).toBe(400);
    expect(err.errorCode).toBe("invalid_input");
    expect(err.ledger).toBeNull();
    return err.message;
  }
  throw new Error("accepted");
};

describe("the request's key and value types", () => {
  it("parses type tags in any spelling the reference's parser takes", () => {
    const t = tableItemTypes("0x01::coin::CoinStore< 0x1::aptos_coin::AptosCoin >", "vector<u8>");
    expect(typeText(t.key)).toBe("0x1::coin::CoinStore<0x1::aptos_coin::AptosCoin>");
    expect(typeText(t.value)).toBe("vector<u8>");
    expect(typeText(tableItemTypes("0x1::m::P<u8,address>", "i64").key)).toBe("0x1::m::P<u8, address>");
  });

  it("refuses types that do not parse, nest too deep, or are references, in the reference's words and order", () => {
    expect(refusal("foo", "u8")).toBe("'table_item_request' invalid: Unable to parse move type foo");
    expect(refusal("u8", "T0")).toBe("'table_item_request' invalid: Unable to parse move type T0");
    expect(refusal("0xzz::m::S", "u8")).toBe("'table_item_request' invalid: Unable to parse move type 0xzz::m::S");
    expect(refusal(`${"vector<".repeat(9)}u8${">".repeat(9)}`, "u8")).toBe("'table_item_request' invalid: Move type u8 has gone over the limit of recursive types 8");
    expect(refusal("0x1::m::S<0x1::m::S<0x1::m::S<0x1::m::S<0x1::m::S<u8>>>>>", "u8")).toMatch(
      /^'table_item_request' invalid: Invalid struct tag for generic type params: 0x1::m::S<.*has gone over the limit of recursive types 8$/,
    );
    expect(refusal("0x1::1m::S", "u8")).toBe("'table_item_request' invalid: invalid struct tag: 0x1::1m::S");
    // both are verified before either is made a type tag
    expect(refusal("&u8", "nope")).toBe("'table_item_request' invalid: Unable to parse move type nope");
    expect(refusal("&u8", "u8")).toBe("Failed to parse key_type: Invalid move type for converting into `TypeTag`: Reference { mutable: false, to: U8 }");
    expect(refusal("u8", "&mut vector<u8>")).toBe(
      "Failed to parse value_type: Invalid move type for converting into `TypeTag`: Reference { mutable: true, to: Vector { items: U8 } }",
    );
    // text nested past any type's depth is not parsed at all
    expect(refusal(`${"vector<".repeat(100000)}u8${">".repeat(100000)}`, "u8")).toMatch(/^'table_item_request' invalid: Unable to parse move type vector<vector</);
  });
});
