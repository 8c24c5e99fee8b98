import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ahead, usageMonth, wideRange } from "../support/clock.js";
import { expectRefused, expectStatus, testApi, world, type ApiResponse, type TestApi } from "../support/http.js";
import type { World } from "../support/security.js";

let api: TestApi;
let w: World;
beforeAll(async () => {
  api = await testApi();
  w = await world(api);
});
afterAll(async () => api.close());

const refused = (request: () => Promise<ApiResponse>, status: number, code: string, field?: string) => expectRefused(api, request, status, code, field);
const post =
  (body: unknown, key = w.keys.m1) =>
  () =>
    api.call("POST", "/v1/usage", { key, body });

describe("bad usage: a clear 4xx, nothing written", () => {
  it("fields left out are each named as required, whatever their type", async () => {
    const res = await refused(post({ external_id: "missing-1", operator_id: "o1" }), 400, "invalid_request");
    const byField = Object.fromEntries(res.body.errors.map((e: { path: string; message: string }) => [e.path, e.message]));
    for (const field of ["customer_id", "quantity", "period_start", "period_end", "asset"]) expect(byField[field], field).toBe("is required");
    expect(res.body.detail).toContain("customer_id: is required");
    // A value of the wrong type is still described as such.
    const wrong = await refused(post(w.usage("missing-2", { customer_id: 42 })), 400, "invalid_request", "customer_id");
    expect(wrong.body.detail).not.toContain("is required");
  });
  it("the same external_id with other content", () => refused(post(w.usage("world-1", { quantity: "7200" })), 409, "usage_conflict"));
  it("a period ending in the future", () => refused(post(w.usage("f-1", { period_end: ahead(3_600_000).toISOString() })), 422, "usage_in_future"));
  it("a price that rates to less than one unit", () => refused(post(w.usage("z-1", { quantity: "1", unit_price: "0.0000001" })), 422, "rates_to_zero"));
  it("an operator not registered with the marketplace", () => refused(post(w.usage("o-1", { operator_id: "o2" })), 404, "operator_not_found"));
  it("an unknown customer", () => refused(post(w.usage("c-1", { customer_id: "nobody" })), 404, "customer_not_found"));
  it("an unknown asset", () => refused(post(w.usage("a-1", { asset: "NOPE" })), 404, "asset_not_found"));
  it("both a unit price and an amount", () => refused(post(w.usage("p-1", { amount: "5" })), 400, "invalid_request", "unit_price"));
  it("a period that ends before it starts", () =>
    refused(post(w.usage("p-2", { period_start: usageMonth.day(12).toISOString() })), 400, "invalid_request", "period_start"));
  it("a quantity as a number or with too many decimals", async () => {
    await refused(post(w.usage("q-1", { quantity: 3600 })), 400, "invalid_request", "quantity");
    await refused(post(w.usage("q-2", { unit_price: "0.0000000000000000001" })), 400, "invalid_request", "unit_price");
  });
  it("insufficient prepaid funds", () => refused(post(w.usage("big-1", { amount: "999999999999", unit_price: undefined })), 422, "exceeds_credits"));
  it("an admin key that names no marketplace", () => refused(post(w.usage("adm-1"), w.keys.admin), 400, "invalid_request", "marketplace_id"));
  it("a marketplace key naming another marketplace", () => refused(post({ ...w.usage("mk-1"), marketplace_id: "m2" }), 403, "forbidden"));
  it("a batch over 10,000 records", () =>
    refused(
      () => api.call("POST", "/v1/usage/batch", { key: w.keys.m1, body: { records: Array.from({ length: 10_001 }, () => ({})) } }),
      400,
      "invalid_request",
      "records",
    ));
  it("reversing twice", async () => {
    const u = expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("rev-twice") }), 201).body;
    expectStatus(await api.call("POST", `/v1/usage/${u.id}/reverse`, { key: w.keys.m1, body: { reason: "first" } }), 201);
    await refused(() => api.call("POST", `/v1/usage/${u.id}/reverse`, { key: w.keys.m1, body: { reason: "second" } }), 409, "already_reversed");
    await refused(() => api.call("POST", `/v1/usage/${u.id}/reverse`, { key: w.keys.m1, body: {} }), 400, "invalid_request", "reason");
  });
  it("a hold on a postpaid customer, or beyond the balance", async () => {
    await refused(
      () => api.call("POST", "/v1/holds", { key: w.keys.m1, body: { customer_id: "m1only", asset: "USDC", amount: "1" } }),
      400,
      "invalid_request",
      "customer_id",
    );
    await refused(
      () => api.call("POST", "/v1/holds", { key: w.keys.m1, body: { customer_id: "c1", asset: "USDC", amount: "999999999999" } }),
      422,
      "exceeds_credits",
    );
  });
  it("an unknown hold", () => refused(post(w.usage("h-x", { hold_id: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e" })), 404, "hold_not_found"));
  it("a statement or earnings period that ends before it starts, or a bad grouping", async () => {
    await refused(() => api.call("GET", "/v1/operators/o1/statement?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z"), 400, "invalid_request", "from");
    await refused(
      () => api.call("GET", "/v1/operators/o1/earnings?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z&group_by=year"),
      400,
      "invalid_request",
      "group_by",
    );
    await refused(() => api.call("GET", "/v1/operators/o1/statement"), 400, "invalid_request", "from");
  });
});

describe("atomic batches", () => {
  it("write nothing when one record is rejected", async () => {
    const [before] = await api.db.query<{ n: string }>("select count(*)::text as n from usage_records");
    const res = expectStatus(
      await api.call("POST", "/v1/usage/batch", { key: w.keys.m1, body: { atomic: true, records: [w.usage("at-1"), w.usage("at-2", { operator_id: "o2" })] } }),
      200,
    ).body;
    expect(res.results.map((r: { code: string }) => r.code)).toEqual(["atomic_batch_aborted", "operator_not_found"]);
    const [after] = await api.db.query<{ n: string }>("select count(*)::text as n from usage_records");
    expect(after!.n).toBe(before!.n);
  });
});

describe("edges found by hostile testing", () => {
  const hold = async (extra: Record<string, unknown> = {}) =>
    expectStatus(await api.call("POST", "/v1/holds", { key: w.keys.m1, body: { customer_id: "c1", asset: "USDC", amount: "5000000", ...extra } }), 201).body;

  it("a hold past its expiry takes no usage, even before the expirer has run", async () => {
    const h = await hold({ timeout_seconds: 1 });
    await new Promise((r) => setTimeout(r, 1100));
    await refused(post(w.usage("late-on-hold", { hold_id: h.id })), 409, "hold_closed");
  });

  it("reversing usage of a closed hold refunds the customer, and the first close stays referenced", async () => {
    const h = await hold();
    const u = expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("on-closed-hold", { hold_id: h.id }) }), 201).body;
    const closed = expectStatus(await api.call("POST", `/v1/holds/${h.id}/close`, { key: w.keys.m1 }), 200).body;
    expectStatus(await api.call("POST", `/v1/usage/${u.id}/reverse`, { key: w.keys.m1, body: { reason: "refund" } }), 201);
    const after = expectStatus(await api.call("GET", `/v1/holds/${h.id}`, { key: w.keys.m1 }), 200).body;
    expect(after).toMatchObject({ status: "closed", remaining: "0", close_transfer_id: closed.close_transfer_id });
  });

  it("a second reversal under a new Idempotency-Key is 409, whatever the reason", async () => {
    const u = expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("rev-again") }), 201).body;
    expectStatus(await api.call("POST", `/v1/usage/${u.id}/reverse`, { key: w.keys.m1, body: { reason: "same" } }), 201);
    await refused(() => api.call("POST", `/v1/usage/${u.id}/reverse`, { key: w.keys.m1, body: { reason: "same" } }), 409, "already_reversed");
  });

  it("fee rules with min above max, and versions that would re-rate posted usage", async () => {
    await refused(
      () =>
        api.call("POST", "/v1/marketplaces/m1/fee-schedules", {
          body: { effective_from: "2031-01-01T00:00:00Z", rules: [{ party: "marketplace", bps: 100, min: { USDC: "500" }, max: { USDC: "50" } }] },
        }),
      400,
      "invalid_request",
      "rules.0.min",
    );
    await refused(
      () => api.call("POST", "/v1/marketplaces/m1/fee-schedules", { body: { effective_from: usageMonth.from.toISOString(), rules: [] } }),
      409,
      "fee_schedule_exists",
      "effective_from",
    );
  });

  it("a batch answer with rejected records is not remembered: the retry re-evaluates them", async () => {
    const body = { records: [w.usage("retry-a", { customer_id: "m1only-late" }), w.usage("retry-b")] };
    const first = expectStatus(await api.call("POST", "/v1/usage/batch", { key: w.keys.m1, idempotencyKey: "batch-retry", body }), 200);
    expect(first.body.summary).toEqual({ accepted: 1, duplicate: 0, rejected: 1 });
    expectStatus(
      await api.call("POST", "/v1/customers", {
        key: w.keys.m1,
        body: { id: "m1only-late", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "1000000000000000000000000" }] },
      }),
      201,
    );
    const again = expectStatus(await api.call("POST", "/v1/usage/batch", { key: w.keys.m1, idempotencyKey: "batch-retry", body }), 200);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(again.body.summary).toEqual({ accepted: 1, duplicate: 1, rejected: 0 });
  });

  it("clear reasons for numbers, ids and queries", async () => {
    const res = await refused(post(w.usage("big-price", { unit_price: "9".repeat(39) + "." + "9".repeat(18) })), 400, "invalid_request", "unit_price");
    expect(res.body.detail).toMatch(/40 digits/);
    await refused(post(w.usage("zero", { quantity: "0", amount: "100", unit_price: undefined })), 400, "invalid_request", "quantity");
    await refused(
      () => api.call("POST", "/v1/usage", { key: w.keys.admin, body: { ...w.usage("adm-zz"), marketplace_id: "zz" } }),
      404,
      "marketplace_not_found",
    );
    await refused(
      () => api.call("POST", "/v1/api-keys", { body: { name: "ghost", role: "marketplace", scope_id: "nosuchmkt" } }),
      404,
      "marketplace_not_found",
      "scope_id",
    );
    await refused(
      () => api.call("POST", `/v1/usage/${w.m1Usage.id}/reverse`, { key: w.keys.m1, raw: '{"reason":"a\\u0000b"}' }),
      400,
      "invalid_request",
      "reason",
    );
    const direct = await refused(() => api.call("POST", `/v1/transfers/${w.m1Usage.transfer_id}/reverse`, { key: w.keys.m1 }), 403, "forbidden");
    expect(direct.body.detail).toMatch(/\/v1\/usage\/\{id\}\/reverse/);
    // Not even an admin reverses usage behind its record's back (and with an effective time of its choosing).
    const byAdmin = await refused(
      () => api.call("POST", `/v1/transfers/${w.m1Usage.transfer_id}/reverse`, { body: { effective_at: "2020-01-01T00:00:00Z" } }),
      400,
      "invalid_request",
    );
    expect(byAdmin.body.detail).toMatch(/\/v1\/usage\/\{id\}\/reverse/);
    await refused(() => api.call("GET", "/v1/usage?order=desc"), 400, "invalid_request", "order");
    await refused(() => api.call("GET", "/v1/usage?from=2026-12-01T00:00:00Z&to=2026-11-01T00:00:00Z"), 400, "invalid_request", "from");
    await refused(
      () =>
        api.call("POST", "/v1/usage", {
          key: w.keys.m1,
          raw: JSON.stringify(w.usage("utf16")),
          headers: { "content-type": "application/json; charset=utf-16" },
        }),
      415,
      "unsupported_media_type",
    );
  });

  it("dates outside 1970-9999 and huge metadata arrays are 400, not 500", async () => {
    await refused(post(w.usage("year-0", { period_start: "0000-01-01T00:00:00Z" })), 400, "invalid_request", "period_start");
    await refused(() => api.call("GET", `/v1/accounts/${w.m1Customer.id}/balance?as_of=0000-01-01T00:00:00Z`), 400, "invalid_request", "as_of");
    await refused(post(w.usage("big-array", { metadata: { a: Array(200_000).fill(0) } })), 400, "invalid_request", "metadata");
  });

  it("a marketplace cannot open accounts that would show in an operator's views", async () => {
    await refused(
      () =>
        api.call("POST", "/v1/accounts", {
          key: w.keys.m1,
          body: { asset_id: w.asset.id, code: "operator_payable", normal_side: "credit", owner_type: "operator", owner_id: "o2" },
        }),
      403,
      "forbidden",
    );
  });

  it("re-registering with other attributes is a conflict, without showing the stored ones", async () => {
    await refused(
      () => api.call("POST", "/v1/customers", { key: w.keys.m1, body: { id: "c1", billing: "prepaid", metadata: { k: "v" } } }),
      409,
      "customer_exists",
    );
    // Another marketplace's operator, under any name: only an invitation, which shows nothing of the operator.
    const res = expectStatus(await api.call("POST", "/v1/operators", { key: w.keys.m2, body: { id: "o1", name: "Evil name" } }), 202);
    expect(Object.keys(res.body).sort()).toEqual(["accepted_at", "invited_at", "marketplace_id", "operator_id", "status"]);
    expect(res.body).toMatchObject({ status: "invited", marketplace_id: "m2" });
    expect(await api.db.query("select 1 from marketplace_operators where marketplace_id = 'm2' and operator_id = 'o1'")).toEqual([]);
  });

  it("statement CSV cells that a spreadsheet would run as formulas are made plain text", async () => {
    expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage('=HYPERLINK("http://x")') }), 201);
    const csv = await api.call("GET", `/v1/operators/o1/statement?${wideRange()}&format=csv`, { key: w.keys.o1 });
    expect(csv.body).toContain(`"'=HYPERLINK(""http://x"")"`);
  });

  it("statement CSV cells with a semicolon or a tab are quoted, and a formula character after one made plain: a spreadsheet splitting on ';' finds no formula cell", async () => {
    expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("x;=1+1") }), 201);
    const csv = await api.call("GET", `/v1/operators/o1/statement?${wideRange()}&format=csv`, { key: w.keys.o1 });
    expect(csv.body).toContain(`"x;'=1+1"`);
    // Split on ';' as such a spreadsheet does (quotes in the middle of a line are literal there): no cell starts a formula.
    const cells: string[] = csv.body.split(/\r\n|;/);
    expect(cells.filter((c) => /^[=+\-@|]/.test(c) && !/^-?\d/.test(c))).toEqual([]);
  });
});
