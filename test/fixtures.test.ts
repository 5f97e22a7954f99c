/**
 * The repository's own copy of the reference data (`test/fixtures/`): the prose strip keeps
 * schemas whole, and the committed OpenAPI copy is what the strip makes.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stripProse } from "./fixtures/strip-openapi.js";
import { FIXTURES } from "./helpers/fixtures.js";

type Json = Record<string, any>;

describe("stripProse", () => {
  const doc = {
    openapi: "3.0.0",
    info: { title: "T", description: "prose", version: "1.2.0", contact: { name: "x" }, license: { name: "Apache 2.0" } },
    externalDocs: { url: "https://example.invalid" },
    tags: [{ name: "Accounts", description: "prose" }],
    paths: {
      "/a": { get: { summary: "prose", description: "prose", operationId: "a", responses: { "200": { description: "OK" } } } },
    },
    components: {
      schemas: {
        description: { type: "string", description: "a schema named description" },
        Thing: {
          type: "object",
          description: "prose",
          required: ["description", "summary"],
          properties: {
            description: { type: "string", description: "prose about the property" },
            summary: { $ref: "#/components/schemas/description" },
          },
          discriminator: { propertyName: "summary", mapping: { summary: "#/components/schemas/description" } },
        },
      },
    },
  };

  it("drops prose strings, externalDocs and info extras; keeps names, properties and mappings", () => {
    expect(stripProse(doc)).toEqual({
      openapi: "3.0.0",
      info: { title: "T", version: "1.2.0", license: { name: "Apache 2.0" } },
      tags: [{ name: "Accounts" }],
      paths: { "/a": { get: { operationId: "a", responses: { "200": {} } } } },
      components: {
        schemas: {
          description: { type: "string" },
          Thing: {
            type: "object",
            required: ["description", "summary"],
            properties: { description: { type: "string" }, summary: { $ref: "#/components/schemas/description" } },
            discriminator: { propertyName: "summary", mapping: { summary: "#/components/schemas/description" } },
          },
        },
      },
    });
  });
});

describe("test/fixtures", () => {
  const spec = JSON.parse(readFileSync(`${FIXTURES}aptos-openapi-spec.json`, "utf8")) as Json;

  it("the OpenAPI copy is already stripped and still has the schemas the conformance test checks", () => {
    expect(stripProse(spec)).toEqual(spec);
    const schemas = spec.components.schemas as Json;
    for (const s of ["TransactionSummary", "MoveModuleBytecode", "MoveModule", "MoveFunction", "MoveStruct", "GasEstimation", "AptosError", "RawTableItemRequest"]) {
      expect(schemas[s], s).toBeTypeOf("object");
    }
    expect(Object.keys(spec.paths).length).toBeGreaterThan(20);
    expect(schemas.AptosError.required).toEqual(expect.arrayContaining(["message", "error_code"]));
  });

  it("holds the genesis transaction, the v9 module and the goldens", () => {
    const [genesis] = JSON.parse(readFileSync(`${FIXTURES}genesis_transaction.json`, "utf8")) as Json[];
    expect(genesis!.type).toBe("genesis_transaction");
    expect(genesis!.changes.filter((c: Json) => c.type === "write_module")).toHaveLength(63);
    expect(JSON.parse(readFileSync(`${FIXTURES}modules/0x1_guid_bytecode_v9.json`, "utf8")).abi.name).toBe("guid");
    expect(readdirSync(`${FIXTURES}goldens`).filter((f) => f.endsWith(".json")).length).toBeGreaterThanOrEqual(11);
  });
});
