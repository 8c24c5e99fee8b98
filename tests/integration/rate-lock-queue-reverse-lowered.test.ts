import { describe, expect, it } from "vitest";
import { USD } from "../support/funding-world.js";
import { joinMarketplace, rateLockWorld } from "../support/rate-lock-world.js";

const ETH = 10n ** 18n;

/**
 * A payout may have lowered a queued record's net: of R's 89, 60 were paid at the rate of the moment
 * and only 29 are queued. R's reversal takes 89 from the payable, 29 of its own and 60 of S's, so 60
 * of S leave the queue with it. Taken as all its own, S stayed queued whole, was locked for 89 and its
 * lock priced at_payout earnings.
 */
describe("the reversal of a queued record whose queued net was lowered by a payout", () => {
  const t = rateLockWorld();
  it("takes the paid part out of the other queued records", async () => {
    const { s, usd, eth } = t;
    await t.receive("c", 200n * USD, "w1");
    const r = await t.earn("c");
    await t.earn("c"); // S
    // 60 USD paid in ETH at the rate of the moment: R's queued net 89 → 29.
    await t.payOut(60n * USD);
    // m reverses R (89 back from o's 118): what is left (29) is S's.
    await t.reverse(r.id);
    // X: 89 USD at_payout earnings on b; then the worker locks S.
    await joinMarketplace(s, "b", s.keys.b, "at_payout", "bc", 100n * USD);
    await s.usage("o", "bc", 100n * USD, { key: s.keys.b, extra: { asset: "USD" } });
    await t.lock();
    const openAfterLock = t.open(await t.locks());
    await t.rate(eth, usd, 6000n, 1n);
    const paid = await t.payOut(118n * USD);
    const worthUsd = (paid * 6000n * USD) / ETH / USD;
    // S's 29 at its lock (worth 58) + X's 89 at 6000 = 147 USD; not 89 at the lock (178) + 29 = 207.
    expect({ openAfterLock, worthUsd }).toEqual({ openAfterLock: 29n * USD, worthUsd: 146n });
  }, 120_000);
});
