import { encodeFunctionData, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { TestStablecoin } from "../../contracts/artifacts.js";
import type { Clock } from "../../src/domain/clock.js";
import type { Database } from "../../src/db/client.js";
import { insertRate } from "../../src/db/queries/conversions.js";
import { uuidv7 } from "../../src/domain/ids.js";
import { usageMonth } from "./clock.js";
import { expectStatus, testApi } from "./http.js";
import { payoutWorld, TOKEN } from "./payout-world.js";

/** TUSD has 6 decimals. */
export const USD = 1_000_000n;

/**
 * Marketplaces "m" and "b" (10% marketplace fee, 1% protocol fee). m: prepaid customers c, d and
 * postpaid p; b: prepaid customer bc. Operators o, o2 (the attacker's) and honest, each with a
 * verified payout address and an operator key.
 */
export async function fundingWorld(options: { clock?: Clock } = {}) {
  const w = await payoutWorld(options);
  const a = await testApi({ db: w.db, settlements: w.settlements });
  const key = async (role: string, scope_id?: string) =>
    expectStatus(await a.call("POST", "/v1/api-keys", { body: { name: `${role} ${scope_id ?? ""}`, role, scope_id } }), 201).body.secret as string;
  /** A marketplace with the world's fees (10% marketplace, 1% protocol). */
  const marketplace = async (m: string) => {
    expectStatus(await a.call("POST", "/v1/marketplaces", { body: { id: m, name: `market ${m}` } }), 201);
    expectStatus(
      await a.call("POST", `/v1/marketplaces/${m}/fee-schedules`, {
        body: {
          effective_from: "2020-01-01T00:00:00Z",
          rules: [
            { party: "marketplace", bps: 1000 },
            { party: "protocol", bps: 100 },
          ],
        },
      }),
      201,
    );
  };
  for (const m of ["m", "b"]) await marketplace(m);
  const keys = {
    market: await key("marketplace", "m"),
    b: await key("marketplace", "b"),
    finance: await key("finance"),
    finance2: await key("finance"),
    admin2: await key("admin"),
    o: "",
    o2: "",
    honest: "",
  } as Record<string, string> & { market: string; b: string; finance: string; finance2: string; admin2: string; o: string; o2: string; honest: string };
  const wallets: Record<string, `0x${string}`> = {};
  for (const o of ["o", "o2", "honest"]) {
    expectStatus(await a.call("POST", "/v1/operators", { key: keys.market, body: { id: o, name: o } }), 201);
    keys[o] = await key("operator", o);
    const acct = privateKeyToAccount(generatePrivateKey());
    const ch = expectStatus(
      await a.call("POST", `/v1/operators/${o}/payout-address-challenges`, { key: keys[o], body: { chain_id: 31337, address: acct.address } }),
      201,
    ).body;
    expectStatus(
      await a.call("PUT", `/v1/operators/${o}/payout-address`, {
        key: keys[o],
        body: { chain_id: 31337, address: acct.address, challenge_id: ch.id, signature: await acct.signMessage({ message: ch.message }) },
      }),
      200,
    );
    wallets[o] = acct.address;
  }
  for (const c of ["c", "d"]) expectStatus(await a.call("POST", "/v1/customers", { key: keys.market, body: { id: c, billing: "prepaid" } }), 201);
  expectStatus(
    await a.call("POST", "/v1/customers", {
      key: keys.market,
      body: { id: "p", billing: "postpaid", credit_limits: [{ asset: TOKEN, credit_limit: "1000000000000000000000000" }] },
    }),
    201,
  );
  expectStatus(await a.call("POST", "/v1/customers", { key: keys.b, body: { id: "bc", billing: "prepaid" } }), 201);
  let n = 0;
  const record = (operator: string, customer: string, amount: bigint, extra: Record<string, unknown> = {}) => ({
    external_id: `u-${++n}`,
    operator_id: operator,
    customer_id: customer,
    resource: "gpu:h100",
    unit: "gpu_hour",
    quantity: "1",
    amount: amount.toString(),
    asset: TOKEN,
    period_start: usageMonth.day(10).toISOString(),
    period_end: usageMonth.day(11).toISOString(),
    ...extra,
  });
  const usage = async (operator: string, customer: string, amount: bigint, opts: { key?: string; extra?: Record<string, unknown> } = {}) =>
    expectStatus(await a.call("POST", "/v1/usage", { key: opts.key ?? keys.market, body: record(operator, customer, amount, opts.extra) }), 201).body;
  const deposit = async (customer: string, amount: bigint, by = keys.market) =>
    expectStatus(await a.call("POST", `/v1/customers/${customer}/deposits`, { key: by, body: { asset: TOKEN, amount: amount.toString() } }), 201);
  const balance = async (o: string) => expectStatus(await a.call("GET", `/v1/operators/${o}/balances`, { key: keys[o] }), 200).body.data[0];
  const payout = (o: string, amount: bigint) => a.call("POST", "/v1/payouts", { key: keys[o], body: { asset: TOKEN, amount: amount.toString() } });
  const receipt = async (amount: bigint, reference: string, customer_id?: string, by = keys.finance, m = "m") =>
    a.call("POST", `/v1/marketplaces/${m}/receipts`, { key: by, body: { asset: TOKEN, amount: amount.toString(), reference, customer_id } });
  /** A receipt proposed (201): its proposal. */
  const proposeReceipt = async (amount: bigint, reference: string, customer_id?: string, by = keys.finance) =>
    expectStatus(await receipt(amount, reference, customer_id, by), 201).body;
  const payoutRows = async () => (await w.db.query<{ n: string }>("select count(*)::text as n from payouts"))[0]!.n;
  const approve = (id: string, by: string) => a.call("POST", `/v1/proposals/${id}/approve`, { key: by, body: {} });
  const settle = async (amount: bigint, reference: string, customer_id?: string, m = "m") => {
    const r = expectStatus(await receipt(amount, reference, customer_id, keys.finance, m), 201).body;
    expectStatus(await approve(r.id, keys.finance2!), 200);
  };
  /** The platform's credit limit for marketplace m in TUSD: proposed by an admin, approved by finance. */
  const grant = async (amount: bigint) => {
    const p = expectStatus(
      await a.call("POST", "/v1/marketplaces/m/credit-limits", { key: keys.admin2, body: { asset: TOKEN, credit_limit: amount.toString() } }),
      201,
    ).body;
    expectStatus(await approve(p.id, keys.finance), 200);
  };
  /** A marketplace of a test's own (the world's fees): its marketplace key. */
  const ownMarketplace = async (m: string) => {
    await marketplace(m);
    return key("marketplace", m);
  };
  return {
    w,
    api: a,
    grant,
    ownMarketplace,
    key,
    keys,
    wallets,
    record,
    usage,
    deposit,
    balance,
    payout,
    payoutRows,
    receipt,
    proposeReceipt,
    approve,
    settle,
    async close() {
      await a.close();
      await w.close();
    },
  };
}

export type FundingWorld = Awaited<ReturnType<typeof fundingWorld>>;

/** A rate entered by finance (manual), `num/den` quote per base, observed at `observedAt` (default: the clock's now). */
export async function manualRate(
  db: Database,
  base: { id: string },
  quote: { id: string },
  num: bigint,
  den: bigint,
  observedAt = db.clock.now(),
): Promise<void> {
  const id = uuidv7();
  await insertRate(db, { id, baseAssetId: base.id, quoteAssetId: quote.id, num, den, observedAt, source: "manual", sourceRef: id, recordedAt: db.clock.now() });
}

/** `x` is minted `amount` of the test token and pays it into the vault; the blocks are mined, not yet scanned. The transaction's hash. */
export async function payVault(s: FundingWorld, x: PrivateKeyAccount, amount: bigint): Promise<Hex> {
  await s.w.chain.send({ to: s.w.chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [x.address, amount] }) });
  const hash = await s.w.chain.wallet(x).writeContract({
    address: s.w.chain.token,
    abi: TestStablecoin.abi,
    functionName: "transfer",
    args: [s.w.chain.vault, amount],
    chain: s.w.chain.deployerWallet.chain,
    account: x,
  });
  await s.w.chain.test.mine({ blocks: 3 });
  return hash;
}
