import { describe, expect, it } from "vitest";
import { USD } from "../support/funding-world.js";
import { joinMarketplace, rateLockWorld } from "../support/rate-lock-world.js";

const ETH = 10n ** 18n;

/**
 * A customer's own money funds its own records whatever their place (funding walk, step 1), so a
 * prepaid customer's record after the marketplace's first unfunded record is funded and payable: a
 * payout of it takes it out of the queue (each record judged funded or not on its own). Judged by the
 * marketplace's first unfunded record, it stayed queued, the worker locked it afterwards, and its
 * lock priced at_payout earnings.
 */
describe("a funded prepaid record after another operator's unfunded record", () => {
  const t = rateLockWorld();
  it("paid at the rate of the moment, is not locked afterwards", async () => {
    const { s, usd, eth } = t;
    // o2's record on d's claimed deposit: m's first unfunded record (o2's, not o's).
    await t.claimed("d");
    await s.usage("o2", "d", 100n * USD, { extra: { asset: "USD" } });
    // R: o's 89 USD on c, c's own money received: funded. Paid (ETH at 3000) before the worker's next pass.
    await t.receive("c", 100n * USD, "w1");
    await t.earn("c");
    const first = await t.payOut(89n * USD);
    // X: 89 USD of at_payout earnings on b.
    await joinMarketplace(s, "b", s.keys.b, "at_payout", "bc", 100n * USD);
    await s.usage("o", "bc", 100n * USD, { key: s.keys.b, extra: { asset: "USD" } });
    await t.lock();
    const openAfterLock = t.open(await t.locks());
    // ETH doubles; o is paid X.
    await t.rate(eth, usd, 6000n, 1n);
    const paid = await t.payOut(89n * USD);
    const worthUsd = (paid * 6000n * USD) / ETH / USD;
    expect(first).toBe((89n * USD * ETH) / (3000n * USD));
    // nothing to lock (R was paid); X at 6000 = 89 USD. Not X at R's lock (3000): 178 USD.
    expect({ openAfterLock, worthUsd }).toEqual({ openAfterLock: 0n, worthUsd: 88n });
  }, 120_000);
});

describe("a funded prepaid record after the operator's own unfunded record", () => {
  const t = rateLockWorld();
  it("paid at the rate of the moment, is not locked when m settles the rest", async () => {
    const { s, usd, eth } = t;
    // R_d: o's 89 on d's claimed deposit (unfunded), first. R_c: o's 89 on c, c's own money: funded.
    await t.claimed("d");
    await t.earn("d");
    await t.receive("c", 100n * USD, "w1");
    await t.earn("c");
    // Before the worker's next pass, o is paid R_c's 89 (payable-now) in ETH at 3000.
    await t.payOut(89n * USD);
    await joinMarketplace(s, "b", s.keys.b, "at_payout", "bc", 100n * USD);
    await s.usage("o", "bc", 100n * USD, { key: s.keys.b, extra: { asset: "USD" } });
    // m settles d's 100 when it likes (ETH at 3000): the worker locks what is queued.
    await t.settle(100n * USD);
    await t.lock();
    const openAfterLock = t.open(await t.locks());
    await t.rate(eth, usd, 6000n, 1n);
    const paid = await t.payOut(178n * USD);
    const worthUsd = (paid * 6000n * USD) / ETH / USD;
    // R_d at its lock (89 at 3000, worth 178) + X at 6000 (89) = 267 USD; not 178 at 3000 = 356 USD.
    expect({ openAfterLock, worthUsd }).toEqual({ openAfterLock: 89n * USD, worthUsd: 266n });
  }, 120_000);
});
