import { describe, expect, it } from "vitest";
import { USD } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { joinMarketplace, rateLockWorld } from "../support/rate-lock-world.js";

const ETH = 10n ** 18n;

/**
 * A record half funded is half payable: a payout of that half takes it out of the queue, although
 * the record is the marketplace's first one its money leaves (partly) unfunded. Skipped, the half
 * paid at the rate of the moment stayed queued; once m settled the rest, the whole record was locked,
 * and the paid half of the lock priced at_payout earnings.
 */
describe("a payout of the funded half of a half-funded queued record", () => {
  const t = rateLockWorld();
  it("takes the paid half out of the queue", async () => {
    const { s, usd, eth } = t;
    // R: 100 USD on c, 50 received for c and 50 claimed by m: o's 89 net is 44.5 funded.
    await t.receive("c", 50n * USD, "w1");
    expectStatus(await s.api.call("POST", "/v1/customers/c/deposits", { key: s.keys.market, body: { asset: "USD", amount: (50n * USD).toString() } }), 201);
    await t.earn("c");
    expect(await t.lock()).toBe(0);
    // o is paid R's funded 44.5 USD in ETH at the rate of the moment (3000).
    const first = await t.payOut(44_500_000n);
    // X: 89 USD of at_payout earnings on marketplace b.
    await joinMarketplace(s, "b", s.keys.b, "at_payout", "bc", 100n * USD);
    await s.usage("o", "bc", 100n * USD, { key: s.keys.b, extra: { asset: "USD" } });
    // m settles the rest; the worker locks R at 3000.
    await t.settle(50n * USD);
    await t.lock();
    const openAfterLock = t.open(await t.locks());
    // ETH doubles; o is paid everything left (R's 44.5 + X's 89).
    await t.rate(eth, usd, 6000n, 1n);
    const paid = await t.payOut(133_500_000n);
    const worthUsd = (paid * 6000n * USD) / ETH / USD;
    // R's unpaid 44.5 at its lock (worth 89 at 6000) + X at 6000 (89) = 178 USD.
    // (R locked whole, 89 USD, would cover 44.5 of X: 222.5 USD.)
    expect(first).toBe((44_500_000n * ETH) / (3000n * USD));
    expect({ openAfterLock, worthUsd }).toEqual({ openAfterLock: 44_500_000n, worthUsd: 177n });
  }, 120_000);
});
