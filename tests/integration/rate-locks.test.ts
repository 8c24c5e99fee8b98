import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import { insertRate } from "../../src/db/queries/conversions.js";
import type { Asset } from "../../src/domain/assets.js";
import { uuidv7 } from "../../src/domain/ids.js";
import { createLogger } from "../../src/log.js";
import { createAsset } from "../../src/services/create-asset.js";
import { lockEarnedRates } from "../../src/services/lock-rates.js";
import { getPayout, type Payout } from "../../src/services/payouts.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { ago } from "../support/clock.js";
import { fundingWorld, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";

/**
 * The rate policy "lock the rate when the usage is earned" (docs/settlement.md, "Rate policy") on a
 * local chain: marketplace m prices in USD and locks at earning; operator o is paid 70/30 in TUSD
 * and native ETH. Rates are finance's (manual), 1 TUSD = 1 USD and 1 ETH = 3000 USD, moved by
 * entering newer ones. Marketplace fees are 10% + 1%: o earns 89% of each record's gross.
 */
let s: FundingWorld;
let tusd: Asset;
let usd: Asset;
let eth: Asset;
let worker: PayoutWorker;
const log = createLogger("silent");
const now = () => s.w.db.clock.now();
const ETH = 10n ** 18n;

async function rate(base: Asset, quote: Asset, num: bigint, den: bigint, observedAt = now()): Promise<void> {
  const id = uuidv7();
  await insertRate(s.w.db, { id, baseAssetId: base.id, quoteAssetId: quote.id, num, den, observedAt, source: "manual", sourceRef: id, recordedAt: now() });
}
const usage = (amount: bigint, operator = "o") => s.usage(operator, "c", amount, { extra: { asset: "USD" } });
const queued = async () => Number((await s.w.db.query<{ n: string }>("select count(*)::text as n from rate_lock_queue"))[0]!.n);
const locks = async (key = s.keys.finance, query = "") => expectStatus(await s.api.call("GET", `/v1/rate-locks${query}`, { key }), 200).body.data;
/** Rows made in one instant by asset (their order within it is their ids'). */
const byAsset = <T extends Record<string, string>>(rows: T[], field = "to_asset") => [...rows].sort((a, b) => a[field]!.localeCompare(b[field]!));

async function convertPayout(operator: string, amount: bigint): Promise<{ parent: Payout; children: Record<string, bigint> }> {
  const created = expectStatus(
    await s.api.call("POST", "/v1/payouts", { key: s.keys[operator]!, body: { asset: "USD", amount: amount.toString() } }),
    201,
  ).body;
  expect(created.settlement).toBe("convert");
  await worker.convert();
  const parent = (await getPayout(s.w.db, created.id))!;
  const rows = await s.w.db.query<{ code: string; amount: string }>(
    "select a.code, p.amount::text as amount from payouts p join assets a on a.id = p.asset_id where p.parent_payout_id = $1",
    [created.id],
  );
  return { parent, children: Object.fromEntries(rows.map((r) => [r.code, BigInt(r.amount)])) };
}

beforeAll(async () => {
  s = await fundingWorld();
  await createAsset(s.w.db, { code: "USD", scale: 6, settlement: { kind: "offchain" } });
  [tusd, usd, eth] = [(await getAssetByCode(s.w.db, "TUSD"))!, (await getAssetByCode(s.w.db, "USD"))!, (await getAssetByCode(s.w.db, "ETH"))!];
  await rate(tusd, usd, 1n, 1n, ago(60_000));
  await rate(eth, usd, 3000n, 1n, ago(60_000));
  worker = new PayoutWorker(s.w.db, s.w.settlements, { log });
  // Customer c's money, received in USD: 1,000 USD.
  const receipt = expectStatus(
    await s.api.call("POST", "/v1/marketplaces/m/receipts", {
      key: s.keys.finance,
      body: { asset: "USD", amount: (1000n * USD).toString(), reference: "wire 1", customer_id: "c" },
    }),
    201,
  ).body;
  for (const o of ["o", "o2"])
    expectStatus(
      await s.api.call("PUT", `/v1/operators/${o}/payout-preferences/USD`, {
        key: s.keys[o]!,
        body: {
          splits: [
            { asset: "TUSD", bps: 7000 },
            { asset: "ETH", bps: 3000 },
          ],
        },
      }),
      200,
    );
  // Usage before the policy: converted at payout, never locked.
  expectStatus(await s.api.call("PUT", "/v1/marketplaces/m/pricing-currency", { body: { asset: "USD" } }), 200);
  expectStatus(await s.approve(receipt.id, s.keys.finance2), 200);
}, 120_000);
afterAll(async () => {
  await s?.close();
});

describe("rate policy at_earning", () => {
  it("only an admin sets the policy; it must be one of the two; the marketplace shows it", async () => {
    for (const key of [s.keys.market, s.keys.finance, s.keys.o]) {
      const r = await s.api.call("PUT", "/v1/marketplaces/m/pricing-currency", { key, body: { asset: "USD", rate_policy: "at_earning" } });
      expect(r.status).toBe(403);
    }
    const bad = await s.api.call("PUT", "/v1/marketplaces/m/pricing-currency", { body: { asset: "USD", rate_policy: "at_lunch" } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/rate_policy/);
    expect((await s.api.call("GET", "/v1/marketplaces/m", { key: s.keys.market })).body.rate_policy).toBe("at_payout");
    await usage(10n * USD); // earned under at_payout
    expect(await queued()).toBe(0);
    const set = expectStatus(await s.api.call("PUT", "/v1/marketplaces/m/pricing-currency", { body: { asset: "USD", rate_policy: "at_earning" } }), 200);
    expect(set.body).toMatchObject({ pricing_asset: "USD", rate_policy: "at_earning" });
  });

  it("locks each record's earnings at the rate when earned; a payout after the rate moved pays at the locked rate", async () => {
    const before = (await locks()).length;
    await usage(100n * USD); // o earns 89 USD: 62.3 in TUSD, 26.7 in ETH
    expect(await queued()).toBe(1);
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(2);
    expect(await queued()).toBe(0);
    const made = (await locks()).slice(before);
    expect(byAsset(made).map((l: Record<string, string>) => [l.to_asset, l.amount, l.rate, l.consumed, l.records])).toEqual([
      ["ETH", "26700000", "0.000333333333333333", "0", "1"],
      ["TUSD", "62300000", "1", "0", "1"],
    ]);
    // ETH rises to 4000 USD before the payout: the locked 26.7 USD still buy 26.7 / 3000 ETH.
    await rate(eth, usd, 4000n, 1n);
    const { parent, children } = await convertPayout("o", 89n * USD);
    expect(parent.status).toBe("converted");
    expect(children).toEqual({ TUSD: 62_300_000n, ETH: (267n * ETH) / 30_000n });
    const after = (await locks(s.keys.o)).slice(before);
    expect(byAsset(after).map((l: Record<string, string>) => l.consumed)).toEqual(["26700000", "62300000"]);
    // Each slice at its lock's rate, naming the lock; verify agrees with every conversion and lock.
    const conv = expectStatus(await s.api.call("GET", `/v1/conversions?payout_id=${parent.id}`, { key: s.keys.o }), 200).body.data;
    expect(byAsset(conv).map((c: Record<string, string>) => [c.to_asset, c.rate_lock_id !== null, c.rate])).toEqual([
      ["ETH", true, "0.000333333333333333"],
      ["TUSD", true, "1"],
    ]);
    const v = await verifyLedger(s.w.db);
    expect(v.violations).toEqual([]);
  });

  it("uses the locks oldest first and converts what they do not cover at the rate of the moment", async () => {
    const before = (await locks()).length;
    await usage(100n * USD); // 26.7 USD locked for ETH at 4000
    await lockEarnedRates(s.w.db, s.w.settlements, log);
    await rate(eth, usd, 2000n, 1n);
    await usage(100n * USD); // 26.7 USD locked for ETH at 2000
    await lockEarnedRates(s.w.db, s.w.settlements, log);
    const made = (await locks()).slice(before);
    expect(made.filter((l: Record<string, string>) => l.to_asset === "ETH").map((l: Record<string, string>) => l.rate)).toEqual(["0.00025", "0.0005"]);
    await rate(eth, usd, 1000n, 1n);
    await usage(100n * USD); // not locked yet: converted at the rate of the moment, 1000
    // 30 USD to ETH: 26.7 at 4000, then 3.3 at 2000 (the second lock), nothing at 1000.
    const first = await convertPayout("o", 100n * USD);
    expect(first.children.ETH).toBe((267n * ETH) / 40_000n + (33n * ETH) / 20_000n);
    // 30 USD more: the second lock's other 23.4 at 2000, and 6.6 (the unlocked record's share) at 1000.
    const second = await convertPayout("o", 100n * USD);
    expect(second.children.ETH).toBe((234n * ETH) / 20_000n + (66n * ETH) / 10_000n);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
    // The worker locks before it converts, so this happens only when a lock waited for a usable rate:
    // the record's lock, made now, applies to o's next earnings in the pair.
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(2);
  });

  it("waits to lock while the rate is stale, then locks at the first usable rate; a payout covered by locks needs no rate of the moment", async () => {
    await s.w.db.query("update assets set rate_max_age_seconds = 1 where code = 'ETH'");
    await new Promise((r) => setTimeout(r, 1_100));
    await usage(10n * USD, "o2");
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(0);
    expect(await queued()).toBe(1);
    await s.w.db.query("update assets set rate_max_age_seconds = 3600 where code = 'ETH'");
    await rate(eth, usd, 1500n, 1n);
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(2);
    const mine = await locks(s.keys.o2);
    expect(mine.filter((l: Record<string, string>) => l.to_asset === "ETH").map((l: Record<string, string>) => [l.amount, l.rate])).toEqual([
      ["2670000", "0.000666666666666667"],
    ]);
    // The rate goes stale again: the payout is wholly covered by locks, so it converts anyway.
    await s.w.db.query("update assets set rate_max_age_seconds = 1 where code in ('ETH', 'TUSD')");
    await new Promise((r) => setTimeout(r, 1_100));
    const { parent, children } = await convertPayout("o2", (89n * USD) / 10n);
    expect(parent.status).toBe("converted");
    expect(children).toEqual({ TUSD: 6_230_000n, ETH: (267n * ETH) / 150_000n });
    // More than the locks cover: the rest needs a usable rate, and the payout waits saying why.
    await usage(10n * USD, "o2");
    const waiting = await convertPayout("o2", (89n * USD) / 10n);
    expect(waiting.parent.status).toBe("pending");
    expect(waiting.parent.note).toMatch(/waiting to convert: no rate for USD→(TUSD|ETH) observed within the last 1 s/);
    await s.w.db.query("update assets set rate_max_age_seconds = 3600 where code in ('ETH', 'TUSD')");
    await rate(eth, usd, 1500n, 1n);
    await rate(tusd, usd, 1n, 1n);
    await worker.convert();
    expect((await getPayout(s.w.db, waiting.parent.id))!.status).toBe("converted");
  });

  it("holds: a lock is never edited or deleted, never used beyond its amount, and two workers lock a record once", async () => {
    const [l] = await s.w.db.query<{ id: string }>("select id from rate_locks limit 1");
    await expect(s.w.db.query("update rate_locks set amount = amount * 2 where id = $1", [l!.id])).rejects.toThrow(/may only raise consumed/);
    await expect(s.w.db.query("update rate_locks set rate_num = rate_num * 2 where id = $1", [l!.id])).rejects.toThrow(/may only raise consumed/);
    await expect(s.w.db.query("delete from rate_locks where id = $1", [l!.id])).rejects.toThrow(/may only raise consumed/);
    await expect(s.w.db.query("update rate_locks set consumed = amount + 1 where id = $1", [l!.id])).rejects.toThrow(/rate_locks_amounts/);
    await expect(s.w.db.query("update rate_locks set consumed = 0 where consumed > 0")).rejects.toThrow(/may only raise consumed/);
    // Two workers at once: the record's earnings are locked once.
    const sum = async () => BigInt((await s.w.db.query<{ t: string }>("select coalesce(sum(amount), 0)::text as t from rate_locks"))[0]!.t);
    await lockEarnedRates(s.w.db, s.w.settlements, log); // what earlier tests left queued
    const total = await sum();
    await usage(100n * USD);
    await Promise.all([lockEarnedRates(s.w.db, s.w.settlements, log), lockEarnedRates(s.w.db, s.w.settlements, log)]);
    expect((await sum()) - total).toBe(89n * USD);
    expect(await queued()).toBe(0);
  });

  it("holds: verify finds a conversion that claims a lock it did not use, and a lock whose use was not recorded", async () => {
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
    // A lock raised by hand (as a bug or an insider would): its conversions do not add up to it.
    const [l] = await s.w.db.query<{ id: string }>("select id from rate_locks where consumed < amount limit 1");
    await s.w.db.query("update rate_locks set consumed = consumed + 1 where id = $1", [l!.id]);
    const found = (await verifyLedger(s.w.db)).violations.filter((v) => v.check === "conversions");
    expect(found.map((v) => v.detail)).toEqual([expect.stringMatching(new RegExp(`rate lock ${l!.id} records .* used, its conversions used`))]);
  });

  it("an operator sees only its own locks; another operator's id finds nothing", async () => {
    const own = await locks(s.keys.o2);
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((l: Record<string, string>) => l.operator_id === "o2")).toBe(true);
    expect(await locks(s.keys.o2, "?operator_id=o")).toEqual([]);
    expect((await s.api.call("GET", "/v1/rate-locks", { key: s.keys.market })).status).toBe(403);
    expect((await s.api.call("GET", "/v1/rate-locks?marketplace=m", { key: s.keys.finance })).status).toBe(400);
  });
});
