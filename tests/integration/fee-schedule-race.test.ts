import { describe, expect, it } from "vitest";
import { usageMonth } from "../support/clock.js";
import { hookedWorldPerFile } from "../support/hooked-world.js";
import { expectStatus } from "../support/http.js";

/**
 * Usage already rated stays rated: a fee schedule version may not take effect before usage already
 * posted. A record rated under version 1 and written after version 2 was published, effective
 * before the record's period, was posted under version 1 while version 2 was in force for it.
 * Publishing now takes the marketplace's funding lock exclusively, and a record's write reads the
 * newest version again under that lock (shared): a version published since it was rated sends it
 * back to be rated again. The race is played deterministically: the version is published right
 * after the record's request has read its facts.
 */
const FACTS = /from fee_schedules f where f\.marketplace_id = any/;

describe("a fee schedule published while usage is being written", () => {
  const t = hookedWorldPerFile();

  it("a record rated before a version that covers it was published is rated again under it", async () => {
    // The world's m1 usage runs to day 11 of the month: version 2 takes effect on day 15, at 20%.
    t.hk.arm(FACTS, async () => {
      expectStatus(
        await t.api.call("POST", "/v1/marketplaces/m1/fee-schedules", {
          body: { effective_from: usageMonth.day(15).toISOString(), rules: [{ party: "marketplace", bps: 2000 }] },
        }),
        201,
      );
    });
    const r = expectStatus(
      await t.api.call("POST", "/v1/usage", {
        key: t.w.keys.m1,
        body: t.w.usage("race-fee", { period_start: usageMonth.day(20).toISOString(), period_end: usageMonth.day(21).toISOString() }),
      }),
      201,
    ).body;
    expect(t.hk.fired()).toBe(true);
    expect(r.fee_schedule_version).toBe(2);
    // 20% to the marketplace and no protocol fee, as version 2 says.
    expect(r.fees.map((f: { party: string; amount: string }) => [f.party, f.amount])).toEqual([
      ["marketplace", ((BigInt(r.gross) * 2000n) / 10_000n).toString()],
    ]);
  });
});
