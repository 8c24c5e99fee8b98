import { describe, expect, it } from "vitest";
import { lockEarnedRates } from "../../src/services/lock-rates.js";
import { getPayout } from "../../src/services/payouts.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { USD } from "../support/funding-world.js";
import { rateLockWorld } from "../support/rate-lock-world.js";
import { expectStatus } from "../support/http.js";

/**
 * A rate lock gives back the share of a usage record that is reversed, and only funded earnings
 * are locked (docs/settlement.md, "Rate policy"). Before, a marketplace could post a large record
 * for its operator (on a claimed deposit, or on money it would get back), let the worker lock ETH at
 * today's rate and reverse the record (nothing was paid, so it may): the lock stayed, and when ETH
 * rose the operator's next small, real earnings were converted at the stale rate, paid in ETH worth
 * twice what it earned.
 */
const t = rateLockWorld();
const ETH = 10n ** 18n;
const { rate, locks, receive, reverse, log } = t;

describe("a usage record reversed after its rate was locked", () => {
  it("gives its lock back: the operator's next earnings are locked and paid at their own rate", async () => {
    const { s, usd, eth } = t;
    // 10,000 USD received for c (money the reversal will give back), 10,000 USD of usage for o; the worker locks 8,900 USD at 3000 USD/ETH.
    await receive("c", 10_000n * USD, "wire 10000");
    const big = await s.usage("o", "c", 10_000n * USD, { extra: { asset: "USD" } });
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(1);
    const [made] = await locks();
    expect(made).toMatchObject({ amount: (8_900n * USD).toString(), consumed: "0", released: "0", records: "1" });
    // The marketplace reverses it: the whole lock is given back.
    await reverse(big.id);
    expect((await locks()).map((l) => [l.id, l.released])).toEqual([[made!.id, (8_900n * USD).toString()]]);
    // A released lock cannot be used, nor edited back.
    await expect(s.w.db.query("update rate_locks set released = 0 where id = $1", [made!.id])).rejects.toThrow(/may only raise consumed or released/);
    await expect(s.w.db.query("update rate_locks set released = released + 1 where id = $1", [made!.id])).rejects.toThrow(/rate_locks_amounts/);

    // ETH doubles. Real money comes in (100 USD for c) and funds real usage: o earns 89 USD, locked at 6000.
    await rate(eth, usd, 6000n, 1n);
    await receive("c", 100n * USD, "wire 100");
    await t.earn("c");
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(1);
    const payout = expectStatus(await s.api.call("POST", "/v1/payouts", { key: s.keys.o, body: { asset: "USD", amount: (89n * USD).toString() } }), 201).body;
    await new PayoutWorker(s.w.db, s.w.settlements, { log }).convert();
    expect((await getPayout(s.w.db, payout.id))!.status).toBe("converted");
    const [child] = await s.w.db.query<{ amount: string }>("select amount::text from payouts where parent_payout_id = $1", [payout.id]);
    // 89 USD at 6000 USD/ETH, not at the reversed record's 3000.
    const worthUsd = (BigInt(child!.amount) * 6000n * USD) / ETH;
    expect(worthUsd).toBeLessThanOrEqual(89n * USD);
    expect(worthUsd).toBeGreaterThan(89n * USD - 1000n);
    const conversions = await s.w.db.query<{ rate_lock_id: string | null }>("select rate_lock_id from conversions where payout_id = $1", [payout.id]);
    expect(conversions.map((c) => c.rate_lock_id)).not.toContain(made!.id);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("reversed before the worker locks it, a record is never locked", async () => {
    const { s } = t;
    const before = (await locks()).length;
    const rec = await s.usage("o", "c", 5n * USD, { extra: { asset: "USD" } });
    expect(await s.w.db.query("select 1 from rate_lock_queue where usage_id = $1", [rec.id])).toHaveLength(1);
    await reverse(rec.id);
    expect(await s.w.db.query("select 1 from rate_lock_queue where usage_id = $1", [rec.id])).toEqual([]);
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(0);
    expect(await locks()).toHaveLength(before);
  });

  it("of records locked together, a reversed one gives back its share only", async () => {
    const { s } = t;
    const a = await s.usage("o", "c", 3n * USD, { extra: { asset: "USD" } });
    await s.usage("o", "c", 1n * USD, { extra: { asset: "USD" } });
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(1);
    const lock = (await locks()).at(-1)!;
    expect(lock).toMatchObject({ records: "2", released: "0" });
    await reverse(a.id);
    const after = (await locks()).find((l) => l.id === lock.id)!;
    // 3 of 4 USD of gross: the lock (89% of 4 USD) gives back 3/4 of itself, rounded down.
    expect(BigInt(after.released!)).toBe((BigInt(lock.amount!) * 3n) / 4n);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("earnings whose money has not come in are not locked until it does, then at that moment's rate", async () => {
    const { s, usd, eth } = t;
    expectStatus(
      await s.api.call("PUT", "/v1/operators/o2/payout-preferences/USD", { key: s.keys.o2, body: { splits: [{ asset: "ETH", bps: 10_000 }] } }),
      200,
    );
    const mine = async () => (await locks()).filter((l) => l.operator_id === "o2");
    // The marketplace claims a deposit for d (no money in) and posts 1,000 USD of usage for o2.
    expectStatus(await s.api.call("POST", "/v1/customers/d/deposits", { key: s.keys.market, body: { asset: "USD", amount: (1_000n * USD).toString() } }), 201);
    await s.usage("o2", "d", 1_000n * USD, { extra: { asset: "USD" } });
    await lockEarnedRates(s.w.db, s.w.settlements, log);
    expect(await mine()).toEqual([]);
    expect(await s.w.db.query("select 1 from rate_lock_queue where operator_id = 'o2'")).toHaveLength(1);
    // ETH moves; then the money arrives, and the earnings are locked at the rate of that moment.
    await rate(eth, usd, 4000n, 1n);
    await receive("d", 1_000n * USD, "wire d");
    await lockEarnedRates(s.w.db, s.w.settlements, log);
    expect((await mine()).map((l) => [l.amount, l.rate])).toEqual([[(890n * USD).toString(), "0.00025"]]);
    expect(await s.w.db.query("select 1 from rate_lock_queue where operator_id = 'o2'")).toEqual([]);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("after a payout used its lock for other earnings, a reversal gives the rest back from the operator's newer locks", async () => {
    const { s, usd, eth } = t;
    await rate(eth, usd, 3000n, 1n);
    // Real money, given back by the reversal: 10,000 USD of usage locked at 3000.
    await receive("c", 10_000n * USD, "wire big 2");
    const big = await s.usage("o", "c", 10_000n * USD, { extra: { asset: "USD" } });
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(1);
    // ETH doubles; real usage (89 USD of earnings) is locked at 6000.
    await rate(eth, usd, 6000n, 1n);
    await receive("c", 100n * USD, "wire 100 2");
    await t.earn("c");
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(1);
    // o is paid 89 USD: oldest first, the payout uses the 3000 lock (o's older open locks first, then it).
    const open = (rows: Array<Record<string, string>>) => rows.reduce((t, l) => t + BigInt(l.amount!) - BigInt(l.consumed!) - BigInt(l.released!), 0n);
    const mineBefore = (await locks()).filter((l) => l.operator_id === "o");
    const payout = expectStatus(await s.api.call("POST", "/v1/payouts", { key: s.keys.o, body: { asset: "USD", amount: (89n * USD).toString() } }), 201).body;
    await new PayoutWorker(s.w.db, s.w.settlements, { log }).convert();
    expect((await getPayout(s.w.db, payout.id))!.status).toBe("converted");
    const mineAfterPayout = (await locks()).filter((l) => l.operator_id === "o");
    expect(open(mineBefore) - open(mineAfterPayout)).toBe(89n * USD);
    // The marketplace reverses the big record: o's open locks shrink by its whole share (8,900 USD),
    // whichever of them the payout used.
    await reverse(big.id);
    const mineAfter = (await locks()).filter((l) => l.operator_id === "o");
    expect(open(mineAfterPayout) - open(mineAfter)).toBe(8_900n * USD);
    // Nothing was used by the reversal: only released moved.
    const consumed = (rows: Array<Record<string, string>>) => rows.reduce((t, l) => t + BigInt(l.consumed!), 0n);
    expect(consumed(mineAfter)).toBe(consumed(mineAfterPayout));
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  });

  it("a record whose queue row outlived its reversal is dropped, not locked", async () => {
    const { s } = t;
    const before = (await locks()).length;
    const rec = await s.usage("o", "c", 50n * USD, { extra: { asset: "USD" } });
    // A reversal made before the queue followed reversals: the trigger off for it.
    await s.w.db.query("alter table transfers disable trigger transfers_rate_locks");
    try {
      await reverse(rec.id);
    } finally {
      await s.w.db.query("alter table transfers enable trigger transfers_rate_locks");
    }
    expect(await s.w.db.query("select 1 from rate_lock_queue where usage_id = $1", [rec.id])).toHaveLength(1);
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(0);
    expect(await locks()).toHaveLength(before);
    expect(await s.w.db.query("select 1 from rate_lock_queue where usage_id = $1", [rec.id])).toEqual([]);
  });
});
