import { describe, expect, it } from "vitest";
import { usageMonth } from "../support/clock.js";
import { expectRefused, worldPerFile, type ApiResponse } from "../support/http.js";

const t = worldPerFile();

const refused = (request: () => Promise<ApiResponse>, status: number, code: string, field?: string) => expectRefused(t.api, request, status, code, field);
const messageOf = (res: ApiResponse, field: string): string => res.body.errors.find((e: { path: string }) => e.path === field)?.message;

describe("the mistakes a newcomer makes are named plainly, and nothing is written", () => {
  it("a credit limit sent as a JSON number is asked for as a string", async () => {
    const body = { id: "num-limit", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: 1000000000 }] };
    const res = await refused(() => t.api.call("POST", "/v1/customers", { key: t.w.keys.m1, body }), 400, "invalid_request", "credit_limits.0.credit_limit");
    expect(messageOf(res, "credit_limits.0.credit_limit")).toBe('must be a string, e.g. "500000000" (JSON numbers lose precision)');
    const change = await refused(
      () => t.api.call("PUT", "/v1/customers/num-limit/credit-limits/USDC", { key: t.w.keys.m1, body: { credit_limit: 5 } }),
      400,
      "invalid_request",
      "credit_limit",
    );
    expect(messageOf(change, "credit_limit")).toContain("must be a string");
  });

  it("a manual rate sent as a JSON number is asked for as a string", async () => {
    const res = await refused(() => t.api.call("POST", "/v1/rates", { body: { base: "USDC", quote: "USDC", value: 2.5 } }), 400, "invalid_request", "value");
    expect(messageOf(res, "value")).toBe('must be a string, e.g. "2.5" (JSON numbers lose precision)');
  });

  it("an asset code in lower case is told to be in capitals", async () => {
    const res = await refused(
      () => t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage("lower-1", { asset: "usdc" }) }),
      400,
      "invalid_request",
      "asset",
    );
    expect(messageOf(res, "asset")).toContain("capital letters");
  });

  it("a period end without a time is named alone, not also as before the start", async () => {
    const res = await refused(
      () =>
        t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage("date-only-1", { period_end: usageMonth.day(12).toISOString().slice(0, 10) }) }),
      400,
      "invalid_request",
      "period_end",
    );
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(["period_end"]);
  });

  it("a path with a trailing slash is a 404 that names the path without it", async () => {
    const body = { id: "slash-1", billing: "prepaid" };
    const res = await refused(() => t.api.call("POST", "/v1/customers/", { key: t.w.keys.m1, body }), 404, "not_found");
    expect(res.body.detail).toBe("no route for POST /v1/customers/: paths take no trailing slash (/v1/customers)");
    const read = await refused(() => t.api.call("GET", "/v1/customers/c1/", { key: t.w.keys.m1 }), 404, "not_found");
    expect(read.body.detail).toContain("(/v1/customers/c1)");
    // A path that does not exist either way says only that.
    expect((await refused(() => t.api.call("GET", "/v1/nothing/", { key: t.w.keys.m1 }), 404, "not_found")).body.detail).toBe("no route for GET /v1/nothing/");
  });

  it("an operator's costs sent as JSON numbers are asked for as strings", async () => {
    const body = {
      asset: "USDC",
      power_watts: 700,
      price_per_kwh: 0.12,
      bandwidth_monthly: "20",
      other_monthly: "30",
      purchase_price: "30000",
      depreciation_months: 36,
    };
    const res = await refused(() => t.api.call("PUT", "/v1/operators/o1/costs/gpu:h100", { key: t.w.keys.o1, body }), 400, "invalid_request", "power_watts");
    expect(messageOf(res, "power_watts")).toBe('must be a string, e.g. "700" (JSON numbers lose precision)');
    expect(messageOf(res, "price_per_kwh")).toBe('must be a string, e.g. "0.12" (JSON numbers lose precision)');
  });

  it("an approval sent with a JSON Content-Type and an empty body is refused as malformed JSON, approving nothing", async () => {
    const proposal = await t.api.call("PUT", "/v1/customers/m1only/credit-limits/USDC", { key: t.w.keys.m1, body: { credit_limit: "123456789" } });
    expect(proposal.status, JSON.stringify(proposal.body)).toBe(202);
    const approved = await t.api.call("POST", `/v1/proposals/${proposal.body.id}/approve`, {
      key: t.w.keys.finance,
      raw: "",
      headers: { "content-type": "application/json" },
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(400);
    expect(approved.body.code).toBe("malformed_json");
    expect((await t.api.call("GET", `/v1/proposals/${proposal.body.id}`, { key: t.w.keys.finance })).body.status).toBe("proposed");
  });

  it("an offset's + left unencoded in a query string is explained once", async () => {
    const res = await refused(
      () => t.api.call("GET", "/v1/reports/payouts?from=2026-11-01T00:00:00+01:00&to=2026-12-01T00:00:00Z", { key: t.w.keys.finance }),
      400,
      "invalid_request",
      "from",
    );
    expect(res.body.errors).toHaveLength(1);
    expect(messageOf(res, "from")).toContain("%2B");
    expect((await t.api.call("GET", "/v1/reports/payouts?from=2026-11-01T00:00:00%2B01:00&to=2026-12-01T00:00:00Z", { key: t.w.keys.finance })).status).toBe(
      200,
    );
  });
});
