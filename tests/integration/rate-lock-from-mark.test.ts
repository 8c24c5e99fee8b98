import { describe, expect, it } from "vitest";
import { fundingMarkOf } from "../../src/db/queries/funding-marks.js";
import { firstUnfundedRecord } from "../../src/db/queries/funding.js";
import { moveFundingMarks } from "../../src/services/funding-marks.js";
import { USD } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

/**
 * The lock worker judges a marketplace's queued records from its funding mark (docs/settlement.md,
 * "Rate policy"): only the records after the mark are walked, so the marketplace's usage, which
 * waits for the walk, does not wait longer as its history grows. The mark is used only while the
 * money of the moment funds every record up to it: when money goes down, the records before it are
 * judged again, and an earlier record the money no longer reaches is not locked.
 */
describe("the lock worker from the funding mark", () => {
  const t = rateLockWorld();
  /** The platform's credit limit for m in USD: proposed by an admin, approved by finance. */
  const grant = async (amount: bigint) => {
    const { s } = t;
    const p = expectStatus(
      await s.api.call("POST", "/v1/marketplaces/m/credit-limits", { key: s.keys.admin2, body: { asset: "USD", credit_limit: amount.toString() } }),
      201,
    ).body;
    expectStatus(await s.approve(p.id, s.keys.finance), 200);
  };
  const queued = async () => (await t.s.w.db.query<{ n: string }>("select count(*)::text as n from rate_lock_queue where operator_id = 'o'"))[0]!.n;
  const lockedAmounts = async () => (await t.locks()).map((l) => l.amount).sort();

  it("locks what the money reaches, and nothing a lowered credit limit no longer reaches", async () => {
    const { s } = t;
    // d's usage is funded by m's pool only (claimed deposits are no money).
    for (let i = 0; i < 3; i++) await t.claimed("d");
    await grant(200n * USD);
    const r1 = await s.usage("o", "d", 100n * USD, { extra: { asset: "USD" } });
    await s.usage("o", "d", 100n * USD, { extra: { asset: "USD" } });
    await s.usage("o", "d", 100n * USD, { extra: { asset: "USD" } }); // unfunded
    const usd = t.usd.id;
    expect(await moveFundingMarks(s.w.db, s.w.db.clock.now())).toBe(1);
    expect(await fundingMarkOf(s.w.db, "m", usd)).toBeGreaterThan(0n);

    // The platform lowers m's credit limit: the second record is no longer funded; the mark no
    // longer holds, and the worker locks the first record alone.
    await grant(100n * USD);
    expect(await t.lock()).toBe(1);
    expect(await lockedAmounts()).toEqual([(89n * USD).toString()]);
    expect(await queued()).toBe("2");
    const [first] = await s.w.db.query<{ n: string }>("select count(*)::text as n from rate_lock_queue where usage_id = $1", [r1.id]);
    expect(first!.n).toBe("0");

    // Money back, not all of it: the mark holds again (the records after it are walked); the second
    // record is locked, the third, half funded, waits.
    await grant(250n * USD);
    expect((await firstUnfundedRecord(s.w.db, "m", usd, 250n * USD)).walkedAfter).toBe(await fundingMarkOf(s.w.db, "m", usd));
    expect(await t.lock()).toBe(1);
    expect(await lockedAmounts()).toEqual([(89n * USD).toString(), (89n * USD).toString()]);
    expect(await queued()).toBe("1");
  }, 120_000);
});
