import { afterEach, describe, expect, it } from "vitest";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { fundingWorld, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus, proposeAndApprove } from "../support/http.js";
import { wideRange } from "../support/clock.js";
import { TOKEN } from "../support/payout-world.js";

let world: FundingWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/**
 * Marketplace "m" (10% marketplace fee, 1% protocol fee) with a prepaid customer "c" and a postpaid
 * customer "p", operators "o" (which the marketplace controls, in the attacks) and "honest", each
 * with a verified payout address, and keys of every role, two of finance (tests/support/funding-world.ts).
 */
const setup = async () => (world = await fundingWorld());

describe("only money that came in goes out", () => {
  it("a marketplace's claimed off-chain deposit, spent on usage for an operator it controls, is not paid on chain until the marketplace settles it", async () => {
    const s = await setup();
    // The attack: 89,000 TUSD "received" off-chain, spent on usage of the marketplace's own operator.
    expectStatus(await s.api.call("POST", "/v1/customers/c/deposits", { key: s.keys.market, body: { asset: TOKEN, amount: (89_000n * USD).toString() } }), 201);
    await s.usage("o", "c", 89_000n * USD);
    const net = 89_000n * USD - 8_900n * USD - 890n * USD; // 79,210 TUSD
    expect(await s.balance("o")).toMatchObject({
      available: net.toString(),
      payable_now: "0",
      awaiting_funds: net.toString(),
      awaiting_funds_by_marketplace: [{ marketplace_id: "m", amount: net.toString() }],
    });
    // The operator's statement and earnings show the same split.
    const range = wideRange();
    for (const view of ["statement", "earnings"]) {
      const body = expectStatus(await s.api.call("GET", `/v1/operators/o/${view}?${range}`, { key: s.keys.o }), 200).body;
      expect(body.payable, view).toEqual([
        expect.objectContaining({ asset: TOKEN, available: net.toString(), payable_now: "0", awaiting_funds: net.toString() }),
      ]);
    }
    const refused = await s.payout("o", net);
    expectStatus(refused, 422);
    expect(refused.body.code).toBe("payout_unfunded");
    expect(refused.body.detail).toContain("awaiting funds from marketplace m: 79210 TUSD");
    expect(await s.payoutRows()).toBe("0");
    expect(await s.w.chain.tokenBalance(s.wallets.o!)).toBe(0n);
    // A scheduled payout does not pay it either.
    await proposeAndApprove(s.api, "PUT", `/v1/payout-policies/${TOKEN}`, { min_amount: "1", schedule: "interval", interval_seconds: 60 });
    expect(await s.w.worker().schedule()).toBe(0);
    expect(await s.payoutRows()).toBe("0");

    // The marketplace settles: finance records the receipt, a second key approves it.
    const proposal = await s.proposeReceipt(89_000n * USD, "wire 2026-0042");
    expect(proposal).toMatchObject({ kind: "receipt", status: "proposed", marketplace_id: "m" });
    expect((await s.balance("o")).payable_now).toBe("0"); // proposed is not received
    const self = await s.approve(proposal.id, s.keys.finance);
    expectStatus(self, 403);
    expect(self.body.code).toBe("four_eyes");
    expectStatus(await s.approve(proposal.id, s.keys.market), 403);
    expectStatus(await s.approve(proposal.id, s.keys.o), 403);
    const approved = expectStatus(await s.approve(proposal.id, s.keys.finance2), 200).body;
    expect(approved).toMatchObject({ status: "approved", decided_by: expect.any(String), result: { transfer_id: expect.any(String) } });
    expectStatus(await s.approve(proposal.id, s.keys.admin2), 409);
    // The same money is not received twice.
    const again = await s.api.call("POST", "/v1/marketplaces/m/receipts", {
      key: s.keys.finance,
      body: { asset: TOKEN, amount: "1", reference: "wire 2026-0042" },
    });
    expectStatus(again, 409);
    expect(again.body.code).toBe("receipt_exists");

    expect(await s.balance("o")).toMatchObject({ payable_now: net.toString(), awaiting_funds: "0", awaiting_funds_by_marketplace: [] });
    const paid = expectStatus(await s.payout("o", net), 201).body;
    const [done] = await s.w.drive([paid.id]);
    expect(done!.status).toBe("confirmed");
    expect(await s.w.chain.tokenBalance(s.wallets.o!)).toBe(net);
    const funding = expectStatus(await s.api.call("GET", `/v1/marketplaces/m/funding/${TOKEN}`, { key: s.keys.market }), 200).body;
    expect(funding).toMatchObject({
      settled: (89_000n * USD).toString(),
      claimed_unsettled: "0",
      usage_gross: (89_000n * USD).toString(),
      awaiting_gross: "0",
    });
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("a postpaid customer's usage is not paid on chain until its money is received or the platform grants the marketplace credit", async () => {
    const s = await setup();
    await s.usage("o", "p", 1_000n * USD);
    const net = 890n * USD;
    const refused = await s.payout("o", 10n * USD);
    expectStatus(refused, 422);
    expect(refused.body.code).toBe("payout_unfunded");
    expect(refused.body.detail).toContain("awaiting funds from marketplace m: 890 TUSD");
    expect(await s.payoutRows()).toBe("0");

    // A credit limit is a proposal too: an admin proposes, another key approves.
    const limit = expectStatus(
      await s.api.call("POST", "/v1/marketplaces/m/credit-limits", { key: s.keys.admin2, body: { asset: TOKEN, credit_limit: (500n * USD).toString() } }),
      201,
    ).body;
    expectStatus(await s.api.call("POST", "/v1/marketplaces/m/credit-limits", { key: s.keys.finance, body: { asset: TOKEN, credit_limit: "1" } }), 403);
    expect((await s.balance("o")).payable_now).toBe("0");
    expectStatus(await s.approve(limit.id, s.keys.finance), 200);
    // 500 of the 1,000 gross is advanced: the operator's share of it, 445 TUSD, is payable.
    expect(await s.balance("o")).toMatchObject({ payable_now: (445n * USD).toString(), awaiting_funds: (445n * USD).toString() });
    expectStatus(await s.payout("o", 446n * USD), 422);
    expectStatus(await s.payout("o", 445n * USD), 201);

    // The customer's own payment (recorded for it) funds the rest.
    const r = await s.proposeReceipt(500n * USD, "postpaid invoice 7", "p");
    expectStatus(await s.approve(r.id, s.keys.admin2), 200);
    expect(await s.balance("o")).toMatchObject({ payable_now: (net - 445n * USD).toString(), awaiting_funds: "0" });
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("first come, first funded: usage posted later never takes the money that funds an honest operator's earlier usage", async () => {
    const s = await setup();
    expectStatus(await s.api.call("POST", "/v1/customers/c/deposits", { key: s.keys.market, body: { asset: TOKEN, amount: (2_000n * USD).toString() } }), 201);
    await s.usage("honest", "c", 1_000n * USD);
    const r = await s.proposeReceipt(1_000n * USD, "settlement 1");
    expectStatus(await s.approve(r.id, s.keys.finance2), 200);
    expect((await s.balance("honest")).payable_now).toBe((890n * USD).toString());
    // The marketplace now posts unfunded usage for its own operator, on the same customer and on a postpaid one.
    await s.usage("o", "c", 1_000n * USD);
    await s.usage("o", "p", 1_000n * USD);
    expect((await s.balance("honest")).payable_now).toBe((890n * USD).toString());
    expect(await s.balance("o")).toMatchObject({ payable_now: "0", awaiting_funds: (1_780n * USD).toString() });
    expectStatus(await s.payout("o", 1n), 422);
    expectStatus(await s.payout("honest", 890n * USD), 201);
  });

  it("a rejected proposal moves nothing, and a receipt names an existing customer", async () => {
    const s = await setup();
    expectStatus(await s.api.call("POST", "/v1/customers/c/deposits", { key: s.keys.market, body: { asset: TOKEN, amount: (100n * USD).toString() } }), 201);
    await s.usage("o", "c", 100n * USD);
    const r = await s.proposeReceipt(100n * USD, "bogus");
    expectStatus(await s.api.call("POST", `/v1/proposals/${r.id}/reject`, { key: s.keys.finance, body: { reason: "mine" } }), 403);
    const rejected = expectStatus(
      await s.api.call("POST", `/v1/proposals/${r.id}/reject`, { key: s.keys.finance2, body: { reason: "no such wire" } }),
      200,
    ).body;
    expect(rejected).toMatchObject({ status: "rejected", reason: "no such wire", result: null });
    expectStatus(await s.approve(r.id, s.keys.admin2), 409);
    expect((await s.balance("o")).payable_now).toBe("0");
    expect((await s.w.db.query("select * from funds_receipts")).length).toBe(0);
    const unknown = await s.api.call("POST", "/v1/marketplaces/m/receipts", {
      key: s.keys.finance,
      body: { asset: TOKEN, amount: "1", reference: "x", customer_id: "nobody" },
    });
    expectStatus(unknown, 404);
    expectStatus(await s.api.call("POST", "/v1/marketplaces/m/receipts", { key: s.keys.market, body: { asset: TOKEN, amount: "1", reference: "y" } }), 403);
    const listed = expectStatus(await s.api.call("GET", "/v1/proposals?status=rejected", { key: s.keys.finance }), 200).body;
    expect(listed.data.map((p: { id: string }) => p.id)).toEqual([r.id]);
  });

  it("a reversal cannot hand money already paid out back to the customer to be spent and paid again", async () => {
    const s = await setup();
    // The customer pays the platform 100 TUSD itself (recorded for it): its own money, which funds only its usage.
    const r = await s.proposeReceipt(100n * USD, "customer c wire 1", "c");
    expectStatus(await s.approve(r.id, s.keys.finance2), 200);
    const funded = await s.usage("o", "c", 100n * USD);
    expectStatus(await s.payout("o", 89n * USD), 201);
    // Unfunded usage pads the operator's balance, so the ledger's no-overdraft limit alone would let the reversal through.
    await s.usage("o", "p", 100n * USD);
    expect((await s.balance("o")).available).toBe((89n * USD).toString());
    const reversal = await s.api.call("POST", `/v1/usage/${funded.id}/reverse`, { key: s.keys.market, body: { reason: "meter fault" } });
    expectStatus(reversal, 422);
    expect(reversal.body.code).toBe("exceeds_credits");
    expect(reversal.body.detail).toContain("already been paid out");
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("npm run verify names an operator paid beyond its funded earnings", async () => {
    const s = await setup();
    const grant = s.grant;
    await grant(500n * USD);
    await s.usage("o", "p", 1_000n * USD);
    expectStatus(await s.payout("o", 445n * USD), 201);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
    // The platform cannot withdraw the credit it advanced and an operator was paid from ...
    const withdraw = expectStatus(
      await s.api.call("POST", "/v1/marketplaces/m/credit-limits", { key: s.keys.admin2, body: { asset: TOKEN, credit_limit: "0" } }),
      201,
    ).body;
    const refused = expectStatus(await s.approve(withdraw.id, s.keys.finance), 409).body;
    expect(refused).toMatchObject({ code: "credit_limit_in_use", detail: expect.stringContaining("operator o was paid 445 TUSD beyond its funded earnings") });
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
    // Edited by hand past that, verify names the operator paid beyond its funded earnings.
    await s.w.db.query("update marketplace_credit_limits set credit_limit = 0 where marketplace_id = 'm'");
    const report = await verifyLedger(s.w.db);
    expect(report.violations).toEqual([expect.objectContaining({ check: "funded_payouts", detail: expect.stringContaining("operator o ") })]);
    await s.w.db.query(`update marketplace_credit_limits set credit_limit = ${500n * USD} where marketplace_id = 'm'`);
    // Once the marketplace has settled what was advanced, the credit can be withdrawn.
    await s.settle(500n * USD, "m repays the credit");
    expectStatus(await s.approve(withdraw.id, s.keys.finance), 200);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });
});

describe("a payout above the approval threshold waits for a second key", () => {
  it("is held, not paid, until finance approves it; a rejected one gives the amount back", async () => {
    const s = await setup();
    await s.w.credit("o", TOKEN, 1_000n * USD);
    await proposeAndApprove(s.api, "PUT", `/v1/payout-policies/${TOKEN}`, { min_amount: "1", schedule: "manual", approval_threshold: (100n * USD).toString() });
    const small = expectStatus(await s.payout("o", 100n * USD), 201).body;
    expect(small).toMatchObject({ approval: null });
    const big = expectStatus(await s.payout("o", 300n * USD), 201).body;
    expect(big).toMatchObject({ status: "pending", approval: "required", note: expect.stringContaining("awaiting approval") });
    const worker = s.w.worker();
    for (let i = 0; i < 4; i++) {
      await worker.tick();
      await s.w.chain.test.mine({ blocks: 1 });
    }
    expect(expectStatus(await s.api.call("GET", `/v1/payouts/${small.id}`), 200).body.status).toBe("confirmed");
    expect(expectStatus(await s.api.call("GET", `/v1/payouts/${big.id}`), 200).body).toMatchObject({ status: "pending", approval: "required" });
    expect(await s.w.chain.tokenBalance(s.wallets.o!)).toBe(100n * USD);

    const [proposal] = expectStatus(await s.api.call("GET", "/v1/proposals?kind=payout&status=proposed", { key: s.keys.finance }), 200).body.data;
    expect(proposal.payload).toMatchObject({ payout_id: big.id, operator_id: "o", amount: (300n * USD).toString() });
    // The operator asked for it: it may not approve it; neither may a marketplace.
    expectStatus(await s.api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: s.keys.o, body: {} }), 403);
    expectStatus(
      await s.api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: s.keys.finance, body: { reason: "known operator, monthly payout" } }),
      200,
    );
    const [done] = await s.w.drive([big.id]);
    expect(done).toMatchObject({ status: "confirmed", approval: "approved" });
    expect(await s.w.chain.tokenBalance(s.wallets.o!)).toBe(400n * USD);

    const refused = expectStatus(await s.payout("o", 500n * USD), 201).body;
    const [p2] = expectStatus(await s.api.call("GET", "/v1/proposals?kind=payout&status=proposed", { key: s.keys.finance }), 200).body.data;
    expectStatus(await s.api.call("POST", `/v1/proposals/${p2.id}/reject`, { key: s.keys.finance2, body: { reason: "unusual amount" } }), 200);
    expect(expectStatus(await s.api.call("GET", `/v1/payouts/${refused.id}`), 200).body).toMatchObject({
      status: "failed",
      failure_reason: expect.stringContaining("unusual amount"),
    });
    expect((await s.balance("o")).available).toBe((600n * USD).toString());
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });
});
