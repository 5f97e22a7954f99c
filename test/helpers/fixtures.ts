/**
 * The reference data the tests and benches read: `test/fixtures/` in this repository (real Aptos
 * node output and its OpenAPI document, see `test/fixtures/strip-openapi.ts`), so a clone needs
 * nothing beside it. Ends with a slash.
 */
export const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;
