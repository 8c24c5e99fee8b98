import { describe, expect, it } from "vitest";
import { usageMonth } from "../support/clock.js";
import { hookedWorldPerFile } from "../support/hooked-world.js";
import { expectStatus } from "../support/http.js";

/**
 * Capacity under concurrency (docs/usage.md, "Capacity"): two marketplaces post usage of one
 * operator at the same moment, each fitting in the free capacity alone, together not. The batch
 * judged first must not be written on a judgement the other made stale: its write reads the stored
 * usage again under the (operator, resource) capacity lock and plans again. The race is played
 * deterministically: m2's record is posted right after m1's request has read the stored usage.
 */
const H = 3_600_000;
const RES = "gpu:race";
const D = usageMonth.day(0, 5).getTime();
const at = (hours: number) => new Date(D + hours * H).toISOString();
/** The capacity check's read of the stored usage over the records' periods. */
const STORED_USAGE = /as w\(key, operator_id, resource, s, e\)/;

describe("capacity: two marketplaces cannot both fill the same free capacity", () => {
  const t = hookedWorldPerFile(async ({ api, w }) => {
    expectStatus(await api.call("POST", "/v1/operators", { body: { id: "o1", name: "operator o1", marketplace_id: "m2" } }), 201);
    expectStatus(await api.call("POST", "/v1/operators/o1/capacity", { key: w.keys.o1, body: { resource: RES, units: 1, effective_from: at(0) } }), 201);
  });

  const record = (id: string, seconds: string) => t.w.usage(id, { resource: RES, quantity: seconds, period_start: at(0), period_end: at(1) });
  /** The unit-seconds of o1's usage of the resource over the hour, every marketplace. */
  const used = async () =>
    (await t.raw.query<{ s: string }>("select coalesce(sum(quantity), 0)::text as s from usage_records where operator_id = 'o1' and resource = $1", [RES]))[0]!
      .s;

  it("m2 writes between m1's judgement and its write: m1's record is judged again and refused, the hour is not oversold", async () => {
    // One unit for an hour: 3,600 unit-seconds. m1 claims 2,400, m2 2,400: each fits alone.
    let m2: { status: number; body: { summary?: { accepted: number } } } | undefined;
    t.hk.arm(STORED_USAGE, async () => {
      // As a batch: single records share the group committer, whose flush is m1's request here.
      m2 = await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m2, body: { records: [record("race-m2", "2400")] } });
    });
    const m1 = await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: record("race-m1", "2400") });
    expect(t.hk.fired()).toBe(true);
    expect(m2?.status).toBe(200);
    expect(m2?.body.summary?.accepted).toBe(1);
    expect(m1.status, JSON.stringify(m1.body)).toBe(422);
    expect(m1.body.code).toBe("capacity_exceeded");
    expect(await used()).toBe("2400");
  });

  it("in a batch too: the record judged on stale usage is refused, the others are written", async () => {
    t.hk.arm(STORED_USAGE, async () => {
      expectStatus(
        await t.api.call("POST", "/v1/usage/batch", {
          key: t.w.keys.m2,
          body: { records: [t.w.usage("race-m2b", { resource: RES, quantity: "700", period_start: at(0), period_end: at(1) })] },
        }),
        200,
      );
    });
    // 2,400 stored; the batch's first record claims 600: it fit before m2's 700 (3,000), not after (3,700 > 3,600).
    const res = expectStatus(
      await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: { records: [record("race-b1", "600"), t.w.usage("race-b2")] } }),
      200,
    ).body;
    expect(t.hk.fired()).toBe(true);
    expect(res.results.map((r: { status: string; code?: string }) => r.code ?? r.status)).toEqual(["capacity_exceeded", "accepted"]);
    expect(await used()).toBe("3100");
  });

  it("another marketplace's writes that leave a record's judgement as it was do not send it back: written, however many come between", async () => {
    const SHARED = "gpu:shared";
    expectStatus(await t.api.call("POST", "/v1/operators/o1/capacity", { key: t.w.keys.o1, body: { resource: SHARED, units: 8, effective_from: at(0) } }), 201);
    // Every time m2's record has read the stored usage, m1 writes one more unit-second of o1 in the
    // same hour (far within capacity): before, each sent m2's record back to be planned again, and
    // the fifth answered 500.
    let n = 0;
    const interfere = async () => {
      n++;
      const noise = t.w.usage(`m1-noise-${n}`, { resource: SHARED, quantity: "1", period_start: at(0), period_end: at(1) });
      expectStatus(await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: { records: [noise] } }), 200);
      if (n < 8) t.hk.arm(STORED_USAGE, interfere);
    };
    t.hk.arm(STORED_USAGE, interfere);
    const m2 = await t.api.call("POST", "/v1/usage", {
      key: t.w.keys.m2,
      body: t.w.usage("m2-shared", { operator_id: "o1", resource: SHARED, quantity: "60", period_start: at(0), period_end: at(1) }),
    });
    t.hk.disarm();
    expect(n).toBeGreaterThanOrEqual(1);
    expect(m2.status, JSON.stringify(m2.body)).toBe(201);
  });
});
