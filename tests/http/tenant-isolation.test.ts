import { beforeAll, describe, expect, it } from "vitest";
import { usageMonth } from "../support/clock.js";
import { expectRefused, expectStatus, proposeAndApprove, testApi, world, worldPerFile } from "../support/http.js";

/** No tenant can hurt another: the attacks of a marketplace on another one's writes and operators. */
const t = worldPerFile();
let n = 0;
// An operator oz that sells through both marketplaces (linked by an admin).
beforeAll(async () => {
  for (const m of ["m1", "m2"]) expectStatus(await t.api.call("POST", "/v1/operators", { body: { id: "oz", name: "shared farm", marketplace_id: m } }), 201);
});

const record = (amount: string, extra: Record<string, unknown> = {}) => ({
  external_id: `iso-${++n}`,
  operator_id: "oz",
  customer_id: "c1",
  resource: "gpu:h100",
  unit: "gpu_hour",
  quantity: "1",
  amount,
  asset: "USDC",
  period_start: usageMonth.day(5).toISOString(),
  period_end: usageMonth.day(6).toISOString(),
  ...extra,
});

describe("one marketplace cannot block another's usage", () => {
  it("a record of 2^256 - 1 for a shared operator is refused, and the other marketplace's usage for it goes through", async () => {
    const max = ((1n << 256n) - 1n).toString();
    await expectRefused(t.api, () => t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: record(max) }), 422, "usage_limit_exceeded");
    // m1 fills oz with the most it may, in records of its largest size, and reverses them.
    expectStatus(await t.api.call("POST", "/v1/customers/c1/deposits", { key: t.w.keys.m1, body: { asset: "USDC", amount: (10n ** 15n).toString() } }), 201);
    for (let i = 0; i < 5; i++) {
      const r = expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: record((10n ** 12n).toString()) }), 201).body;
      expectStatus(await t.api.call("POST", `/v1/usage/${r.id}/reverse`, { key: t.w.keys.m1, body: { reason: "filler" } }), 201);
    }
    expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m2, body: record("5000") }), 201);
  });

  it("no admin can raise the size of a record past 2^128 - 1 smallest units: no running total can ever overflow", async () => {
    const path = "/v1/marketplaces/m1/usage-limits/USDC";
    await expectRefused(
      t.api,
      () => t.api.call("PUT", path, { key: t.w.keys.admin, body: { max_gross_per_record: (1n << 128n).toString() } }),
      400,
      "invalid_request",
      "max_gross_per_record",
    );
    await proposeAndApprove(t.api, "PUT", path, { max_gross_per_record: ((1n << 128n) - 1n).toString() });
    // At the ceiling, m1's largest records and their reversals leave oz's totals far from 2^256.
    const big = ((1n << 128n) - 1n).toString();
    expectStatus(await t.api.call("POST", "/v1/customers/c1/deposits", { key: t.w.keys.m1, body: { asset: "USDC", amount: (1n << 130n).toString() } }), 201);
    for (let i = 0; i < 3; i++) {
      const r = expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: record(big) }), 201).body;
      expectStatus(await t.api.call("POST", `/v1/usage/${r.id}/reverse`, { key: t.w.keys.m1, body: { reason: "filler" } }), 201);
    }
    expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m2, body: record("5000") }), 201);
    await proposeAndApprove(t.api, "PUT", path, { max_gross_per_record: null });
  });
});

describe("ids that reach the chain are unique per deployment", () => {
  it("two ledgers (staging and production sharing a vault) make different payout ids for the same request; one ledger the same id on a retry", async () => {
    const other = await testApi();
    try {
      const w2 = await world(other);
      const body = { asset: "USDC", amount: "1" };
      const a = expectStatus(await t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body, idempotencyKey: "pay-same" }), 201).body;
      const again = expectStatus(await t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body, idempotencyKey: "pay-same" }), 201).body;
      const b = expectStatus(await other.call("POST", "/v1/payouts", { key: w2.keys.o1, body, idempotencyKey: "pay-same" }), 201).body;
      expect(again.id).toBe(a.id);
      expect(b.id).not.toBe(a.id);
      const ids = await Promise.all([t.api, other].map(async (x) => (await x.db.query<{ id: string }>("select id from deployment"))[0]!.id));
      expect(ids[0]).not.toBe(ids[1]);
      expectStatus(await t.api.call("POST", `/v1/payouts/${a.id}/cancel`, { key: t.w.keys.finance, body: {} }), 200);
    } finally {
      await other.close();
    }
  });
});

describe("a marketplace cannot take over another's operator", () => {
  it("registering another marketplace's operator only invites it, whatever the name, and reveals nothing; the operator's own key accepts", async () => {
    // m2 tries o1 (m1's), with its right name and with a wrong one: the same answer, and no link.
    const right = await t.api.call("POST", "/v1/operators", { key: t.w.keys.m2, body: { id: "o1", name: "operator o1" } });
    const wrong = await t.api.call("POST", "/v1/operators", { key: t.w.keys.m2, body: { id: "o1", name: "a guess" } });
    for (const r of [right, wrong]) {
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      expect(r.body).toEqual({ operator_id: "o1", marketplace_id: "m2", status: "invited", invited_at: expect.any(String), accepted_at: null });
    }
    expect(wrong.body.invited_at).toBe(right.body.invited_at);
    const usage = { ...t.w.usage(`takeover-${++n}`), operator_id: "o1" };
    await expectRefused(t.api, () => t.api.call("POST", "/v1/usage", { key: t.w.keys.m2, body: usage }), 404, "operator_not_found");
    // Only the operator itself (or an admin) accepts.
    await expectRefused(t.api, () => t.api.call("POST", "/v1/operators/o1/invitations/m2/accept", { key: t.w.keys.m2, body: {} }), 403, "forbidden");
    await expectRefused(t.api, () => t.api.call("POST", "/v1/operators/o1/invitations/m2/accept", { key: t.w.keys.o2, body: {} }), 404, "operator_not_found");
    await expectRefused(t.api, () => t.api.call("GET", "/v1/operators/o1/invitations", { key: t.w.keys.o2 }), 404, "operator_not_found");
    await expectRefused(t.api, () => t.api.call("POST", "/v1/operators/o1/invitations/mx/accept", { key: t.w.keys.o1, body: {} }), 404, "invitation_not_found");
    expect(expectStatus(await t.api.call("GET", "/v1/operators/o1/invitations", { key: t.w.keys.o1 }), 200).body.data).toEqual([
      { operator_id: "o1", marketplace_id: "m2", status: "invited", invited_at: right.body.invited_at, accepted_at: null },
    ]);
    expect(expectStatus(await t.api.call("POST", "/v1/operators/o1/invitations/m2/accept", { key: t.w.keys.o1, body: {} }), 200).body).toMatchObject({
      status: "accepted",
    });
    expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m2, body: { ...usage, customer_id: "c1" } }), 201);
    // Now o1 is m2's too: registering it again is an ordinary answer, which shows only m2's own link.
    expect(expectStatus(await t.api.call("POST", "/v1/operators", { key: t.w.keys.m2, body: { id: "o1", name: "operator o1" } }), 201).body).toMatchObject({
      id: "o1",
      marketplace_ids: ["m2"],
    });
    await expectRefused(t.api, () => t.api.call("POST", "/v1/operators", { key: t.w.keys.m2, body: { id: "o1", name: "another" } }), 409, "operator_exists");
  });
});

describe("an operator's balances are read while its access is checked", () => {
  it("another operator's key and an unknown id get the same 404, with nothing of the read in the answer; the operator and admin get it", async () => {
    for (const [key, id] of [
      [t.w.keys.o2, "o1"],
      [t.w.keys.admin, "nobody-at-all"],
      [t.w.keys.o1, "nobody-at-all"],
    ] as const) {
      const r = await t.api.call("GET", `/v1/operators/${id}/balances`, { key });
      expect(r.status).toBe(404);
      expect(r.body.code).toBe("operator_not_found");
      expect(JSON.stringify(r.body)).not.toContain("available");
      expect(r.headers.get("ledger-read-source")).toBeNull();
      expect(r.headers.get("ledger-staleness-ms")).toBeNull();
    }
    for (const key of [t.w.keys.o1, t.w.keys.admin]) {
      const r = expectStatus(await t.api.call("GET", "/v1/operators/o1/balances", { key }), 200);
      expect(r.body.operator_id).toBe("o1");
      expect(r.headers.get("ledger-read-source")).toBe("primary");
    }
  });
});

describe("a transfer across two marketplaces", () => {
  it("is read by admin and finance only: neither marketplace reads the other's account and amount, by id or in a list", async () => {
    const w = t.w;
    // An admin moves money between an account of m1 and one of m2 (both opened through the API).
    const adminTransfer = async (debit: string, credit: string, amount: string) =>
      expectStatus(
        await t.api.call("POST", "/v1/transfers", {
          key: w.keys.admin,
          body: { legs: [{ debit_account_id: debit, credit_account_id: credit, amount }] },
        }),
        201,
      ).body;
    const across = await adminTransfer(w.m1Funding.id, w.m2Customer.id, "17");
    // One within m1 stays m1's to read.
    const within = await adminTransfer(w.m1Funding.id, w.m1Customer.id, "18");
    for (const key of [w.keys.admin, w.keys.finance]) expectStatus(await t.api.call("GET", `/v1/transfers/${across.id}`, { key }), 200);
    for (const key of [w.keys.m1, w.keys.m2]) {
      const res = await t.api.call("GET", `/v1/transfers/${across.id}`, { key });
      expect(res.status).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain(w.m2Customer.id);
      expect(JSON.stringify(res.body)).not.toContain(w.m1Funding.id);
      const listed = expectStatus(await t.api.call("GET", "/v1/transfers?limit=200", { key }), 200).body.data as { id: string }[];
      expect(listed.map((x) => x.id)).not.toContain(across.id);
    }
    expectStatus(await t.api.call("GET", `/v1/transfers/${within.id}`, { key: w.keys.m1 }), 200);
    const m1Listed = expectStatus(await t.api.call("GET", "/v1/transfers?limit=200", { key: w.keys.m1 }), 200).body.data as { id: string }[];
    expect(m1Listed.map((x) => x.id)).toContain(within.id);
    const financeListed = expectStatus(await t.api.call("GET", "/v1/transfers?limit=200", { key: w.keys.finance }), 200).body.data as { id: string }[];
    expect(financeListed.map((x) => x.id)).toContain(across.id);
  });
});
