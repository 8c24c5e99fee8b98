import { describe, expect, it } from "vitest";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import { createAsset } from "../../src/services/create-asset.js";
import { USD } from "../support/funding-world.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

/**
 * A lock whose remainder buys less than one smallest unit of the target (a few micro-USD of an
 * 8-decimal BTC at 60,000 USD) is passed over; it does not end the walk over the locks, so the
 * newer locks of the pair still set the rate (the payout amount is the operator's choice: leaving
 * dust on purpose must not step out of locks that went against it).
 */
describe("a dust remainder on the operator's oldest lock", () => {
  const t = rateLockWorld();
  it("does not make its payouts skip its newer locks", async () => {
    const { s, usd } = t;
    await createAsset(s.w.db, { code: "WBTC", scale: 8, settlement: { kind: "offchain" } });
    const btc = (await getAssetByCode(s.w.db, "WBTC"))!;
    await t.rate(btc, usd, 60_000n, 1n);
    await t.preference("WBTC");
    await t.receive("c", 300n * USD, "w1");
    // R1 locked at 60,000; paid but for 100 micro-USD (the payout amount is the operator's choice).
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    await t.payOut(89n * USD - 100n);
    // BTC halves; R2 locked at 30,000.
    await t.rate(btc, usd, 30_000n, 1n);
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    const r2 = (await t.locks()).at(-1)!;
    // BTC back at 60,000; o is paid R2's 89 USD.
    await t.rate(btc, usd, 60_000n, 1n);
    const paid = await t.payOut(89n * USD);
    const used = await s.w.db.query<{ rate_lock_id: string | null }>("select rate_lock_id from conversions where rate_lock_id = $1", [r2.id]);
    // R2's lock is used (about 89/30,000 BTC = 296,666 sats), not the rate of the moment (148,333 sats).
    expect(used.length).toBe(1);
    expect(paid).toBeGreaterThan(290_000n);
  }, 120_000);
});
