import { afterAll, beforeAll, expect } from "vitest";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import type { Asset } from "../../src/domain/assets.js";
import { createLogger } from "../../src/log.js";
import { createAsset } from "../../src/services/create-asset.js";
import { lockEarnedRates } from "../../src/services/lock-rates.js";
import { getPayout } from "../../src/services/payouts.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { ago } from "./clock.js";
import { fundingWorld, manualRate, USD, type FundingWorld } from "./funding-world.js";
import { expectStatus } from "./http.js";

type Row = Record<string, string>;

/**
 * A funding world whose marketplace m prices in USD and locks the rate at earning, operator o paid
 * all in ETH, and rates of finance's (1 TUSD = 1 USD, 1 ETH = 3000 USD, a minute old), made before
 * the file's tests (beforeAll) and closed after them. For the rate-lock tests (docs/settlement.md,
 * "Rate policy").
 */
export function rateLockWorld() {
  let s: FundingWorld | undefined;
  const assets: { usd?: Asset; eth?: Asset; tusd?: Asset } = {};
  const log = createLogger("silent");
  beforeAll(async () => {
    s = await fundingWorld();
    await createAsset(s.w.db, { code: "USD", scale: 6, settlement: { kind: "offchain" } });
    for (const code of ["USD", "ETH", "TUSD"] as const) assets[code.toLowerCase() as "usd" | "eth" | "tusd"] = (await getAssetByCode(s.w.db, code))!;
    await manualRate(s.w.db, assets.tusd!, assets.usd!, 1n, 1n, ago(60_000));
    await manualRate(s.w.db, assets.eth!, assets.usd!, 3000n, 1n, ago(60_000));
    expectStatus(await s.api.call("PUT", "/v1/marketplaces/m/pricing-currency", { body: { asset: "USD", rate_policy: "at_earning" } }), 200);
    expectStatus(await s.api.call("PUT", "/v1/operators/o/payout-preferences/USD", { key: s.keys.o, body: { splits: [{ asset: "ETH", bps: 10_000 }] } }), 200);
  }, 120_000);
  afterAll(async () => s?.close());
  const world = () => s!;
  return {
    get s() {
      return world();
    },
    get usd() {
      return assets.usd!;
    },
    get eth() {
      return assets.eth!;
    },
    get tusd() {
      return assets.tusd!;
    },
    log,
    /** A rate of finance's, observed now unless told. */
    rate: (base: Asset, quote: Asset, num: bigint, den: bigint, observedAt?: Date) => manualRate(world().w.db, base, quote, num, den, observedAt),
    /** o earns 89 USD (a 100 USD record for `customer`, 11% fees) in m. */
    earn: (customer = "c") => world().usage("o", customer, 100n * USD, { extra: { asset: "USD" } }),
    /** m claims a 100 USD deposit for `customer`: no money in. */
    claimed: async (customer = "d") =>
      expectStatus(
        await world().api.call("POST", `/v1/customers/${customer}/deposits`, {
          key: world().keys.market,
          body: { asset: "USD", amount: (100n * USD).toString() },
        }),
        201,
      ),
    /** One pass of the lock worker: how many locks it made. */
    lock: () => lockEarnedRates(world().w.db, world().w.settlements, log),
    /** o is paid `amount` USD in USD (its preference must say USD): requested, then marked paid by finance. */
    async paidInUsd(amount: bigint): Promise<void> {
      const w = world();
      const p = expectStatus(await w.api.call("POST", "/v1/payouts", { key: w.keys.o, body: { asset: "USD", amount: amount.toString() } }), 201).body;
      expectStatus(await w.api.call("POST", `/v1/payouts/${p.id}/mark-paid`, { key: w.keys.finance, body: { reference: `SEPA-${p.id}` } }), 200);
    },
    /** Every rate lock, as finance sees them. */
    locks: async () => expectStatus(await world().api.call("GET", "/v1/rate-locks", { key: world().keys.finance }), 200).body.data as Row[],
    /** What is left open of these locks. */
    open: (rows: Row[]) => rows.reduce((t, l) => t + BigInt(l.amount!) - BigInt(l.consumed!) - BigInt(l.released!), 0n),
    /** Money received in USD for a customer of m: finance records it, a second key approves. */
    async receive(customer: string, amount: bigint, reference: string): Promise<void> {
      const r = expectStatus(
        await world().api.call("POST", "/v1/marketplaces/m/receipts", {
          key: world().keys.finance,
          body: { asset: "USD", amount: amount.toString(), reference, customer_id: customer },
        }),
        201,
      ).body;
      expectStatus(await world().approve(r.id, world().keys.finance2), 200);
    },
    /** m settles `amount` USD of what it claimed (a receipt to its deposit clearing): finance records it, a second key approves. */
    async settle(amount: bigint, reference = "m-settle"): Promise<void> {
      const w = world();
      const r = expectStatus(
        await w.api.call("POST", "/v1/marketplaces/m/receipts", { key: w.keys.finance, body: { asset: "USD", amount: amount.toString(), reference } }),
        201,
      ).body;
      expectStatus(await w.approve(r.id, w.keys.finance2), 200);
    },
    /** o's payout of `amount` USD, converted by the worker: what its part in ETH (or the other asset) is. */
    async payOut(amount: bigint): Promise<bigint> {
      const w = world();
      const payout = expectStatus(await w.api.call("POST", "/v1/payouts", { key: w.keys.o, body: { asset: "USD", amount: amount.toString() } }), 201).body;
      await new PayoutWorker(w.w.db, w.w.settlements, { log }).convert();
      expect((await getPayout(w.w.db, payout.id))!.status).toBe("converted");
      const [child] = await w.w.db.query<{ amount: string }>("select amount::text from payouts where parent_payout_id = $1", [payout.id]);
      return BigInt(child!.amount);
    },
    /** m reverses one of its usage records. */
    reverse: async (id: string) =>
      expectStatus(await world().api.call("POST", `/v1/usage/${id}/reverse`, { key: world().keys.market, body: { reason: "test job" } }), 201),
    /** o's payout preference for USD earnings: all in `asset`. */
    preference: async (asset: string) =>
      expectStatus(
        await world().api.call("PUT", "/v1/operators/o/payout-preferences/USD", { key: world().keys.o, body: { splits: [{ asset, bps: 10_000 }] } }),
        200,
      ),
  };
}

/** A marketplace `id` pricing in USD under `policy`, o selling through it (invited with `key`, accepted), customer `cust` (prepaid, but for `b`) with `funded` USD received. */
export async function joinMarketplace(s: FundingWorld, id: string, key: string, policy: "at_payout" | "at_earning", cust: string, funded: bigint) {
  expectStatus(await s.api.call("PUT", `/v1/marketplaces/${id}/pricing-currency`, { body: { asset: "USD", rate_policy: policy } }), 200);
  expectStatus(await s.api.call("POST", "/v1/operators", { key, body: { id: "o", name: "o" } }), 202);
  expectStatus(await s.api.call("POST", `/v1/operators/o/invitations/${id}/accept`, { key: s.keys.o, body: {} }), 200);
  if (id !== "b") expectStatus(await s.api.call("POST", "/v1/customers", { key, body: { id: cust, billing: "prepaid" } }), 201);
  if (funded > 0n) {
    const r = expectStatus(
      await s.api.call("POST", `/v1/marketplaces/${id}/receipts`, {
        key: s.keys.finance,
        body: { asset: "USD", amount: funded.toString(), reference: `${id}-${cust}`, customer_id: cust },
      }),
      201,
    ).body;
    expectStatus(await s.approve(r.id, s.keys.finance2), 200);
  }
}
