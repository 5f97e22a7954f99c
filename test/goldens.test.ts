/**
 * The reference node's own error goldens (test/fixtures/goldens, from aptos-core's API tests),
 * asked of our node on the operation that shares the reference's code path: the same status
 * class, `error_code` and message text. `vm_error_code` is left out when absent (docs/decisions.md §7)
 * where the goldens print null. The gas goldens are checked in test/gas.http.test.ts, CORS in
 * test/clients/cors.test.ts.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqliteBackend } from "./helpers/backends.js";
import { ChainBuilder } from "./helpers/chain.js";
import { FIXTURES } from "./helpers/fixtures.js";
import { serveChain, stopNode, type TestNode } from "./helpers/node.js";

const golden = (name: string): { message: string; error_code: string; vm_error_code: null } =>
  JSON.parse(readFileSync(`${FIXTURES}goldens/aptos_api__tests__${name}.json`, "utf8"));

/** Golden, and the request of ours that takes the reference test's code path. */
const CASES: Array<[string, string, number]> = [
  // The reference asked /accounts/{root}/resources; modules verifies ledger_version the same way.
  ["accounts_test__test_get_account_resources_by_invalid_ledger_version", "/accounts/0x1/modules?ledger_version=-1", 400],
  ["accounts_test__test_get_account_resources_by_too_large_ledger_version", "/accounts/0x1/modules?ledger_version=1000000000000000000", 404],
  // The reference asked /accounts/xyz/module/…; every address path parses alike.
  ["state_test__test_get_account_module_by_invalid_address", "/accounts/xyz/modules", 400],
  ["state_test__test_get_account_module_by_invalid_address", "/accounts/xyz/transaction_summaries", 400],
  // The reference asked /transactions?limit=hello; every uint16 limit parses alike.
  ["transactions_test__test_get_transactions_with_invalid_limit_param", "/accounts/0x1/transaction_summaries?limit=hello", 400],
  ["transactions_test__test_get_transactions_with_invalid_limit_param", "/accounts/0x1/modules?limit=hello", 400],
];

describe("the reference's error goldens", () => {
  const backend = sqliteBackend();
  let node: TestNode;
  beforeAll(async () => {
    node = await serveChain(backend, new ChainBuilder().genesis().block([]));
  });
  afterAll(() => stopNode(node, backend));

  for (const [name, path, status] of CASES) {
    it(`${name}: ${path}`, async () => {
      const want = golden(name);
      const res = await fetch(node.base + path);
      expect(res.status).toBe(status);
      expect(await res.json()).toEqual({ message: want.message, error_code: want.error_code });
    });
  }
});
