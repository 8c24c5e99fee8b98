/**
 * The demo's hybrid settlement (docs/settlement.md), after its day on GPU Cloud: a second
 * marketplace prices its usage in USD (an off-chain unit of account) and its operators are paid in
 * what they chose: one in the test stablecoin (TUSD), one in native ETH, one 70/30 in TUSD and the
 * project token NET, at the rates of on-chain price feeds when each payout is paid. Its customer
 * pays TUSD on chain, which the worker converts into USD. Then NET falls from 2.50 to 2.00 USD and
 * the 70/30 operator is paid again: more NET for the same dollars.
 */
import { encodeFunctionData, parseEther } from "viem";
import type { LedgerClient } from "../clients/typescript/index.js";
import { TestToken } from "../contracts/artifacts.js";
import { CHAIN_ID, deployPriceFeed, deployTestToken, updatePriceFeed, type LocalChain } from "./anvil-chain.js";
import { collectHybridReport, type HybridReport } from "./demo-hybrid-report.js";
import { addOperator, addPrepaidCustomer, type DemoApi } from "./demo-parties.js";

export type { HybridReport } from "./demo-hybrid-report.js";

type Address = `0x${string}`;
export interface HybridContracts {
  net: Address;
  /** Price feeds by pair (8 decimals, as Chainlink's USD feeds answer). */
  feeds: { base: string; quote: string; address: Address }[];
}

const FEEDS = [
  { base: "NET", quote: "USD", answer: 250_000_000n },
  { base: "ETH", quote: "USD", answer: 300_000_000_000n },
  { base: "TUSD", quote: "USD", answer: 100_000_000n },
];

/** Deploys NET (18 decimals; the vault gets 1,000,000) and the three price feeds; each round's time is its block's. */
export async function deployHybridContracts(chain: LocalChain): Promise<HybridContracts> {
  const net = await deployTestToken(chain.deployerWallet, chain.public, { name: "Network token", symbol: "NET", decimals: 18 });
  await chain.send({ to: net, data: encodeFunctionData({ abi: TestToken.abi, functionName: "mint", args: [chain.vault, parseEther("1000000")] }) });
  const feeds: HybridContracts["feeds"] = [];
  for (const f of FEEDS) {
    const address = await deployPriceFeed(chain.deployerWallet, chain.public, { decimals: 8, description: `${f.base} / ${f.quote}`, answer: f.answer });
    feeds.push({ base: f.base, quote: f.quote, address });
  }
  return { net, feeds };
}

/** What the chain settings add for hybrid settlement: NET among the assets paid out, and the price feeds. */
export const hybridChainSettings = (c: HybridContracts) => ({
  asset: { code: "NET", token: c.net, decimals: 18 },
  price_feeds: c.feeds,
});

const MARKETPLACE = "ai-studio";
const CUSTOMER = "nova-robotics";
const DEPOSIT = 1_000_000_000n; // 1,000 TUSD
const hybridOperators = [
  { id: "berlin-gpu", name: "Berlin GPU", splits: [{ asset: "TUSD", bps: 10_000 }], gpus: 4, gpu: "gpu:h100-80gb", price: "2.49" },
  { id: "osaka-compute", name: "Osaka Compute", splits: [{ asset: "ETH", bps: 10_000 }], gpus: 8, gpu: "gpu:a100-80gb", price: "1.29" },
  {
    id: "nairobi-ai",
    name: "Nairobi AI",
    splits: [
      { asset: "TUSD", bps: 7_000 },
      { asset: "NET", bps: 3_000 },
    ],
    gpus: 8,
    gpu: "gpu:h100-80gb",
    price: "2.49",
  },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the hybrid part on the running service; `day` is the day the usage is posted on. */
export async function runHybrid(api: DemoApi, chain: LocalChain, contracts: HybridContracts, day: Date, say: (s: string) => void): Promise<HybridReport> {
  const { admin, ok, header } = api;
  say("\nhybrid settlement: registering NET and USD, a marketplace priced in USD, its customer and 3 operators with payout preferences …");
  ok(await admin.POST("/v1/assets", { params: { header: header() }, body: { code: "USD", scale: 6, settlement: { kind: "offchain" } } }));
  ok(
    await admin.POST("/v1/assets", {
      params: { header: header() },
      body: { code: "NET", scale: 18, settlement: { kind: "erc20", chain_id: CHAIN_ID, token_address: contracts.net } },
    }),
  );
  ok(await admin.POST("/v1/marketplaces", { params: { header: header() }, body: { id: MARKETPLACE, name: "AI Studio" } }));
  ok(await admin.PUT("/v1/marketplaces/{id}/pricing-currency", { params: { path: { id: MARKETPLACE } }, body: { asset: "USD" } }));
  ok(
    await admin.POST("/v1/marketplaces/{id}/fee-schedules", {
      params: { path: { id: MARKETPLACE }, header: header() },
      body: {
        effective_from: "2020-01-01T00:00:00Z",
        rules: [
          { party: "marketplace", bps: 500 },
          { party: "protocol", bps: 200 },
        ],
      },
    }),
  );
  const market = api.client(await api.secret({ name: MARKETPLACE, role: "marketplace", scope_id: MARKETPLACE }));
  const operators = new Map<string, LedgerClient>();
  for (const o of hybridOperators) {
    const operator = await addOperator(api, market, o);
    operators.set(o.id, operator);
    // Only the operator's own key says where its money goes.
    ok(await operator.PUT("/v1/operators/{id}/payout-preferences/{asset}", { params: { path: { id: o.id, asset: "USD" } }, body: { splits: o.splits } }));
  }

  await addPrepaidCustomer(api, chain, market, MARKETPLACE, CUSTOMER, DEPOSIT);
  say(`${CUSTOMER} paid 1,000 TUSD into the treasury on chain; waiting for the worker to credit it and convert it into USD at the TUSD/USD feed …`);
  const customer = async () => ok(await market.GET("/v1/customers/{id}", { params: { path: { id: CUSTOMER }, query: {} } }));
  for (let i = 0; ; i++) {
    const accounts = (await customer()).accounts;
    const [tusd, usd] = [accounts.find((a) => a.asset === "TUSD"), accounts.find((a) => a.asset === "USD")];
    if (tusd?.posted === "0" && usd !== undefined) break;
    if (i > 120) throw new Error(`the deposit was not converted: ${JSON.stringify(accounts)}`);
    await sleep(500);
  }
  const converted = await customer();

  const records = hybridOperators.flatMap((o) =>
    Array.from({ length: 8 }, (_, hour) => {
      const start = new Date(day.getTime() + (8 + hour) * 3_600_000);
      return {
        external_id: `${o.id}-${hour}`,
        operator_id: o.id,
        customer_id: CUSTOMER,
        resource: o.gpu,
        unit: "gpu_hour",
        quantity: String(o.gpus),
        unit_price: o.price,
        asset: "USD",
        period_start: start.toISOString(),
        period_end: new Date(start.getTime() + 3_600_000).toISOString(),
      };
    }),
  );
  const batch = ok(await market.POST("/v1/usage/batch", { params: { header: header() }, body: { records } }));
  if (batch.summary.rejected > 0) throw new Error(`usage rejected: ${JSON.stringify(batch.results.find((r) => r.status === "rejected"))}`);
  say(`posted ${batch.summary.accepted} usage records priced in USD`);

  // Each operator asks for what is payable now in USD (the 70/30 one for half of it first).
  const payable = async (id: string) =>
    ok(await operators.get(id)!.GET("/v1/operators/{id}/balances", { params: { path: { id } } })).data.find((b) => b.asset === "USD")!.payable_now;
  const request = async (id: string, amount: string) =>
    ok(await operators.get(id)!.POST("/v1/payouts", { params: { header: header() }, body: { asset: "USD", amount } })).id;
  const first: string[] = [];
  for (const o of hybridOperators) {
    const now = BigInt(await payable(o.id));
    first.push(await request(o.id, (o.splits.length > 1 ? now / 2n : now).toString()));
  }
  say("each operator asked for a payout in USD; the worker converts each at the feeds' rates and pays the parts on chain …");
  await paidOut(api, first);

  const netFeed = contracts.feeds.find((f) => f.base === "NET")!.address;
  await updatePriceFeed(chain.deployerWallet, chain.public, netFeed, 200_000_000n);
  const split = hybridOperators.find((o) => o.splits.length > 1)!;
  say(`the NET/USD feed moved to 2.00; ${split.id} asks for the rest of its USD …`);
  const second = await request(split.id, await payable(split.id));
  await paidOut(api, [second]);

  return collectHybridReport(api, market, { marketplace: MARKETPLACE, customer: converted, payouts: [...first, second] });
}

/** Waits until the payouts are converted and every part's payout is final on chain. */
async function paidOut(api: DemoApi, ids: string[]): Promise<void> {
  const { admin, ok } = api;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const parents = await Promise.all(ids.map(async (id) => ok(await admin.GET("/v1/payouts/{id}", { params: { path: { id } } }))));
    const failed = parents.find((p) => p.status === "failed");
    if (failed) throw new Error(`payout ${failed.id} failed: ${failed.failure_reason}`);
    if (parents.every((p) => p.status === "converted")) {
      const parts = (await Promise.all(ids.map(async (id) => ok(await admin.GET("/v1/conversions", { params: { query: { payout_id: id } } })).data))).flat();
      const children = await Promise.all(parts.map(async (c) => ok(await admin.GET("/v1/payouts/{id}", { params: { path: { id: c.child_payout_id! } } }))));
      if (children.every((p) => p.status === "confirmed" || p.status === "failed")) return;
    }
    if (Date.now() > deadline) throw new Error(`payouts not final: ${JSON.stringify(parents.map((p) => [p.status, p.note]))}`);
    await sleep(500);
  }
}
