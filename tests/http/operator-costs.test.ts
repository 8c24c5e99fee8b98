import { describe, expect, it } from "vitest";
import { hoursAgo, usageMonth } from "../support/clock.js";
import { expectRefused, expectStatus, worldPerFile, writeCounts } from "../support/http.js";

/**
 * Costs, margin and what-if (docs/usage.md): the costs are the operator's private data; the margin
 * and the what-if are worked out here from the posted usage, the declared capacity and the costs,
 * independently of the service, with exact integers (USDC has 6 decimals).
 */
const t = worldPerFile();
const H = 3_600_000n;
const RES = "gpu:costs";
const USDC = 1_000_000n;

/** The world's fee schedule: 10% marketplace, 1% protocol, each rounded down; the operator keeps the rest. */
const netOf = (gross: bigint) => gross - (gross * 1000n) / 10_000n - (gross * 100n) / 10_000n;
const ceil = (n: bigint, d: bigint) => (n + d - 1n) / d;
const usdc = (units: bigint): string => {
  if (units < 0n) return "-" + usdc(-units);
  const s = units.toString().padStart(7, "0");
  const frac = s.slice(-6).replace(/0+$/, "");
  return s.slice(0, -6) + (frac ? "." + frac : "");
};

// 500 W at 0.2 per kWh; 10 + 5 a month; 1200 over 24 months: all per unit.
const COSTS = {
  asset: "USDC",
  power_watts: "500",
  price_per_kwh: "0.2",
  bandwidth_monthly: "10",
  other_monthly: "5",
  purchase_price: "1200",
  depreciation_months: 24,
};
const path = `/v1/operators/o1/costs/${RES}`;

describe("operator costs", () => {
  it("are the operator's own: admin and the operator write, finance reads, marketplaces and other operators see nothing", async () => {
    const { keys } = t.w;
    const put = expectStatus(await t.api.call("PUT", path, { key: keys.o1, body: COSTS }), 200).body;
    expect(put).toMatchObject({ ...COSTS, operator_id: "o1", resource: RES, depreciation_months: 24 });
    for (const key of [keys.o1, keys.admin, keys.finance]) expect(expectStatus(await t.api.call("GET", path, { key }), 200).body).toEqual(put);
    expect(expectStatus(await t.api.call("GET", "/v1/operators/o1/costs", { key: keys.finance }), 200).body.data).toEqual([put]);
    for (const key of [keys.m1, keys.o2]) {
      await expectRefused(t.api, () => t.api.call("GET", path, { key }), 404, "operator_not_found");
      await expectRefused(t.api, () => t.api.call("GET", "/v1/operators/o1/costs", { key }), 404, "operator_not_found");
      await expectRefused(t.api, () => t.api.call("PUT", path, { key, body: COSTS }), 404, "operator_not_found");
      await expectRefused(t.api, () => t.api.call("GET", "/v1/operators/o1/margin?period=" + usageMonth.label, { key }), 404, "operator_not_found");
    }
    await expectRefused(t.api, () => t.api.call("PUT", path, { key: keys.finance, body: COSTS }), 403, "forbidden");
    await expectRefused(t.api, () => t.api.call("GET", "/v1/operators/o1/costs/gpu:none", { key: keys.o1 }), 404, "operator_costs_not_found");
  });

  it("refuses bad costs, naming the field, and writes nothing", async () => {
    const { keys } = t.w;
    const bad: [Record<string, unknown>, string][] = [
      [{ power_watts: "-1" }, "power_watts"],
      [{ price_per_kwh: "0.1234567891" }, "price_per_kwh"],
      [{ bandwidth_monthly: 10 }, "bandwidth_monthly"],
      [{ purchase_price: "1" + "0".repeat(13) }, "purchase_price"],
      [{ depreciation_months: 0 }, "depreciation_months"],
      [{ surprise: 1 }, "surprise"],
    ];
    for (const [change, field] of bad)
      await expectRefused(t.api, () => t.api.call("PUT", path, { key: keys.o1, body: { ...COSTS, ...change } }), 400, "invalid_request", field);
    await expectRefused(t.api, () => t.api.call("PUT", path, { key: keys.o1, body: { ...COSTS, asset: "NOPE" } }), 404, "asset_not_found", "asset");
  });

  it("margin per month: the ledger's net less energy on available hours, monthly costs and depreciation", async () => {
    const { keys } = t.w;
    // 2 units from the start of the usage month on; 10 unit-hours sold in it at 3 USDC.
    const body = { resource: RES, units: 2, effective_from: usageMonth.from.toISOString() };
    expectStatus(await t.api.call("POST", "/v1/operators/o1/capacity", { key: keys.o1, body }), 201);
    const usage = t.w.usage("costs-a", {
      resource: RES,
      unit: "gpu_hour",
      quantity: "10",
      unit_price: "3",
      period_start: usageMonth.day(0, 10).toISOString(),
      period_end: usageMonth.day(10, 10).toISOString(),
    });
    expectStatus(await t.api.call("POST", "/v1/usage", { key: keys.m1, body: usage }), 201);
    const res = expectStatus(await t.api.call("GET", `/v1/operators/o1/margin?period=${usageMonth.label}`, { key: keys.o1 }), 200).body;
    const monthMs = BigInt(usageMonth.to.getTime() - usageMonth.from.getTime());
    const unitMs = 2n * monthMs;
    const energy = ceil(500n * 2n * unitMs * USDC, 10n * H * 1000n);
    const bandwidth = ceil(10n * USDC * unitMs, monthMs);
    const other = ceil(5n * USDC * unitMs, monthMs);
    const depreciation = ceil(1200n * USDC * unitMs, monthMs * 24n);
    const net = netOf(30n * USDC);
    const costs = energy + bandwidth + other + depreciation;
    expect(res.data).toEqual([
      {
        month: usageMonth.label,
        resource: RES,
        asset: "USDC",
        available_unit_hours: (unitMs / H).toString(),
        paid_unit_hours: "10",
        revenue: usdc(net),
        energy: usdc(energy),
        bandwidth: "20",
        other: "10",
        depreciation: "100",
        costs: usdc(costs),
        margin: usdc(net - costs),
        margin_units: (net - costs).toString(),
      },
    ]);
    await expectRefused(t.api, () => t.api.call("GET", "/v1/operators/o1/margin?period=2026-13", { key: keys.o1 }), 400, "invalid_request", "period");
    await expectRefused(t.api, () => t.api.call("GET", "/v1/operators/o1/margin", { key: keys.o1 }), 400, "invalid_request", "from");
  });

  it("fleet and what-if: the last weeks' utilisation and realised rate, extrapolated; nothing written", async () => {
    const { keys } = t.w;
    // 4 unit-hours in the last week at 2.5 USDC (2 units for 2 hours).
    const usage = t.w.usage("costs-b", {
      resource: RES,
      unit: "gpu_hour",
      quantity: "4",
      unit_price: "2.5",
      period_start: hoursAgo(50).toISOString(),
      period_end: hoursAgo(48).toISOString(),
    });
    expectStatus(await t.api.call("POST", "/v1/usage", { key: keys.m1, body: usage }), 201);
    const net = netOf(10n * USDC);
    const fleet = expectStatus(await t.api.call("GET", "/v1/operators/o1/fleet", { key: keys.o1 }), 200).body;
    expect(fleet.data.find((r: { resource: string }) => r.resource === RES)).toMatchObject({
      declared_units: 2,
      available_unit_hours: "1440",
      paid_unit_hours: "4",
      net: usdc(net),
      net_per_paid_unit_hour: usdc(net / 4n),
    });

    const before = await writeCounts(t.api.db);
    const body = { resource: RES, units: 3, weeks: 1, price_per_kwh: "0.1" };
    const res = expectStatus(await t.api.call("POST", "/v1/operators/o1/scenarios", { key: keys.o1, body }), 200).body;
    expect(await writeCounts(t.api.db)).toEqual(before);
    const available = 2n * 7n * 24n * H;
    const revenue = (3n * 730n * H * net) / available;
    const monthUnitMs = 3n * 730n * H;
    const energy = ceil(500n * 1n * monthUnitMs * USDC, 10n * H * 1000n); // 0.5 kW × 0.1 × 2190 h = 109.5
    const costs = energy + 30n * USDC + 15n * USDC + 150n * USDC;
    const margin = revenue - costs;
    expect(res.inputs).toEqual({ ...COSTS, resource: RES, units: 3, weeks: 1, price_per_kwh: "0.1" });
    expect(res.history).toMatchObject({ available_unit_hours: "336", paid_unit_hours: "4", net: usdc(net), utilisation: "0.011904" });
    expect(res.monthly).toMatchObject({ energy: "109.5", bandwidth: "30", other: "15", depreciation: "150", costs: usdc(costs) });
    expect(res.monthly.revenue).toBe(usdc(revenue));
    expect(res.monthly.margin).toBe(usdc(margin));
    expect(margin < 0n && res.monthly.payback_months === null).toBe(true);
    // Without energy and running costs, 3 units at 100 each earn themselves back: 300 / margin months, 2 decimals rounded up.
    const cheap = { ...body, price_per_kwh: "0", bandwidth_monthly: "0", other_monthly: "0", purchase_price: "100" };
    const paid = expectStatus(await t.api.call("POST", "/v1/operators/o1/scenarios", { key: keys.finance, body: cheap }), 200).body;
    const cheapMargin = revenue - ceil(300n * USDC, 24n);
    expect(paid.monthly).toMatchObject({
      costs: "12.5",
      margin: usdc(cheapMargin),
      payback_months: (Number(ceil(300n * USDC * 100n, cheapMargin)) / 100).toString(),
    });

    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/operators/o1/scenarios", { key: keys.o1, body: { resource: "gpu:none", units: 1, weeks: 4 } }),
      404,
      "operator_costs_not_found",
      "power_watts",
    );
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/operators/o1/scenarios", { key: keys.o1, body: { ...body, weeks: 0 } }),
      400,
      "invalid_request",
      "weeks",
    );
    await expectRefused(t.api, () => t.api.call("POST", "/v1/operators/o2/scenarios", { key: keys.o1, body }), 404, "operator_not_found");
  });
});
