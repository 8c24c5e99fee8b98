import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expireHolds } from "../../src/workers/hold-expirer.js";
import { expireUsageHolds } from "../../src/services/holds.js";
import { clockStartingAt, ManualClock } from "../../src/domain/clock.js";
import { configuredClock, Config } from "../../src/config.js";
import { freshDatabase } from "../support/db.js";
import { expectStatus, testApi, type TestApi } from "../support/http.js";

/**
 * One clock: the service judges every time rule by the clock it is given, not by the machine's time
 * or PostgreSQL's now(). The service runs here in 2031, years ahead of any machine running the test.
 */
const START = new Date("2031-06-15T12:00:00Z");
const clock = new ManualClock(START);
let api: TestApi;
let mk: string;

const usage = (id: string, periodEnd: Date, extra: Record<string, unknown> = {}) => ({
  external_id: id,
  operator_id: "op",
  customer_id: "pre",
  resource: "gpu:h100",
  unit: "gpu_hour",
  quantity: "1",
  unit_price: "2",
  asset: "USDC",
  period_start: new Date(periodEnd.getTime() - 3_600_000).toISOString(),
  period_end: periodEnd.toISOString(),
  ...extra,
});

beforeAll(async () => {
  api = await testApi({ db: await freshDatabase({ clock }) });
  expectStatus(await api.call("POST", "/v1/assets", { body: { code: "USDC", scale: 6, settlement: { kind: "offchain" } } }), 201);
  expectStatus(await api.call("POST", "/v1/marketplaces", { body: { id: "m", name: "m" } }), 201);
  expectStatus(
    await api.call("POST", "/v1/marketplaces/m/fee-schedules", {
      body: { effective_from: "2020-01-01T00:00:00Z", rules: [{ party: "marketplace", bps: 1000 }] },
    }),
    201,
  );
  mk = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "m", role: "marketplace", scope_id: "m" } }), 201).body.secret;
  expectStatus(await api.call("POST", "/v1/operators", { key: mk, body: { id: "op", name: "op" } }), 201);
  expectStatus(await api.call("POST", "/v1/customers", { key: mk, body: { id: "pre", billing: "prepaid" } }), 201);
  expectStatus(await api.call("POST", "/v1/customers/pre/deposits", { key: mk, body: { asset: "USDC", amount: "100000000" } }), 201);
});
afterAll(async () => {
  await api?.close();
  await api?.db.destroy();
});

describe("the service's clock", () => {
  it("tells its time on /healthz", async () => {
    clock.set(START);
    expect((await api.call("GET", "/healthz", { key: null })).body).toEqual({ status: "ok", time: START.toISOString() });
  });

  it("judges 'in the future' and books at its own instant, not the machine's", async () => {
    clock.set(new Date("2031-06-15T12:00:00Z"));
    // Years ahead of the machine's time, and still accepted: it ended an hour before the clock's now.
    const ok = expectStatus(await api.call("POST", "/v1/usage", { key: mk, body: usage("u-past", new Date("2031-06-15T11:00:00Z")) }), 201).body;
    expect(ok).toMatchObject({ effective_at: "2031-06-15T11:00:00.000Z", created_at: "2031-06-15T12:00:00.000Z" });
    const transfer = expectStatus(await api.call("GET", `/v1/transfers/${ok.transfer_id}`), 200).body;
    expect(transfer).toMatchObject({ effective_at: "2031-06-15T11:00:00.000Z", created_at: "2031-06-15T12:00:00.000Z" });
    // Five minutes of tolerance, and not a second more.
    expectStatus(await api.call("POST", "/v1/usage", { key: mk, body: usage("u-edge", new Date("2031-06-15T12:05:00Z")) }), 201);
    const future = await api.call("POST", "/v1/usage", { key: mk, body: usage("u-future", new Date("2031-06-15T12:05:01Z")) });
    expect(future.body).toMatchObject({ status: 422, code: "usage_in_future" });
  });

  it("revokes a key and makes a usage record's id at its own instant", async () => {
    clock.set(new Date("2031-06-15T13:00:00Z"));
    const key = expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: "short-lived", role: "finance" } }), 201).body;
    const revoked = expectStatus(await api.call("POST", `/v1/api-keys/${key.id}/revoke`), 200).body;
    expect(revoked.revoked_at).toBe("2031-06-15T13:00:00.000Z");
    const u = expectStatus(await api.call("POST", "/v1/usage", { key: mk, body: usage("u-id-time", new Date("2031-06-15T12:30:00Z")) }), 201).body;
    // A uuidv7 carries its millisecond in its first 48 bits.
    expect(parseInt(u.id.replace(/-/g, "").slice(0, 12), 16)).toBe(Date.parse("2031-06-15T13:00:00Z"));
  });

  it("expires holds when its time says so, before and after the expirers run", async () => {
    clock.set(new Date("2031-06-16T08:00:00Z"));
    const hold = expectStatus(
      await api.call("POST", "/v1/holds", { key: mk, body: { customer_id: "pre", asset: "USDC", amount: "5000000", timeout_seconds: 3600 } }),
      201,
    ).body;
    expect(hold.expires_at).toBe("2031-06-16T09:00:00.000Z");
    clock.set(new Date("2031-06-16T08:59:59Z"));
    expectStatus(await api.call("POST", "/v1/usage", { key: mk, body: usage("on-hold", new Date("2031-06-16T08:00:00Z"), { hold_id: hold.id }) }), 201);
    expect(await expireUsageHolds(api.ledger.db)).toBe(0); // not yet, by the clock
    clock.set(new Date("2031-06-16T09:00:00Z"));
    const late = await api.call("POST", "/v1/usage", { key: mk, body: usage("late-on-hold", new Date("2031-06-16T08:30:00Z"), { hold_id: hold.id }) });
    expect(late.body).toMatchObject({ status: 409, code: "hold_closed" });
    expect(await expireUsageHolds(api.ledger.db)).toBe(1);
    const closed = expectStatus(await api.call("GET", `/v1/holds/${hold.id}`, { key: mk }), 200).body;
    expect(closed).toMatchObject({ status: "expired", remaining: "0", closed_at: "2031-06-16T09:00:00.000Z" });
  });

  it("times out pending transfers by its time", async () => {
    clock.set(new Date("2031-07-01T00:00:00Z"));
    // Accounts of the admin's own books (the service's accounts move only through its routes).
    const assetId = (await api.db.query<{ id: string }>("select id from assets where code = 'USDC'"))[0]!.id;
    const open = async (ref: string, normal_side: string) =>
      expectStatus(await api.call("POST", "/v1/accounts", { body: { asset_id: assetId, code: ref, normal_side, ref } }), 201).body.id as string;
    const from = await open("equity:clock", "debit");
    const to = await open("suspense:clock", "credit");
    const pending = expectStatus(
      await api.call("POST", "/v1/transfers", {
        body: { type: "pending", timeout_seconds: 60, legs: [{ debit_account_id: from, credit_account_id: to, amount: "1" }] },
      }),
      201,
    ).body;
    expect(pending.timeout_at).toBe("2031-07-01T00:01:00.000Z");
    clock.set(new Date("2031-07-01T00:00:59Z"));
    expect(await expireHolds(api.ledger.db)).toBe(0);
    clock.set(new Date("2031-07-01T00:01:00Z"));
    expect(await expireHolds(api.ledger.db)).toBe(1);
    const posted = await api.call("POST", `/v1/transfers/${pending.id}/post`, {});
    expect(posted.body.code).toBe("pending_expired");
  });

  it("puts a reversal at the effective time of what it corrects, booked at the clock's now", async () => {
    clock.set(new Date("2031-08-20T10:00:00Z"));
    const rec = expectStatus(await api.call("POST", "/v1/usage", { key: mk, body: usage("to-correct", new Date("2031-07-31T23:00:00Z")) }), 201).body;
    const rev = expectStatus(await api.call("POST", `/v1/usage/${rec.id}/reverse`, { key: mk, body: { reason: "meter fault" } }), 201).body;
    const reversal = expectStatus(await api.call("GET", `/v1/transfers/${rev.reversal_transfer_id}`), 200).body;
    expect(reversal).toMatchObject({ effective_at: "2031-07-31T23:00:00.000Z", created_at: "2031-08-20T10:00:00.000Z" });
    // July's fee revenue nets to nothing for this record; August, when it was corrected, sees none of it.
    const july = expectStatus(await api.call("GET", "/v1/reports/fee-revenue?from=2031-07-01T00:00:00Z&to=2031-08-01T00:00:00Z&group_by=month"), 200).body.data;
    expect(july.map((r: { revenue: string }) => r.revenue)).toEqual(["0"]);
    const august = expectStatus(await api.call("GET", "/v1/reports/fee-revenue?from=2031-08-01T00:00:00Z&to=2031-09-01T00:00:00Z&group_by=month"), 200).body
      .data;
    expect(august).toEqual([]);
  });
});

describe("CLOCK_START", () => {
  it("starts the clock at the instant and runs on in real time", () => {
    let real = 1_000_000;
    const c = clockStartingAt(new Date("2027-12-31T23:59:59Z"), () => real);
    expect(c.now().toISOString()).toBe("2027-12-31T23:59:59.000Z");
    real += 1500;
    expect(c.now().toISOString()).toBe("2028-01-01T00:00:00.500Z");
  });

  it("is an instant in UTC or a clear configuration error", () => {
    expect(
      configuredClock(Config.parse({ CLOCK_START: "2028-02-29T23:59:59Z" }))
        .now()
        .getTime(),
    ).toBeGreaterThanOrEqual(Date.parse("2028-02-29T23:59:59Z"));
    for (const bad of ["tomorrow", "2028-02-30T00:00:00Z", "2028-02-29T23:59:59+01:00", "2028-02-29"]) {
      const r = Config.safeParse({ CLOCK_START: bad });
      expect(r.success, bad).toBe(false);
    }
  });
});
