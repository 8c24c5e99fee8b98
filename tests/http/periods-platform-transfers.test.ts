import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pastMonth } from "../support/clock.js";
import { expectStatus, testApi, world, type TestApi } from "../support/http.js";

/**
 * A closed month's reports never change again, whatever accounts a transfer touches. A transfer
 * is judged against the periods of the marketplaces its accounts belong to; one on the platform's
 * own accounts only (opened through the API with no marketplace) belongs to every marketplace's
 * books and was judged against none: one admin key posted into, and reversed within, a month every
 * marketplace had closed, and the month's trial balance moved. And an instant one marketplace moved
 * a transfer to was not judged against the other marketplace's periods.
 */
let api: TestApi;
let w: Awaited<ReturnType<typeof world>>;
beforeAll(async () => {
  api = await testApi();
  w = await world(api);
}, 120_000);
afterAll(async () => api?.close());

const put = (m: string, label: string, status: string) => api.call("PUT", `/v1/marketplaces/${m}/periods/${label}`, { key: w.keys.finance, body: { status } });
async function close(m: string, label: string) {
  expectStatus(await put(m, label, "closing"), 200);
  const p = expectStatus(await put(m, label, "closed"), 202).body;
  expectStatus(await api.call("POST", `/v1/proposals/${p.id}/approve`, { key: w.keys.admin, body: {} }), 200);
}
const transfer = (debit: string, credit: string, amount: string, effectiveAt?: Date) =>
  api.call("POST", "/v1/transfers", {
    key: w.keys.admin,
    body: { legs: [{ debit_account_id: debit, credit_account_id: credit, amount }], ...(effectiveAt ? { effective_at: effectiveAt.toISOString() } : {}) },
  });
const trialBalance = async (label: string) =>
  expectStatus(await api.call("GET", `/v1/reports/trial-balance?period=${label}&time_zone=UTC`, { key: w.keys.finance }), 200).body;

describe("transfers and the months marketplaces closed", () => {
  it("a transfer on the platform's own accounts is not dated into, nor reversed within, a month every marketplace closed", async () => {
    const M = pastMonth(6);
    const account = async (ref: string, side: "debit" | "credit") =>
      expectStatus(await api.call("POST", "/v1/accounts", { key: w.keys.admin, body: { asset_id: w.asset.id, code: "equity", normal_side: side, ref } }), 201)
        .body;
    const suspense = await account("suspense", "debit");
    const equity = await account("equity", "credit");
    expect(suspense.marketplace_id).toBeNull();
    const original = expectStatus(await transfer(suspense.id, equity.id, "500", M.day(10, 12)), 201).body;
    await close("m1", M.label);
    await close("m2", M.label);
    const before = await trialBalance(M.label);
    // Named inside the month: refused, nothing written.
    const late = await transfer(suspense.id, equity.id, "1000000", M.day(10, 20));
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("period_closed");
    // Reversed without an instant: booked after the month, naming it.
    const rev = expectStatus(await api.call("POST", `/v1/transfers/${original.id}/reverse`, { key: w.keys.admin, body: {} }), 201).body;
    expect(new Date(rev.effective_at).getTime()).toBeGreaterThanOrEqual(M.to.getTime());
    expect(await trialBalance(M.label)).toEqual(before);
  });

  it("a reversal across two marketplaces is not booked in a month the second closed, where the first moved it", async () => {
    const Oct = pastMonth(4);
    const Nov = pastMonth(3);
    const original = expectStatus(await transfer(w.m1Funding.id, w.m2Customer.id, "1000", Oct.day(10, 12)), 201).body;
    // m1 closes "October"; m2 closes October and November, then reopens October on two keys.
    await close("m1", Oct.label);
    await close("m2", Oct.label);
    await close("m2", Nov.label);
    const reopen = expectStatus(await put("m2", Oct.label, "open"), 202).body;
    expectStatus(await api.call("POST", `/v1/proposals/${reopen.id}/approve`, { key: w.keys.admin, body: {} }), 200);
    const before = await trialBalance(Nov.label);
    const rev = expectStatus(await api.call("POST", `/v1/transfers/${original.id}/reverse`, { key: w.keys.admin, body: {} }), 201).body;
    expect(new Date(rev.effective_at).getTime()).toBeGreaterThanOrEqual(Nov.to.getTime());
    expect(await trialBalance(Nov.label)).toEqual(before);
  });
});
