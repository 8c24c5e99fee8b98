import { describe, expect, it } from "vitest";
import { getPayout } from "../../src/services/payouts.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { USD } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

const ETH = 10n ** 18n;

/**
 * Honest operator, 50% ETH / 50% USD. R1 (89) locked: 44.5 into ETH at 3000. R2 (89) earned after
 * the worker's pass, queued. m reverses R1 (a refund): R1's own money is its whole 89 (still in the
 * payable, nothing paid), which its open ETH lock of 44.5 stands for. Counting only the lock's 44.5
 * as its own took the other 44.5 off R2's queued net as "other earnings paid", and R2 was locked for
 * 44.5 instead of 89.
 */
describe("the reversal of a locked record under a 50/50 preference while a newer record is queued", () => {
  const t = rateLockWorld();
  it("leaves the queued record whole", async () => {
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
    const r1 = await t.earn("c");
    await t.lock();
    await t.earn("c"); // R2, queued
    await t.reverse(r1.id);
    const [q] = await s.w.db.query<{ net: string }>("select net::text as net from rate_lock_queue");
    await t.lock();
    const open = t.open(await t.locks());
    await t.rate(eth, usd, 6000n, 1n);
    const p = expectStatus(await s.api.call("POST", "/v1/payouts", { key: s.keys.o, body: { asset: "USD", amount: (89n * USD).toString() } }), 201).body;
    await new PayoutWorker(s.w.db, s.w.settlements, { log: t.log }).convert();
    expect((await getPayout(s.w.db, p.id))!.status).toBe("converted");
    const [child] = await s.w.db.query<{ amount: string }>("select amount::text from payouts where parent_payout_id = $1 and asset_id = $2", [p.id, eth.id]);
    const ethWorthUsd = (BigInt(child!.amount) * 6000n * USD) / ETH / USD;
    // R2 queued whole (89), its ETH half (44.5) locked at 3000 = worth 89 USD at 6000.
    expect({ queued: q?.net, open, ethWorthUsd }).toEqual({ queued: (89n * USD).toString(), open: 44_500_000n, ethWorthUsd: 88n });
  }, 120_000);
});
