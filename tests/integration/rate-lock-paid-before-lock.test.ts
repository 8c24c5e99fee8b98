import { describe, expect, it } from "vitest";
import { USD } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

const ETH = 10n ** 18n;

/**
 * R1's earnings are paid in USD while R1 is still queued (before the worker's next pass; R2 is m's
 * unfunded usage on a claimed deposit). The payout takes R1 out of the queue: queued records are never-locked earnings,
 * which payouts pay first. Before, the operator went back to ETH, m reversed R2 when it liked, and the
 * worker locked R1, whose earnings had already left the payable, at the rate of that moment; the
 * operator's at_payout earnings R3 (marketplace b) in the payable kept the lock within the sweep's
 * bound, and R3 was converted at R1's lock rate.
 */
describe("a record paid in USD before the worker locks it", () => {
  const t = rateLockWorld();
  it("gets no lock that later prices other (never-locked) earnings", async () => {
    const { s, usd, eth } = t;
    await t.receive("c", 100n * USD, "w1");
    // R1: 89 USD funded. R2: 89 USD on a claimed deposit (no money in). The worker has not run yet.
    await t.earn("c");
    await t.claimed("d");
    const r2 = await t.earn("d");
    // o takes R1's 89 USD at par (payable-now 178 − 89 awaiting), then goes back to 100% ETH.
    await t.preference("USD");
    await t.paidInUsd(89n * USD);
    await t.preference("ETH");
    // Marketplace b (at_payout, USD): R3, 89 USD of funded earnings for o, never to be locked.
    expectStatus(await s.api.call("PUT", "/v1/marketplaces/b/pricing-currency", { body: { asset: "USD" } }), 200);
    expectStatus(await s.api.call("POST", "/v1/operators", { key: s.keys.b, body: { id: "o", name: "o" } }), 202);
    expectStatus(await s.api.call("POST", "/v1/operators/o/invitations/b/accept", { key: s.keys.o, body: {} }), 200);
    const r = expectStatus(
      await s.api.call("POST", "/v1/marketplaces/b/receipts", {
        key: s.keys.finance,
        body: { asset: "USD", amount: (100n * USD).toString(), reference: "b1", customer_id: "bc" },
      }),
      201,
    ).body;
    expectStatus(await s.approve(r.id, s.keys.finance2), 200);
    await s.usage("o", "bc", 100n * USD, { key: s.keys.b, extra: { asset: "USD" } });
    // ETH at 3000 now; m takes R2 back whenever it likes; the worker has nothing of R1 (already paid) to lock.
    await t.rate(eth, usd, 3000n, 1n);
    await t.reverse(r2.id);
    await t.lock();
    const openAfterLock = t.open(await t.locks());
    // ETH rises to 6000; o is paid R3 (89 USD of at_payout earnings) in ETH.
    await t.rate(eth, usd, 6000n, 1n);
    const paid = await t.payOut(89n * USD);
    const worth = (paid * 6000n * USD) / ETH;
    // R1 was paid in USD, so no lock is made for it; R3 converts at 6000 (worth 89 USD), not at 3000
    // (0.029666 ETH, worth 178 USD: R1's 89 USD plus 178 USD for 178 USD of earnings).
    expect({ openAfterLock, worthUsd: worth / USD }).toEqual({ openAfterLock: 0n, worthUsd: 88n });
  }, 120_000);
});

describe("a record paid at the rate of the moment before the worker locks it", () => {
  const t = rateLockWorld();
  it("is taken out of the queue by the conversion that paid it", async () => {
    await t.receive("c", 100n * USD, "w1");
    // R1: 89 USD funded, R2 unfunded (claimed deposit); the worker has not run yet.
    await t.earn("c");
    await t.claimed("d");
    const r2 = await t.earn("d");
    // o is paid its 89 USD of payable-now in ETH: no lock covers it, so at the rate of the moment.
    const paid = await t.payOut(89n * USD);
    expect(paid).toBe((89n * USD * ETH) / (3000n * USD));
    // R2 reversed: the worker finds nothing of R1 to lock.
    await t.reverse(r2.id);
    expect(await t.lock()).toBe(0);
    expect(t.open(await t.locks())).toBe(0n);
  }, 120_000);
});

describe("a reversal of earnings already paid, while other records wait in the queue", () => {
  const t = rateLockWorld();
  it("takes the waiting records' money: they are not locked afterwards", async () => {
    await t.receive("c", 200n * USD, "w1");
    // R1 earned while o is paid in USD: never locked, and paid at par.
    await t.preference("USD");
    const r1 = await t.earn("c");
    expect(await t.lock()).toBe(0);
    await t.paidInUsd(89n * USD);
    // Back to ETH; Q earned, still queued when m reverses R1: the reversal takes Q's 89 USD.
    await t.preference("ETH");
    await t.earn("c");
    await t.reverse(r1.id);
    expect(await t.lock()).toBe(0);
    expect(t.open(await t.locks())).toBe(0n);
  }, 120_000);

  it("of a record whose own lock is still open, leaves the other records queued, to be locked", async () => {
    await t.receive("c", 200n * USD, "w2");
    // R3 locked (its lock open); Q2 earned and queued; R3 reversed: it takes its own earnings back.
    const r3 = await t.earn("c");
    expect(await t.lock()).toBe(1);
    await t.earn("c");
    await t.reverse(r3.id);
    expect(await t.lock()).toBe(1);
    expect(t.open(await t.locks())).toBe(89n * USD);
  }, 120_000);
});
