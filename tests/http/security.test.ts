import { encodeFunctionData } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wideRange } from "../support/clock.js";
import { TestStablecoin } from "../../contracts/artifacts.js";
import { chainSettingsFor, startLocalChain, type LocalChain } from "../../scripts/anvil-chain.js";
import { loadChains } from "../../src/chain/config.js";
import { Settlements } from "../../src/chain/settlement.js";
import { depositAddressMessage } from "../../src/domain/payouts.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { expectStatus, testApi, world, writeCounts, type TestApi } from "../support/http.js";
import { checkRouteSecurity, type RouteSecurity, type World } from "../support/security.js";

let api: TestApi;
let w: World;
let chain: LocalChain;
beforeAll(async () => {
  // A real local chain: the reconciliation and treasury routes read it.
  chain = await startLocalChain();
  const settlements = new Settlements(loadChains({ CHAINS: JSON.stringify([chainSettingsFor(chain)]) }, { TREASURY_SIGNER_KEY: chain.signerKey }));
  api = await testApi({ settlements });
  w = await world(api);
  expectStatus(
    await api.call("POST", "/v1/assets", { body: { code: "TUSD", scale: 6, settlement: { kind: "erc20", chain_id: 31337, token_address: chain.token } } }),
    201,
  );
  // An inflow into the treasury no customer explains: each reconciliation has an item to resolve.
  await chain.send({ to: chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [chain.vault, 1_000n] }) });
});
afterAll(async () => {
  await api.close();
  await chain.stop();
});

/** Months the period route was asked to start closing (one each call). */
let periodCalls = 0;
const everyone = ["admin", "finance", "marketplace", "operator"] as const;

/** A fresh hold in m1 (so that each post/void/reverse check has something to act on). */
async function m1Hold(w: World): Promise<string> {
  const res = await api.call("POST", "/v1/transfers", {
    key: w.keys.m1,
    body: { type: "pending", legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "1" }] },
  });
  return expectStatus(res, 201).body.id;
}
async function m1Posted(w: World): Promise<string> {
  const res = await api.call("POST", "/v1/transfers", {
    key: w.keys.m1,
    body: { legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "1" }] },
  });
  return expectStatus(res, 201).body.id;
}
/** Costs of a machine class, per unit (docs/usage.md, "Costs, margin and what-if"). */
const operatorCosts = {
  asset: "USDC",
  power_watts: "700",
  price_per_kwh: "0.12",
  bandwidth_monthly: "20",
  other_monthly: "30",
  purchase_price: "30000",
  depreciation_months: 36,
};
/** The account a key of this tenant can see. */
const ownAccount = (w: World, as: string) => (as === "o1" ? w.o1Payable.id : w.m1Customer.id);

const routes: RouteSecurity[] = [
  { method: "POST", route: "/v1/api-keys", allowed: ["admin"], request: () => ({ path: "/v1/api-keys", body: { name: "x", role: "finance" } }) },
  { method: "GET", route: "/v1/api-keys", allowed: ["admin"], request: () => ({ path: "/v1/api-keys" }) },
  {
    method: "POST",
    route: "/v1/api-keys/{id}/revoke",
    allowed: ["admin"],
    request: async () => {
      const k = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "throwaway", role: "finance" } }), 201).body;
      return { path: `/v1/api-keys/${k.id}/revoke` };
    },
  },
  {
    method: "POST",
    route: "/v1/assets",
    allowed: ["admin"],
    request: () => ({ path: "/v1/assets", body: { code: "EURC", scale: 6, settlement: { kind: "offchain" } } }),
  },
  { method: "GET", route: "/v1/assets", allowed: [...everyone], request: () => ({ path: "/v1/assets" }) },
  { method: "GET", route: "/v1/assets/{code}", allowed: [...everyone], request: () => ({ path: "/v1/assets/USDC" }) },
  {
    method: "PATCH",
    route: "/v1/assets/{code}",
    allowed: ["admin"],
    // An asset of its own each time: a proposal for the world's USDC would wait for its payouts.
    request: async () => ({
      path: `/v1/assets/${await freshAsset()}`,
      body: { settlement: { kind: "erc20", chain_id: 31337, token_address: randomAddress() } },
    }),
  },
  {
    method: "PUT",
    route: "/v1/assets/{code}/rate-bounds",
    allowed: ["admin"],
    request: async () => ({ path: `/v1/assets/${await freshAsset()}/rate-bounds`, body: { rate_max_age_seconds: 900, rate_max_deviation_bps: 50 } }),
  },
  { method: "POST", route: "/v1/assets/{code}/retire", allowed: ["admin"], request: async () => ({ path: `/v1/assets/${await freshAsset()}/retire` }) },
  {
    method: "POST",
    route: "/v1/accounts",
    allowed: ["admin", "marketplace"],
    request: (w) => ({ path: "/v1/accounts", body: { asset_id: w.asset.id, code: "customer_wallet", normal_side: "credit", ref: "wallet:c9" } }),
  },
  // A list finds nothing of another tenant (tests/http/list-accounts-transfers.test.ts): no 404 to check here.
  { method: "GET", route: "/v1/accounts", allowed: [...everyone], request: () => ({ path: "/v1/accounts" }) },
  ...(["", "/balance", "/entries"] as const).map((suffix): RouteSecurity => ({
    method: "GET",
    route: `/v1/accounts/{id}${suffix}`,
    allowed: [...everyone],
    request: (w, as) => ({ path: `/v1/accounts/${ownAccount(w, as)}${suffix}` }),
    otherTenant: (w) => [
      { as: "m1", path: `/v1/accounts/${w.m2Customer.id}${suffix}` },
      { as: "m2", path: `/v1/accounts/${w.m1Customer.id}${suffix}` },
      { as: "o2", path: `/v1/accounts/${w.o1Payable.id}${suffix}` },
      { as: "o1", path: `/v1/accounts/${w.m1Customer.id}${suffix}` },
    ],
  })),
  {
    method: "POST",
    route: "/v1/transfers",
    allowed: ["admin", "marketplace"],
    request: (w) => ({ path: "/v1/transfers", body: { legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "1" }] } }),
    otherTenant: (w) => [
      { as: "m2", path: "/v1/transfers", body: { legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m2Customer.id, amount: "1" }] } },
      { as: "m1", path: "/v1/transfers", body: { legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.o1Payable.id, amount: "1" }] } },
    ],
  },
  {
    method: "GET",
    route: "/v1/transfers",
    allowed: [...everyone],
    request: (w, as) => ({ path: `/v1/transfers?account_id=${ownAccount(w, as)}` }),
    // Another tenant's account as the filter answers as a missing account, as its read by id does.
    otherTenant: (w) => [
      { as: "m2", path: `/v1/transfers?account_id=${w.m1Customer.id}` },
      { as: "m1", path: `/v1/transfers?account_id=${w.m2Customer.id}` },
      { as: "o2", path: `/v1/transfers?account_id=${w.o1Payable.id}` },
      { as: "o1", path: `/v1/transfers?account_id=${w.m1Customer.id}` },
    ],
  },
  {
    method: "GET",
    route: "/v1/transfers/{id}",
    allowed: [...everyone],
    request: async (w, as) => {
      if (as !== "o1") return { path: `/v1/transfers/${w.fund.id}` };
      // The operator sees the transfers on its payable: its usage's.
      return { path: `/v1/transfers/${w.m1Usage.transfer_id}` };
    },
    otherTenant: (w) => [
      { as: "m2", path: `/v1/transfers/${w.fund.id}` },
      { as: "o1", path: `/v1/transfers/${w.fund.id}` },
    ],
  },
  ...(["post", "void"] as const).map((action): RouteSecurity => ({
    method: "POST",
    route: `/v1/transfers/{id}/${action}`,
    allowed: ["admin", "marketplace"],
    request: async (w) => ({ path: `/v1/transfers/${await m1Hold(w)}/${action}`, body: {} }),
    otherTenant: (w) => [{ as: "m2", path: `/v1/transfers/${w.fund.id}/${action}`, body: {} }],
  })),
  {
    method: "POST",
    route: "/v1/transfers/{id}/reverse",
    allowed: ["admin", "marketplace"],
    request: async (w) => ({ path: `/v1/transfers/${await m1Posted(w)}/reverse`, body: {} }),
    otherTenant: (w) => [{ as: "m2", path: `/v1/transfers/${w.fund.id}/reverse`, body: {} }],
  },
  {
    method: "POST",
    route: "/v1/marketplaces",
    allowed: ["admin"],
    request: () => ({ path: "/v1/marketplaces", body: { id: `mk-${Math.random().toString(36).slice(2, 10)}`, name: "x" } }),
  },
  {
    method: "POST",
    route: "/v1/marketplaces/{id}/fee-schedules",
    allowed: ["admin"],
    request: () => ({
      path: "/v1/marketplaces/m1/fee-schedules",
      body: { effective_from: new Date(Date.UTC(2030, 0, 1) + Math.floor(Math.random() * 1e10)).toISOString(), rules: [] },
    }),
  },
  {
    method: "GET",
    route: "/v1/marketplaces/{id}/fee-schedules",
    allowed: ["admin", "finance", "marketplace"],
    request: () => ({ path: "/v1/marketplaces/m1/fee-schedules" }),
    otherTenant: () => [{ as: "m2", path: "/v1/marketplaces/m1/fee-schedules" }],
  },
  {
    method: "PUT",
    route: "/v1/marketplaces/{id}/usage-limits/{asset}",
    allowed: ["admin"],
    request: () => ({ path: "/v1/marketplaces/m1/usage-limits/USDC", body: { max_quantity_per_second: { gpu_hour: "30" } } }),
  },
  {
    method: "GET",
    route: "/v1/marketplaces/{id}/usage-limits/{asset}",
    allowed: ["admin", "finance", "marketplace"],
    request: () => ({ path: "/v1/marketplaces/m1/usage-limits/USDC" }),
    otherTenant: () => [{ as: "m2", path: "/v1/marketplaces/m1/usage-limits/USDC" }],
  },
  {
    method: "GET",
    route: "/v1/operators/{id}/invitations",
    allowed: ["admin", "finance", "operator"],
    request: () => ({ path: "/v1/operators/o1/invitations" }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/invitations" }],
  },
  {
    method: "POST",
    route: "/v1/operators/{id}/invitations/{marketplace_id}/accept",
    allowed: ["admin", "operator"],
    request: async () => {
      // A marketplace of its own (not m1 or m2, whose tenancy the other checks rely on) asks to sell for o1.
      const m = await invitingMarketplace();
      return { path: `/v1/operators/o1/invitations/${m}/accept`, body: {} };
    },
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/invitations/m1/accept", body: {} }],
  },
  {
    method: "POST",
    route: "/v1/operators",
    allowed: ["admin", "marketplace"],
    request: (_w, as) => ({ path: "/v1/operators", body: { id: "o1", name: "operator o1", ...(as === "admin" ? { marketplace_id: "m1" } : {}) } }),
  },
  {
    method: "POST",
    route: "/v1/customers",
    allowed: ["admin", "marketplace"],
    request: (_w, as) => ({ path: "/v1/customers", body: { id: "c1", billing: "prepaid", ...(as === "admin" ? { marketplace_id: "m1" } : {}) } }),
  },
  {
    method: "PUT",
    route: "/v1/customers/{id}/credit-limits/{asset}",
    allowed: ["admin", "marketplace"],
    request: (_w, as) => ({
      path: "/v1/customers/m1only/credit-limits/USDC",
      body: { credit_limit: "1000000000000000000000000", ...(as === "admin" ? { marketplace_id: "m1" } : {}) },
    }),
    otherTenant: () => [{ as: "m2", path: "/v1/customers/m1only/credit-limits/USDC", body: { credit_limit: "5" } }],
  },
  {
    method: "POST",
    route: "/v1/customers/{id}/deposits",
    allowed: ["admin", "marketplace"],
    request: (_w, as) => ({ path: "/v1/customers/m1only/deposits", body: { asset: "USDC", amount: "5", ...(as === "admin" ? { marketplace_id: "m1" } : {}) } }),
    otherTenant: () => [{ as: "m2", path: "/v1/customers/m1only/deposits", body: { asset: "USDC", amount: "5" } }],
  },
  {
    method: "POST",
    route: "/v1/usage",
    allowed: ["admin", "marketplace"],
    request: (w, as) => ({ path: "/v1/usage", body: { ...w.usage(`sec-${Math.random()}`), ...(as === "admin" ? { marketplace_id: "m1" } : {}) } }),
    otherTenant: (w) => [{ as: "m2", path: "/v1/usage", body: w.usage("sec-other") }],
  },
  {
    method: "POST",
    route: "/v1/usage/batch",
    allowed: ["admin", "marketplace"],
    request: (w, as) => ({
      path: "/v1/usage/batch",
      body: { records: [w.usage(`secb-${Math.random()}`)], ...(as === "admin" ? { marketplace_id: "m1" } : {}) },
    }),
  },
  {
    method: "GET",
    route: "/v1/usage/{id}",
    allowed: [...everyone],
    request: (w) => ({ path: `/v1/usage/${w.m1Usage.id}` }),
    otherTenant: (w) => [
      { as: "m2", path: `/v1/usage/${w.m1Usage.id}` },
      { as: "o2", path: `/v1/usage/${w.m1Usage.id}` },
    ],
  },
  { method: "GET", route: "/v1/usage", allowed: [...everyone], request: () => ({ path: "/v1/usage" }) },
  {
    method: "GET",
    route: "/v1/usage-batches",
    allowed: ["admin", "finance", "marketplace"],
    request: () => ({ path: "/v1/usage-batches?has_rejections=true" }),
  },
  {
    method: "GET",
    route: "/v1/usage-batches/{id}",
    allowed: ["admin", "finance", "marketplace"],
    request: async (w) => ({ path: `/v1/usage-batches/${await m1Batch(w)}` }),
    otherTenant: () => [{ as: "m2", path: `/v1/usage-batches/${lastBatch}` }],
  },
  {
    method: "POST",
    route: "/v1/usage/{id}/reverse",
    allowed: ["admin", "marketplace"],
    request: async (w) => {
      const u = expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage(`rev-${Math.random()}`) }), 201).body;
      return { path: `/v1/usage/${u.id}/reverse`, body: { reason: "test" } };
    },
    otherTenant: (w) => [{ as: "m2", path: `/v1/usage/${w.m1Usage.id}/reverse`, body: { reason: "not mine" } }],
  },
  {
    method: "POST",
    route: "/v1/disputes",
    allowed: ["admin", "finance", "marketplace"],
    request: async (w) => ({ path: "/v1/disputes", body: { usage_ids: [await m1Record(w)], reason: "security" } }),
    // Another marketplace's record, by id or by external id, is a missing one.
    otherTenant: (w) => [
      { as: "m2", path: "/v1/disputes", body: { usage_ids: [w.m1Usage.id], reason: "not mine" } },
      { as: "m2", path: "/v1/disputes", body: { external_ids: [w.m1Usage.external_id], marketplace_id: "m1", reason: "not mine" } },
    ],
  },
  { method: "GET", route: "/v1/disputes", allowed: [...everyone], request: () => ({ path: "/v1/disputes" }) },
  {
    method: "GET",
    route: "/v1/disputes/{id}",
    allowed: [...everyone],
    // m1's dispute of o1's usage: o1 sees it (its own records), m2 and o2 do not.
    request: async (w) => ({ path: `/v1/disputes/${await m1Dispute(w)}` }),
    otherTenant: () => [
      { as: "m2", path: `/v1/disputes/${lastDispute}` },
      { as: "o2", path: `/v1/disputes/${lastDispute}` },
    ],
  },
  ...(["uphold", "reject"] as const).map((decision): RouteSecurity => ({
    method: "POST",
    route: `/v1/disputes/{id}/${decision}`,
    // Not the marketplace that opened it, not an operator.
    allowed: ["admin", "finance"],
    request: async (w) => ({ path: `/v1/disputes/${await m1Dispute(w)}/${decision}`, body: { note: "security" } }),
  })),
  {
    method: "GET",
    route: "/v1/marketplaces/{id}/dispute-settings",
    allowed: ["admin", "finance", "marketplace"],
    request: () => ({ path: "/v1/marketplaces/m1/dispute-settings" }),
    otherTenant: () => [{ as: "m2", path: "/v1/marketplaces/m1/dispute-settings" }],
  },
  {
    method: "PUT",
    route: "/v1/marketplaces/{id}/dispute-settings",
    allowed: ["admin"],
    request: () => ({ path: "/v1/marketplaces/m1/dispute-settings", body: { dispute_window_days: 60 } }),
  },
  {
    method: "GET",
    route: "/v1/marketplaces/{id}/capacity-policy",
    allowed: ["admin", "finance", "marketplace"],
    request: () => ({ path: "/v1/marketplaces/m1/capacity-policy" }),
    otherTenant: () => [{ as: "m2", path: "/v1/marketplaces/m1/capacity-policy" }],
  },
  {
    method: "PUT",
    route: "/v1/marketplaces/{id}/capacity-policy",
    allowed: ["admin", "marketplace"],
    request: () => ({ path: "/v1/marketplaces/m1/capacity-policy", body: { default: "refuse", resources: { "gpu:h100": "flag" } } }),
    otherTenant: () => [{ as: "m2", path: "/v1/marketplaces/m1/capacity-policy", body: { default: "flag" } }],
  },
  {
    method: "GET",
    route: "/v1/marketplaces/{id}/capacity-flags",
    allowed: ["admin", "finance", "marketplace"],
    request: () => ({ path: "/v1/marketplaces/m1/capacity-flags" }),
    otherTenant: () => [{ as: "m2", path: "/v1/marketplaces/m1/capacity-flags" }],
  },
  {
    method: "POST",
    route: "/v1/operators/{id}/capacity",
    allowed: ["admin", "operator"],
    // A new instant each call: a version per instant.
    request: () => ({
      path: "/v1/operators/o1/capacity",
      body: { resource: "gpu:h100", units: 8, effective_from: new Date(Date.UTC(2030, 0, 1) + Math.floor(Math.random() * 1e10)).toISOString() },
    }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/capacity", body: { resource: "gpu:h100", units: 8, effective_from: "2031-01-01T00:00:00Z" } }],
  },
  {
    method: "GET",
    route: "/v1/operators/{id}/capacity",
    allowed: ["admin", "finance", "operator"],
    request: () => ({ path: "/v1/operators/o1/capacity" }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/capacity" }],
  },
  {
    method: "PUT",
    route: "/v1/operators/{id}/costs/{resource}",
    allowed: ["admin", "operator"],
    hidden: ["marketplace"],
    request: () => ({ path: "/v1/operators/o1/costs/gpu:h100", body: operatorCosts }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/costs/gpu:h100", body: operatorCosts }],
  },
  {
    method: "GET",
    route: "/v1/operators/{id}/costs/{resource}",
    allowed: ["admin", "finance", "operator"],
    hidden: ["marketplace"],
    // The costs exist: the PUT of this resource above ran first.
    request: async () => {
      expectStatus(await api.call("PUT", "/v1/operators/o1/costs/gpu:h100", { key: w.keys.o1, body: operatorCosts }), 200);
      return { path: "/v1/operators/o1/costs/gpu:h100" };
    },
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/costs/gpu:h100" }],
  },
  {
    method: "GET",
    route: "/v1/operators/{id}/costs",
    allowed: ["admin", "finance", "operator"],
    hidden: ["marketplace"],
    request: () => ({ path: "/v1/operators/o1/costs" }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/costs" }],
  },
  {
    method: "GET",
    route: "/v1/operators/{id}/margin",
    allowed: ["admin", "finance", "operator"],
    hidden: ["marketplace"],
    request: () => ({ path: "/v1/operators/o1/margin?period=2026-01" }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/margin?period=2026-01" }],
  },
  {
    method: "POST",
    route: "/v1/operators/{id}/scenarios",
    allowed: ["admin", "finance", "operator"],
    hidden: ["marketplace"],
    request: () => ({ path: "/v1/operators/o1/scenarios", body: { resource: "gpu:h100", units: 2, weeks: 4, ...operatorCosts } }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/scenarios", body: { resource: "gpu:h100", units: 2, weeks: 4, ...operatorCosts } }],
  },
  {
    method: "GET",
    route: "/v1/operators/{id}/fleet",
    allowed: ["admin", "finance", "operator"],
    request: () => ({ path: "/v1/operators/o1/fleet" }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/fleet" }],
  },
  {
    method: "POST",
    route: "/v1/holds",
    allowed: ["admin", "marketplace"],
    request: (_w, as) => ({ path: "/v1/holds", body: { customer_id: "c1", asset: "USDC", amount: "10", ...(as === "admin" ? { marketplace_id: "m1" } : {}) } }),
    otherTenant: () => [{ as: "m2", path: "/v1/holds", body: { customer_id: "m1only", asset: "USDC", amount: "10" } }],
  },
  {
    method: "GET",
    route: "/v1/holds/{id}",
    allowed: ["admin", "finance", "marketplace"],
    request: async (w) => ({ path: `/v1/holds/${await m1UsageHold(w)}` }),
    otherTenant: () => [{ as: "m2", path: `/v1/holds/${lastHold}` }],
  },
  {
    method: "POST",
    route: "/v1/holds/{id}/close",
    allowed: ["admin", "marketplace"],
    request: async (w) => ({ path: `/v1/holds/${await m1UsageHold(w)}/close` }),
    otherTenant: () => [{ as: "m2", path: `/v1/holds/${lastHold}/close` }],
  },
  ...(["balances", `statement?${wideRange()}`, `earnings?${wideRange()}`] as const).map((view): RouteSecurity => ({
    method: "GET",
    route: `/v1/operators/{id}/${view.split("?")[0]}`,
    allowed: ["admin", "finance", "operator"],
    request: () => ({ path: `/v1/operators/o1/${view}` }),
    otherTenant: () => [{ as: "o2", path: `/v1/operators/o1/${view}` }],
  })),
  {
    method: "POST",
    route: "/v1/operators/{id}/payout-address-challenges",
    allowed: ["admin", "operator"],
    request: () => ({
      path: "/v1/operators/o1/payout-address-challenges",
      body: { chain_id: 31337, address: privateKeyToAccount(generatePrivateKey()).address },
    }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/payout-address-challenges", body: { chain_id: 31337, address: `0x${"22".repeat(20)}` } }],
  },
  {
    method: "PUT",
    route: "/v1/operators/{id}/payout-address",
    allowed: ["admin", "operator"],
    request: async () => ({ path: "/v1/operators/o1/payout-address", body: await signedAddress("o1") }),
    otherTenant: () => [
      {
        as: "o2",
        path: "/v1/operators/o1/payout-address",
        body: { chain_id: 31337, address: `0x${"22".repeat(20)}`, challenge_id: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e", signature: `0x${"33".repeat(65)}` },
      },
    ],
  },
  {
    method: "GET",
    route: "/v1/operators/{id}/payout-addresses",
    allowed: ["admin", "finance", "operator"],
    request: () => ({ path: "/v1/operators/o1/payout-addresses" }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/payout-addresses" }],
  },
  {
    method: "POST",
    route: "/v1/payouts",
    allowed: ["admin", "finance", "operator"],
    request: () => ({ path: "/v1/payouts", body: { operator_id: "o1", asset: "USDC", amount: "1" } }),
    otherTenant: () => [{ as: "o2", path: "/v1/payouts", body: { operator_id: "o1", asset: "USDC", amount: "1" } }],
  },
  { method: "GET", route: "/v1/payouts", allowed: ["admin", "finance", "operator"], request: () => ({ path: "/v1/payouts" }) },
  {
    method: "GET",
    route: "/v1/payouts/{id}",
    allowed: ["admin", "finance", "operator"],
    request: async () => ({ path: `/v1/payouts/${await o1Payout()}` }),
    otherTenant: () => [{ as: "o2", path: `/v1/payouts/${lastPayout}` }],
  },
  {
    method: "POST",
    route: "/v1/payouts/{id}/cancel",
    allowed: ["admin", "finance", "operator"],
    request: async () => ({ path: `/v1/payouts/${await o1Payout()}/cancel` }),
    otherTenant: () => [{ as: "o2", path: `/v1/payouts/${lastPayout}/cancel` }],
  },
  {
    method: "POST",
    route: "/v1/payouts/{id}/mark-paid",
    allowed: ["admin", "finance"],
    request: async () => ({ path: `/v1/payouts/${await o1Payout()}/mark-paid`, body: { reference: "wire-1" } }),
  },
  {
    method: "PUT",
    route: "/v1/payout-policies/{asset}",
    allowed: ["admin"],
    request: () => ({ path: "/v1/payout-policies/USDC", body: { min_amount: "1", schedule: "manual" } }),
  },
  {
    method: "GET",
    route: "/v1/operators/{id}/payout-limits/{asset}",
    allowed: ["admin", "finance", "operator"],
    request: () => ({ path: "/v1/operators/o1/payout-limits/USDC" }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/payout-limits/USDC" }],
  },
  {
    method: "PUT",
    route: "/v1/operators/{id}/payout-limits/{asset}",
    allowed: ["admin", "finance"],
    request: () => ({ path: "/v1/operators/o1/payout-limits/USDC", body: { max_per_payout: "1000", max_per_day: null } }),
  },
  { method: "GET", route: "/v1/payout-policies", allowed: ["admin", "finance"], request: () => ({ path: "/v1/payout-policies" }) },
  {
    method: "PUT",
    route: "/v1/operators/{id}/payout-preferences/{asset}",
    // Where an operator is paid is its own choice: platform keys are refused too.
    allowed: ["operator"],
    request: () => ({ path: "/v1/operators/o1/payout-preferences/USDC", body: { splits: [{ asset: "USDC", bps: 10_000 }] } }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/payout-preferences/USDC", body: { splits: [{ asset: "USDC", bps: 10_000 }] } }],
  },
  {
    method: "GET",
    route: "/v1/operators/{id}/payout-preferences/{asset}",
    allowed: ["admin", "finance", "operator"],
    request: async () => {
      await o1Preference();
      return { path: "/v1/operators/o1/payout-preferences/USDC" };
    },
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1/payout-preferences/USDC" }],
  },
  {
    method: "POST",
    route: "/v1/rates",
    allowed: ["admin", "finance"],
    request: () => ({ path: "/v1/rates", body: { base: "TUSD", quote: "USDC", value: "1" } }),
  },
  { method: "GET", route: "/v1/rates", allowed: [...everyone], request: () => ({ path: "/v1/rates" }) },
  // An operator key naming another operator finds nothing, as GET /v1/payouts does (tests/http/hybrid-settlement.test.ts).
  { method: "GET", route: "/v1/conversions", allowed: ["admin", "finance", "operator"], request: () => ({ path: "/v1/conversions" }) },
  { method: "GET", route: "/v1/rate-locks", allowed: ["admin", "finance", "operator"], request: () => ({ path: "/v1/rate-locks" }) },
  {
    method: "POST",
    route: "/v1/customers/{id}/deposit-addresses",
    allowed: ["admin", "marketplace"],
    request: async (_w, as) => {
      const a = privateKeyToAccount(generatePrivateKey());
      const signature = await a.signMessage({ message: depositAddressMessage({ marketplaceId: "m1", customerId: "c1", chainId: 31337n, address: a.address }) });
      return {
        path: "/v1/customers/c1/deposit-addresses",
        body: { chain_id: 31337, address: a.address, signature, ...(as === "admin" ? { marketplace_id: "m1" } : {}) },
      };
    },
  },
  {
    method: "POST",
    route: "/v1/reconciliations",
    allowed: ["admin", "finance"],
    request: () => ({ path: "/v1/reconciliations", body: { chain_id: 31337, asset: "TUSD", from_block: 0, to_block: 1 } }),
  },
  {
    method: "GET",
    route: "/v1/reconciliations/{id}",
    allowed: ["admin", "finance"],
    request: async () => ({ path: `/v1/reconciliations/${(await reconciliation()).id}` }),
  },
  {
    method: "POST",
    route: "/v1/reconciliations/{id}/items/{item_id}/resolve",
    allowed: ["admin", "finance"],
    request: async () => {
      const r = await reconciliation();
      const item = expectStatus(await api.call("GET", `/v1/reconciliations/${r.id}?status=unexpected_on_chain`), 200).body.items[0];
      return { path: `/v1/reconciliations/${r.id}/items/${item.id}/resolve`, body: { note: "treasury funding, booked separately" } };
    },
  },
  { method: "GET", route: "/v1/treasury", allowed: ["admin", "finance"], request: () => ({ path: "/v1/treasury?chain_id=31337&asset=TUSD" }) },
  ...(
    [
      "trial-balance",
      "fee-revenue?from=2026-01-01T00:00:00Z&to=2026-12-01T00:00:00Z",
      "payouts?from=2026-01-01T00:00:00Z&to=2026-12-01T00:00:00Z",
      "operator-statements?from=2026-01-01T00:00:00Z&to=2026-12-01T00:00:00Z",
      "conversions?from=2026-01-01T00:00:00Z&to=2026-12-01T00:00:00Z",
      "operator-receivables",
    ] as const
  ).map((report): RouteSecurity => ({
    method: "GET",
    route: `/v1/reports/${report.split("?")[0]}`,
    allowed: ["admin", "finance"],
    request: () => ({ path: `/v1/reports/${report}` }),
  })),
  {
    method: "POST",
    route: "/v1/marketplaces/{id}/receipts",
    allowed: ["admin", "finance"],
    request: () => ({ path: "/v1/marketplaces/m1/receipts", body: { asset: "USDC", amount: "1", reference: `security receipt ${++receiptN}` } }),
  },
  {
    method: "POST",
    route: "/v1/marketplaces/{id}/credit-limits",
    allowed: ["admin"],
    request: () => ({ path: "/v1/marketplaces/m1/credit-limits", body: { asset: "USDC", credit_limit: "0" } }),
  },
  {
    method: "GET",
    route: "/v1/marketplaces/{id}/funding/{asset}",
    allowed: ["admin", "finance", "marketplace"],
    request: () => ({ path: "/v1/marketplaces/m1/funding/USDC" }),
    otherTenant: () => [{ as: "m2", path: "/v1/marketplaces/m1/funding/USDC" }],
  },
  // Marketplace and operator keys read the proposals about their own party (tests/http/proposals-of-a-party.test.ts tries every kind).
  {
    method: "GET",
    route: "/v1/proposals",
    allowed: ["admin", "finance", "marketplace", "operator"],
    request: () => ({ path: "/v1/proposals?status=proposed" }),
  },
  {
    method: "GET",
    route: "/v1/proposals/{id}",
    allowed: ["admin", "finance", "marketplace", "operator"],
    // A receipt of m1's (admin, finance, m1 read it); the operator reads a proposal of its own payout caps.
    request: async (_w, as) => ({ path: `/v1/proposals/${as === "o1" ? (lastO1Proposal = await o1CapsProposal()) : (lastM1Proposal = await proposal())}` }),
    otherTenant: () => [
      { as: "m2", path: `/v1/proposals/${lastM1Proposal}` },
      { as: "o2", path: `/v1/proposals/${lastO1Proposal}` },
      { as: "o1", path: `/v1/proposals/${lastM1Proposal}` },
      { as: "m1", path: `/v1/proposals/${lastO1Proposal}` },
    ],
  },
  {
    method: "POST",
    route: "/v1/proposals/{id}/approve",
    allowed: ["admin", "finance"],
    request: async () => ({ path: `/v1/proposals/${await proposal()}/approve`, body: {} }),
  },
  {
    method: "POST",
    route: "/v1/proposals/{id}/reject",
    allowed: ["admin", "finance"],
    request: async () => ({ path: `/v1/proposals/${await proposal()}/reject`, body: { reason: "not received" } }),
  },
  { method: "GET", route: "/v1/audit/verify", allowed: ["admin", "finance"], request: () => ({ path: "/v1/audit/verify" }) },
  { method: "GET", route: "/v1/audit/log", allowed: ["admin", "finance"], request: () => ({ path: "/v1/audit/log" }) },
  // Reads of marketplaces, operators, customers and reconciliation runs (tests/http/resources.test.ts tries more).
  { method: "GET", route: "/v1/marketplaces", allowed: ["admin", "finance", "marketplace"], request: () => ({ path: "/v1/marketplaces" }) },
  {
    method: "GET",
    route: "/v1/marketplaces/{id}",
    allowed: ["admin", "finance", "marketplace"],
    request: () => ({ path: "/v1/marketplaces/m1" }),
    otherTenant: () => [
      { as: "m2", path: "/v1/marketplaces/m1" },
      { as: "m1", path: "/v1/marketplaces/m2" },
    ],
  },
  {
    method: "PUT",
    route: "/v1/marketplaces/{id}/pricing-currency",
    allowed: ["admin"],
    request: () => ({ path: "/v1/marketplaces/m1/pricing-currency", body: { asset: "USDC" } }),
  },
  {
    method: "GET",
    route: "/v1/marketplaces/{id}/periods",
    allowed: ["admin", "finance", "marketplace"],
    request: () => ({ path: "/v1/marketplaces/m1/periods" }),
    otherTenant: () => [{ as: "m2", path: "/v1/marketplaces/m1/periods" }],
  },
  {
    method: "GET",
    route: "/v1/marketplaces/{id}/periods/{period}",
    allowed: ["admin", "finance", "marketplace"],
    request: () => ({ path: "/v1/marketplaces/m1/periods/2020-01" }),
    otherTenant: () => [{ as: "m2", path: "/v1/marketplaces/m1/periods/2020-01" }],
  },
  {
    method: "PUT",
    route: "/v1/marketplaces/{id}/periods/{period}",
    allowed: ["admin", "finance"],
    // A month of its own for each call: each starts closing once.
    request: () => ({ path: `/v1/marketplaces/m1/periods/2019-${String(++periodCalls).padStart(2, "0")}`, body: { status: "closing" } }),
  },
  {
    method: "PUT",
    route: "/v1/marketplaces/{id}/time-zone",
    allowed: ["admin"],
    request: () => ({ path: "/v1/marketplaces/m2/time-zone", body: { time_zone: "UTC" } }),
  },
  {
    method: "PATCH",
    route: "/v1/marketplaces/{id}",
    allowed: ["admin", "marketplace"],
    request: () => ({ path: "/v1/marketplaces/m1", body: { metadata: {} } }),
    otherTenant: () => [{ as: "m1", path: "/v1/marketplaces/m2", body: { metadata: {} } }],
  },
  { method: "GET", route: "/v1/operators", allowed: [...everyone], request: () => ({ path: "/v1/operators" }) },
  {
    method: "GET",
    route: "/v1/operators/{id}",
    allowed: [...everyone],
    request: () => ({ path: "/v1/operators/o1" }),
    otherTenant: () => [
      { as: "o2", path: "/v1/operators/o1" },
      { as: "m2", path: "/v1/operators/o1" },
      { as: "m1", path: "/v1/operators/o2" },
    ],
  },
  {
    method: "PATCH",
    route: "/v1/operators/{id}",
    allowed: ["admin", "operator"],
    request: () => ({ path: "/v1/operators/o1", body: { metadata: {} } }),
    otherTenant: () => [{ as: "o2", path: "/v1/operators/o1", body: { metadata: {} } }],
  },
  { method: "GET", route: "/v1/customers", allowed: ["admin", "finance", "marketplace"], request: () => ({ path: "/v1/customers" }) },
  { method: "GET", route: "/v1/holds", allowed: ["admin", "finance", "marketplace"], request: () => ({ path: "/v1/holds" }) },
  {
    method: "GET",
    route: "/v1/customers/{id}/deposit-addresses",
    allowed: ["admin", "finance", "marketplace"],
    request: (_w, as) => ({ path: `/v1/customers/m1only/deposit-addresses${as === "admin" || as === "finance" ? "?marketplace_id=m1" : ""}` }),
    otherTenant: () => [
      { as: "m2", path: "/v1/customers/m1only/deposit-addresses" },
      { as: "m2", path: "/v1/customers/m1only/deposit-addresses?marketplace_id=m1" },
    ],
  },
  {
    method: "GET",
    route: "/v1/customers/{id}",
    allowed: ["admin", "finance", "marketplace"],
    request: (_w, as) => ({ path: `/v1/customers/m1only${as === "admin" || as === "finance" ? "?marketplace_id=m1" : ""}` }),
    otherTenant: () => [
      { as: "m2", path: "/v1/customers/m1only" },
      { as: "m2", path: "/v1/customers/m1only?marketplace_id=m1" },
    ],
  },
  ...(["balance", "statement"] as const).map((what): RouteSecurity => {
    const query = (...params: string[]) => `?${[...(what === "statement" ? [wideRange()] : []), ...params].join("&")}`;
    return {
      method: "GET",
      route: `/v1/customers/{id}/${what}`,
      allowed: ["admin", "finance", "marketplace"],
      request: (_w, as) => ({ path: `/v1/customers/m1only/${what}${query(...(as === "admin" || as === "finance" ? ["marketplace_id=m1"] : []))}` }),
      otherTenant: () => [
        { as: "m2", path: `/v1/customers/m1only/${what}${query()}` },
        { as: "m2", path: `/v1/customers/m1only/${what}${query("marketplace_id=m1")}` },
      ],
    };
  }),
  {
    method: "PATCH",
    route: "/v1/customers/{id}",
    allowed: ["admin", "marketplace"],
    request: (_w, as) => ({ path: `/v1/customers/m1only${as === "admin" ? "?marketplace_id=m1" : ""}`, body: { metadata: {} } }),
    otherTenant: () => [
      { as: "m2", path: "/v1/customers/m1only", body: { metadata: {} } },
      { as: "m2", path: "/v1/customers/m1only?marketplace_id=m1", body: { metadata: {} } },
    ],
  },
  {
    method: "POST",
    route: "/v1/customers/{id}/retire",
    allowed: ["admin", "marketplace"],
    // A customer of its own each time: the world's are used by other routes.
    request: async (w, as) => ({ path: `/v1/customers/${await freshCustomer(w)}/retire${as === "admin" ? "?marketplace_id=m1" : ""}` }),
    otherTenant: () => [
      { as: "m2", path: "/v1/customers/m1only/retire" },
      { as: "m2", path: "/v1/customers/m1only/retire?marketplace_id=m1" },
    ],
  },
  { method: "GET", route: "/v1/reconciliations", allowed: ["admin", "finance"], request: () => ({ path: "/v1/reconciliations" }) },
  {
    method: "POST",
    route: "/v1/webhook-endpoints",
    allowed: [...everyone],
    request: () => ({ path: "/v1/webhook-endpoints", body: { url: "http://127.0.0.1:9/security" } }),
  },
  { method: "GET", route: "/v1/webhook-endpoints", allowed: [...everyone], request: () => ({ path: "/v1/webhook-endpoints" }) },
  ...(
    [
      ["GET", "/v1/webhook-endpoints/{id}", "", undefined],
      ["PATCH", "/v1/webhook-endpoints/{id}", "", { description: "security" }],
      ["DELETE", "/v1/webhook-endpoints/{id}", "", undefined],
      ["POST", "/v1/webhook-endpoints/{id}/rotate-secret", "/rotate-secret", {}],
      ["GET", "/v1/webhook-endpoints/{id}/deliveries", "/deliveries", undefined],
    ] as const
  ).map(([method, route, suffix, body]): RouteSecurity => ({
    method,
    route,
    allowed: [...everyone],
    // An endpoint of the calling key's own each time; m2 and o2 do not see m1's.
    request: async (w, as) => ({ path: `/v1/webhook-endpoints/${await ownEndpoint(w, as)}${suffix}`, body }),
    otherTenant: () => [
      { as: "m2", path: `/v1/webhook-endpoints/${lastM1Endpoint}${suffix}`, body },
      { as: "o2", path: `/v1/webhook-endpoints/${lastM1Endpoint}${suffix}`, body },
    ],
  })),
  {
    method: "POST",
    route: "/v1/webhook-endpoints/{id}/deliveries/{target}/redeliver",
    allowed: [...everyone],
    // A platform endpoint receives every event; a tenant's, its own: the event is one of the calling key's tenant.
    request: async (w, as) => ({ path: `/v1/webhook-endpoints/${await ownEndpoint(w, as)}/deliveries/${await eventFor(as)}/redeliver` }),
    otherTenant: () => [{ as: "m2", path: `/v1/webhook-endpoints/${lastM1Endpoint}/deliveries/${lastM1Event}/redeliver` }],
  },
  { method: "GET", route: "/v1/events", allowed: [...everyone], request: () => ({ path: "/v1/events?type=usage.batch.completed" }) },
  {
    method: "POST",
    route: "/v1/balance-monitors",
    allowed: [...everyone],
    request: (w, as) => ({ path: "/v1/balance-monitors", body: { account_id: ownAccount(w, as), direction: "below", threshold: "1" } }),
    otherTenant: (w) => [
      { as: "m2", path: "/v1/balance-monitors", body: { account_id: w.m1Customer.id, direction: "below", threshold: "1" } },
      { as: "o2", path: "/v1/balance-monitors", body: { account_id: w.o1Payable.id, direction: "above", threshold: "1" } },
    ],
  },
  { method: "GET", route: "/v1/balance-monitors", allowed: [...everyone], request: () => ({ path: "/v1/balance-monitors" }) },
  ...(["GET", "DELETE"] as const).map((method): RouteSecurity => ({
    method,
    route: "/v1/balance-monitors/{id}",
    allowed: [...everyone],
    // A monitor of the calling key's own each time; m2 and o2 do not see m1's.
    request: async (w, as) => ({ path: `/v1/balance-monitors/${await ownMonitor(w, as)}` }),
    otherTenant: () => [
      { as: "m2", path: `/v1/balance-monitors/${lastM1Monitor}` },
      { as: "o2", path: `/v1/balance-monitors/${lastM1Monitor}` },
    ],
  })),
];

let lastM1Monitor = "";
/** A fresh balance monitor of the key's own tenant on an account it reads, by id. */
async function ownMonitor(w: World, as: keyof World["keys"]): Promise<string> {
  const res = await api.call("POST", "/v1/balance-monitors", { key: w.keys[as], body: { account_id: ownAccount(w, as), direction: "below", threshold: "1" } });
  const id = expectStatus(res, 201).body.id as string;
  if (as === "m1") lastM1Monitor = id;
  return id;
}

let lastM1Endpoint = "";
let lastM1Event = "";
/** A fresh webhook endpoint of the key's own tenant, by id. */
async function ownEndpoint(w: World, as: keyof World["keys"]): Promise<string> {
  const res = await api.call("POST", "/v1/webhook-endpoints", { key: w.keys[as], body: { url: "http://127.0.0.1:9/security" } });
  const id = expectStatus(res, 201).body.id as string;
  if (as === "m1") lastM1Endpoint = id;
  return id;
}
/** An event of the key's tenant in the log (appended as the relay would), by id. */
async function eventFor(as: keyof World["keys"]): Promise<string> {
  const scope = { m1: ["m1", null], m2: ["m2", null], o1: [null, "o1"], o2: [null, "o2"] } as Record<string, [string | null, string | null]>;
  const [m, o] = scope[as] ?? [null, null];
  const [row] = await api.db.query<{ id: string }>(
    `with r as (update event_relay set last_position = last_position + 1 where id = 1 returning last_position)
     insert into events (position, id, type, marketplace_id, operator_id, resource_type, resource_id, data, occurred_at)
     select r.last_position, 'evt_' || gen_random_uuid(), 'test.event', $1, $2, 'test', 'security', '{}'::jsonb, now() from r returning id`,
    [m, o],
  );
  if (as === "m1") lastM1Event = row!.id;
  return row!.id;
}

let inviting: string | undefined;
/** A marketplace that has invited operator o1 (made once). */
async function invitingMarketplace(): Promise<string> {
  if (!inviting) {
    inviting = "inviter";
    expectStatus(await api.call("POST", "/v1/marketplaces", { body: { id: inviting, name: "inviter" } }), 201);
    const key = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "inviter", role: "marketplace", scope_id: inviting } }), 201).body
      .secret as string;
    expectStatus(await api.call("POST", "/v1/operators", { key, body: { id: "o1", name: "operator o1" } }), 202);
  }
  return inviting;
}

let receiptN = 0;
let proposer = "";
/** A fresh receipt proposal of m1, by a finance key of its own (so that the test's keys may decide it). */
let lastM1Proposal = "";
let lastO1Proposal = "";
let capsN = 0;
/** A fresh proposal of o1's payout caps (an admin's), by id. */
async function o1CapsProposal(): Promise<string> {
  const res = await api.call("PUT", "/v1/operators/o1/payout-limits/USDC", { body: { max_per_payout: String(1000 + ++capsN), max_per_day: null } });
  return expectStatus(res, 202).body.id;
}

async function proposal(): Promise<string> {
  proposer ||= expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "proposer", role: "finance" } }), 201).body.secret as string;
  const res = await api.call("POST", "/v1/marketplaces/m1/receipts", {
    key: proposer,
    body: { asset: "USDC", amount: "1", reference: `security proposal ${++receiptN}` },
  });
  return expectStatus(res, 201).body.id;
}

/** A fresh reconciliation of the whole chain so far. */
async function reconciliation(): Promise<{ id: string }> {
  await chain.test.mine({ blocks: 2 });
  const final = Number(await chain.public.getBlockNumber()) - 1;
  return expectStatus(await api.call("POST", "/v1/reconciliations", { body: { chain_id: 31337, asset: "TUSD", from_block: 0, to_block: final } }), 201).body;
}

let preferred: Promise<unknown> | undefined;
/** o1's payout preference for USDC: paid in USDC itself (set once, by its own key). */
function o1Preference(): Promise<unknown> {
  preferred ??= api
    .call("PUT", "/v1/operators/o1/payout-preferences/USDC", { key: w.keys.o1, body: { splits: [{ asset: "USDC", bps: 10_000 }] } })
    .then((res) => expectStatus(res, 200));
  return preferred;
}

let lastPayout = "";
/** A fresh pending payout of o1 (off-chain USDC). */
async function o1Payout(): Promise<string> {
  const res = await api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "USDC", amount: "1" } });
  lastPayout = expectStatus(res, 201).body.id;
  return lastPayout;
}

/** A payout address of the operator on the test chain, with a valid proof. */
async function signedAddress(operatorId: string) {
  const account = privateKeyToAccount(generatePrivateKey());
  const ch = expectStatus(
    await api.call("POST", `/v1/operators/${operatorId}/payout-address-challenges`, { body: { chain_id: 31337, address: account.address } }),
    201,
  ).body;
  return { chain_id: 31337, address: account.address, challenge_id: ch.id, signature: await account.signMessage({ message: ch.message }) };
}

let fresh = 0;
/** A new off-chain asset, by code. */
async function freshAsset(): Promise<string> {
  const code = `FRESH${++fresh}`;
  expectStatus(await api.call("POST", "/v1/assets", { body: { code, scale: 6, settlement: { kind: "offchain" } } }), 201);
  return code;
}
/** A new prepaid customer of m1, by id. */
async function freshCustomer(w: World): Promise<string> {
  const id = `fresh-${++fresh}`;
  expectStatus(await api.call("POST", "/v1/customers", { key: w.keys.m1, body: { id, billing: "prepaid" } }), 201);
  return id;
}
const randomAddress = () => privateKeyToAccount(generatePrivateKey()).address;

let disputeN = 0;
/** A fresh usage record of o1 in m1 (for its postpaid customer, whose credit does not run out), by id. */
async function m1Record(w: World): Promise<string> {
  const res = await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage(`dispute-${++disputeN}`, { customer_id: "m1only" }) });
  return expectStatus(res, 201).body.id;
}
let lastDispute = "";
/** A fresh open dispute of one of m1's records, opened by m1's key (so that admin and finance keys may decide it). */
async function m1Dispute(w: World): Promise<string> {
  const res = await api.call("POST", "/v1/disputes", { key: w.keys.m1, body: { usage_ids: [await m1Record(w)], reason: "security" } });
  lastDispute = expectStatus(res, 201).body.id;
  return lastDispute;
}

let lastHold = "";
/** A fresh open hold of m1's customer c1. */
/** A usage batch of m1 with a refused record, by id (its log: GET /v1/usage-batches/{id}). */
let lastBatch = "";
async function m1Batch(w: World): Promise<string> {
  const res = await api.call("POST", "/v1/usage/batch", { key: w.keys.m1, body: { records: [w.usage(`secl-${Math.random()}`), { external_id: "bad" }] } });
  lastBatch = expectStatus(res, 200).body.batch_id;
  return lastBatch;
}

async function m1UsageHold(w: World): Promise<string> {
  const res = await api.call("POST", "/v1/holds", { key: w.keys.m1, body: { customer_id: "c1", asset: "USDC", amount: "10" } });
  lastHold = expectStatus(res, 201).body.id;
  return lastHold;
}

describe("security of every route", () => {
  for (const spec of routes) {
    it(`${spec.method} ${spec.route}: 401 without a key, 403 for other roles, 404 for other tenants`, async () => {
      await checkRouteSecurity(api, w, spec);
    });
  }

  it("covers every /v1 route of the OpenAPI document", async () => {
    const doc = (await api.call("GET", "/openapi.json", { key: null })).body;
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .filter((r) => r.includes(" /v1/"));
    expect(routes.map((r) => `${r.method} ${r.route}`).sort()).toEqual(documented.sort());
  });

  it("stops answering to a revoked key at once", async () => {
    const k = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "short-lived", role: "finance" } }), 201).body;
    expect((await api.call("GET", "/v1/assets", { key: k.secret })).status).toBe(200);
    expectStatus(await api.call("POST", `/v1/api-keys/${k.id}/revoke`), 200);
    expect((await api.call("GET", "/v1/assets", { key: k.secret })).status).toBe(401);
  });

  it("stores keys hashed: no secret appears in the database", async () => {
    const rows = await api.db.query<{ t: string }>("select row_to_json(k)::text as t from api_keys k");
    for (const secret of Object.values(w.keys)) for (const r of rows) expect(r.t).not.toContain(secret);
    const stored = await api.db.query<{ t: string }>("select body::text as t from http_idempotency");
    for (const secret of Object.values(w.keys)) for (const r of stored) expect(r.t).not.toContain(secret);
  });
});

/**
 * A request that the tenant of `as` can always make and that is stored under its Idempotency-Key:
 * the first use of a key, before the same key is sent with another request.
 */
const primers: Record<"admin" | "finance" | "m1" | "o1", () => { path: string; body: unknown }> = {
  admin: () => ({ path: "/v1/marketplaces", body: { id: `prime-${Math.random().toString(36).slice(2, 10)}`, name: "primer" } }),
  finance: () => ({ path: "/v1/marketplaces/m1/receipts", body: { asset: "USDC", amount: "1", reference: `primer ${++receiptN}` } }),
  m1: () => ({ path: "/v1/customers", body: { id: `prime-${Math.random().toString(36).slice(2, 10)}`, billing: "prepaid" } }),
  o1: () => ({ path: "/v1/operators/o1/payout-address-challenges", body: { chain_id: 31337, address: privateKeyToAccount(generatePrivateKey()).address } }),
};

describe("a refused request writes nothing: an Idempotency-Key used before for another request, on every POST and PATCH route", () => {
  for (const spec of routes.filter((r) => r.method === "POST" || r.method === "PATCH")) {
    it(`${spec.method} ${spec.route}`, async () => {
      const as = ({ admin: "admin", finance: "finance", marketplace: "m1", operator: "o1" } as const)[spec.allowed[0]!];
      const key = `reused-${Math.random().toString(36).slice(2)}`;
      const primer = primers[as]();
      expectStatus(await api.call("POST", primer.path, { key: w.keys[as], body: primer.body, idempotencyKey: key }), 201);
      const { path, ...options } = await spec.request(w, as);
      const before = await writeCounts(api.db);
      const res = await api.call(spec.method, path, { ...options, key: w.keys[as], idempotencyKey: key });
      expect(res.status, `${spec.route}: ${JSON.stringify(res.body)}`).toBe(409);
      expect(res.body.code).toBe("idempotency_key_reused");
      expect(await writeCounts(api.db), spec.route).toEqual(before);
    });
  }
});

describe("query strings and caching, on every route of the OpenAPI document", () => {
  const withQuery = (path: string, query: string) => `${path}${path.includes("?") ? "&" : "?"}${query}`;
  for (const spec of routes) {
    it(`${spec.method} ${spec.route}: an unknown query parameter, or a NUL in one, is a 400 naming it, and nothing is written`, async () => {
      const as = ({ admin: "admin", finance: "finance", marketplace: "m1", operator: "o1" } as const)[spec.allowed[0]!];
      const { path, ...options } = await spec.request(w, as);
      const before = await writeCounts(api.db);
      const unknown = await api.call(spec.method, withQuery(path, "x_unknown=1"), { ...options, key: w.keys[as] });
      expect(unknown.status, `${spec.route}: ${JSON.stringify(unknown.body)}`).toBe(400);
      expect(unknown.body).toMatchObject({ code: "invalid_request", errors: [{ path: "x_unknown" }] });
      expect(unknown.headers.get("cache-control")).toBe("no-store");
      const nul = await api.call(spec.method, withQuery(path, "x_nul=a%00b"), { ...options, key: w.keys[as] });
      expect(nul.status, `${spec.route}: ${JSON.stringify(nul.body)}`).toBe(400);
      expect(nul.body).toMatchObject({ code: "invalid_request", errors: [{ path: "x_nul", message: expect.stringContaining("NUL") }] });
      expect(await writeCounts(api.db), spec.route).toEqual(before);
    });
  }

  it("answers that carry a secret or tenant data are never cached; the public documents may be", async () => {
    const key = await api.call("POST", "/v1/api-keys", { body: { name: "cache check", role: "finance" } });
    expectStatus(key, 201);
    expect(key.headers.get("cache-control")).toBe("no-store");
    expect((await api.call("GET", "/v1/operators/o1/balances", { key: w.keys.o1 })).headers.get("cache-control")).toBe("no-store");
    expect((await api.call("GET", "/v1/nothing-here", { key: w.keys.o1 })).headers.get("cache-control")).toBe("no-store");
    // A declared parameter still works, an unknown one next to it is named.
    const listed = await api.call("GET", "/v1/payouts?limit=5&statuss=pending", { key: w.keys.finance });
    expect(listed.status).toBe(400);
    expect(listed.body.detail).toMatch(/unknown query parameter statuss: this route takes .*status/);
  });
});

describe("NUL characters reach no query", () => {
  it("a reconciliation item resolved with a NUL in its note is a 400 naming the note, and stays open", async () => {
    const r = await reconciliation();
    const item = expectStatus(await api.call("GET", `/v1/reconciliations/${r.id}?status=unexpected_on_chain`), 200).body.items[0];
    const before = await writeCounts(api.db);
    const res = await api.call("POST", `/v1/reconciliations/${r.id}/items/${item.id}/resolve`, {
      key: w.keys.finance,
      body: { note: "booked\u0000 elsewhere" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ code: "invalid_request", errors: [{ path: "note" }] });
    expect(await writeCounts(api.db)).toEqual(before);
    const again = expectStatus(await api.call("GET", `/v1/reconciliations/${r.id}?status=unexpected_on_chain`), 200).body.items;
    expect(again.find((i: { id: string }) => i.id === item.id)).toMatchObject({ resolved_at: null });
  });
});
