import { describe, expect, it } from "vitest";
import { USD } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

/**
 * Earnings that leave the operator's payable without a conversion leave no lock open behind them
 * (docs/settlement.md, "Rate policy", sweepLocks and dropQueued): earnings that repay a receivable
 * leave the rate-lock queue with the recovery, and the operator's open locks are kept within what
 * is left of its payable. Each case: record R earned, locked in ETH at 3000 and paid out
 * at its lock, then reversed with a clawback (an admin's, approved by finance; an upheld dispute's goes the same way),
 * so that o owes 89 USD, repaid by its next earnings S.
 */
const ETH = 10n ** 18n;

async function paidThenClawedBack(t: ReturnType<typeof rateLockWorld>, paidIn?: string): Promise<void> {
  const { s } = t;
  await t.receive("c", 100n * USD, "w1");
  const r = await t.earn("c");
  expect(await t.lock()).toBe(1);
  await t.payOut(89n * USD);
  if (paidIn) await t.preference(paidIn);
  // Its earnings were paid out: an admin's reversal is a proposal, approved by finance.
  const proposal = expectStatus(await s.api.call("POST", `/v1/usage/${r.id}/reverse`, { key: s.keys.admin2, body: { reason: "fraud" } }), 202).body;
  expectStatus(await s.approve(proposal.id, s.keys.finance), 200);
  await t.receive("c", 100n * USD, "w2");
  await t.earn("c");
}

const usdBalance = async (t: ReturnType<typeof rateLockWorld>) =>
  (expectStatus(await t.s.api.call("GET", "/v1/operators/o/balances", { key: t.s.keys.o }), 200).body.data as Array<Record<string, string>>).find(
    (b) => b.asset === "USD",
  )!;

describe("earnings that repay a clawback, locked in the same pair", () => {
  const t = rateLockWorld();
  it("leave no lock open at their rate: the operator's later earnings are paid at their own", async () => {
    await t.rate(t.eth, t.usd, 6000n, 1n);
    await paidThenClawedBack(t);
    // S repaid the receivable: it left the queue with the recovery, and is never locked.
    expect(await t.lock()).toBe(0);
    expect(await usdBalance(t)).toMatchObject({ receivable: "0", payable_now: "0" });
    // ETH doubles again; T is earned and paid: at T's own rate (12000), not S's.
    await t.rate(t.eth, t.usd, 12000n, 1n);
    await t.receive("c", 100n * USD, "w3");
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    const paid = await t.payOut(89n * USD);
    expect((paid * 12000n * USD) / ETH).toBeLessThanOrEqual(89n * USD);
    expect(t.open(await t.locks())).toBe(0n);
  }, 120_000);
});

describe("earnings that repay a clawback while the operator is paid in the pricing currency", () => {
  const t = rateLockWorld();
  it("do not take the lock of the operator's later real earnings", async () => {
    await paidThenClawedBack(t, "USD");
    expect(await t.lock()).toBe(0); // S: paid in USD, no lock
    expect(await usdBalance(t)).toMatchObject({ receivable: "0" });
    await t.preference("ETH");
    await t.receive("c", 100n * USD, "w3");
    await t.earn("c"); // T: real, funded, unpaid
    expect(await t.lock()).toBe(1);
    expect(t.open(await t.locks())).toBe(89n * USD);
  }, 120_000);
});

describe("earnings that repay a clawback, locked in another pair", () => {
  const t = rateLockWorld();
  it("leave no lock of that pair open either", async () => {
    await paidThenClawedBack(t, "TUSD");
    // S repaid the receivable: it left the queue with the recovery, and is never locked (in TUSD either).
    expect(await t.lock()).toBe(0);
    expect(await usdBalance(t)).toMatchObject({ payable_now: "0" });
    expect(t.open(await t.locks())).toBe(0n);
  }, 120_000);
});
