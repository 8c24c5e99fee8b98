import { beforeAll, describe, expect, it } from "vitest";
import { testClock, usageMonth } from "../support/clock.js";
import { expectRefused, expectStatus, worldPerFile } from "../support/http.js";

/**
 * Month-end close (docs/reconciliation.md): a month of marketplace m1 (the fixtures' usage month,
 * two months before the clock's, so CI's runs with the clock at month and year ends cross no
 * boundary of it) is closed by finance on two keys; late usage and corrections land in the next
 * open month, and the closed month's reports are the same every time they are asked.
 */
const t = worldPerFile();
const P = usageMonth.label;
const base = `/v1/marketplaces/m1/periods/${P}`;
let closedReports: unknown[] = [];
/** A manual transfer of m1 effective inside the month, made while it was open. */
let dated: { id: string };
const manual = (effective_at?: string) =>
  t.api.call("POST", "/v1/transfers", {
    key: t.w.keys.m1,
    body: { legs: [{ debit_account_id: t.w.m1Funding.id, credit_account_id: t.w.m1Customer.id, amount: "5" }], ...(effective_at ? { effective_at } : {}) },
  });

const reports = async () => {
  const range = `from=${usageMonth.from.toISOString()}&to=${usageMonth.to.toISOString()}`;
  return Promise.all(
    [
      `/v1/reports/fee-revenue?${range}`,
      `/v1/reports/operator-statements?${range}`,
      `/v1/reports/trial-balance?as_of=${new Date(usageMonth.to.getTime() - 1).toISOString()}`,
      `/v1/operators/o1/statement?${range}`,
      // The same month asked for by name: every report that takes a window.
      `/v1/reports/fee-revenue?period=${P}&marketplace_id=m1`,
      `/v1/reports/trial-balance?period=${P}`,
      `/v1/reports/operator-statements?period=${P}`,
      `/v1/operators/o1/statement?period=${P}`,
      `/v1/operators/o1/earnings?period=${P}&group_by=resource`,
      `/v1/customers/c1/statement?period=${P}&marketplace_id=m1`,
      `/v1/customers/c1/statement?period=${P}&marketplace_id=m1&format=csv`,
    ].map(async (path) => {
      const body = expectStatus(await t.api.call("GET", path, { key: t.w.keys.finance }), 200).body;
      return typeof body === "object" && body !== null && "generated_at" in body ? { ...body, generated_at: "(when read)" } : body;
    }),
  );
};
/** The month after the usage month, by name. */
const NEXT = usageMonth.to.toISOString().slice(0, 7);
const sum = (xs: string[]) => xs.reduce((a, x) => a + BigInt(x), 0n);
const late = (id: string) => t.w.usage(id, { period_start: usageMonth.day(20).toISOString(), period_end: usageMonth.day(21).toISOString() });
const approve = (id: string, key: string) => t.api.call("POST", `/v1/proposals/${id}/approve`, { key, body: {} });

beforeAll(async () => {
  expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage("before-close") }), 201);
  dated = expectStatus(await manual(usageMonth.day(12).toISOString()), 201).body;
});

describe("accounting periods", () => {
  it("lists the current month and reads a month's bounds; another marketplace's periods are not found; operators may not read them", async () => {
    const list = expectStatus(await t.api.call("GET", "/v1/marketplaces/m1/periods", { key: t.w.keys.m1 }), 200).body.data;
    const now = testClock.now();
    expect(list[0]).toMatchObject({ status: "open", time_zone: "UTC" });
    expect(new Date(list[0].starts_at).getTime()).toBeLessThanOrEqual(now.getTime());
    expect(new Date(list[0].ends_at).getTime()).toBeGreaterThan(now.getTime());
    const one = expectStatus(await t.api.call("GET", base, { key: t.w.keys.finance }), 200).body;
    expect(one).toMatchObject({ period: P, status: "open", starts_at: usageMonth.from.toISOString(), ends_at: usageMonth.to.toISOString() });
    expect((await t.api.call("GET", base, { key: t.w.keys.m2 })).status).toBe(404);
    expect((await t.api.call("GET", base, { key: t.w.keys.o1 })).status).toBe(403);
    await expectRefused(t.api, () => t.api.call("GET", "/v1/marketplaces/m1/periods/2026-13", { key: t.w.keys.finance }), 400, "invalid_request", "period");
  });

  it("refuses what the rules do not allow, writing nothing", async () => {
    const current = expectStatus(await t.api.call("GET", "/v1/marketplaces/m1/periods", { key: t.w.keys.finance }), 200).body.data[0].period;
    const put = (period: string, status: string, key = t.w.keys.finance) =>
      t.api.call("PUT", `/v1/marketplaces/m1/periods/${period}`, { key, body: { status } });
    await expectRefused(t.api, () => put(current, "closing"), 409, "period_transition"); // not ended
    await expectRefused(t.api, () => put(P, "closed"), 409, "period_transition"); // not closing
    await expectRefused(t.api, () => put(P, "open"), 409, "period_transition"); // open already
    await expectRefused(t.api, () => put(P, "archived"), 400, "invalid_request", "status");
    for (const key of [t.w.keys.m1, t.w.keys.o1]) await expectRefused(t.api, () => put(P, "closing", key), 403, "forbidden");
  });

  it("while closing, nothing is back-dated into the month: usage and reversals refused; closing → open on one key", async () => {
    expect(expectStatus(await t.api.call("PUT", base, { key: t.w.keys.finance, body: { status: "closing" } }), 200).body.status).toBe("closing");
    await expectRefused(t.api, () => t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: late("while-closing") }), 409, "period_closing");
    const r = await expectRefused(
      t.api,
      () => t.api.call("POST", `/v1/usage/${t.w.m1Usage.id}/reverse`, { key: t.w.keys.m1, body: { reason: "meter read twice" } }),
      409,
      "period_closing",
    );
    expect(r.body.detail).toMatch(new RegExp(`the period ${P} of marketplace m1 is being closed`));
    await expectRefused(t.api, () => manual(usageMonth.day(13).toISOString()), 409, "period_closing");
    // Usage of the current month posts as usual.
    expectStatus(
      await t.api.call("POST", "/v1/usage", {
        key: t.w.keys.m1,
        body: t.w.usage("this-month", {
          period_start: new Date(testClock.now().getTime() - 7_200_000).toISOString(),
          period_end: new Date(testClock.now().getTime() - 3_600_000).toISOString(),
        }),
      }),
      201,
    );
    expect(expectStatus(await t.api.call("PUT", base, { key: t.w.keys.finance, body: { status: "open" } }), 200).body.status).toBe("open");
    expectStatus(await t.api.call("PUT", base, { key: t.w.keys.finance, body: { status: "closing" } }), 200);
  });

  it("closes on two keys; then late usage and corrections are booked in the next open month, naming what they belong to", async () => {
    const proposal = expectStatus(await t.api.call("PUT", base, { key: t.w.keys.finance, body: { status: "closed" } }), 202).body;
    expect(proposal).toMatchObject({ kind: "period_close", status: "proposed" });
    await expectRefused(t.api, () => approve(proposal.id, t.w.keys.finance), 403, "four_eyes");
    expect(expectStatus(await t.api.call("GET", base, { key: t.w.keys.finance }), 200).body.status).toBe("closing");
    expectStatus(await approve(proposal.id, t.w.keys.admin), 200);
    expect(expectStatus(await t.api.call("GET", base, { key: t.w.keys.finance }), 200).body).toMatchObject({ status: "closed", proposal_id: proposal.id });
    closedReports = await reports();

    const record = expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: late("late-1") }), 201).body;
    expect(record.effective_at).toBe(usageMonth.to.toISOString()); // the first instant of the next month
    expect(record.period_end).toBe(usageMonth.day(21).toISOString()); // what it is for is kept
    const transfer = expectStatus(await t.api.call("GET", `/v1/transfers/${record.transfer_id}`, { key: t.w.keys.finance }), 200).body;
    expect(transfer.metadata.usage.late_for).toEqual({ period: P, effective_at: usageMonth.day(21).toISOString() });
    // Sent again (a retry): the same record, not a conflict.
    const again = await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: late("late-1") });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(record.id);

    const reversal = expectStatus(
      await t.api.call("POST", `/v1/usage/${t.w.m1Usage.id}/reverse`, { key: t.w.keys.m1, body: { reason: "meter read twice" } }),
      201,
    ).body;
    const rt = expectStatus(await t.api.call("GET", `/v1/transfers/${reversal.reversal_transfer_id}`, { key: t.w.keys.finance }), 200).body;
    expect(rt.effective_at).toBe(usageMonth.to.toISOString());
    expect(rt.metadata.usage_reversal.late_for).toMatchObject({ period: P });
    // Manual transfers: an explicit instant inside the closed month is refused; a reversal without one lands in the next month.
    await expectRefused(t.api, () => manual(usageMonth.day(13).toISOString()), 409, "period_closed");
    await expectRefused(
      t.api,
      () => t.api.call("POST", `/v1/transfers/${dated.id}/reverse`, { key: t.w.keys.m1, body: { effective_at: usageMonth.day(14).toISOString() } }),
      409,
      "period_closed",
    );
    const reversed = expectStatus(await t.api.call("POST", `/v1/transfers/${dated.id}/reverse`, { key: t.w.keys.m1, body: {} }), 201).body;
    expect(reversed.effective_at).toBe(usageMonth.to.toISOString());
    expect(reversed.metadata.late_for).toEqual({ period: P, effective_at: usageMonth.day(12).toISOString() });
    // The closed month's reports: the same as when it closed.
    expect(await reports()).toEqual(closedReports);
  });

  it("every report can be asked for a month by name: opening, movements and closing, the next month opening where it closed", async () => {
    const fees = expectStatus(
      await t.api.call("GET", `/v1/reports/fee-revenue?period=${P}&marketplace_id=m1&group_by=month`, { key: t.w.keys.finance }),
      200,
    ).body;
    expect(fees.window).toEqual({ from: usageMonth.from.toISOString(), to: usageMonth.to.toISOString(), period: P, time_zone: "UTC" });
    expect(fees.balances.length).toBeGreaterThan(0);
    for (const b of fees.balances) {
      expect(BigInt(b.closing)).toBe(BigInt(b.opening) + BigInt(b.movements));
      const rows = fees.data.filter(
        (r: { asset: string; party: string; marketplace_id: string }) => r.asset === b.asset && r.party === b.party && r.marketplace_id === b.marketplace_id,
      );
      expect(BigInt(b.movements)).toBe(sum(rows.map((r: { revenue: string }) => r.revenue)));
      expect(b.marketplace_id).toBe("m1");
    }
    const trial = async (period: string) =>
      expectStatus(await t.api.call("GET", `/v1/reports/trial-balance?period=${period}`, { key: t.w.keys.finance }), 200).body;
    const [closed, next] = [await trial(P), await trial(NEXT)];
    for (const tb of [closed, next]) {
      for (const total of tb.totals) expect(total.balanced).toBe(true);
      for (const a of tb.accounts) {
        const moved = a.normal_side === "debit" ? BigInt(a.debits) - BigInt(a.credits) : BigInt(a.credits) - BigInt(a.debits);
        expect(BigInt(a.balance)).toBe(BigInt(a.opening) + moved);
      }
    }
    // The late usage and corrections are the next month's movements; the closed month's closing is its opening.
    const closing = new Map(closed.accounts.map((a: { account_id: string; balance: string }) => [a.account_id, a.balance]));
    for (const a of next.accounts) expect(a.opening).toBe(closing.get(a.account_id) ?? "0");
    const earnings = expectStatus(await t.api.call("GET", `/v1/operators/o1/earnings?period=${NEXT}`, { key: t.w.keys.o1 }), 200).body;
    expect(earnings.window).toMatchObject({ period: NEXT, time_zone: "UTC" });
    expect(earnings.balances.length).toBeGreaterThan(0);
    for (const b of earnings.balances) expect(BigInt(b.closing)).toBe(BigInt(b.opening) + BigInt(b.credits) - BigInt(b.debits));
    const customer = expectStatus(await t.api.call("GET", `/v1/customers/c1/statement?period=${NEXT}&marketplace_id=m1`, { key: t.w.keys.m1 }), 200).body;
    expect(customer).toMatchObject({ period: NEXT, from: usageMonth.to.toISOString() });
    expect(customer.data.some((l: { type: string }) => l.type === "usage")).toBe(true);
  });

  it("a month by name is refused with from or to, unless well formed, and a time zone only goes with it", async () => {
    const get = (path: string) => () => t.api.call("GET", path, { key: t.w.keys.finance });
    const range = `from=${usageMonth.from.toISOString()}&to=${usageMonth.to.toISOString()}`;
    await expectRefused(t.api, get(`/v1/reports/fee-revenue?period=${P}&${range}`), 400, "invalid_request", "period");
    await expectRefused(t.api, get(`/v1/reports/fee-revenue?period=2026-13`), 400, "invalid_request", "period");
    await expectRefused(t.api, get(`/v1/reports/fee-revenue`), 400, "invalid_request", "from");
    await expectRefused(t.api, get(`/v1/reports/fee-revenue?period=${P}&marketplace_id=nope`), 404, "marketplace_not_found");
    await expectRefused(t.api, get(`/v1/reports/trial-balance?period=${P}&as_of=${usageMonth.to.toISOString()}`), 400, "invalid_request", "as_of");
    await expectRefused(t.api, get(`/v1/reports/trial-balance?time_zone=Europe/Berlin`), 400, "invalid_request", "time_zone");
    await expectRefused(t.api, get(`/v1/reports/trial-balance?period=${P}&time_zone=Mars/Olympus`), 400, "invalid_request", "time_zone");
    await expectRefused(t.api, get(`/v1/operators/o1/earnings?period=${P}&to=${usageMonth.to.toISOString()}`), 400, "invalid_request", "period");
    await expectRefused(t.api, get(`/v1/customers/c1/statement?period=${P}x&marketplace_id=m1`), 400, "invalid_request", "period");
  });

  it("reopens only on two keys; the time zone cannot move once a month was closed", async () => {
    const proposal = expectStatus(await t.api.call("PUT", base, { key: t.w.keys.finance, body: { status: "open" } }), 202).body;
    expect(proposal.kind).toBe("period_reopen");
    expectStatus(await approve(proposal.id, t.w.keys.admin), 200);
    expect(expectStatus(await t.api.call("GET", base, { key: t.w.keys.finance }), 200).body.status).toBe("open");
    // Open again: back-dated usage lands in the month itself.
    const record = expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: late("after-reopen") }), 201).body;
    expect(record.effective_at).toBe(usageMonth.day(21).toISOString());
    // A period that was ever closed keeps its row: the time zone stays.
    await expectRefused(t.api, () => t.api.call("PUT", "/v1/marketplaces/m1/time-zone", { body: { time_zone: "Europe/Berlin" } }), 409, "period_transition");
  });

  it("months follow the marketplace's time zone", async () => {
    await expectRefused(
      t.api,
      () => t.api.call("PUT", "/v1/marketplaces/m2/time-zone", { body: { time_zone: "Mars/Olympus" } }),
      400,
      "invalid_request",
      "time_zone",
    );
    await expectRefused(
      t.api,
      () => t.api.call("PUT", "/v1/marketplaces/m2/time-zone", { key: t.w.keys.finance, body: { time_zone: "UTC" } }),
      403,
      "forbidden",
    );
    expectStatus(await t.api.call("PUT", "/v1/marketplaces/m2/time-zone", { body: { time_zone: "Asia/Tokyo" } }), 200);
    const p = expectStatus(await t.api.call("GET", "/v1/marketplaces/m2/periods/2026-07", { key: t.w.keys.m2 }), 200).body;
    expect(p).toMatchObject({ time_zone: "Asia/Tokyo", starts_at: "2026-06-30T15:00:00.000Z", ends_at: "2026-07-31T15:00:00.000Z" });
  });
});
