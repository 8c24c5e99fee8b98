import { describe, expect, it } from "vitest";
import { lockEarnedRates } from "../../src/services/lock-rates.js";
import { getPayout } from "../../src/services/payouts.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { USD } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

/**
 * A payout requested under an older preference keeps the parts it will convert, and the earnings
 * made since under the current preference keep their locks: neither the payout's share nor the
 * current one is applied to the whole payable.
 */
describe("a payout requested under a 50/50 preference, converted after the operator moved to 100% ETH", () => {
  const t = rateLockWorld();
  it("does not take away the ETH lock of the earnings made under 100% ETH", async () => {
    const { s } = t;
    const split = [
      { asset: "ETH", bps: 5000 },
      { asset: "TUSD", bps: 5000 },
    ];
    expectStatus(await s.api.call("PUT", "/v1/operators/o/payout-preferences/USD", { key: s.keys.o, body: { splits: split } }), 200);
    // R0: 89 USD earned under 50/50, locked 44.5 in ETH and 44.5 in TUSD.
    await t.receive("c", 200n * USD, "w1");
    await s.usage("o", "c", 100n * USD, { extra: { asset: "USD" } });
    expect(await lockEarnedRates(s.w.db, s.w.settlements, t.log)).toBe(2);
    // P1 for R0 requested under 50/50; not converted yet (say it waits for its approval or the next tick).
    const p1 = expectStatus(await s.api.call("POST", "/v1/payouts", { key: s.keys.o, body: { asset: "USD", amount: (89n * USD).toString() } }), 201).body;
    // o moves to 100% ETH; R1: 89 USD earned, locked all in ETH at 3000.
    await t.preference("ETH");
    await s.usage("o", "c", 100n * USD, { extra: { asset: "USD" } });
    expect(await lockEarnedRates(s.w.db, s.w.settlements, t.log)).toBe(1);
    const ethOpen = async () => t.open((await t.locks()).filter((l) => l.to_asset === "ETH"));
    expect(await ethOpen()).toBe(133_500_000n); // 44.5 (R0) + 89 (R1)
    // P1 converts (44.5 ETH part, 44.5 TUSD part).
    await new PayoutWorker(s.w.db, s.w.settlements, { log: t.log }).convert();
    expect((await getPayout(s.w.db, p1.id))!.status).toBe("converted");
    // R1 (89 USD, unpaid, preference 100% ETH) keeps its whole ETH lock: the payable is 89 USD, all of
    // it to be paid in ETH (applying P1's 50% to the whole payable, 178 × 50% = 89, left 44.5).
    expect(await ethOpen()).toBe(89n * USD);
  }, 120_000);
});
