import { describe, expect, it } from "vitest";
import { USD } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

/**
 * A lock whose own earnings were paid without it (in the pricing currency, or in another pair) is
 * released when that payout is requested. Kept open, it would wait for later earnings that were
 * never locked (earned while the preference said USD): the operator would escape a lock that went
 * against it and later apply it, at will, to other earnings.
 */
const ETH = 10n ** 18n;

describe("a lock whose earnings were paid in USD", () => {
  const t = rateLockWorld();
  it("is released: later earnings are not paid at its rate", async () => {
    const { s, usd, eth } = t;
    // R1: 89 USD of funded earnings, locked at 3000 USD/ETH.
    await t.receive("c", 100n * USD, "w1");
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    // ETH falls to 1500: the lock now pays 89 USD of earnings in ETH worth 44.5 USD. o switches to
    // USD and is paid its 89 USD at par instead (finance marks the off-chain payout paid).
    await t.rate(eth, usd, 1500n, 1n);
    await t.preference("USD");
    const p1 = expectStatus(await s.api.call("POST", "/v1/payouts", { key: s.keys.o, body: { asset: "USD", amount: (89n * USD).toString() } }), 201).body;
    // Requesting it released R1's lock: its earnings are held for a payout in USD.
    expect(t.open(await t.locks())).toBe(0n);
    expectStatus(await s.api.call("POST", `/v1/payouts/${p1.id}/mark-paid`, { key: s.keys.finance, body: { reference: "SEPA-1" } }), 200);
    // ETH rises to 6000. R2: 89 USD earned while the preference says USD: never locked.
    await t.rate(eth, usd, 6000n, 1n);
    await t.receive("c", 100n * USD, "w2");
    await t.earn("c");
    expect(await t.lock()).toBe(0);
    // Nothing was locked for R2, and R1's lock stays released.
    expect(t.open(await t.locks())).toBe(0n);
    // o switches back to ETH and is paid R2.
    await t.preference("ETH");
    const paid = await t.payOut(89n * USD);
    const worth = (paid * 6000n * USD) / ETH;
    // R2 is paid at the rate of the moment (89 USD of ETH), not at R1's 3000 (0.029666 ETH, worth 178 USD).
    expect(paid).toBe((89n * USD * ETH) / (6000n * USD));
    expect(worth).toBeLessThanOrEqual(89n * USD);
  }, 120_000);
});

describe("a lock whose earnings were paid in another pair", () => {
  const t = rateLockWorld();
  it("is released, not kept beside the other pair's lock for the same earnings", async () => {
    const { usd, eth, tusd } = t;
    // R1 locked USD→ETH at 3000.
    await t.receive("c", 100n * USD, "w1");
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    // ETH falls: o is paid R1 in TUSD at 1:1; the request releases R1's ETH lock.
    await t.rate(eth, usd, 1500n, 1n);
    await t.rate(tusd, usd, 1n, 1n);
    await t.preference("TUSD");
    await t.payOut(89n * USD);
    // R2 earned under TUSD: locked USD→TUSD.
    await t.rate(eth, usd, 6000n, 1n);
    await t.receive("c", 100n * USD, "w2");
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    const open = await t.locks();
    // Only R2's TUSD lock is open: 89 USD of locks for 89 USD of payable.
    expect(t.open(open)).toBe(89n * USD);
    expect(t.open(open.filter((l) => l.to_asset === "ETH"))).toBe(0n);
    await t.preference("ETH");
    const paid = await t.payOut(89n * USD);
    const worth = (paid * 6000n * USD) / ETH;
    expect(worth).toBeLessThanOrEqual(89n * USD);
  }, 120_000);
});

describe("a marketplace's unfunded usage for the operator", () => {
  const t = rateLockWorld();
  it("does not let unfunded earnings hold a lock whose earnings were paid in USD", async () => {
    const { usd, eth } = t;
    await t.receive("c", 200n * USD, "w1");
    // R1: 89 USD funded, locked into ETH at 3000.
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    // ETH falls to 1500. m posts F: 89 USD for o on a claimed deposit (no money in; never payable).
    await t.rate(eth, usd, 1500n, 1n);
    await t.claimed("d");
    const f = await t.earn("d");
    // o takes R1 in USD at par (payable-now: 178 − 89 awaiting funds = 89).
    await t.preference("USD");
    await t.paidInUsd(89n * USD);
    const openAfterUsd = t.open(await t.locks());
    // ETH rises to 6000; o back to ETH. R3: 89 USD of real (funded) earnings, locked at 6000 (F,
    // unfunded, stays queued beside it and does not hold it back).
    await t.rate(eth, usd, 6000n, 1n);
    await t.preference("ETH");
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    const paid = await t.payOut(89n * USD);
    const worth = (paid * 6000n * USD) / ETH;
    // m takes F back: nothing was ever locked for it.
    await t.reverse(f.id);
    // F did not keep R1's lock open (unfunded earnings are not earnings a lock is used for): R3 is
    // paid at 6000 (89 USD of ETH), not at R1's 3000 (0.029666 ETH, worth 178 USD).
    expect({ openAfterUsd, worthUsd: worth / USD }).toEqual({ openAfterUsd: 0n, worthUsd: 88n });
  }, 120_000);
});

describe("a payout in USD while newer earnings that were never locked sit in the payable", () => {
  const t = rateLockWorld();
  it("pays those unlocked earnings first: the older lock stays with its own earnings, still in the payable", async () => {
    const { usd, eth } = t;
    await t.receive("c", 200n * USD, "w1");
    // R1: 89 USD, locked into ETH at 3000 (preference 100% ETH).
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    // o moves to USD; R2: 89 USD earned, never locked (its queue is emptied).
    await t.preference("USD");
    await t.earn("c");
    expect(await t.lock()).toBe(0);
    // ETH falls to 1500: o takes 89 USD at par. These are R2's dollars: R2 was earned to be paid in
    // USD, R1 was locked into ETH, and the payable still holds 89 USD for R1's lock.
    await t.rate(eth, usd, 1500n, 1n);
    await t.paidInUsd(89n * USD);
    const openAfterUsd = t.open(await t.locks());
    // ETH rises to 6000: o moves back to ETH and is paid R1, at its lock.
    await t.rate(eth, usd, 6000n, 1n);
    await t.preference("ETH");
    const paid = await t.payOut(89n * USD);
    const worth = (paid * 6000n * USD) / ETH;
    // What o got is what at_earning promised: R1 as the ETH locked when it was earned (0.029666 ETH,
    // now worth 178 USD) and R2 as the 89 USD it was earned to be paid in, no more. (A payout of both,
    // 178 USD, would have released R1's lock: rate-lock-paid-elsewhere, "a lock whose earnings were paid in USD".)
    expect(openAfterUsd).toBe(89n * USD);
    expect(paid).toBe((89n * USD * ETH) / (3000n * USD));
    expect(worth / USD).toBe(177n);
  }, 120_000);
});
