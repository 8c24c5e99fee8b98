import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectStatus, testApi, world, writeCounts, type ApiResponse, type TestApi } from "../support/http.js";
import type { World } from "../support/security.js";

let api: TestApi;
let w: World;
beforeAll(async () => {
  api = await testApi();
  w = await world(api);
});
afterAll(async () => api.close());

async function refused(request: () => Promise<ApiResponse>, status: number, code: string, field?: string): Promise<ApiResponse> {
  const before = await writeCounts(api.db);
  const [usage] = await api.db.query<{ n: string }>("select count(*)::text as n from usage_records");
  const res = await request();
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
  if (field) expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
  expect(await writeCounts(api.db)).toEqual(before);
  const [after] = await api.db.query<{ n: string }>("select count(*)::text as n from usage_records");
  expect(after!.n).toBe(usage!.n);
  return res;
}
const post = (body: unknown, key = w.keys.m1) => () => api.call("POST", "/v1/usage", { key, body });

describe("bad usage: a clear 4xx, nothing written", () => {
  it("the same external_id with other content", () => refused(post(w.usage("world-1", { quantity: "7200" })), 409, "usage_conflict"));
  it("a period ending in the future", () => refused(post(w.usage("f-1", { period_end: new Date(Date.now() + 3_600_000).toISOString() })), 422, "usage_in_future"));
  it("a price that rates to less than one unit", () => refused(post(w.usage("z-1", { quantity: "1", unit_price: "0.0000001" })), 422, "rates_to_zero"));
  it("an operator not registered with the marketplace", () => refused(post(w.usage("o-1", { operator_id: "o2" })), 404, "operator_not_found"));
  it("an unknown customer", () => refused(post(w.usage("c-1", { customer_id: "nobody" })), 404, "customer_not_found"));
  it("an unknown asset", () => refused(post(w.usage("a-1", { asset: "NOPE" })), 404, "asset_not_found"));
  it("both a unit price and an amount", () => refused(post(w.usage("p-1", { amount: "5" })), 400, "invalid_request", "unit_price"));
  it("a period that ends before it starts", () => refused(post(w.usage("p-2", { period_start: "2026-11-02T00:00:00Z" })), 400, "invalid_request", "period_start"));
  it("a quantity as a number or with too many decimals", async () => {
    await refused(post(w.usage("q-1", { quantity: 3600 })), 400, "invalid_request", "quantity");
    await refused(post(w.usage("q-2", { unit_price: "0.0000000000000000001" })), 400, "invalid_request", "unit_price");
  });
  it("insufficient prepaid funds", () => refused(post(w.usage("big-1", { amount: "999999999999", unit_price: undefined })), 422, "exceeds_credits"));
  it("an admin key that names no marketplace", () => refused(post(w.usage("adm-1"), w.keys.admin), 400, "invalid_request", "marketplace_id"));
  it("a marketplace key naming another marketplace", () => refused(post({ ...w.usage("mk-1"), marketplace_id: "m2" }), 403, "forbidden"));
  it("a batch over 10,000 records", () => refused(() => api.call("POST", "/v1/usage/batch", { key: w.keys.m1, body: { records: Array.from({ length: 10_001 }, () => ({})) } }), 400, "invalid_request", "records"));
  it("reversing twice", async () => {
    const u = expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("rev-twice") }), 201).body;
    expectStatus(await api.call("POST", `/v1/usage/${u.id}/reverse`, { key: w.keys.m1, body: { reason: "first" } }), 201);
    await refused(() => api.call("POST", `/v1/usage/${u.id}/reverse`, { key: w.keys.m1, body: { reason: "second" } }), 409, "already_reversed");
    await refused(() => api.call("POST", `/v1/usage/${u.id}/reverse`, { key: w.keys.m1, body: {} }), 400, "invalid_request", "reason");
  });
  it("a hold on a postpaid customer, or beyond the balance", async () => {
    await refused(() => api.call("POST", "/v1/holds", { key: w.keys.m1, body: { customer_id: "m1only", asset: "USDC", amount: "1" } }), 400, "invalid_request", "customer_id");
    await refused(() => api.call("POST", "/v1/holds", { key: w.keys.m1, body: { customer_id: "c1", asset: "USDC", amount: "999999999999" } }), 422, "exceeds_credits");
  });
  it("an unknown hold", () => refused(post(w.usage("h-x", { hold_id: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e" })), 404, "hold_not_found"));
  it("a statement or earnings period that ends before it starts, or a bad grouping", async () => {
    await refused(() => api.call("GET", "/v1/operators/o1/statement?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z"), 400, "invalid_request", "from");
    await refused(() => api.call("GET", "/v1/operators/o1/earnings?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z&group_by=week"), 400, "invalid_request", "group_by");
    await refused(() => api.call("GET", "/v1/operators/o1/statement"), 400, "invalid_request", "from");
  });
});

describe("atomic batches", () => {
  it("write nothing when one record is rejected", async () => {
    const [before] = await api.db.query<{ n: string }>("select count(*)::text as n from usage_records");
    const res = expectStatus(await api.call("POST", "/v1/usage/batch", { key: w.keys.m1, body: { atomic: true, records: [w.usage("at-1"), w.usage("at-2", { operator_id: "o2" })] } }), 200).body;
    expect(res.results.map((r: { error: { code: string } }) => r.error.code)).toEqual(["atomic_batch_aborted", "operator_not_found"]);
    const [after] = await api.db.query<{ n: string }>("select count(*)::text as n from usage_records");
    expect(after!.n).toBe(before!.n);
  });
});
