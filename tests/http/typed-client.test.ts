import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idempotencyKey, type LedgerClient, type Problem } from "../../clients/typescript/index.js";
import { usageMonth } from "../support/clock.js";
import { testApi, type TestApi } from "../support/http.js";

// The typed client (clients/typescript) driving the real app in-process: what compiles here is what
// the OpenAPI document promises, and what the app answers must match it.
let api: TestApi;
let admin: LedgerClient;
beforeAll(async () => {
  api = await testApi();
  admin = api.client();
});
afterAll(async () => api.close());

/** The answer's data, or a failure that shows the status and the problem. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(`${result.response.status}: ${JSON.stringify(result.error)}`);
  return result.data;
}

const usage = (externalId: string) => ({
  external_id: externalId,
  operator_id: "tc-farm",
  customer_id: "tc-acme",
  resource: "gpu:h100-80gb",
  unit: "gpu_second",
  quantity: "3600",
  unit_price: "0.000694",
  asset: "TUSD",
  period_start: usageMonth.day(10).toISOString(),
  period_end: usageMonth.day(11).toISOString(),
});

describe("the typed client", () => {
  let market: LedgerClient;
  let operator: LedgerClient;

  it("sets up a marketplace, an operator and a funded customer", async () => {
    const header = idempotencyKey();
    expect(header["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    const asset = ok(await admin.POST("/v1/assets", { params: { header }, body: { code: "TUSD", scale: 6, settlement: { kind: "offchain" } } }));
    expect(asset).toMatchObject({ code: "TUSD", scale: 6 });
    ok(await admin.POST("/v1/marketplaces", { params: { header: idempotencyKey() }, body: { id: "tc-market", name: "Typed client market" } }));
    ok(
      await admin.POST("/v1/marketplaces/{id}/fee-schedules", {
        params: { path: { id: "tc-market" }, header: idempotencyKey() },
        body: {
          effective_from: "2020-01-01T00:00:00Z",
          rules: [
            { party: "marketplace", bps: 1000 },
            { party: "protocol", bps: 100 },
          ],
        },
      }),
    );
    const marketKey = ok(
      await admin.POST("/v1/api-keys", { params: { header: idempotencyKey() }, body: { name: "tc-market", role: "marketplace", scope_id: "tc-market" } }),
    ).secret;
    market = api.client(marketKey!);

    const registered = await market.POST("/v1/operators", { params: { header: idempotencyKey() }, body: { id: "tc-farm", name: "Typed client farm" } });
    expect(registered.response.status).toBe(201);
    const operatorKey = ok(
      await admin.POST("/v1/api-keys", { params: { header: idempotencyKey() }, body: { name: "tc-farm", role: "operator", scope_id: "tc-farm" } }),
    ).secret;
    operator = api.client(operatorKey!);

    ok(await market.POST("/v1/customers", { params: { header: idempotencyKey() }, body: { id: "tc-acme", billing: "prepaid" } }));
    ok(
      await market.POST("/v1/customers/{id}/deposits", {
        params: { path: { id: "tc-acme" }, header: idempotencyKey() },
        body: { asset: "TUSD", amount: "100000000" },
      }),
    );
    const customer = ok(await market.GET("/v1/customers/{id}", { params: { path: { id: "tc-acme" } } }));
    expect(customer).toMatchObject({ id: "tc-acme", marketplace_id: "tc-market", billing: "prepaid" });
  });

  it("posts usage, replays it under the same key, and the operator reads its balance", async () => {
    const header = idempotencyKey("tc-usage-1");
    const first = await market.POST("/v1/usage", { params: { header }, body: usage("tc-job-1") });
    expect(first.response.status).toBe(201);
    const record = ok(first);
    expect(record).toMatchObject({ external_id: "tc-job-1", operator_id: "tc-farm", gross: "2498400", net: "2223576", status: "posted" });
    const again = await market.POST("/v1/usage", { params: { header }, body: usage("tc-job-1") });
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    expect(ok(again)).toEqual(record);
    for (const id of ["tc-job-2", "tc-job-3"]) ok(await market.POST("/v1/usage", { params: { header: idempotencyKey() }, body: usage(id) }));

    const balances = ok(await operator.GET("/v1/operators/{id}/balances", { params: { path: { id: "tc-farm" } } }));
    expect(balances.data).toEqual([expect.objectContaining({ asset: "TUSD", available: String(3 * 2_223_576), paid_out: "0" })]);
  });

  it("pages through usage with the cursor, oldest first, without gaps or repeats", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = ok(await market.GET("/v1/usage", { params: { query: { operator_id: "tc-farm", limit: 2, cursor } } }));
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((u) => u.external_id));
      if (page.next_cursor === null) break;
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(["tc-job-1", "tc-job-2", "tc-job-3"]);
  });

  it("reads a refusal as a typed problem in `error`", async () => {
    const reused = await market.POST("/v1/usage", { params: { header: idempotencyKey("tc-usage-1") }, body: usage("tc-job-other") });
    expect(reused.data).toBeUndefined();
    expect(reused.response.status).toBe(409);
    expect(reused.response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const problem: Problem | undefined = reused.error;
    expect(problem).toMatchObject({ type: "/problems/idempotency_key_reused", status: 409, code: "idempotency_key_reused" });

    const invalid = await market.POST("/v1/usage", { params: { header: idempotencyKey() }, body: { ...usage("tc-job-4"), quantity: "-1" } });
    expect(invalid.response.status).toBe(400);
    expect(invalid.error?.code).toBe("invalid_request");
    expect(invalid.error?.errors?.map((e) => e.path)).toContain("quantity");

    // An operator key reads itself only: any other id is a 404.
    const other = await operator.GET("/v1/operators/{id}", { params: { path: { id: "someone-else" } } });
    expect(other.response.status).toBe(404);
    expect(other.error?.code).toBe("operator_not_found");

    const stranger = await api.client("lk_unknown_key").GET("/v1/usage");
    expect(stranger.response.status).toBe(401);
    expect(stranger.error?.code).toBe("unauthorized");
  });
});
