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
 * Groups awaiting funds keep the oldest queue rows: 400 of them (one marketplace, 400 operators it
 * creates, one unfunded record each) fill the four pages a pass looks at. The next pass starts past
 * them (src/services/lock-rates.ts, waitingGroups), so another marketplace's operator is locked.
 */
let s: FundingWorld;
const log = createLogger("silent");
const locks = async () => expectStatus(await s.api.call("GET", "/v1/rate-locks", { key: s.keys.finance }), 200).body.data as Array<Record<string, string>>;

beforeAll(async () => {
  s = await fundingWorld();
  await createAsset(s.w.db, { code: "USD", scale: 6, settlement: { kind: "offchain" } });
  const [usd, eth] = [(await getAssetByCode(s.w.db, "USD"))!, (await getAssetByCode(s.w.db, "ETH"))!] as Asset[];
  await manualRate(s.w.db, eth!, usd!, 3000n, 1n, ago(60_000));
  for (const m of ["m", "b"])
    expectStatus(await s.api.call("PUT", `/v1/marketplaces/${m}/pricing-currency`, { body: { asset: "USD", rate_policy: "at_earning" } }), 200);
  expectStatus(await s.api.call("PUT", "/v1/operators/o/payout-preferences/USD", { key: s.keys.o, body: { splits: [{ asset: "ETH", bps: 10_000 }] } }), 200);
}, 120_000);
afterAll(async () => s?.close());

describe("groups awaiting funds", () => {
  it("do not keep other marketplaces' operators from being locked", async () => {
    expectStatus(await s.api.call("POST", "/v1/customers/bc/deposits", { key: s.keys.b, body: { asset: "USD", amount: (1_000n * USD).toString() } }), 201);
    for (let i = 0; i < 400; i++) {
      expectStatus(await s.api.call("POST", "/v1/operators", { key: s.keys.b, body: { id: `x${i}`, name: `x${i}` } }), 201);
      await s.usage(`x${i}`, "bc", 1n * USD, { key: s.keys.b, extra: { asset: "USD" } });
    }
    const r = expectStatus(
      await s.api.call("POST", "/v1/marketplaces/m/receipts", {
        key: s.keys.finance,
        body: { asset: "USD", amount: (100n * USD).toString(), reference: "w", customer_id: "c" },
      }),
      201,
    ).body;
    expectStatus(await s.approve(r.id, s.keys.finance2), 200);
    await s.usage("o", "c", 100n * USD, { extra: { asset: "USD" } });
    for (let pass = 0; pass < 3; pass++) await lockEarnedRates(s.w.db, s.w.settlements, log);
    expect((await locks()).filter((l) => l.operator_id === "o")).toHaveLength(1);
  }, 600_000);
});
