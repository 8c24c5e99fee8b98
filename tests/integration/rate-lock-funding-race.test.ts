import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import type { Asset } from "../../src/domain/assets.js";
import { createLogger } from "../../src/log.js";
import { createAsset } from "../../src/services/create-asset.js";
import { lockEarnedRates } from "../../src/services/lock-rates.js";
import { ago } from "../support/clock.js";
import { fundingWorld, manualRate, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";

/**
 * Funding is judged under the marketplace's funding lock, in the transaction that takes the
 * records: unfunded usage (a claimed deposit) posted while a pass runs is written before the walk
 * or after the take, never in between, so it is never among the records taken. (When the judgment
 * ran before the take, without the lock, usage posted in between was taken and locked.) Each round
 * posts a funded record, then runs a pass and posts 1,000 USD of unfunded usage at once; whatever
 * the interleaving, exactly the funded records end up locked. The interleaving itself is pinned
 * down in rate-lock-funded-beside-unfunded.test.ts ("is waited for before the funding is walked").
 */
let s: FundingWorld;
let usd: Asset;
let eth: Asset;
const log = createLogger("silent");
const locks = async () => expectStatus(await s.api.call("GET", "/v1/rate-locks", { key: s.keys.finance }), 200).body.data as Array<Record<string, string>>;

beforeAll(async () => {
  s = await fundingWorld();
  await createAsset(s.w.db, { code: "USD", scale: 6, settlement: { kind: "offchain" } });
  [usd, eth] = [(await getAssetByCode(s.w.db, "USD"))!, (await getAssetByCode(s.w.db, "ETH"))!];
  await manualRate(s.w.db, eth, usd, 3000n, 1n, ago(60_000));
  expectStatus(await s.api.call("PUT", "/v1/marketplaces/m/pricing-currency", { body: { asset: "USD", rate_policy: "at_earning" } }), 200);
  expectStatus(await s.api.call("PUT", "/v1/operators/o2/payout-preferences/USD", { key: s.keys.o2, body: { splits: [{ asset: "ETH", bps: 10_000 }] } }), 200);
}, 120_000);
afterAll(async () => s?.close());

describe("only funded earnings are locked", () => {
  it("even when unfunded usage arrives while a pass runs", async () => {
    expectStatus(await s.api.call("POST", "/v1/customers/d/deposits", { key: s.keys.market, body: { asset: "USD", amount: (10_000n * USD).toString() } }), 201);
    const rounds = 5;
    for (let i = 0; i < rounds; i++) {
      // a funded record for o2 (money received for c)
      const r = expectStatus(
        await s.api.call("POST", "/v1/marketplaces/m/receipts", {
          key: s.keys.finance,
          body: { asset: "USD", amount: (1n * USD).toString(), reference: `w-${i}`, customer_id: "c" },
        }),
        201,
      ).body;
      expectStatus(await s.approve(r.id, s.keys.finance2), 200);
      await s.usage("o2", "c", 1n * USD, { extra: { asset: "USD" } });
      // a pass and 1,000 USD of unfunded usage (d's claimed deposit) at once
      await Promise.all([lockEarnedRates(s.w.db, s.w.settlements, log), s.usage("o2", "d", 1_000n * USD, { extra: { asset: "USD" } })]);
    }
    await lockEarnedRates(s.w.db, s.w.settlements, log);
    const mine = (await locks()).filter((l) => l.operator_id === "o2");
    // each funded record's 0.89 USD locked; none of the 890 USD records on the claimed deposit
    expect(mine.reduce((t, l) => t + BigInt(l.amount!), 0n)).toBe(BigInt(rounds) * 890_000n);
    const queued = await s.w.db.query<{ n: string }>("select count(*)::text as n from rate_lock_queue where operator_id = 'o2' and net = $1", [
      (890n * USD).toString(),
    ]);
    expect(queued[0]!.n).toBe(String(rounds));
  }, 120_000);
});
