/**
 * The official TypeScript SDK (`@aptos-labs/ts-sdk`, pinned) pointed at a replica, `serve --follow
 * <fake upstream> --from latest --proxy` (the built CLI), as an app uses it: read an account, its
 * resources and a module, estimate gas, build a transfer with an entry function of a module the
 * replica only knows from its base (the genesis framework, before its first synced block), sign it
 * with a local key, submit it, wait for it, read the history (by hash, by version, a page, the
 * account's transactions, blocks, events), a balance and a table item, and call a view function.
 * Each answer is compared with the upstream's, which prints what it recorded. The upstream counts
 * what reached it from the SDK: only the submission, the view and the reads of the transaction
 * while it is pending (a replica has no mempool).
 */
import { Account, Aptos, AptosConfig, getAptosFullNode, type Network, TransactionResponseType } from "@aptos-labs/ts-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_APP_ADDRESS, DEVNET_TABLE_HANDLE, devnetAccount } from "../../src/ingest/devnet/chain.js";
import { backendFactories } from "../helpers/backends.js";
import { requireBuiltCli } from "../helpers/cli.js";
import { FakeUpstream } from "../helpers/fakeUpstream.js";
import { type ServeProcess, startServe } from "../helpers/serveProcess.js";

const API_KEY = "operator-key-sdk";
/**
 * The SDK memoizes the gas estimate and the chain id per process by network name, and knows the
 * chain id of its own names without asking: each replica gets a name the SDK does not know.
 */
const network = (backend: string) => `ledger-node-proxy-${backend}` as Network;

async function json(url: string): Promise<unknown> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return res.json();
}

async function caughtUp(base: string, version: bigint): Promise<void> {
  const until = Date.now() + 120_000;
  while (Date.now() < until) {
    const i = (await (await fetch(`${base}/info`)).json().catch(() => null)) as { ledger_version?: string | null } | null;
    if (typeof i?.ledger_version === "string" && BigInt(i.ledger_version) >= version) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the replica did not reach version ${version}`);
}

describe("@aptos-labs/ts-sdk through a replica with --proxy: an app's whole path", () => {
  let up: FakeUpstream;
  beforeAll(async () => {
    requireBuiltCli();
    up = await FakeUpstream.start({ blocks: 200 });
  }, 120_000);
  afterAll(async () => {
    await up?.close();
  });

  for (const [i, factory] of backendFactories.entries()) {
    const backend = factory();
    describe(backend.name, () => {
      let replica: ServeProcess;
      let aptos: Aptos;
      /** The hashes of the transactions this replica's SDK submitted. */
      const submitted: string[] = [];
      /** Where this replica's requests start in what the upstream received. */
      let firstRequest = 0;
      beforeAll(async () => {
        firstRequest = up.received.length;
        replica = await startServe([
          "--follow", up.base, "--from", "latest", "--proxy", "--api-key", API_KEY, "--aptos-headers", "--db", await backend.newDb(),
          "--no-prune", "--quiet", "--max-rps", "5000", "--proxy-max-rps", "5000", "--poll", "50",
        ]);
        await caughtUp(replica.base, up.ledgerVersion);
        aptos = new Aptos(new AptosConfig({ network: network(backend.name), fullnode: replica.base }));
      }, 180_000);
      afterAll(async () => {
        await replica?.stop();
        await backend.cleanup();
      });

      it("reads an account, its resources, a module and the gas estimate as the upstream has them", async () => {
        const owner = devnetAccount(0);
        expect(await aptos.getAccountInfo({ accountAddress: owner })).toEqual(await json(`${up.base}/accounts/${owner}`));
        const account = await aptos.getAccountResource({ accountAddress: owner, resourceType: "0x1::account::Account" });
        expect(account).toEqual(((await json(`${up.base}/accounts/${owner}/resource/0x1::account::Account`)) as { data: unknown }).data);
        const resources = await aptos.getAccountResources({ accountAddress: owner });
        expect(resources).toEqual(await json(`${up.base}/accounts/${owner}/resources`));
        expect(resources.map((r) => r.type)).toContain("0x1::account::Account");
        const module = await aptos.getAccountModule({ accountAddress: "0x1", moduleName: "aptos_account" });
        expect(module).toEqual(await json(`${up.base}/accounts/0x1/module/aptos_account`));
        expect(module.abi!.exposed_functions.map((f) => f.name)).toContain("transfer");
        const gas = await aptos.getGasPriceEstimation();
        expect(gas).toEqual(await json(`${replica.base}/estimate_gas_price`));
      });

      it("builds, signs, submits and waits for a transfer; the upstream gets it under the API key and the replica then holds it", async () => {
        const oldest = ((await json(`${replica.base}/info`)) as { oldest_ledger_version: string }).oldest_ledger_version;
        expect(BigInt(oldest)).toBeGreaterThan(0n);
        const sender = Account.generate();
        // The chain's genesis predates stateless accounts (AIP-115), so a sender must exist first.
        await expect(aptos.getAccountInfo({ accountAddress: sender.accountAddress })).rejects.toThrow(/account_not_found/);
        await up.createAccount(sender.accountAddress.toStringLong());
        await caughtUp(replica.base, up.ledgerVersion);
        const transaction = await aptos.transaction.build.simple({
          sender: sender.accountAddress,
          data: { function: "0x1::aptos_account::transfer", functionArguments: [devnetAccount(1), 100] },
        });
        expect(transaction.rawTransaction.sequence_number).toBe(0n);
        expect(transaction.rawTransaction.chain_id.chainId).toBe(up.chainId);
        const senderAuthenticator = aptos.transaction.sign({ signer: sender, transaction });
        const pending = await aptos.transaction.submit.simple({ transaction, senderAuthenticator });
        submitted.push(pending.hash);
        const submissions = up.received.filter((r) => r.method === "POST" && r.url === "/v1/transactions");
        expect(submissions).toHaveLength(i + 1);
        expect(submissions.at(-1)!.headers).toMatchObject({ authorization: `Bearer ${API_KEY}`, "content-type": "application/x.aptos.signed_transaction+bcs" });
        expect(up.pending.has(pending.hash)).toBe(true);
        expect((await aptos.getTransactionByHash({ transactionHash: pending.hash })).type).toBe(TransactionResponseType.Pending);

        const waiting = aptos.waitForTransaction({ transactionHash: pending.hash });
        await up.commitPending();
        const committed = await waiting;
        expect(committed).toMatchObject({ type: TransactionResponseType.User, hash: pending.hash, success: true, sender: sender.accountAddress.toStringLong() });

        await caughtUp(replica.base, BigInt(committed.version));
        const summaries = (await json(`${replica.base}/accounts/${sender.accountAddress.toString()}/transaction_summaries`)) as { version: string }[];
        expect(summaries.map((s) => s.version)).toEqual([committed.version]);
      });

      it("reads the history from the replica itself, as the upstream printed it: by hash, by version, a page, the account's transactions, blocks, events; a balance and a table item", async () => {
        const head = BigInt(((await json(`${replica.base}/info`)) as { ledger_version: string }).ledger_version);
        const oldest = BigInt(((await json(`${replica.base}/info`)) as { oldest_ledger_version: string }).oldest_ledger_version);
        const v = oldest + (head - oldest) / 2n;
        const before = up.received.length;
        const byVersion = await aptos.getTransactionByVersion({ ledgerVersion: v });
        expect(byVersion).toEqual(await json(`${up.base}/transactions/by_version/${v}`));
        const hash = (byVersion as { hash: string }).hash;
        expect(await aptos.getTransactionByHash({ transactionHash: hash })).toEqual(byVersion);
        const page = await aptos.getTransactions({ options: { offset: v, limit: 10 } });
        expect(page).toEqual(await json(`${up.base}/transactions?start=${v}&limit=10`));
        const block = await aptos.getBlockByVersion({ ledgerVersion: v, options: { withTransactions: true } });
        expect(block).toEqual(await json(`${up.base}/blocks/by_version/${v}?with_transactions=true`));
        expect(await aptos.getBlockByHeight({ blockHeight: Number(block.block_height) })).toEqual(await json(`${up.base}/blocks/by_height/${block.block_height}`));
        const sender = (page.find((t) => t.type === TransactionResponseType.User) as { sender: string } | undefined)?.sender ?? devnetAccount(0);
        const mine = await aptos.getAccountTransactions({ accountAddress: sender, options: { limit: 5 } });
        expect(mine.length).toBeGreaterThan(0);
        for (const t of mine) expect(t).toEqual(await json(`${up.base}/transactions/by_version/${(t as { version: string }).version}`));
        // A balance, from the resources the replica holds: the upstream's chain gives its accounts no
        // CoinStore and no fungible store (it answers the CoinStore 404), so each one's balance is 0.
        const coinStore = await fetch(`${up.base}/accounts/${sender}/resource/0x1::coin::CoinStore%3C0x1::aptos_coin::AptosCoin%3E`);
        expect(coinStore.status).toBe(404);
        expect(await aptos.getBalance({ accountAddress: sender, asset: "0x1::aptos_coin::AptosCoin" })).toBe(0);
        expect(await aptos.getBalance({ accountAddress: sender, asset: "0xa" })).toBe(0);
        // Events: the SDK (7.x) reads them from the indexer and has no method for the node's event
        // routes, so they go through its own node client (`getAptosFullNode`), as an app calls any route.
        // The devnet's block events are 0x1's handle 3, one a block, numbered by height.
        const newest = await aptos.getBlockByVersion({ ledgerVersion: head });
        expect(BigInt(newest.first_version)).toBeGreaterThanOrEqual(oldest);
        const eventsPath = `accounts/0x1/events/3`;
        const events = await getAptosFullNode<Record<string, never>, Array<{ sequence_number: string; type: string }>>({
          aptosConfig: aptos.config,
          originMethod: "getEventsByCreationNumber",
          path: eventsPath,
          params: { start: newest.block_height, limit: 2 },
        });
        expect(events.data.map((e) => [e.sequence_number, e.type])).toEqual([[newest.block_height, "0x1::block::NewBlockEvent"]]);
        expect(events.data).toEqual(await json(`${up.base}/${eventsPath}?start=${newest.block_height}&limit=2`));
        // A table item by its JSON key: the devnet's table of u64 keys and values, a key the head holds.
        let key = -1;
        for (let k = 0; k < 64 && key < 0; k++) {
          const r = await fetch(`${up.base}/tables/${DEVNET_TABLE_HANDLE}/item?ledger_version=${head}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ key_type: "u64", value_type: "u64", key: String(k) }),
          });
          if (r.status === 200) key = k;
        }
        expect(key).toBeGreaterThanOrEqual(0);
        const item = await aptos.getTableItem<string>({ handle: DEVNET_TABLE_HANDLE, data: { key_type: "u64", value_type: "u64", key: String(key) }, options: { ledgerVersion: head } });
        const upstreamItem = await fetch(`${up.base}/tables/${DEVNET_TABLE_HANDLE}/item?ledger_version=${head}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ key_type: "u64", value_type: "u64", key: String(key) }),
        });
        expect(item).toEqual(await upstreamItem.json());
        // None of it reached the upstream: no request the SDK made (it names itself in x-aptos-client) was passed on.
        const asked = up.received
          .slice(before)
          .filter((r) => /^\/v1\/(transactions|blocks|tables|accounts\/[^/]+\/(transactions|balance|events))/.test(r.url) && r.headers["x-aptos-client"] !== undefined);
        expect(asked).toEqual([]);
      });

      it("calls a view function through the upstream, under the API key", async () => {
        const before = up.received.length;
        const answer = await aptos.view({ payload: { function: `${DEVNET_APP_ADDRESS}::registry::get`, functionArguments: [2] } });
        const direct = await fetch(`${up.base}/view`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ function: "0xa11ce::registry::get", type_arguments: [], arguments: ["2"] }),
        });
        expect(answer).toEqual(await direct.json());
        const views = up.received.slice(before).filter((r) => r.method === "POST" && r.url.startsWith("/v1/view"));
        expect(views[0]!.headers).toMatchObject({ authorization: `Bearer ${API_KEY}`, "content-type": "application/x.aptos.view_function+bcs" });
      });

      it("sent the upstream only what a replica cannot answer: the submission, the view, and reads of the pending transaction", async () => {
        const sdk = up.received.slice(firstRequest).filter((r) => r.headers["x-aptos-client"] !== undefined && r.headers.authorization === `Bearer ${API_KEY}`);
        const kinds = new Set(sdk.map((r) => `${r.method} ${r.url.split("?")[0]!.replace(/0x[0-9a-f]{64}$/, (h) => (submitted.includes(h) ? "{pending hash}" : h))}`));
        const allowed = ["POST /v1/transactions", "POST /v1/view", "GET /v1/transactions/by_hash/{pending hash}", "GET /v1/transactions/wait_by_hash/{pending hash}"];
        expect([...kinds].filter((k) => !allowed.includes(k))).toEqual([]);
        expect(kinds).toContain("POST /v1/transactions");
        expect(kinds).toContain("POST /v1/view");
      });
    });
  }
});
