import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import type { Asset } from "../../src/domain/assets.js";
import { createLogger } from "../../src/log.js";
import { createAsset } from "../../src/services/create-asset.js";
import { lockEarnedRates } from "../../src/services/lock-rates.js";
import { getPayout } from "../../src/services/payouts.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { ago } from "../support/clock.js";
import { fundingWorld, manualRate, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";

/**
 * A clawback in one pair (USD→ETH) repaid by earnings locked in another (USD→TUSD): nothing is left
 * unpaid, so no lock of the other pair stays open either.
 */
let s: FundingWorld;
let usd: Asset;
let eth: Asset;
let tusd: Asset;
const log = createLogger("silent");
const now = () => s.w.db.clock.now();
const rate = (base: Asset, quote: Asset, num: bigint, den: bigint, observedAt = now()) => manualRate(s.w.db, base, quote, num, den, observedAt);
const locks = async () => expectStatus(await s.api.call("GET", "/v1/rate-locks", { key: s.keys.finance }), 200).body.data as Array<Record<string, string>>;
const open = (rows: Array<Record<string, string>>) => rows.reduce((t, l) => t + BigInt(l.amount!) - BigInt(l.consumed!) - BigInt(l.released!), 0n);
async function receive(customer: string, amount: bigint, reference: string): Promise<void> {
  const r = expectStatus(
    await s.api.call("POST", "/v1/marketplaces/m/receipts", {
      key: s.keys.finance,
      body: { asset: "USD", amount: amount.toString(), reference, customer_id: customer },
    }),
    201,
  ).body;
  expectStatus(await s.approve(r.id, s.keys.finance2), 200);
}
async function payOut(amount: bigint) {
  const payout = expectStatus(await s.api.call("POST", "/v1/payouts", { key: s.keys.o, body: { asset: "USD", amount: amount.toString() } }), 201).body;
  await new PayoutWorker(s.w.db, s.w.settlements, { log }).convert();
  expect((await getPayout(s.w.db, payout.id))!.status).toBe("converted");
  const [child] = await s.w.db.query<{ amount: string }>("select amount::text from payouts where parent_payout_id = $1", [payout.id]);
  return BigInt(child!.amount);
}

beforeAll(async () => {
  s = await fundingWorld();
  await createAsset(s.w.db, { code: "USD", scale: 6, settlement: { kind: "offchain" } });
  [tusd, usd, eth] = [(await getAssetByCode(s.w.db, "TUSD"))!, (await getAssetByCode(s.w.db, "USD"))!, (await getAssetByCode(s.w.db, "ETH"))!];
  await rate(tusd, usd, 1n, 1n, ago(60_000));
  await rate(eth, usd, 3000n, 1n, ago(60_000));
  expectStatus(await s.api.call("PUT", "/v1/marketplaces/m/pricing-currency", { body: { asset: "USD", rate_policy: "at_earning" } }), 200);
  expectStatus(await s.api.call("PUT", "/v1/operators/o/payout-preferences/USD", { key: s.keys.o, body: { splits: [{ asset: "ETH", bps: 10_000 }] } }), 200);
}, 120_000);
afterAll(async () => s?.close());

const pref = async (asset: string) =>
  expectStatus(await s.api.call("PUT", "/v1/operators/o/payout-preferences/USD", { key: s.keys.o, body: { splits: [{ asset, bps: 10_000 }] } }), 200);
const balance = async () => expectStatus(await s.api.call("GET", "/v1/operators/o/balances", { key: s.keys.o }), 200).body.data;

describe("a clawback in one pair, repaid by earnings locked in another", () => {
  it("leaves no lock of the other pair open without earnings behind it", async () => {
    await receive("c", 100n * USD, "w1");
    const r = await s.usage("o", "c", 100n * USD, { extra: { asset: "USD" } });
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(1);
    await payOut(89n * USD); // R paid at its ETH lock
    await pref("TUSD");
    expectStatus(await s.api.call("POST", `/v1/usage/${r.id}/reverse`, { body: { reason: "fraud" } }), 201); // receivable 89
    await receive("c", 100n * USD, "w2");
    await s.usage("o", "c", 100n * USD, { extra: { asset: "USD" } }); // S repays the receivable
    expect(await lockEarnedRates(s.w.db, s.w.settlements, log)).toBe(1); // S locked USD->TUSD
    const b = (await balance()).find((x: Record<string, string>) => x.asset === "USD");
    expect(b.payable_now).toBe("0"); // nothing unpaid
    // yet S's TUSD lock is open for later TUSD earnings, at S's rate
    expect(open(await locks())).toBe(0n);
  }, 120_000);
});
