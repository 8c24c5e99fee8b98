import { describe, expect, it } from "vitest";
import type { Queryable } from "../../src/db/client.js";
import { sweepLocks } from "../../src/db/queries/rate-locks.js";
import { getPayout } from "../../src/services/payouts.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { NEEDS_PG, onRealPostgres } from "../support/db.js";
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
    await t.earn("c");
    expect(await t.lock()).toBe(2);
    // P1 for R0 requested under 50/50; not converted yet (say it waits for its approval or the next tick).
    const p1 = expectStatus(await s.api.call("POST", "/v1/payouts", { key: s.keys.o, body: { asset: "USD", amount: (89n * USD).toString() } }), 201).body;
    // o moves to 100% ETH; R1: 89 USD earned, locked all in ETH at 3000.
    await t.preference("ETH");
    await t.earn("c");
    expect(await t.lock()).toBe(1);
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

/**
 * sweepLocks reads the payable's balance and the pending convert payouts in one statement: read in two
 * (READ COMMITTED, two snapshots), a payout cancelled between them was in neither (its hold still out
 * of the balance, no longer pending) and its earnings' locks were released for good. The cancel runs
 * here at the point where the second read would have been.
 */
describe.skipIf(!onRealPostgres)(`a convert payout cancelled while another transaction sweeps ${NEEDS_PG}`, () => {
  const t = rateLockWorld();
  it("leaves the lock of the earnings that returned to the payable", async () => {
    const { s } = t;
    await t.receive("c", 100n * USD, "w1");
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    const usd = t.usd;
    // o asks for its 89 USD in ETH (preference 100% ETH), then changes its mind and cancels.
    const p = expectStatus(await s.api.call("POST", "/v1/payouts", { key: s.keys.o, body: { asset: "USD", amount: (89n * USD).toString() } }), 201).body;
    expect(t.open(await t.locks())).toBe(89n * USD);
    await s.w.db.transaction(async (tx) => {
      let fired = false;
      const hooked: Queryable = {
        ...tx,
        queryValues: tx.queryValues.bind(tx),
        query: async (text, params, options) => {
          if (!fired && text.includes("from payouts")) {
            fired = true;
            expectStatus(await s.api.call("POST", `/v1/payouts/${p.id}/cancel`, { key: s.keys.o }), 200);
          }
          return tx.query(text, params, options);
        },
      } as Queryable;
      await sweepLocks(hooked, "o", usd.id, 0n);
    });
    // The 89 USD are back in o's payable, its preference still 100% ETH: the lock must stay open.
    expect(t.open(await t.locks())).toBe(89n * USD);
  }, 120_000);
});
