import { beforeAll, describe, expect, it } from "vitest";
import { Settlements } from "../../src/chain/settlement.js";
import { createLogger } from "../../src/log.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { ahead } from "../support/clock.js";
import { expectRefused, expectStatus, worldPerFile } from "../support/http.js";

/**
 * Hybrid settlement over HTTP: operators' payout preferences, manual rates with four eyes, the
 * conversions of convert payouts, and marketplaces' pricing currencies. Off-chain assets only (an
 * on-chain split would need a verified address; the chain side is tested with the worker): USD
 * (scale 6) is the earnings asset, EUR and GBP (scale 2) are paid in at manual rates.
 */
const t = worldPerFile();
const put = (key: string, body: unknown, asset = "USD", operator = "o1") =>
  t.api.call("PUT", `/v1/operators/${operator}/payout-preferences/${asset}`, { key, body });
const splits = (...pairs: Array<[string, number]>) => ({ splits: pairs.map(([asset, bps]) => ({ asset, bps })) });

/** Finance proposes a rate, the admin approves it: the approved proposal. */
async function approvedRate(base: string, quote: string, value: string) {
  const p = expectStatus(await t.api.call("POST", "/v1/rates", { key: t.w.keys.finance, body: { base, quote, value } }), 202).body;
  return expectStatus(await t.api.call("POST", `/v1/proposals/${p.id}/approve`, { key: t.w.keys.admin, body: {} }), 200).body;
}

beforeAll(async () => {
  for (const [code, scale] of [
    ["USD", 6],
    ["EUR", 2],
    ["GBP", 2],
    ["OLD", 2],
  ] as const) {
    expectStatus(await t.api.call("POST", "/v1/assets", { body: { code, scale, settlement: { kind: "offchain" } } }), 201);
  }
  expectStatus(await t.api.call("POST", "/v1/assets/OLD/retire"), 200);
});

let usdEur = "";

describe("manual rates", () => {
  it("finance proposes a rate, the same key cannot approve it, another key does, and every key reads it with its source", async () => {
    const proposed = await t.api.call("POST", "/v1/rates", {
      key: t.w.keys.finance,
      body: { base: "USD", quote: "EUR", value: "0.9", reference: "ECB fixing" },
    });
    expectStatus(proposed, 202);
    expect(proposed.body).toMatchObject({
      kind: "rate",
      status: "proposed",
      payload: { base: "USD", quote: "EUR", value: "0.9", num: "9", den: "10", reference: "ECB fixing" },
    });
    const approve = () => t.api.call("POST", `/v1/proposals/${proposed.body.id}/approve`, { key: t.w.keys.finance, body: {} });
    await expectRefused(t.api, approve, 403, "four_eyes");
    expect(expectStatus(await t.api.call("GET", "/v1/rates?asset=EUR", { key: t.w.keys.o1 }), 200).body.data).toEqual([]);
    const approved = expectStatus(await t.api.call("POST", `/v1/proposals/${proposed.body.id}/approve`, { key: t.w.keys.admin, body: {} }), 200).body;
    expect(approved).toMatchObject({ status: "approved", result: { rate_id: proposed.body.id } });
    usdEur = proposed.body.id;
    for (const key of [t.w.keys.o1, t.w.keys.m1, t.w.keys.finance]) {
      const listed = expectStatus(await t.api.call("GET", "/v1/rates?asset=EUR", { key }), 200).body;
      expect(listed).toEqual({
        data: [
          {
            id: usdEur,
            base: "USD",
            quote: "EUR",
            value: "0.9",
            num: "9",
            den: "10",
            observed_at: expect.any(String),
            source: "manual",
            source_ref: usdEur,
            recorded_at: expect.any(String),
          },
        ],
        next_cursor: null,
        limit: 100,
      });
    }
  });

  it("a value that is not a positive decimal, an observation in the future or one asset twice is a 400 naming the field", async () => {
    const propose = (body: Record<string, unknown>) => () =>
      t.api.call("POST", "/v1/rates", { key: t.w.keys.finance, body: { base: "USD", quote: "GBP", ...body } });
    for (const value of ["0", "-1", "abc", "1e5", "0.0", "", "1.", " 1"]) await expectRefused(t.api, propose({ value }), 400, "invalid_request", "value");
    await expectRefused(t.api, propose({ value: 2.5 }), 400, "invalid_request", "value");
    await expectRefused(t.api, propose({ value: "1.2", observed_at: ahead(3_600_000).toISOString() }), 400, "invalid_request", "observed_at");
    await expectRefused(t.api, propose({ value: "1.2", quote: "USD" }), 400, "invalid_request", "quote");
    await expectRefused(t.api, propose({ value: "1.2", reference: "x".repeat(201) }), 400, "invalid_request", "reference");
    await expectRefused(t.api, propose({ value: "1.2", colour: "red" }), 400, "invalid_request");
    await expectRefused(t.api, propose({ value: "1.2", quote: "NOPE" }), 404, "asset_not_found");
    for (const key of [t.w.keys.m1, t.w.keys.o1]) {
      await expectRefused(t.api, () => t.api.call("POST", "/v1/rates", { key, body: { base: "USD", quote: "GBP", value: "1.2" } }), 403, "forbidden");
    }
  });

  it("lists rates newest observation first, page by page, of one asset when asked", async () => {
    const old = expectStatus(
      await t.api.call("POST", "/v1/rates", {
        key: t.w.keys.finance,
        body: { base: "EUR", quote: "USD", value: "1.1", observed_at: new Date(Date.UTC(2020, 0, 1)).toISOString() },
      }),
      202,
    ).body;
    expectStatus(await t.api.call("POST", `/v1/proposals/${old.id}/approve`, { key: t.w.keys.admin, body: {} }), 200);
    const first = expectStatus(await t.api.call("GET", "/v1/rates?asset=EUR&limit=1"), 200).body;
    expect(first.data.map((r: { id: string }) => r.id)).toEqual([usdEur]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = expectStatus(await t.api.call("GET", `/v1/rates?asset=EUR&limit=1&cursor=${first.next_cursor}`), 200).body;
    expect(second).toMatchObject({
      data: [{ id: old.id, base: "EUR", quote: "USD", value: "1.1", observed_at: "2020-01-01T00:00:00.000Z" }],
      next_cursor: null,
    });
    expect(expectStatus(await t.api.call("GET", "/v1/rates?asset=GBP"), 200).body.data).toEqual([]);
    await expectRefused(t.api, () => t.api.call("GET", "/v1/rates?cursor=nope"), 400, "invalid_request", "cursor");
    await expectRefused(t.api, () => t.api.call("GET", "/v1/rates?asset=NOPE"), 404, "asset_not_found");
  });
});

describe("payout preferences", () => {
  let second: Record<string, unknown>;

  it("the operator sets where its earnings in an asset are paid: each change a version, with its history", async () => {
    const first = expectStatus(await put(t.w.keys.o1, splits(["USD", 7000], ["EUR", 3000])), 200).body;
    expect(first).toEqual({
      operator_id: "o1",
      asset: "USD",
      version: 1,
      splits: [
        { asset: "USD", bps: 7000 },
        { asset: "EUR", bps: 3000 },
      ],
      set_at: expect.any(String),
      history: [{ version: 1, splits: first.splits, set_at: first.set_at }],
    });
    second = expectStatus(await put(t.w.keys.o1, splits(["EUR", 10_000])), 200).body;
    expect(second).toMatchObject({ version: 2, splits: [{ asset: "EUR", bps: 10_000 }] });
    expect((second.history as Array<{ version: number }>).map((h) => h.version)).toEqual([2, 1]);
    for (const key of [t.w.keys.o1, t.w.keys.finance, t.w.keys.admin]) {
      expect(expectStatus(await t.api.call("GET", "/v1/operators/o1/payout-preferences/USD", { key }), 200).body).toEqual(second);
    }
    const none = await expectRefused(t.api, () => t.api.call("GET", "/v1/operators/o1/payout-preferences/EUR", { key: t.w.keys.o1 }), 404, "not_found");
    expect(none.body.detail).toContain("paid in EUR itself");
  });

  it("with an Idempotency-Key, a retry replays the answer; the preference in force asked for again sets no other version", async () => {
    const body = splits(["USD", 2000], ["EUR", 8000]);
    const again = () => t.api.call("PUT", "/v1/operators/o1/payout-preferences/USD", { key: t.w.keys.o1, body, headers: { "idempotency-key": "pref-1" } });
    const a = expectStatus(await again(), 200);
    const b = expectStatus(await again(), 200);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.body).toEqual(a.body);
    expect(a.body.version).toBe(3);
    expect(expectStatus(await put(t.w.keys.o1, body), 200).body).toEqual(a.body);
    expect(expectStatus(await put(t.w.keys.o1, splits(["EUR", 8000], ["USD", 2000])), 200).body.version).toBe(4);
    expect(expectStatus(await put(t.w.keys.o1, body), 200).body.version).toBe(5);
  });

  it("only the operator's own key sets it: platform and marketplace keys are 403, another operator's key is 404", async () => {
    for (const key of [t.w.keys.admin, t.w.keys.finance, t.w.keys.m1]) {
      const res = await expectRefused(t.api, () => put(key, splits(["USD", 10_000])), 403, "forbidden");
      expect(res.body.detail).toContain("only the operator's own key sets where it is paid");
    }
    await expectRefused(t.api, () => put(t.w.keys.o2, splits(["USD", 10_000])), 404, "operator_not_found");
    await expectRefused(t.api, () => t.api.call("GET", "/v1/operators/o1/payout-preferences/USD", { key: t.w.keys.o2 }), 404, "operator_not_found");
    await expectRefused(t.api, () => t.api.call("GET", "/v1/operators/o1/payout-preferences/USD", { key: t.w.keys.m1 }), 403, "forbidden");
  });

  it("a refused preference names the field and writes nothing: the previous version stays in force", async () => {
    const refused = (body: unknown, status: number, code: string, field?: string, asset = "USD") =>
      expectRefused(t.api, () => put(t.w.keys.o1, body, asset), status, code, field);
    const sum = await refused(splits(["USD", 7000], ["EUR", 2000]), 400, "invalid_request", "splits");
    expect(sum.body.detail).toContain("10000");
    await refused(splits(["EUR", 5000], ["EUR", 5000]), 400, "invalid_request", "splits");
    await refused(splits(["USD", 0], ["EUR", 10_000]), 400, "invalid_request", "splits.0.bps");
    await refused(splits(["USD", 10_001]), 400, "invalid_request", "splits.0.bps");
    await refused({ splits: [{ asset: "USD", bps: "10000" }] }, 400, "invalid_request", "splits.0.bps");
    await refused(splits(["USD", 2000], ["EUR", 2000], ["GBP", 2000], ["USDC", 2000], ["OLD", 1000], ["NOPE", 1000]), 400, "invalid_request", "splits");
    await refused({ splits: [] }, 400, "invalid_request", "splits");
    await refused({ ...splits(["USD", 10_000]), note: "x" }, 400, "invalid_request");
    await refused({ splits: [{ asset: "USD", bps: 10_000, extra: 1 }] }, 400, "invalid_request");
    await refused(splits(["USD", 5000], ["NOPE", 5000]), 404, "asset_not_found", "splits.1.asset");
    await refused(splits(["NOPE", 10_000]), 404, "asset_not_found", "asset", "NOPE");
    await refused(splits(["USD", 5000], ["OLD", 5000]), 409, "asset_retired");
    const noRate = await refused(splits(["USD", 5000], ["GBP", 5000]), 422, "no_rate_source", "splits.1.asset");
    expect(noRate.body.detail).toMatch(/USD and GBP/);
    const now = expectStatus(await t.api.call("GET", "/v1/operators/o1/payout-preferences/USD", { key: t.w.keys.o1 }), 200).body;
    expect(now).toMatchObject({
      version: 5,
      splits: [
        { asset: "USD", bps: 2000 },
        { asset: "EUR", bps: 8000 },
      ],
    });
    // Once finance's rate is approved, the asset can be chosen (a rate quoted either way prices the pair).
    await approvedRate("GBP", "USD", "1.27");
    expect(expectStatus(await put(t.w.keys.o1, splits(["USD", 5000], ["GBP", 5000])), 200).body).toMatchObject({ version: 6 });
  });
});

describe("a marketplace's pricing currency", () => {
  const setPricing = (key: string, asset: unknown, id = "m1") => t.api.call("PUT", `/v1/marketplaces/${id}/pricing-currency`, { key, body: { asset } });

  it("an admin sets it; every answer about the marketplace shows it", async () => {
    const m1 = (await t.api.call("GET", "/v1/marketplaces/m1", { key: t.w.keys.m1 })).body;
    expect(m1.pricing_asset).toBeNull();
    expect(expectStatus(await setPricing(t.w.keys.admin, "USD"), 200).body).toEqual({ ...m1, pricing_asset: "USD" });
    expect(expectStatus(await t.api.call("GET", "/v1/marketplaces/m1", { key: t.w.keys.m1 }), 200).body).toMatchObject({ id: "m1", pricing_asset: "USD" });
    const listed = expectStatus(await t.api.call("GET", "/v1/marketplaces", { key: t.w.keys.finance }), 200).body.data;
    expect(listed.filter((m: { id: string }) => m.id === "m1" || m.id === "m2").map((m: { pricing_asset: string | null }) => m.pricing_asset)).toEqual([
      "USD",
      null,
    ]);
    expect(expectStatus(await t.api.call("PATCH", "/v1/marketplaces/m1", { key: t.w.keys.m1, body: { metadata: { tier: "gold" } } }), 200).body).toMatchObject({
      pricing_asset: "USD",
    });
    const created = expectStatus(await t.api.call("POST", "/v1/marketplaces", { body: { id: "m3", name: "market m3" } }), 201).body;
    expect(created).toMatchObject({ id: "m3", pricing_asset: null });
  });

  it("a marketplace key may not set it; an unknown or retired asset, or an unknown marketplace, is refused", async () => {
    await expectRefused(t.api, () => setPricing(t.w.keys.m1, "EUR"), 403, "forbidden");
    await expectRefused(t.api, () => setPricing(t.w.keys.finance, "EUR"), 403, "forbidden");
    await expectRefused(t.api, () => setPricing(t.w.keys.admin, "NOPE"), 404, "asset_not_found", "asset");
    await expectRefused(t.api, () => setPricing(t.w.keys.admin, "OLD"), 409, "asset_retired");
    await expectRefused(t.api, () => setPricing(t.w.keys.admin, "EUR", "nowhere"), 404, "marketplace_not_found");
    await expectRefused(t.api, () => setPricing(t.w.keys.admin, "eur"), 400, "invalid_request", "asset");
    await expectRefused(t.api, () => setPricing(t.w.keys.admin, null), 400, "invalid_request", "asset");
    expect((await t.api.call("GET", "/v1/marketplaces/m1")).body.pricing_asset).toBe("USD");
  });
});

describe("convert payouts and their conversions", () => {
  it("a payout in USD with a preference converts; the conversions are the operator's own to read", async () => {
    // o1 earns USD in m1, which the marketplace's received money funds.
    expectStatus(await t.api.call("POST", "/v1/customers/c1/deposits", { key: t.w.keys.m1, body: { asset: "USD", amount: "100000000" } }), 201);
    const receipt = expectStatus(
      await t.api.call("POST", "/v1/marketplaces/m1/receipts", { key: t.w.keys.finance, body: { asset: "USD", amount: "100000000", reference: "usd m1" } }),
      201,
    ).body;
    expectStatus(await t.api.call("POST", `/v1/proposals/${receipt.id}/approve`, { key: t.w.keys.admin, body: {} }), 200);
    expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage("hybrid-1", { asset: "USD" }) }), 201);
    expectStatus(await put(t.w.keys.o1, splits(["USD", 5000], ["EUR", 5000])), 200);

    const payout = expectStatus(await t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body: { asset: "USD", amount: "1000000" } }), 201).body;
    expect(payout).toMatchObject({
      settlement: "convert",
      status: "pending",
      splits: [
        { asset: "USD", bps: 5000 },
        { asset: "EUR", bps: 5000 },
      ],
      parent_payout_id: null,
    });
    expect(expectStatus(await t.api.call("GET", "/v1/conversions", { key: t.w.keys.o1 }), 200).body).toEqual({ data: [], next_cursor: null, limit: 100 });
    // Its parts are paid, not the convert payout itself: marking it paid is refused, naming why.
    const markPaid = () => t.api.call("POST", `/v1/payouts/${payout.id}/mark-paid`, { key: t.w.keys.finance, body: { reference: "wire 1" } });
    expect((await expectRefused(t.api, markPaid, 400, "invalid_request", "id")).body.detail).toContain("is a convert payout");

    expect(await new PayoutWorker(t.api.db, new Settlements([]), { log: createLogger("silent") }).convert()).toBe(1);
    expect(expectStatus(await t.api.call("GET", `/v1/payouts/${payout.id}`, { key: t.w.keys.o1 }), 200).body.status).toBe("converted");
    const mine = expectStatus(await t.api.call("GET", "/v1/conversions", { key: t.w.keys.o1 }), 200).body.data;
    expect(mine).toHaveLength(2);
    const eur = mine.find((c: { to_asset: string }) => c.to_asset === "EUR");
    expect(eur).toMatchObject({
      payout_id: payout.id,
      child_payout_id: expect.any(String),
      operator_id: "o1",
      from_asset: "USD",
      bps: 5000,
      part: "500000",
      part_display: "0.5",
      used: "500000",
      used_display: "0.5",
      remainder: "0",
      remainder_display: "0",
      to_amount: "45",
      to_amount_display: "0.45",
      rate: "0.9",
      rate_id: usdEur,
      rate_source: "manual",
      rate_observed_at: expect.any(String),
      revaluation: expect.stringMatching(/^-?[0-9]+$/),
      revaluation_display: expect.any(String),
      transfer_id: expect.any(String),
      converted_at: expect.any(String),
      value_in_from_asset: "500000",
      value_in_from_asset_display: "0.5",
    });
    expect(mine.find((c: { to_asset: string }) => c.to_asset === "USD")).toMatchObject({ to_amount: "500000", rate: "1", rate_id: null, rate_source: null });
    const child = expectStatus(await t.api.call("GET", `/v1/payouts/${eur.child_payout_id}`, { key: t.w.keys.o1 }), 200).body;
    expect(child).toMatchObject({ asset: "EUR", amount: "45", amount_display: "0.45", parent_payout_id: payout.id, settlement: "none" });

    // Another operator sees none of them, even when it names o1; finance sees them all; marketplaces none.
    for (const path of ["/v1/conversions", "/v1/conversions?operator_id=o1", `/v1/conversions?payout_id=${payout.id}`]) {
      expect(expectStatus(await t.api.call("GET", path, { key: t.w.keys.o2 }), 200).body.data).toEqual([]);
    }
    expect(expectStatus(await t.api.call("GET", `/v1/conversions?payout_id=${payout.id}`, { key: t.w.keys.finance }), 200).body.data).toEqual(mine);
    expect(expectStatus(await t.api.call("GET", "/v1/conversions?operator_id=o2", { key: t.w.keys.admin }), 200).body.data).toEqual([]);
    await expectRefused(t.api, () => t.api.call("GET", "/v1/conversions", { key: t.w.keys.m1 }), 403, "forbidden");
    const page = expectStatus(await t.api.call("GET", "/v1/conversions?limit=1", { key: t.w.keys.o1 }), 200).body;
    expect(page.data).toEqual([mine[0]]);
    const rest = expectStatus(await t.api.call("GET", `/v1/conversions?limit=1&cursor=${page.next_cursor}`, { key: t.w.keys.o1 }), 200).body;
    expect(rest).toEqual({ data: [mine[1]], next_cursor: null, limit: 1 });
    await expectRefused(t.api, () => t.api.call("GET", "/v1/conversions?cursor=x", { key: t.w.keys.o1 }), 400, "invalid_request", "cursor");
  });
});
