import { describe, expect, it } from "vitest";
import { relayAllEvents } from "../../src/services/events.js";
import { expectRefused, expectStatus, worldPerFile } from "../support/http.js";
import { usageMonth } from "../support/clock.js";

/** GET /v1/events and /v1/balance-monitors: what each key reads, cursors, and bad input. */
const t = worldPerFile();

type Ev = { id: string; position: string; type: string; marketplace_id: string | null; operator_id: string | null; resource_type: string; resource_id: string };

/** Every event a key reads after `cursor`, page by page, as a client catching up would. */
async function readAll(key: string, query = "", cursor: string | null = null, limit = 2): Promise<Ev[]> {
  const out: Ev[] = [];
  for (let pages = 0; pages < 500; pages++) {
    const body = expectStatus(await t.api.call("GET", `/v1/events?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ""}`, { key }), 200).body;
    out.push(...body.data);
    if (body.next_cursor === null) return out;
    expect(body.next_cursor).toBe(body.data.at(-1).position);
    cursor = body.next_cursor;
  }
  throw new Error("too many pages");
}

const usage = async (key: string, id: string, extra: Record<string, unknown> = {}) =>
  expectStatus(await t.api.call("POST", "/v1/usage", { key, body: t.w.usage(id, extra) }), 201).body;

describe("GET /v1/events", () => {
  it("answers each key its tenant's events only, in strictly increasing positions; finance and admin all", async () => {
    await usage(t.w.keys.m2, "m2-1", { operator_id: "o2" });
    const payout = expectStatus(await t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body: { asset: "USDC", amount: "5" } }), 201).body;
    const monitor = expectStatus(
      await t.api.call("POST", "/v1/balance-monitors", { key: t.w.keys.o1, body: { account_id: t.w.o1Payable.id, direction: "above", threshold: "1" } }),
      201,
    ).body;
    await relayAllEvents(t.api.db);
    const all = await readAll(t.w.keys.finance, "", null, 1000);
    const positions = all.map((e) => BigInt(e.position));
    for (let i = 1; i < positions.length; i++) expect(positions[i]! > positions[i - 1]!).toBe(true);
    expect(await readAll(t.w.keys.admin, "", null, 1000)).toEqual(all);

    const m1 = await readAll(t.w.keys.m1);
    expect(m1.length).toBeGreaterThan(0);
    expect(m1.every((e) => e.marketplace_id === "m1")).toBe(true);
    expect(m1).toEqual(all.filter((e) => e.marketplace_id === "m1"));
    expect(m1.map((e) => e.type)).toContain("usage.batch.completed");
    const m2 = await readAll(t.w.keys.m2);
    expect(m2).toEqual(all.filter((e) => e.marketplace_id === "m2"));
    expect(m2.map((e) => e.type)).toContain("usage.batch.completed");

    const o1 = await readAll(t.w.keys.o1);
    expect(o1).toEqual(all.filter((e) => e.operator_id === "o1"));
    expect(o1.find((e) => e.type === "balance.threshold.crossed")?.resource_id).toBe(monitor.id);
    expect(o1.filter((e) => e.resource_id === payout.id).map((e) => e.type)).toContain("payout.pending");
    expect(await readAll(t.w.keys.o2)).toEqual(all.filter((e) => e.operator_id === "o2"));
    // The world's receipts were approved: platform events, for finance and admin only.
    const approvals = all.filter((e) => e.type === "proposal.approved");
    expect(approvals.length).toBeGreaterThanOrEqual(2);
    expect(approvals.every((e) => e.marketplace_id === null && e.operator_id === null)).toBe(true);
    for (const key of [t.w.keys.m1, t.w.keys.m2, t.w.keys.o1]) expect((await readAll(key, "&type=proposal.approved")).length).toBe(0);
    for (const key of [t.w.keys.m1, t.w.keys.m2, t.w.keys.o2])
      expect((await readAll(key, "&resource_type=payout")).map((e) => e.resource_id)).not.toContain(payout.id);
    expect((await readAll(t.w.keys.o2)).map((e) => e.resource_id)).not.toContain(monitor.id);
  });

  it("filters by type (repeated or comma list) and by resource, and catches up from the last position", async () => {
    await relayAllEvents(t.api.db);
    const before = await readAll(t.w.keys.m1, "", null, 1000);
    const last = before.at(-1)!.position;
    const hold = expectStatus(await t.api.call("POST", "/v1/holds", { key: t.w.keys.m1, body: { customer_id: "c1", asset: "USDC", amount: "10" } }), 201).body;
    expectStatus(await t.api.call("POST", `/v1/holds/${hold.id}/close`, { key: t.w.keys.m1 }), 200);
    await usage(t.w.keys.m1, "catch-up-1");
    await relayAllEvents(t.api.db);

    const news = await readAll(t.w.keys.m1, "", last);
    expect(news.map((e) => e.type)).toEqual(expect.arrayContaining(["hold.opened", "hold.closed", "usage.batch.completed"]));
    expect(news.every((e) => BigInt(e.position) > BigInt(last))).toBe(true);
    expect([...before, ...news]).toEqual(await readAll(t.w.keys.m1, "", null, 1000));

    const holdEvents = await readAll(t.w.keys.m1, `&resource_type=hold&resource_id=${hold.id}`);
    expect(holdEvents.map((e) => e.type)).toEqual(["hold.opened", "hold.closed"]);
    const comma = await readAll(t.w.keys.m1, "&type=hold.opened,hold.closed", last);
    const repeated = await readAll(t.w.keys.m1, "&type=hold.opened&type=hold.closed", last);
    expect(comma).toEqual(holdEvents);
    expect(repeated).toEqual(holdEvents);
    // Another marketplace's key filtering on the same resource finds nothing.
    expect(await readAll(t.w.keys.m2, `&resource_type=hold&resource_id=${hold.id}`)).toEqual([]);
  });

  it("derives period status changes as the marketplace's events", async () => {
    const base = `/v1/marketplaces/m1/periods/${usageMonth.label}`;
    expectStatus(await t.api.call("PUT", base, { key: t.w.keys.finance, body: { status: "closing" } }), 200);
    await relayAllEvents(t.api.db);
    expectStatus(await t.api.call("PUT", base, { key: t.w.keys.finance, body: { status: "open" } }), 200);
    await relayAllEvents(t.api.db);
    const got = await readAll(t.w.keys.m1, "&resource_type=period");
    expect(got.map((e) => [e.type, e.resource_id])).toEqual([
      ["period.closing", `m1:${usageMonth.label}`],
      ["period.reopened", `m1:${usageMonth.label}`],
    ]);
    expect(await readAll(t.w.keys.m2, "&resource_type=period")).toEqual([]);
  });

  it("refuses bad queries with 400 naming the field", async () => {
    for (const [query, field] of [
      ["cursor=abc", "cursor"],
      ["cursor=-1", "cursor"],
      ["type=payout.nope", "type"],
      ["type=transfer.posted,", "type"],
      ["resource_type=galaxy", "resource_type"],
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["cursor=1&cursor=2", "cursor"],
      ["resource_id=", "resource_id"],
      ["cursor=9999999999999999999", "cursor"],
      ["surprise=1", "surprise"],
    ] as const) {
      await expectRefused(t.api, () => t.api.call("GET", `/v1/events?${query}`, { key: t.w.keys.m1 }), 400, "invalid_request", field);
    }
  });
});

describe("/v1/balance-monitors", () => {
  const create = (key: string, body: Record<string, unknown>) => t.api.call("POST", "/v1/balance-monitors", { key, body });

  it("lets a key watch only balances it may read, and keeps each tenant's monitors to itself", async () => {
    const mine = expectStatus(
      await create(t.w.keys.m1, { account_id: t.w.m1Customer.id, direction: "below", threshold: "50000000", hysteresis: "5000000" }),
      201,
    ).body;
    expect(mine).toMatchObject({
      account_id: t.w.m1Customer.id,
      direction: "below",
      balance: "available",
      threshold: "50000000",
      hysteresis: "5000000",
      state: "ok",
      marketplace_id: "m1",
      operator_id: null,
    });
    // Another tenant's account answers as a missing one; nothing is written.
    await expectRefused(
      t.api,
      () => create(t.w.keys.m2, { account_id: t.w.m1Customer.id, direction: "below", threshold: "1" }),
      404,
      "account_not_found",
      "account_id",
    );
    await expectRefused(
      t.api,
      () => create(t.w.keys.o1, { account_id: t.w.m1Customer.id, direction: "below", threshold: "1" }),
      404,
      "account_not_found",
      "account_id",
    );
    await expectRefused(
      t.api,
      () => create(t.w.keys.m1, { account_id: t.w.o1Payable.id, direction: "above", threshold: "1" }),
      404,
      "account_not_found",
      "account_id",
    );
    const fin = expectStatus(
      await create(t.w.keys.finance, { account_id: t.w.m2Customer.id, direction: "above", threshold: "-5", balance: "posted" }),
      201,
    ).body;
    expect(fin).toMatchObject({ marketplace_id: null, operator_id: null, threshold: "-5", hysteresis: "0", balance: "posted" });

    expect(expectStatus(await t.api.call("GET", `/v1/balance-monitors/${mine.id}`, { key: t.w.keys.m1 }), 200).body).toEqual(mine);
    for (const key of [t.w.keys.m2, t.w.keys.o1, t.w.keys.o2]) {
      await expectRefused(t.api, () => t.api.call("GET", `/v1/balance-monitors/${mine.id}`, { key }), 404, "balance_monitor_not_found");
      await expectRefused(t.api, () => t.api.call("DELETE", `/v1/balance-monitors/${mine.id}`, { key }), 404, "balance_monitor_not_found");
      const listed = expectStatus(await t.api.call("GET", "/v1/balance-monitors?limit=1000", { key }), 200).body.data.map((m: { id: string }) => m.id);
      expect(listed).not.toContain(mine.id);
      expect(listed).not.toContain(fin.id);
    }
    expect(expectStatus(await t.api.call("GET", `/v1/balance-monitors?account_id=${t.w.m1Customer.id}`, { key: t.w.keys.m1 }), 200).body.data).toEqual([mine]);
    const all = expectStatus(await t.api.call("GET", "/v1/balance-monitors?limit=1000", { key: t.w.keys.finance }), 200).body.data.map(
      (m: { id: string }) => m.id,
    );
    expect(all).toEqual(expect.arrayContaining([mine.id, fin.id]));

    expect(expectStatus(await t.api.call("DELETE", `/v1/balance-monitors/${mine.id}`, { key: t.w.keys.m1 }), 200).body.id).toBe(mine.id);
    await expectRefused(t.api, () => t.api.call("GET", `/v1/balance-monitors/${mine.id}`, { key: t.w.keys.m1 }), 404, "balance_monitor_not_found");
  });

  it("refuses bad bodies with 400 naming the field, writing nothing", async () => {
    const ok = { account_id: t.w.m1Customer.id, direction: "below", threshold: "1" };
    for (const [body, field] of [
      [{ ...ok, direction: "sideways" }, "direction"],
      [{ ...ok, threshold: 5 }, "threshold"],
      [{ ...ok, threshold: "1.5" }, "threshold"],
      [{ ...ok, threshold: "007" }, "threshold"],
      [{ ...ok, hysteresis: "-1" }, "hysteresis"],
      [{ ...ok, balance: "pending" }, "balance"],
      [{ ...ok, account_id: "nope" }, "account_id"],
      [{ ...ok, extra: true }, "extra"],
      [{ direction: "below", threshold: "1" }, "account_id"],
    ] as const) {
      await expectRefused(t.api, () => create(t.w.keys.m1, body), 400, "invalid_request", field);
    }
    await expectRefused(t.api, () => t.api.call("GET", "/v1/balance-monitors?cursor=zzz", { key: t.w.keys.m1 }), 400, "invalid_request", "cursor");
  });
});
