import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ago } from "../support/clock.js";
import { expectRefused, expectStatus, testApi, world, type TestApi } from "../support/http.js";
import type { World } from "../support/security.js";

/**
 * Limits set by the platform, not the tenant: no usage record may claim an absurd amount, or more of
 * a time unit than its period holds. Each refusal is an attack that was accepted before.
 */
let api: TestApi;
let w: World;
beforeAll(async () => {
  api = await testApi();
  w = await world(api);
});
afterAll(async () => api?.close());

const HOUR = 3_600_000;
const record = (id: string, extra: Record<string, unknown>) => {
  const end = ago(2 * HOUR);
  return { ...w.usage(id), customer_id: "m1only", period_start: new Date(end.getTime() - HOUR).toISOString(), period_end: end.toISOString(), ...extra };
};
const post =
  (body: unknown, key = w.keys.m1) =>
  () =>
    api.call("POST", "/v1/usage", { key, body });

describe("usage limits", () => {
  it("refuses an absurd record against a postpaid customer (quantity 1e38 at 1e20 a unit)", async () => {
    const res = await expectRefused(
      api,
      post(record("absurd", { unit: "token", quantity: "1" + "0".repeat(38), unit_price: "1" + "0".repeat(20) })),
      422,
      "usage_limit_exceeded",
      "quantity",
    );
    expect(res.body.detail).toMatch(/exceeds the limit of 1000000000000 USDC \(smallest units\) per record/);
  });

  it("refuses 5,000 GPU-hours inside a one-second period, and accepts what the period holds", async () => {
    const end = ago(2 * HOUR);
    const oneSecond = { period_start: new Date(end.getTime() - 1000).toISOString(), period_end: end.toISOString(), unit: "gpu_hour", unit_price: "0.01" };
    const res = await expectRefused(api, post(record("burst", { ...oneSecond, quantity: "5000" })), 422, "usage_limit_exceeded", "quantity");
    expect(res.body.detail).toMatch(/5000 gpu_hour in a period of 1 s/);
    // 8 GPUs for an hour: 8 GPU-hours in 3,600 s.
    expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: record("eight", { unit: "gpu_hour", quantity: "8", unit_price: "2" }) }), 201);
    // A zero-length period holds no GPU time at all.
    await expectRefused(
      api,
      post(record("instant", { ...oneSecond, period_start: end.toISOString(), quantity: "1" })),
      422,
      "usage_limit_exceeded",
      "quantity",
    );
  });

  it("each record of a batch is judged on its own", async () => {
    const batch = expectStatus(
      await api.call("POST", "/v1/usage/batch", {
        key: w.keys.m1,
        body: {
          records: [
            record("b-ok", { unit: "gpu_hour", quantity: "2", unit_price: "1" }),
            record("b-huge", { unit: "token", quantity: "1" + "0".repeat(30), unit_price: "1" }),
          ],
        },
      }),
      200,
    ).body;
    expect(batch.results.map((r: { status: string; code?: string }) => r.code ?? r.status)).toEqual(["accepted", "usage_limit_exceeded"]);
  });

  it("only an admin changes a marketplace's limits; they apply at once and are visible to the marketplace", async () => {
    const path = "/v1/marketplaces/m1/usage-limits/USDC";
    await expectRefused(api, () => api.call("PUT", path, { key: w.keys.m1, body: { max_gross_per_record: "1" + "0".repeat(30) } }), 403, "forbidden");
    expect(expectStatus(await api.call("GET", path, { key: w.keys.m1 }), 200).body).toMatchObject({
      max_gross_per_record: "1000000000000",
      max_quantity_per_second: {},
    });
    await expectRefused(api, () => api.call("GET", path, { key: w.keys.m2 }), 404, "marketplace_not_found");
    // A bigger ceiling for this marketplace, and a rate for a unit that has no default.
    // A limit change is a proposal: nothing changes until another key approves it.
    const body = { max_gross_per_record: "5000000000000", max_quantity_per_second: { token: "1000" } };
    const proposal = expectStatus(await api.call("PUT", path, { key: w.keys.admin, body }), 202).body;
    expect(proposal).toMatchObject({ kind: "usage_limits", status: "proposed", marketplace_id: "m1" });
    expect(expectStatus(await api.call("PUT", path, { key: w.keys.admin, body }), 202).body.id).toBe(proposal.id); // the same change asked again
    await expectRefused(
      api,
      post(record("big-early", { unit: "job", quantity: "1", amount: "2000000000000", unit_price: undefined })),
      422,
      "usage_limit_exceeded",
    );
    expect(expectStatus(await api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: w.keys.admin, body: {} }), 403).body.code).toBe("four_eyes");
    expectStatus(await api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: w.keys.finance, body: {} }), 200);
    const set = expectStatus(await api.call("GET", path, { key: w.keys.m1 }), 200).body;
    expect(set).toMatchObject({ max_gross_per_record: "5000000000000", max_quantity_per_second: { token: "1000" }, updated_by: expect.any(String) });
    expectStatus(
      await api.call("POST", "/v1/usage", {
        key: w.keys.m1,
        body: record("big-ok", { unit: "job", quantity: "1", amount: "2000000000000", unit_price: undefined }),
      }),
      201,
    );
    await expectRefused(api, post(record("tokens", { unit: "token", quantity: "3600001", unit_price: "0.000001" })), 422, "usage_limit_exceeded", "quantity");
    expectStatus(
      await api.call("POST", "/v1/usage", { key: w.keys.m1, body: record("tokens-ok", { unit: "token", quantity: "3600000", unit_price: "0.000001" }) }),
      201,
    );
    // Back to the default.
    const reset = expectStatus(
      await api.call("PUT", path, { key: w.keys.admin, body: { max_gross_per_record: null, max_quantity_per_second: { token: null } } }),
      202,
    ).body;
    expectStatus(await api.call("POST", `/v1/proposals/${reset.id}/approve`, { key: w.keys.finance, body: {} }), 200);
    expect(expectStatus(await api.call("GET", path), 200).body).toMatchObject({ max_gross_per_record: "1000000000000", max_quantity_per_second: {} });
    await expectRefused(api, () => api.call("PUT", path, { body: { max_quantity_per_second: { token: "-1" } } }), 400, "invalid_request");
    await expectRefused(api, () => api.call("PUT", "/v1/marketplaces/m1/usage-limits/NOPE", { body: {} }), 404, "asset_not_found");
  });
});
