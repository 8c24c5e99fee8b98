import { describe, expect, it } from "vitest";
import { USD } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

const ETH = 10n ** 18n;

/**
 * An upheld dispute reverses its records in one batch; reverseUsages reads each record's own open
 * share (ownOpenShares) before any of them is reversed. R1 and R2 share one lock (178 USD) of which a
 * payout used 89: the 89 open is shared between them, so their reversals take the queued record Q's
 * money and drop it from the queue. Before, each was told 89 was its own (178 in all for 89 open),
 * Q was locked later and priced at_payout earnings.
 */
describe("a dispute upheld on two records locked together, half their lock used", () => {
  const t = rateLockWorld();
  it("takes the queued record's money and drops it from the queue", async () => {
    const { s, usd, eth } = t;
    await t.receive("c", 300n * USD, "w1");
    const r1 = await t.earn("c");
    const r2 = await t.earn("c");
    expect(await t.lock()).toBe(1);
    // 89 of the lock used (R1's or R2's earnings, paid in ETH at 3000).
    await t.payOut(89n * USD);
    // Q: 89 USD funded, queued (no pass yet).
    await t.earn("c");
    const d = expectStatus(await s.api.call("POST", "/v1/disputes", { key: s.keys.market, body: { usage_ids: [r1.id, r2.id], reason: "x" } }), 201).body;
    expectStatus(await s.api.call("POST", `/v1/disputes/${d.id}/uphold`, { key: s.keys.finance, body: {} }), 200);
    const queued = (await s.w.db.query<{ n: string }>("select count(*)::text as n from rate_lock_queue where operator_id = 'o'"))[0]!.n;
    // R3: 89 USD at_payout (b), after the reversal.
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
    await t.lock();
    const open = t.open(await t.locks());
    await t.rate(eth, usd, 6000n, 1n);
    const paid = await t.payOut(89n * USD);
    const worth = (paid * 6000n * USD) / ETH;
    // Q's 89 USD left with the reversal (dropped), R3 paid at 6000 (89 USD), not at Q's lock (178 USD).
    expect({ queued, open, worthUsd: worth / USD }).toEqual({ queued: "0", open: 0n, worthUsd: 88n });
  }, 120_000);
});
