import { beforeAll, describe, expect, it } from "vitest";
import { Settlements } from "../../src/chain/settlement.js";
import { createLogger } from "../../src/log.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { ago, ahead } from "../support/clock.js";
import { expectRefused, expectStatus, worldPerFile } from "../support/http.js";

/**
 * Hybrid settlement's reports and settings over HTTP: an operator's earnings with what they were
 * paid in, the finance report of conversions with the platform's positions, assets' rate bounds
 * (four eyes), and a marketplace's usage rated in its pricing currency only.
 */
const t = worldPerFile();
const period = () => `from=${ago(86_400_000).toISOString()}&to=${ahead(86_400_000).toISOString()}`;

beforeAll(async () => {
  for (const [code, scale] of [
    ["USD", 6],
    ["EUR", 2],
  ] as const) {
    expectStatus(await t.api.call("POST", "/v1/assets", { body: { code, scale, settlement: { kind: "offchain" } } }), 201);
  }
  const p = expectStatus(await t.api.call("POST", "/v1/rates", { key: t.w.keys.finance, body: { base: "USD", quote: "EUR", value: "0.9" } }), 202).body;
  expectStatus(await t.api.call("POST", `/v1/proposals/${p.id}/approve`, { key: t.w.keys.admin, body: {} }), 200);
  // o1 earns USD in m1, funded by m1's settlement.
  const receipt = expectStatus(
    await t.api.call("POST", "/v1/marketplaces/m1/receipts", { key: t.w.keys.finance, body: { asset: "USD", amount: "100000000", reference: "usd m1" } }),
    201,
  ).body;
  expectStatus(await t.api.call("POST", `/v1/proposals/${receipt.id}/approve`, { key: t.w.keys.admin, body: {} }), 200);
  expectStatus(await t.api.call("POST", "/v1/customers/c1/deposits", { key: t.w.keys.m1, body: { asset: "USD", amount: "100000000" } }), 201);
  for (const id of ["hybrid-r1", "hybrid-r2"])
    expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage(id, { asset: "USD" }) }), 201);
  const body = { splits: [{ asset: "EUR", bps: 10_000 }] };
  expectStatus(await t.api.call("PUT", "/v1/operators/o1/payout-preferences/USD", { key: t.w.keys.o1, body }), 200);
  for (const amount of ["1000000", "2000001"]) {
    expectStatus(await t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body: { asset: "USD", amount } }), 201);
  }
  expect(await new PayoutWorker(t.api.db, new Settlements([]), { log: createLogger("silent") }).convert()).toBe(2);
});

describe("reports in both currencies", () => {
  it("an operator's earnings say what they were paid in, at which average rate and from which sources", async () => {
    const earnings = expectStatus(await t.api.call("GET", `/v1/operators/o1/earnings?${period()}`, { key: t.w.keys.o1 }), 200).body;
    // 3.000001 USD at 0.9: 2.70 EUR for 3.000000 USD (the millionth of a dollar is worth no cent: it stayed in the payable).
    expect(earnings.paid_in).toEqual([
      expect.objectContaining({
        from_asset: "USD",
        to_asset: "EUR",
        conversions: 2,
        used: "3000000",
        used_display: "3",
        to_amount: "270",
        to_amount_display: "2.7",
        remainder: "1",
        average_rate: "0.9",
        feed: 0,
        manual: 2,
      }),
    ]);
    // Another operator's key does not see it.
    await expectRefused(t.api, () => t.api.call("GET", `/v1/operators/o1/earnings?${period()}`, { key: t.w.keys.o2 }), 404, "operator_not_found");
  });

  it("finance's conversion report gives the pairs, the platform's position in EUR and its gains or losses; CSV too", async () => {
    const r = expectStatus(await t.api.call("GET", `/v1/reports/conversions?${period()}`, { key: t.w.keys.finance }), 200).body;
    expect(r.data).toEqual([expect.objectContaining({ from_asset: "USD", to_asset: "EUR", to_amount: "270", average_rate: "0.9" })]);
    expect(r.positions).toEqual([
      expect.objectContaining({
        pricing_asset: "USD",
        asset: "EUR",
        position: "-270",
        position_display: "-2.7",
        book_value: "3000000",
        latest_rate: "1.111111111111111111",
      }),
    ]);
    expect(r.gains_losses).toEqual([{ asset: "USD", net: "0", net_display: "0" }]);
    const csv = expectStatus(await t.api.call("GET", `/v1/reports/conversions?${period()}&format=csv`, { key: t.w.keys.finance }), 200).body as string;
    expect(csv).toMatch(
      /^from_asset,to_asset,conversions,used,to_amount,remainder,average_rate,feed,manual,first_at,last_at,used_display,to_amount_display,remainder_display\r?\nUSD,EUR,2,3000000,270,1,0.9,0,2,.*,3,2\.7,0\.000001\r?\n$/,
    );
    await expectRefused(t.api, () => t.api.call("GET", `/v1/reports/conversions?${period()}`, { key: t.w.keys.o1 }), 403, "forbidden");
  });
});

describe("an asset's rate bounds", () => {
  it("are set at registration and changed by a proposal another key approves", async () => {
    const gbp = expectStatus(
      await t.api.call("POST", "/v1/assets", {
        body: { code: "GBP", scale: 2, settlement: { kind: "offchain" }, rate_max_age_seconds: 600, rate_max_deviation_bps: 25 },
      }),
      201,
    ).body;
    expect(gbp).toMatchObject({ rate_max_age_seconds: 600, rate_max_deviation_bps: 25 });
    const p = expectStatus(
      await t.api.call("PUT", "/v1/assets/GBP/rate-bounds", { key: t.w.keys.admin, body: { rate_max_age_seconds: 900, rate_max_deviation_bps: 50 } }),
      202,
    ).body;
    expect(p).toMatchObject({ kind: "rate_bounds", status: "proposed" });
    expect(expectStatus(await t.api.call("GET", "/v1/assets/GBP"), 200).body).toMatchObject({ rate_max_age_seconds: 600 });
    await expectRefused(t.api, () => t.api.call("POST", `/v1/proposals/${p.id}/approve`, { key: t.w.keys.admin, body: {} }), 403, "four_eyes");
    expectStatus(await t.api.call("POST", `/v1/proposals/${p.id}/approve`, { key: t.w.keys.finance, body: {} }), 200);
    expect(expectStatus(await t.api.call("GET", "/v1/assets/GBP"), 200).body).toMatchObject({ rate_max_age_seconds: 900, rate_max_deviation_bps: 50 });
  });

  it("out of range, or asked for by a key that may not, they are refused and nothing is proposed", async () => {
    for (const body of [
      { rate_max_age_seconds: 0, rate_max_deviation_bps: 50 },
      { rate_max_age_seconds: 900, rate_max_deviation_bps: 10_001 },
      { rate_max_age_seconds: 31_536_001, rate_max_deviation_bps: 0 },
    ]) {
      const field = body.rate_max_age_seconds === 900 ? "rate_max_deviation_bps" : "rate_max_age_seconds";
      await expectRefused(t.api, () => t.api.call("PUT", "/v1/assets/GBP/rate-bounds", { key: t.w.keys.admin, body }), 400, "invalid_request", field);
    }
    await expectRefused(
      t.api,
      () => t.api.call("PUT", "/v1/assets/GBP/rate-bounds", { key: t.w.keys.finance, body: { rate_max_age_seconds: 60, rate_max_deviation_bps: 0 } }),
      403,
      "forbidden",
    );
  });
});

describe("a marketplace priced in USD", () => {
  it("rates usage in USD only: a record in another asset is refused naming the currency, and nothing is written", async () => {
    expectStatus(await t.api.call("PUT", "/v1/marketplaces/m1/pricing-currency", { key: t.w.keys.admin, body: { asset: "USD" } }), 200);
    const refused = await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage("hybrid-usdc", { asset: "USDC" }) }),
      422,
      "asset_mismatch",
      "asset",
    );
    expect(refused.body.detail).toMatch(/marketplace m1 prices its usage in USD/);
    expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage("hybrid-usd", { asset: "USD" }) }), 201);
    // A settlement in another asset than its pricing currency is refused too.
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/marketplaces/m1/receipts", { key: t.w.keys.finance, body: { asset: "EUR", amount: "100", reference: "eur m1" } }),
      422,
      "asset_mismatch",
      "asset",
    );
  });
});
