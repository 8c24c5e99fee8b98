import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageMonth } from "../support/clock.js";
import { expectRefused, expectStatus, testApi, world, type TestApi } from "../support/http.js";
import type { World } from "../support/security.js";

/**
 * Who may create value: the service's chart of accounts (customers', operators', fee, hold,
 * clearing, treasury accounts) is opened only by the service and moved only by its own routes.
 * Each test is an attack that worked before the accounts were reserved.
 */
let api: TestApi;
let w: World;
beforeAll(async () => {
  api = await testApi();
  w = await world(api);
});
afterAll(async () => api?.close());

const serviceAccount = async (marketplaceId: string | null, ref: string) => {
  const [row] = await api.db.query<{ id: string }>("select id from accounts where marketplace_id is not distinct from $1 and ref = $2 and opened_by_service", [
    marketplaceId,
    ref,
  ]);
  return row!.id;
};
const month = `from=${usageMonth.from.toISOString()}&to=${usageMonth.to.toISOString()}`;
const feeRevenue = async () => expectStatus(await api.call("GET", `/v1/reports/fee-revenue?${month}&group_by=month`), 200).body.data;

describe("reserved accounts", () => {
  it("a marketplace cannot forge fee revenue with an account named like the protocol's", async () => {
    const before = await feeRevenue();
    for (const ref of ["protocol:fees", "marketplace:fees", "referrer:fees"]) {
      await expectRefused(
        api,
        () => api.call("POST", "/v1/accounts", { key: w.keys.m1, body: { asset_id: w.asset.id, code: "protocol_fees", normal_side: "credit", ref } }),
        400,
        "invalid_request",
        "ref",
      );
    }
    // An account of its own with the protocol's code and a free ref is allowed, and counts for nothing.
    const forged = expectStatus(
      await api.call("POST", "/v1/accounts", {
        key: w.keys.m1,
        body: { asset_id: w.asset.id, code: "protocol_fees", normal_side: "credit", ref: "my-protocol-fees" },
      }),
      201,
    ).body;
    expectStatus(
      await api.call("POST", "/v1/transfers", {
        key: w.keys.m1,
        body: { effective_at: usageMonth.day().toISOString(), legs: [{ debit_account_id: w.m1Funding.id, credit_account_id: forged.id, amount: "777777" }] },
      }),
      201,
    );
    expect(await feeRevenue()).toEqual(before);
    // Even an account with a fee ref, if it is not the service's (as a row from before the refs were
    // reserved would be), counts for nothing: reports go by the flag, not by the ref.
    await api.db.query(
      `insert into accounts (id, asset_id, marketplace_id, ref, code, owner_type, owner_id, normal_side)
       values (gen_random_uuid(), $1, 'm1', 'referrer:fees', 'referrer_fees', 'fee_party', 'referrer', 'credit')`,
      [w.asset.id],
    );
    const [legacy] = await api.db.query<{ id: string }>("select id from accounts where ref = 'referrer:fees' and marketplace_id = 'm1'");
    await api.db.query("insert into account_balances (account_id) values ($1)", [legacy!.id]);
    expectStatus(
      await api.call("POST", "/v1/transfers", {
        body: { effective_at: usageMonth.day().toISOString(), legs: [{ debit_account_id: w.m1Funding.id, credit_account_id: legacy!.id, amount: "555555" }] },
      }),
      201,
    );
    expect(await feeRevenue()).toEqual(before);
  });

  it("a marketplace cannot post to the service's accounts, not even its own marketplace's fee account or its customers' balances", async () => {
    const fees = await serviceAccount("m1", "marketplace:fees");
    const customer = await serviceAccount("m1", "customer:c1");
    for (const [debit, credit] of [
      [w.m1Funding.id, fees],
      [w.m1Funding.id, customer],
      [customer, w.m1Funding.id],
    ]) {
      await expectRefused(
        api,
        () => api.call("POST", "/v1/transfers", { key: w.keys.m1, body: { legs: [{ debit_account_id: debit, credit_account_id: credit, amount: "1000" }] } }),
        403,
        "forbidden",
      );
    }
    await expectRefused(
      api,
      () =>
        api.call("POST", "/v1/transfers", {
          key: w.keys.m1,
          body: { type: "pending", legs: [{ debit_account_id: w.m1Funding.id, credit_account_id: customer, amount: "1000" }] },
        }),
      403,
      "forbidden",
    );
    // The service's accounts say so.
    expect(expectStatus(await api.call("GET", `/v1/accounts/${customer}`, { key: w.keys.m1 }), 200).body).toMatchObject({
      opened_by_service: true,
      ref: "customer:c1",
    });
  });

  it("the service never takes an account opened by hand for its own", async () => {
    // An account with a reserved ref that predates the reservation (written directly, as old data would be).
    await api.db.query(
      `insert into accounts (id, asset_id, marketplace_id, ref, code, owner_type, owner_id, normal_side)
       values (gen_random_uuid(), $1, 'm1', 'customer:squat', 'customer_prepaid', 'customer', 'squat', 'credit')`,
      [w.asset.id],
    );
    await api.db.query("insert into account_balances (account_id) select id from accounts where ref = 'customer:squat'");
    // A postpaid customer's accounts are opened with it: its creation is refused, and writes nothing.
    await expectRefused(
      api,
      () =>
        api.call("POST", "/v1/customers", {
          key: w.keys.m1,
          body: { id: "squat", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "1000000000000000000000000" }] },
        }),
      409,
      "account_exists",
    );
    // A prepaid one's on first use: its usage is refused.
    expectStatus(await api.call("POST", "/v1/customers", { key: w.keys.m1, body: { id: "squat", billing: "prepaid" } }), 201);
    await expectRefused(
      api,
      () => api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("squatted", { customer_id: "squat" }) }),
      409,
      "account_exists",
    );
  });
});
