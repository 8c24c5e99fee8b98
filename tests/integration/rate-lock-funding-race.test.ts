import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import type { Asset } from "../../src/domain/assets.js";
import { createLogger } from "../../src/log.js";
import { createAsset } from "../../src/services/create-asset.js";
import { lockEarnedRates } from "../../src/services/lock-rates.js";
import { ago } from "../support/clock.js";
import { fundingWorld, manualRate, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";

/**
 * Funding is judged under the marketplace's funding lock, in the transaction that takes the records:
 * usage posted while the judgment runs (unfunded: a claimed deposit) waits for the pass and is not
 * among the records taken. The hook posts it right after the judgment (when the judgment ran before
 * the take, without the lock, that usage was taken and locked).
 */
const hook: { after?: () => Promise<void> } = {};
vi.mock("../../src/services/funding.js", async (orig) => {
  const m = await orig<typeof import("../../src/services/funding.js")>();
  return {
    ...m,
    unfundedNets: async (...args: Parameters<typeof m.unfundedNets>) => {
      const r = await m.unfundedNets(...args);
      const h = hook.after;
      if (h) {
        hook.after = undefined;
        await h();
      }
      return r;
    },
  };
});

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
  it("even when unfunded usage arrives between the funding check and the take", async () => {
    expectStatus(await s.api.call("POST", "/v1/customers/d/deposits", { key: s.keys.market, body: { asset: "USD", amount: (1_000n * USD).toString() } }), 201);
    // a funded record for o2 (money received for c) so that the group is queued and not awaiting funds
    const r = expectStatus(
      await s.api.call("POST", "/v1/marketplaces/m/receipts", {
        key: s.keys.finance,
        body: { asset: "USD", amount: (1n * USD).toString(), reference: "w", customer_id: "c" },
      }),
      201,
    ).body;
    expectStatus(await s.approve(r.id, s.keys.finance2), 200);
    await s.usage("o2", "c", 1n * USD, { extra: { asset: "USD" } });
    // right after the worker judged o2's records, the marketplace posts 1,000 USD of unfunded usage:
    // it waits for the pass (the walk holds the marketplace's funding lock) and is written after it
    let late: Promise<unknown> | undefined;
    hook.after = async () => {
      late = s.usage("o2", "d", 1_000n * USD, { extra: { asset: "USD" } });
      await new Promise((res) => setTimeout(res, 200));
    };
    await lockEarnedRates(s.w.db, s.w.settlements, log);
    expect(late).toBeDefined();
    await late;
    const mine = (await locks()).filter((l) => l.operator_id === "o2");
    // expected: only the funded 0.89 USD locked (or nothing); the unfunded 890 USD stays queued
    expect(mine.reduce((t, l) => t + BigInt(l.amount!), 0n)).toBeLessThanOrEqual(890_000n);
  }, 120_000);
});
