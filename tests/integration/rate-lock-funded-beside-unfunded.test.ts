import { describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.js";
import { lockUsageFunding } from "../../src/services/funding.js";
import { lockEarnedRates } from "../../src/services/lock-rates.js";
import { inTransaction } from "../../src/services/transaction.js";
import { NEEDS_PG, onRealPostgres } from "../support/db.js";
import { USD } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

/**
 * The lock worker judges each queued record funded or not on its own. Before, it judged the group
 * (marketplace, operator, asset) as a whole: one tiny unfunded record (a claimed deposit) kept all of
 * the operator's funded earnings queued, so the marketplace chose the moment of their lock — it
 * settled the tiny record when the token had dipped, and the next pass locked everything at that
 * rate; and a marketplace whose usage was never all funded never had its operators' earnings locked.
 */
describe("funded earnings beside a tiny unfunded record of the same marketplace", () => {
  const t = rateLockWorld();
  it("are locked at the first pass after they are funded; the unfunded record alone waits for its money", async () => {
    const { s, usd, eth } = t;
    // T: 0.01 USD for o on d's claimed deposit (no money in). R: 89 USD for o, c's own money.
    await t.claimed("d");
    await s.usage("o", "d", USD / 100n, { extra: { asset: "USD" } });
    await t.receive("c", 100n * USD, "w1");
    await t.earn("c");
    // The pass locks R at 3000 USD/ETH; T stays queued.
    expect(await t.lock()).toBe(1);
    const [first] = await t.locks();
    expect(first).toMatchObject({ amount: (89n * USD).toString() });
    const queued = await s.w.db.query<{ n: string }>("select count(*)::text as n from rate_lock_queue where operator_id = 'o'");
    expect(queued[0]!.n).toBe("1");
    // ETH dips to 1500; m settles d's deposit now: only T is locked at 1500, R keeps its 3000.
    await t.rate(eth, usd, 1500n, 1n);
    await t.settle(100n * USD);
    expect(await t.lock()).toBe(1);
    const all = await t.locks();
    const byId = new Map(all.map((l) => [l.id, l]));
    expect(byId.get(first!.id)).toMatchObject({ amount: (89n * USD).toString(), rate_num: first!.rate_num, rate_den: first!.rate_den });
    const second = all.find((l) => l.id !== first!.id)!;
    expect(BigInt(second.amount!)).toBeLessThan(USD / 100n);
    // The dip's rate is twice as many ETH per USD as the first lock's.
    expect(BigInt(second.rate_num!) * BigInt(first!.rate_den!)).toBe(2n * BigInt(first!.rate_num!) * BigInt(second.rate_den!));
  }, 120_000);
});

/**
 * The worker picks at most 5,000 queued records of a group a pass. It used to pick the oldest and
 * judge them after: 5,000 tiny unfunded records (one batch, 0.5 USD on a claimed deposit) at the
 * head of the queue filled every pick, and the funded earnings behind them waited for the
 * marketplace to settle when the token had dipped. The unfunded records are now left out before the
 * limit.
 */
describe("5,000 tiny unfunded records at the head of a group's queue", () => {
  const t = rateLockWorld();
  it("do not keep the operator's funded earnings behind them from being locked at the first pass", async () => {
    const { s } = t;
    await t.claimed("d");
    const records = Array.from({ length: 5_000 }, () => s.record("o", "d", 100n, { asset: "USD" }));
    const res = expectStatus(await s.api.call("POST", "/v1/usage/batch", { key: s.keys.market, body: { records } }), 200).body;
    expect(res.summary.accepted).toBe(5_000);
    await t.receive("c", 100n * USD, "w1");
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    expect((await t.locks()).map((l) => l.amount)).toEqual([(89n * USD).toString()]);
  }, 300_000);
});

/**
 * Usage holds its marketplace's funding lock (shared) from drawing its funding_seq to its commit.
 * The worker walked the funding without it: a record drawn earlier but not yet committed was
 * unseen, the pool funded a later record, which was locked; the earlier one committed and took the
 * pool first, leaving the locked one unfunded. The worker now walks under the lock, exclusive, as
 * payouts do: it waits for usage being written.
 */
/** A writer of m's usage holding its funding lock (shared, as ingestion does) until released. */
async function usageBeingWritten(db: Database): Promise<{ release: () => void; writer: Promise<void> }> {
  let release!: () => void;
  const held = new Promise<void>((res) => (release = res));
  let taken!: () => void;
  const lockTaken = new Promise<void>((res) => (taken = res));
  const writer = inTransaction(db, async (tx) => {
    await lockUsageFunding(tx, ["m"]);
    taken();
    await held;
  });
  await lockTaken;
  return { release, writer };
}

describe.skipIf(!onRealPostgres)(`usage of the marketplace being written while the worker runs ${NEEDS_PG}`, () => {
  const t = rateLockWorld();
  it("is waited for before the funding is walked", async () => {
    const { s } = t;
    await t.receive("c", 100n * USD, "w1");
    await t.earn("c");
    // A writer of m's usage, between drawing its funding_seq and its commit.
    const { release, writer } = await usageBeingWritten(s.w.db);
    let done = false;
    const pass = t.lock().then((n) => ((done = true), n));
    await new Promise((res) => setTimeout(res, 500));
    expect(done).toBe(false);
    release();
    await writer;
    expect(await pass).toBe(1);
  }, 120_000);

  /**
   * A pass chose its rates first and locked its groups after, however long their locks took: a
   * group that waited for the marketplace's usage was locked at the rate of the moment the pass
   * began. A group whose locks come too late is now locked at a rate chosen again once they are
   * held.
   */
  it("is not locked at a rate chosen before the wait, when the wait was long", async () => {
    const { s, usd, eth } = t;
    const before = new Set((await t.locks()).map((l) => l.id));
    await t.rate(eth, usd, 3000n, 1n);
    await t.receive("c", 100n * USD, "w2");
    await t.earn("c");
    const { release, writer } = await usageBeingWritten(s.w.db);
    // The pass chooses 3000 USD/ETH and waits; meanwhile ETH falls to 1500.
    const pass = lockEarnedRates(s.w.db, s.w.settlements, t.log, { maxChoiceAgeMs: 300 });
    await new Promise((res) => setTimeout(res, 200));
    await t.rate(eth, usd, 1500n, 1n);
    await new Promise((res) => setTimeout(res, 400));
    release();
    await writer;
    expect(await pass).toBe(1);
    const made = (await t.locks()).filter((l) => !before.has(l.id));
    expect(made).toHaveLength(1);
    // 1 USD buys 1/1500 ETH, not 1/3000.
    expect(made[0]).toMatchObject({ amount: (89n * USD).toString() });
    expect(BigInt(made[0]!.rate_num!) * 1500n).toBe(BigInt(made[0]!.rate_den!));
  }, 120_000);

  /**
   * Skipping a late group instead (its records left queued for the next pass) let a marketplace that
   * keeps overlapping usage transactions running put the lock off pass after pass, and stop when the
   * token suited it: the earnings were then locked at the rate of its choosing.
   */
  it("is locked at the first pass however long the marketplace keeps writing, at a rate chosen once the locks are held", async () => {
    const { s, usd, eth } = t;
    const before = new Set((await t.locks()).map((l) => l.id));
    await t.rate(eth, usd, 3000n, 1n);
    await t.receive("c", 100n * USD, "w3");
    await t.earn("c");
    // Overlapping writers of m's usage, each holding the funding lock 800 ms, one every 200 ms.
    let pumping = true;
    const writers: Promise<unknown>[] = [];
    const pump = (async () => {
      while (pumping) {
        writers.push(
          inTransaction(s.w.db, async (tx) => {
            await lockUsageFunding(tx, ["m"]);
            await new Promise((res) => setTimeout(res, 800));
          }),
        );
        await new Promise((res) => setTimeout(res, 200));
      }
    })();
    await new Promise((res) => setTimeout(res, 500));
    const first = await lockEarnedRates(s.w.db, s.w.settlements, t.log, { maxChoiceAgeMs: 300 });
    pumping = false;
    await pump;
    await Promise.all(writers);
    expect(first).toBe(1);
    const made = (await t.locks()).filter((l) => !before.has(l.id));
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ amount: (89n * USD).toString() });
    expect(BigInt(made[0]!.rate_num!) * 3000n).toBe(BigInt(made[0]!.rate_den!));
  }, 120_000);
});
