import { describe, expect, it } from "vitest";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { usageMonth } from "../support/clock.js";
import { expectRefused, expectStatus, fourEyes, proposeAndApprove, worldPerFile } from "../support/http.js";

/**
 * A postpaid customer owes at most its credit limit in each asset: set at creation (required),
 * changed only through a proposal that an admin or finance key approves, never below what it owes.
 */
const t = worldPerFile();
let n = 0;

/** A record of `amount` USDC smallest units for customer `customer` of m1. */
const record = (customer: string, amount: string, extra: Record<string, unknown> = {}) => ({
  external_id: `cc-${++n}`,
  operator_id: "o1",
  customer_id: customer,
  resource: "gpu:h100",
  unit: "gpu_hour",
  quantity: "1",
  amount,
  asset: "USDC",
  period_start: usageMonth.day(3).toISOString(),
  period_end: usageMonth.day(4).toISOString(),
  ...extra,
});
const use = (customer: string, amount: string, key = t.w.keys.m1) => t.api.call("POST", "/v1/usage", { key, body: record(customer, amount) });
const newCustomer = (body: Record<string, unknown>, key = t.w.keys.m1) => t.api.call("POST", "/v1/customers", { key, body });

describe("a postpaid customer's credit limit", () => {
  it("is required at creation, in assets that exist, positive, once per asset; a prepaid customer has none", async () => {
    await expectRefused(t.api, () => newCustomer({ id: "p-none", billing: "postpaid" }), 400, "invalid_request", "credit_limits");
    await expectRefused(t.api, () => newCustomer({ id: "p-empty", billing: "postpaid", credit_limits: [] }), 400, "invalid_request", "credit_limits");
    await expectRefused(
      t.api,
      () => newCustomer({ id: "pre-l", billing: "prepaid", credit_limits: [{ asset: "USDC", credit_limit: "5" }] }),
      400,
      "invalid_request",
      "credit_limits",
    );
    await expectRefused(
      t.api,
      () => newCustomer({ id: "p-nope", billing: "postpaid", credit_limits: [{ asset: "NOPE", credit_limit: "5" }] }),
      404,
      "asset_not_found",
      "credit_limits.0.asset",
    );
    await expectRefused(
      t.api,
      () =>
        newCustomer({
          id: "p-twice",
          billing: "postpaid",
          credit_limits: [
            { asset: "USDC", credit_limit: "5" },
            { asset: "USDC", credit_limit: "6" },
          ],
        }),
      400,
      "invalid_request",
      "credit_limits.1.asset",
    );
    for (const bad of ["0", "-5", "1.5", "1e3", 5, "", (1n << 256n).toString(), "12\u00003"]) {
      await expectRefused(
        t.api,
        () => newCustomer({ id: "p-bad", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: bad }] }),
        400,
        "invalid_request",
        "credit_limits.0.credit_limit",
      );
    }
    await expectRefused(
      t.api,
      () => newCustomer({ id: "p-extra", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "5", unlimited: true }] }),
      400,
      "invalid_request",
    );
    const created = expectStatus(await newCustomer({ id: "p-ok", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "5000000" }] }), 201).body;
    expect(created).toMatchObject({ id: "p-ok", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "5000000" }] });
    // The same creation again is the same customer; another limit through creation is refused.
    expect(
      expectStatus(await newCustomer({ id: "p-ok", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "5000000" }] }), 201).body,
    ).toMatchObject(created);
    await expectRefused(
      t.api,
      () => newCustomer({ id: "p-ok", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "9000000" }] }),
      409,
      "customer_exists",
    );
  });

  it("refuses usage beyond it, naming the limit and what is left, and usage in an asset it has no limit in", async () => {
    expectStatus(await newCustomer({ id: "p-cap", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "10000000" }] }), 201);
    expectStatus(await use("p-cap", "6000000"), 201);
    const over = await expectRefused(t.api, () => use("p-cap", "4000001"), 422, "credit_limit_exceeded", "customer_id");
    expect(over.body.detail).toBe("customer_id: customer p-cap's credit limit in USDC is 10; 4 of it is left, less than the 4.000001 USDC this record costs");
    expectStatus(await use("p-cap", "4000000"), 201);
    await expectRefused(t.api, () => use("p-cap", "1"), 422, "credit_limit_exceeded");
    // A prepaid customer is told its balance.
    const prepaid = await expectRefused(t.api, () => use("c1", "999000000000"), 422, "exceeds_credits");
    expect(prepaid.body.detail).toMatch(/^customer_id: customer c1's available USDC balance is [0-9.]+, less than the 999000 USDC this record costs$/);
    // Another asset: none until one is approved.
    expectStatus(await t.api.call("POST", "/v1/assets", { body: { code: "EURC", scale: 2, settlement: { kind: "offchain" } } }), 201);
    const other = await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: record("p-cap", "100", { asset: "EURC" }) }),
      422,
      "credit_limit_exceeded",
    );
    expect(other.body.detail).toMatch(/customer p-cap has no credit limit in EURC/);
  });

  it("in a batch, records are judged one after the other against it; concurrent usage never passes it", async () => {
    expectStatus(await newCustomer({ id: "p-race", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "10000000" }] }), 201);
    const batch = expectStatus(
      await t.api.call("POST", "/v1/usage/batch", {
        key: t.w.keys.m1,
        body: { records: [record("p-race", "4000000"), record("p-race", "4000000"), record("p-race", "4000000"), record("p-race", "2000000")] },
      }),
      200,
    ).body;
    expect(batch.results.map((r: { status: string }) => r.status)).toEqual(["accepted", "accepted", "rejected", "accepted"]);
    expect(batch.results[2]).toMatchObject({ code: "credit_limit_exceeded", field: "customer_id" });
    expectStatus(await newCustomer({ id: "p-race2", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "10000000" }] }), 201);
    const answers = await Promise.all(Array.from({ length: 25 }, () => use("p-race2", "1000000")));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(10);
    expect(answers.filter((a) => a.status === 422 && a.body.code === "credit_limit_exceeded")).toHaveLength(15);
    const [owed] = await t.api.db.query<{ owes: string }>(
      "select (b.debits_posted - b.credits_posted)::text as owes from accounts a join account_balances b on b.account_id = a.id where a.marketplace_id = 'm1' and a.ref = 'customer:p-race2'",
    );
    expect(owed!.owes).toBe("10000000");
  });

  it("changes only through a proposal another key approves: a marketplace asks, the platform decides, never below what is owed", async () => {
    expectStatus(await newCustomer({ id: "p-raise", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "2000000" }] }), 201);
    expectStatus(await use("p-raise", "2000000"), 201);
    const path = "/v1/customers/p-raise/credit-limits/USDC";
    // The marketplace asks for more; nothing changes until an admin or finance key approves.
    const ask = expectStatus(await t.api.call("PUT", path, { key: t.w.keys.m1, body: { credit_limit: "5000000" } }), 202).body;
    expect(ask).toMatchObject({
      kind: "customer_credit_limit",
      status: "proposed",
      marketplace_id: "m1",
      payload: { customer_id: "p-raise", asset: "USDC", credit_limit: "5000000" },
    });
    expect(expectStatus(await t.api.call("PUT", path, { key: t.w.keys.m1, body: { credit_limit: "5000000" } }), 202).body.id).toBe(ask.id);
    await expectRefused(t.api, () => use("p-raise", "1"), 422, "credit_limit_exceeded");
    await expectRefused(t.api, () => t.api.call("POST", `/v1/proposals/${ask.id}/approve`, { key: t.w.keys.m1, body: {} }), 403, "forbidden");
    await expectRefused(t.api, () => t.api.call("POST", `/v1/proposals/${ask.id}/approve`, { key: t.w.keys.m2, body: {} }), 403, "forbidden");
    await expectRefused(t.api, () => t.api.call("POST", `/v1/proposals/${ask.id}/approve`, { key: t.w.keys.o1, body: {} }), 403, "forbidden");
    // Others may not ask: another marketplace (its namespace has no such customer), an operator, finance.
    await expectRefused(t.api, () => t.api.call("PUT", path, { key: t.w.keys.m2, body: { credit_limit: "9" } }), 404, "customer_not_found");
    await expectRefused(t.api, () => t.api.call("PUT", path, { key: t.w.keys.m2, body: { credit_limit: "9", marketplace_id: "m1" } }), 403, "forbidden");
    await expectRefused(t.api, () => t.api.call("PUT", path, { key: t.w.keys.o1, body: { credit_limit: "9" } }), 403, "forbidden");
    await expectRefused(t.api, () => t.api.call("PUT", path, { key: t.w.keys.finance, body: { credit_limit: "9", marketplace_id: "m1" } }), 403, "forbidden");
    await expectRefused(
      t.api,
      () => t.api.call("PUT", "/v1/customers/c1/credit-limits/USDC", { key: t.w.keys.m1, body: { credit_limit: "9" } }),
      400,
      "invalid_request",
      "id",
    );
    await expectRefused(
      t.api,
      () => t.api.call("PUT", "/v1/customers/nobody/credit-limits/USDC", { key: t.w.keys.m1, body: { credit_limit: "9" } }),
      404,
      "customer_not_found",
    );
    await expectRefused(
      t.api,
      () => t.api.call("PUT", "/v1/customers/p-raise/credit-limits/NOPE", { key: t.w.keys.m1, body: { credit_limit: "9" } }),
      404,
      "asset_not_found",
    );
    await expectRefused(t.api, () => t.api.call("PUT", path, { key: t.w.keys.m1, body: { credit_limit: "-1" } }), 400, "invalid_request", "credit_limit");
    // Below what the customer owes: refused.
    const low = await expectRefused(
      t.api,
      () => t.api.call("PUT", path, { key: t.w.keys.m1, body: { credit_limit: "1999999" } }),
      400,
      "invalid_request",
      "credit_limit",
    );
    expect(low.body.detail).toMatch(/owes 2000000 USDC/);
    const approved = expectStatus(await t.api.call("POST", `/v1/proposals/${ask.id}/approve`, { key: t.w.keys.finance, body: {} }), 200).body;
    expect(approved).toMatchObject({ status: "approved", result: { credit_limit: "5000000" } });
    expectStatus(await use("p-raise", "3000000"), 201);
    await expectRefused(t.api, () => use("p-raise", "1"), 422, "credit_limit_exceeded");
    // Setting it to what is owed stops new usage; a limit in a new asset opens that asset.
    await proposeAndApprove(t.api, "PUT", path, { credit_limit: "5000000", marketplace_id: "m1" });
    await proposeAndApprove(t.api, "PUT", "/v1/customers/p-raise/credit-limits/EURC", { credit_limit: "500", marketplace_id: "m1" });
    expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: record("p-raise", "500", { asset: "EURC" }) }), 201);
    const customer = expectStatus(
      await newCustomer({
        id: "p-raise",
        billing: "postpaid",
        credit_limits: [
          { asset: "EURC", credit_limit: "500" },
          { asset: "USDC", credit_limit: "5000000" },
        ],
      }),
      201,
    ).body;
    expect(customer.credit_limits).toEqual([
      { asset: "EURC", credit_limit: "500", credit_limit_display: "5" },
      { asset: "USDC", credit_limit: "5000000", credit_limit_display: "5" },
    ]);
  });

  it("an approval that would set it below what was owed meanwhile is refused and stays open", async () => {
    expectStatus(await newCustomer({ id: "p-late", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "3000000" }] }), 201);
    const { approver } = await fourEyes(t.api);
    const ask = expectStatus(
      await t.api.call("PUT", "/v1/customers/p-late/credit-limits/USDC", { key: t.w.keys.m1, body: { credit_limit: "1000000" } }),
      202,
    ).body;
    expectStatus(await use("p-late", "2000000"), 201);
    await expectRefused(
      t.api,
      () => t.api.call("POST", `/v1/proposals/${ask.id}/approve`, { key: approver, body: {} }),
      400,
      "invalid_request",
      "credit_limit",
    );
    expect(expectStatus(await t.api.call("GET", `/v1/proposals/${ask.id}`, { key: approver }), 200).body.status).toBe("proposed");
  });

  it("the ledger's invariants hold: no customer owes beyond its limit", async () => {
    const report = await verifyLedger(t.api.db);
    expect(report.violations).toEqual([]);
    // An overdraft forced past a limit (as a bug or a hand edit would) is what verify reports.
    const [acct] = await t.api.db.query<{ id: string }>(
      "select id from accounts where marketplace_id = 'm1' and ref = 'customer:p-cap' and code = 'customer_postpaid'",
    );
    await t.api.db.query("update account_balances set overdraft_limit = 1 where account_id = $1", [acct!.id]);
    expect((await verifyLedger(t.api.db)).violations).toContainEqual({
      check: "limits",
      detail: `account ${acct!.id}: debits exceed credits, which its flags forbid`,
    });
    await t.api.db.query("update account_balances set overdraft_limit = 10000000 where account_id = $1", [acct!.id]);
  });
});
