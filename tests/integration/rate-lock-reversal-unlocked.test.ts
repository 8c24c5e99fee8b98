import { describe, expect, it } from "vitest";
import { USD } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

const ETH = 10n ** 18n;

/**
 * "Locked last": a USD payout pays R2 (never locked) and leaves R1's lock open. Then m reverses R2:
 * the reversal takes 89 USD from the payable, R1's earnings, and R2 had no lock to give back. The
 * reversal sweeps the operator's locks: without it, new at_payout earnings R3 (marketplace b, same
 * USD payable) arriving before any other sweep backed R1's stale lock, and R3 was converted at R1's
 * old rate.
 */
describe("a reversal of unlocked earnings after a USD payout", () => {
  const t = rateLockWorld();
  it("does not leave R1's lock open for later at_payout earnings", async () => {
    const { s, usd, eth } = t;
    await t.receive("c", 200n * USD, "w1");
    // R1: 89 USD, locked into ETH at 3000.
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    // o moves to USD; R2: 89 USD, never locked.
    await t.preference("USD");
    const r2 = await t.earn("c");
    expect(await t.lock()).toBe(0);
    // ETH falls to 1500; o takes 89 USD (R2's dollars, by "locked last"); R1's lock stays.
    await t.rate(eth, usd, 1500n, 1n);
    await t.paidInUsd(89n * USD);
    expect(t.open(await t.locks())).toBe(89n * USD);
    // m reverses R2 (its customer refunded). The payable had only R1's 89 USD: now 0, and R1's lock goes.
    await t.reverse(r2.id);
    const openAfterReversal = t.open(await t.locks());
    // ETH rises to 6000. Marketplace b (at_payout, USD) pays o 89 USD of funded earnings (R3).
    await t.rate(eth, usd, 6000n, 1n);
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
    // o back to ETH: paid R3 (at_payout earnings: the rate of the moment, 89 USD of ETH).
    await t.preference("ETH");
    const paid = await t.payOut(89n * USD);
    const worth = (paid * 6000n * USD) / ETH;
    // R1's earnings went to reverse R2 (already paid in USD); R3 at 6000 → worth 89 USD (at R1's 3000
    // it would have been 0.029666 ETH, worth 178 USD: o paid 89 + 178 USD for 178 USD of earnings).
    expect({ openAfterReversal, worthUsd: worth / USD }).toEqual({ openAfterReversal: 0n, worthUsd: 88n });
  }, 120_000);
});
