import { describe, expect, it } from "vitest";
import { getPayout } from "../../src/services/payouts.js";
import { inTransaction } from "../../src/services/transaction.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { USD } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

const ETH = 10n ** 18n;

/**
 * Honest operator, 50% ETH / 50% USD. The USD half of a payout of locked earnings pays those
 * earnings' own USD half, not queued records: a conversion counts as paid by its locks the earnings
 * they stand for (a lock of a 50% share used for 44.5 stands for 89). Counting the USD part as
 * never-locked earnings paid took half of the queued R2's lock. The same with a lock made before
 * migration 0043, which knows neither its pass nor its records' net: it stands for its part at the
 * payout's share of ETH.
 */
describe.each([
  ["a 50/50 ETH/USD payout of locked earnings while newer earnings are queued", false],
  ["a 50/50 payout on a lock made before migration 0043 (no pass total)", true],
])("%s", (_title, oldLock) => {
  const t = rateLockWorld();
  it("leaves the queued record whole (its ETH half is locked at its rate)", async () => {
    const { s, usd, eth } = t;
    expectStatus(
      await s.api.call("PUT", "/v1/operators/o/payout-preferences/USD", {
        key: s.keys.o,
        body: {
          splits: [
            { asset: "ETH", bps: 5000 },
            { asset: "USD", bps: 5000 },
          ],
        },
      }),
      200,
    );
    await t.receive("c", 200n * USD, "w1");
    // R1: 89 USD net, locked: 44.5 USD into ETH at 3000.
    await t.earn("c");
    await t.lock();
    if (oldLock)
      await inTransaction(s.w.db, async (tx) => {
        await tx.query("set local session_replication_role = replica");
        await tx.query("update rate_locks set pass_id = null, pass_total = null");
        await tx.query("delete from rate_lock_records");
      });
    // R2: 89 USD net, earned after the worker's lock step (queued when the payout converts).
    await t.earn("c");
    // The daily payout of R1's 89 USD: 44.5 ETH-part on R1's lock, 44.5 in USD.
    const p1 = expectStatus(await s.api.call("POST", "/v1/payouts", { key: s.keys.o, body: { asset: "USD", amount: (89n * USD).toString() } }), 201).body;
    await new PayoutWorker(s.w.db, s.w.settlements, { log: t.log }).convert();
    expect((await getPayout(s.w.db, p1.id))!.status).toBe("converted");
    // Next pass locks R2.
    await t.lock();
    const open = t.open(await t.locks());
    // ETH doubles; R2's 89 USD paid.
    await t.rate(eth, usd, 6000n, 1n);
    const p2 = expectStatus(await s.api.call("POST", "/v1/payouts", { key: s.keys.o, body: { asset: "USD", amount: (89n * USD).toString() } }), 201).body;
    await new PayoutWorker(s.w.db, s.w.settlements, { log: t.log }).convert();
    const [child] = await s.w.db.query<{ amount: string }>("select amount::text from payouts where parent_payout_id = $1 and asset_id = $2", [p2.id, eth.id]);
    const ethWorthUsd = (BigInt(child!.amount) * 6000n * USD) / ETH / USD;
    // R2's ETH half (44.5 USD) at its lock (3000) = 0.014833 ETH, worth 89 USD at 6000.
    // (Only 22.25 USD of R2 locked would be worth 66 USD: 22.25 USD lost.)
    expect({ open, ethWorthUsd }).toEqual({ open: 44_500_000n, ethWorthUsd: 88n });
  }, 120_000);
});
