/**
 * The demo's way into the service (scripts/demo.ts, scripts/demo-hybrid.ts): the typed client with
 * the admin key, and the parties it sets up over the HTTP API: operators that prove their payout
 * address by signing a message, and prepaid customers that pay TUSD into the treasury on chain from
 * an address they registered.
 */
import { encodeFunctionData, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createLedgerClient, idempotencyKey, type LedgerClient } from "../clients/typescript/index.js";
import { TestStablecoin } from "../contracts/artifacts.js";
import { depositAddressMessage } from "../src/domain/payouts.js";
import { CHAIN_ID, type LocalChain } from "./anvil-chain.js";

export interface DemoApi {
  admin: LedgerClient;
  client(apiKey: string): LedgerClient;
  /** A fresh Idempotency-Key header. */
  header(): { "idempotency-key": string };
  /** The answer's data; an error answer stops the demo with its status and problem. */
  ok<T>(answer: { data?: T; error?: unknown; response: Response }): T;
  /** A new API key's secret (created with the admin key). */
  secret(body: { name: string; role: "marketplace" | "operator"; scope_id: string }): Promise<string>;
}

export function demoApi(baseUrl: string, adminKey: string): DemoApi {
  const client = (apiKey: string) => createLedgerClient({ baseUrl, apiKey });
  const admin = client(adminKey);
  let seq = 0;
  const header = () => idempotencyKey(`demo-${++seq}`);
  const ok = <T>({ data, error, response }: { data?: T; error?: unknown; response: Response }): T => {
    if (data === undefined) throw new Error(`${new URL(response.url).pathname}: ${response.status} ${JSON.stringify(error)}`);
    return data;
  };
  const secret: DemoApi["secret"] = async (body) => ok(await admin.POST("/v1/api-keys", { params: { header: header() }, body })).secret!;
  return { admin, client, header, ok, secret };
}

/** Creates an operator with the marketplace's key and its own key, which proves a payout address on the local chain; its client. */
export async function addOperator(api: DemoApi, market: LedgerClient, o: { id: string; name: string }): Promise<LedgerClient> {
  const { ok, header } = api;
  ok(await market.POST("/v1/operators", { params: { header: header() }, body: { id: o.id, name: o.name } }));
  const operator = api.client(await api.secret({ name: o.id, role: "operator", scope_id: o.id }));
  const wallet = privateKeyToAccount(generatePrivateKey());
  const ch = ok(
    await operator.POST("/v1/operators/{id}/payout-address-challenges", {
      params: { path: { id: o.id }, header: header() },
      body: { chain_id: CHAIN_ID, address: wallet.address },
    }),
  );
  ok(
    await operator.PUT("/v1/operators/{id}/payout-address", {
      params: { path: { id: o.id } },
      body: { chain_id: CHAIN_ID, address: wallet.address, challenge_id: ch.id, signature: await wallet.signMessage({ message: ch.message }) },
    }),
  );
  return operator;
}

/**
 * Creates a prepaid customer of the marketplace, which registers a paying address (signing the
 * registration message) and pays `deposit` TUSD (smallest units) from it into the treasury on chain.
 */
export async function addPrepaidCustomer(
  api: DemoApi,
  chain: LocalChain,
  market: LedgerClient,
  marketplaceId: string,
  id: string,
  deposit: bigint,
): Promise<void> {
  const { ok, header } = api;
  ok(await market.POST("/v1/customers", { params: { header: header() }, body: { id, billing: "prepaid" } }));
  const payer = privateKeyToAccount(generatePrivateKey());
  const signature = await payer.signMessage({
    message: depositAddressMessage({ marketplaceId, customerId: id, chainId: BigInt(CHAIN_ID), address: payer.address }),
  });
  ok(
    await market.POST("/v1/customers/{id}/deposit-addresses", {
      params: { path: { id }, header: header() },
      body: { chain_id: CHAIN_ID, address: payer.address, signature },
    }),
  );
  await chain.test.setBalance({ address: payer.address, value: parseEther("1") });
  await chain.send({ to: chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [payer.address, deposit] }) });
  await chain.wallet(payer).writeContract({
    address: chain.token,
    abi: TestStablecoin.abi,
    functionName: "transfer",
    args: [chain.vault, deposit],
    chain: chain.deployerWallet.chain,
    account: payer,
  });
}
