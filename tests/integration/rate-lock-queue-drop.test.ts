import { describe, expect, it } from "vitest";
import { USD } from "../support/funding-world.js";
import { joinMarketplace, rateLockWorld } from "../support/rate-lock-world.js";

const ETH = 10n ** 18n;

/**
 * A payout 1 unit short of a queued record's net takes that much of it out of the queue: only the
 * last unit is locked later. Before, dropQueued stopped at the first record whose net did not fit,
 * the record was locked for its whole net although all but 1 unit of it had been paid at the rate of
 * the moment, and its lock priced never-locked (at_payout) earnings.
 */
describe("a payout 1 USD short of the queued record's net", () => {
  const t = rateLockWorld();
  it("does not leave a whole-record lock for earnings already paid", async () => {
    const { s, usd, eth } = t;
    await t.receive("c", 100n * USD, "w1");
    // R1: 89 USD funded; R2: 89 USD on a claimed deposit; the worker has not run yet.
    await t.earn("c");
    await t.claimed("d");
    const r2 = await t.earn("d");
    // o is paid 88 of R1's 89 USD in ETH at the rate of the moment (3000); R1 (89) does not fit in 88: stays queued.
    const first = await t.payOut(88n * USD);
    // R3: 89 USD of at_payout earnings (marketplace b), never to be locked.
    await joinMarketplace(s, "b", s.keys.b, "at_payout", "bc", 100n * USD);
    await s.usage("o", "bc", 100n * USD, { key: s.keys.b, extra: { asset: "USD" } });
    // m takes R2 back; the worker locks R1's whole 89 USD at 3000 (the sweep's bound: 1 + 89 available).
    await t.reverse(r2.id);
    await t.lock();
    const openAfterLock = t.open(await t.locks());
    // ETH doubles; o is paid 89 USD.
    await t.rate(eth, usd, 6000n, 1n);
    const paid = await t.payOut(89n * USD);
    const worth = (paid * 6000n * USD) / ETH;
    // R1's last 1 USD at its lock (worth 2 USD now) + R3's 88 USD at 6000 = 90 USD; not 89 USD at
    // 3000 = 0.029666 ETH, worth 178 USD.
    expect(first).toBe((88n * USD * ETH) / (3000n * USD));
    expect({ openAfterLock, worthUsd: worth / USD }).toEqual({ openAfterLock: 1n * USD, worthUsd: 89n });
  }, 120_000);
});

/**
 * dropQueued walks the operator's whole queue, oldest first, whatever the marketplace: a payout that
 * could only pay marketplace b's funded record F (m's older record U waits for money) drops U and
 * leaves F queued. F is locked at the next pass although it was paid, and its lock prices at_payout
 * earnings.
 */
describe("a payout of funded earnings while another marketplace's unfunded record is older in the queue", () => {
  const t = rateLockWorld();
  it("drops the record it paid, not the unfunded one", async () => {
    const { s, usd, eth } = t;
    // U: 89 USD on m, claimed deposit (no money in), queued first.
    await t.claimed("d");
    const u = await t.earn("d");
    // F: 89 USD on b (also at_earning), funded.
    await joinMarketplace(s, "b", s.keys.b, "at_earning", "bc", 100n * USD);
    await s.usage("o", "bc", 100n * USD, { key: s.keys.b, extra: { asset: "USD" } });
    // Payable-now is F's 89 USD only; o is paid it in ETH at the rate of the moment (3000).
    const first = await t.payOut(89n * USD);
    // R3: 89 USD of at_payout earnings on a third marketplace x.
    const kx = await s.ownMarketplace("x");
    await joinMarketplace(s, "x", kx, "at_payout", "xc", 100n * USD);
    await s.usage("o", "xc", 100n * USD, { key: kx, extra: { asset: "USD" } });
    // The worker locks F (already paid) at 3000; m takes U back.
    await t.lock();
    await t.reverse(u.id);
    const openAfter = t.open(await t.locks());
    await t.rate(eth, usd, 6000n, 1n);
    const paid = await t.payOut(89n * USD);
    const worth = (paid * 6000n * USD) / ETH;
    // F paid once (first payout); R3 at 6000 = 89 USD (88 rounded), not at F's lock (worth 178 USD).
    expect(first).toBe((89n * USD * ETH) / (3000n * USD));
    expect({ openAfter, worthUsd: worth / USD }).toEqual({ openAfter: 0n, worthUsd: 88n });
  }, 120_000);
});
