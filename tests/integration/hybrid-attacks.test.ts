import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainSettingsFor, deployPriceFeed, updatePriceFeed } from "../../scripts/anvil-chain.js";
import { loadChains } from "../../src/chain/config.js";
import { Settlements } from "../../src/chain/settlement.js";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import { convertibleDeposits } from "../../src/db/queries/conversion-reports.js";
import { insertRate, setMarketplacePricing } from "../../src/db/queries/conversions.js";
import type { Asset } from "../../src/domain/assets.js";
import { uuidv7 } from "../../src/domain/ids.js";
import { createLogger } from "../../src/log.js";
import { cancelPayout } from "../../src/services/cancel-payout.js";
import { convertDeposit, convertDeposits, type JudgedDeposits } from "../../src/services/convert-deposits.js";
import { convertPayout } from "../../src/services/convert-payout.js";
import { createAsset } from "../../src/services/create-asset.js";
import { conversionReport } from "../../src/services/conversion-reports.js";
import { paidBeyondFunds } from "../../src/services/funding.js";
import { setPayoutPreference } from "../../src/services/payout-preferences.js";
import { createPayout, getPayout } from "../../src/services/payouts.js";
import type { ChosenRate } from "../../src/services/rates.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { fundingWorld, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";

/**
 * Attacks on hybrid settlement (docs/settlement.md). The world of tests/support/funding-world.ts
 * (itself on payout-world.ts and a local anvil chain): marketplaces m and b, operators o, o2 and
 * honest, TUSD on chain; here also USD (off-chain, scale 6) as a pricing currency. TUSD and USD
 * both have 6 decimals, so `USD` (10^6) is one whole unit of either.
 */
let s: FundingWorld;
let tusd: Asset;
let usd: Asset;
const log = createLogger("silent");
const now = () => s.w.db.clock.now();

async function manualRate(base: Asset, quote: Asset, num: bigint, den: bigint): Promise<ChosenRate> {
  const id = uuidv7();
  await insertRate(s.w.db, {
    id,
    baseAssetId: base.id,
    quoteAssetId: quote.id,
    num,
    den,
    observedAt: now(),
    source: "manual",
    sourceRef: id,
    recordedAt: now(),
  });
  return { rate: { num, den }, rateId: id, source: "manual", observedAt: now() };
}
const customer = async (market: string, id: string) =>
  expectStatus(await s.api.call("POST", "/v1/customers", { key: market === "m" ? s.keys.market : s.keys.b, body: { id, billing: "prepaid" } }), 201);
/** Credits and debits of a customer's account in an asset. */
async function customerBalance(market: string, id: string, asset: Asset) {
  const [r] = await s.w.db.query<{ c: string; d: string }>(
    `select b.credits_posted::text as c, b.debits_posted::text as d from accounts a join account_balances b on b.account_id = a.id
      where a.marketplace_id = $1 and a.ref = $2 and a.asset_id = $3`,
    [market, `customer:${id}`, asset.id],
  );
  return { credits: BigInt(r?.c ?? 0), debits: BigInt(r?.d ?? 0) };
}
const accountOf = async (market: string, id: string, asset: Asset) =>
  (
    await s.w.db.query<{ id: string }>("select id from accounts where marketplace_id = $1 and ref = $2 and asset_id = $3", [market, `customer:${id}`, asset.id])
  )[0]?.id;
const usedFrom = async (customerId: string) =>
  BigInt(
    (
      await s.w.db.query<{ u: string }>("select coalesce(sum(used), 0)::text as u from conversions where kind = 'deposit' and customer_id = $1", [customerId])
    )[0]!.u,
  );

beforeAll(async () => {
  s = await fundingWorld();
  await createAsset(s.w.db, { code: "USD", scale: 6, settlement: { kind: "offchain" } });
  [tusd, usd] = [(await getAssetByCode(s.w.db, "TUSD"))!, (await getAssetByCode(s.w.db, "USD"))!];
  await manualRate(tusd, usd, 1n, 1n); // 1 TUSD = 1 USD, entered by finance
  await manualRate((await getAssetByCode(s.w.db, "ETH"))!, usd, 3000n, 1n);
}, 120_000);
afterAll(async () => {
  await s?.close();
});

describe("hybrid settlement under attack", () => {
  it("holds: two workers convert a convert payout once, a cancelled one never, and a retry with a stale copy converts nothing", async () => {
    await s.w.credit("honest", "USD", 50n * USD);
    await setPayoutPreference(s.w.db, s.w.settlements, {
      now: now(),
      by: "k",
      requestId: null,
      operatorId: "honest",
      asset: "USD",
      splits: [{ asset: "ETH", bps: 10_000 }],
    });
    const ask = async (key: string) =>
      (
        await createPayout(s.w.db, s.w.settlements, {
          operatorId: "honest",
          asset: "USD",
          amount: 10_000_001n,
          trigger: "request",
          requestedBy: "k",
          idempotencyKey: key,
        })
      ).payout;
    const [p1, p2] = [await ask("h-1"), await ask("h-2")];
    await cancelPayout(s.w.db, { id: p2.id, by: "test" });
    const eth = (await getAssetByCode(s.w.db, "ETH"))!;
    const rates = new Map([[eth.id, await manualRate(eth, usd, 3000n, 1n)]]);
    const [w1, w2] = [s.w.worker(), s.w.worker()];
    // Two workers, and a third holding the cancelled payout as it was while pending.
    const [, , late] = await Promise.all([w1.convert(), w2.convert(), convertPayout(s.w.db, s.w.settlements, { payout: p2, rates })]);
    expect(late).toEqual({ converted: false, children: [] });
    expect((await getPayout(s.w.db, p1.id))!.status).toBe("converted");
    expect((await getPayout(s.w.db, p2.id))!.status).toBe("failed");
    const rows = await s.w.db.query<{ payout_id: string; part: string; used: string; remainder: string; to_amount: string }>(
      "select payout_id, part::text, used::text, remainder::text, to_amount::text from conversions where operator_id = 'honest'",
    );
    expect(rows).toHaveLength(1);
    // 10.000001 USD at 3000 USD/ETH: floor to wei; what it did not use stays with the operator in USD.
    expect(rows[0]).toMatchObject({ payout_id: p1.id, part: "10000001", to_amount: "3333333666666666", used: "10000001", remainder: "0" });
    // A retry by a worker holding the payout as it was before: nothing more.
    expect(await convertPayout(s.w.db, s.w.settlements, { payout: p1, rates })).toEqual({ converted: false, children: [] });
    expect(await s.w.balance("operator:honest:payable", "USD")).toMatchObject({ credits: 50n * USD, debits: 10_000_001n, debitsPending: 0n });
  });

  it("holds: balances from before the pricing currency stay in their asset: a claimed deposit never becomes 'received' by conversion", async () => {
    await s.settle(100n * USD, "wire for c", "c"); // money received for customer c: 100 TUSD
    await s.usage("o", "c", 100n * USD); // spent on o's usage: o earns 89 TUSD, funded
    expectStatus(await s.payout("o", 89n * USD), 201); // o is paid
    await s.deposit("c", 100n * USD); // the marketplace claims a deposit for c: its debt, not money received
    await setMarketplacePricing(s.w.db, "m", usd.id, s.w.db.clock.now()); // m moves to USD pricing (the admin route does this)
    await convertDeposits(s.w.db, s.w.settlements, log);
    // Nothing received after the change: nothing is converted, and the claimed 100 TUSD stays in TUSD.
    expect(await usedFrom("c")).toBe(0n);
    expect(await customerBalance("m", "c", usd)).toEqual({ credits: 0n, debits: 0n });
    // So usage in USD finds no money to charge, and o2 cannot be paid out of a claimed deposit.
    const refused = await s.api.call("POST", "/v1/usage", { key: s.keys.market, body: s.record("o2", "c", 100n * USD, { asset: "USD" }) });
    expect(refused.status).toBe(422);
    expect.soft(await paidBeyondFunds(s.w.db)).toEqual([]);
  });

  it("holds: two workers that read the same convertible balance convert it once, whatever rate each chose (the claimed part never)", async () => {
    await s.deposit("bc", 100n * USD, s.keys.b); // claimed: 100 TUSD, before b prices in USD
    await setMarketplacePricing(s.w.db, "b", usd.id, s.w.db.clock.now());
    // From then on, b's claims are in USD only.
    const claimed = await s.api.call("POST", "/v1/customers/bc/deposits", { key: s.keys.b, body: { asset: "TUSD", amount: "1" } });
    expect(claimed.status).toBe(422);
    expect(claimed.body.code).toBe("asset_mismatch");
    await s.settle(100n * USD, "wire for bc", "bc", "b"); // received: 100 TUSD
    const row = (await convertibleDeposits(s.w.db, { limit: 1000 })).find((r) => r.customer_id === "bc")!;
    expect(row.convertible).toBe((100n * USD).toString());
    // Worker A chose finance's rate r1; worker B, which read the same row, chose r2 (a newer round, a new approval).
    const [r1, r2] = [await manualRate(tusd, usd, 1n, 1n), await manualRate(tusd, usd, 1n, 1n)];
    expect(await convertDeposit(s.w.db, row, tusd, usd, r1)).toBe(true);
    expect.soft(await convertDeposit(s.w.db, row, tusd, usd, r2), "second conversion of the same money").toBe(false);
    expect.soft(await usedFrom("bc"), "TUSD converted for bc, of 100 received").toBe(100n * USD);
  });

  it("holds: a second deposit of the same amount under the same rate is converted too", async () => {
    await customer("b", "bd");
    await s.settle(100n * USD, "wire 1 for bd", "bd", "b");
    await convertDeposits(s.w.db, s.w.settlements, log);
    await s.settle(100n * USD, "wire 2 for bd", "bd", "b");
    await convertDeposits(s.w.db, s.w.settlements, log);
    expect(await customerBalance("b", "bd", tusd)).toEqual({ credits: 200n * USD, debits: 200n * USD });
  });

  it("holds: the conversion report shows a position built by deposit conversions alone, the right way round", async () => {
    const report = await conversionReport(s.w.db, new Date(now().getTime() - 86_400_000), new Date(now().getTime() + 86_400_000), now());
    expect.soft(report.positions.map((p) => `${p.asset.code} in ${p.pricing.code}`)).toContain("TUSD in USD");
    expect.soft(report.positions.map((p) => `${p.asset.code} in ${p.pricing.code}`)).not.toContain("USD in TUSD");
  });

  it("holds: a price feed answering with 255 decimals makes the payout wait with a reason; the worker goes on", async () => {
    const feed = await deployPriceFeed(s.w.chain.deployerWallet, s.w.chain.public, { decimals: 255, description: "TUSD/USD", answer: 1n });
    await updatePriceFeed(s.w.chain.deployerWallet, s.w.chain.public, feed, 1n, BigInt(Math.floor(now().getTime() / 1000)));
    const price_feeds = [{ base: "TUSD", quote: "USD", address: feed }];
    const withFeed = new Settlements(loadChains({ CHAINS: JSON.stringify([chainSettingsFor(s.w.chain, { price_feeds })]) }, s.w.env));
    await s.w.credit("o2", "USD", 10n * USD);
    await setPayoutPreference(s.w.db, withFeed, {
      now: now(),
      by: "k",
      requestId: null,
      operatorId: "o2",
      asset: "USD",
      splits: [{ asset: "TUSD", bps: 10_000 }],
    });
    const { payout } = await createPayout(s.w.db, withFeed, {
      operatorId: "o2",
      asset: "USD",
      amount: 10n * USD,
      trigger: "request",
      requestedBy: "k",
      idempotencyKey: "o2-feed",
    });
    const worker = new PayoutWorker(s.w.db, withFeed, { log });
    let thrown: unknown = null;
    await worker.convert().catch((e: unknown) => (thrown = e));
    expect.soft(String(thrown), "convert step threw").toBe("null");
    expect.soft((await getPayout(s.w.db, payout.id))!.note ?? "").toMatch(/waiting to convert/);
    // The same throw ends convertDeposits' whole pass: every other customer's money waits too.
  });

  it("holds: a feed answer that overflows (2^255 - 1, 0 decimals) makes the payout wait with a reason; nothing is converted", async () => {
    await createAsset(s.w.db, { code: "BIG", scale: 18, settlement: { kind: "offchain" } });
    const feed = await deployPriceFeed(s.w.chain.deployerWallet, s.w.chain.public, { decimals: 0, description: "USD/BIG", answer: 2n ** 255n - 1n });
    await updatePriceFeed(s.w.chain.deployerWallet, s.w.chain.public, feed, 2n ** 255n - 1n, BigInt(Math.floor(now().getTime() / 1000)));
    const price_feeds = [{ base: "USD", quote: "BIG", address: feed }]; // 1 USD = 2^255 - 1 BIG: 1 USD is more BIG units than uint256 holds
    const huge = new Settlements(loadChains({ CHAINS: JSON.stringify([chainSettingsFor(s.w.chain, { price_feeds })]) }, s.w.env));
    await setPayoutPreference(s.w.db, huge, {
      now: now(),
      by: "k",
      requestId: null,
      operatorId: "honest",
      asset: "USD",
      splits: [{ asset: "BIG", bps: 10_000 }],
    });
    const { payout } = await createPayout(s.w.db, huge, {
      operatorId: "honest",
      asset: "USD",
      amount: USD,
      trigger: "request",
      requestedBy: "k",
      idempotencyKey: "h-huge",
    });
    await new PayoutWorker(s.w.db, huge, { log }).convert();
    expect((await getPayout(s.w.db, payout.id))!).toMatchObject({
      status: "pending",
      note: expect.stringMatching(/waiting to convert: .*(overflow|2\^256|uint256|too large|at most)/i),
    });
  });

  it("holds: a deposit conversion cannot be recorded twice (funding would count its money twice)", async () => {
    expect((await verifyLedger(s.w.db)).violations.filter((v) => v.check === "conversions")).toEqual([]);
    const twice = s.w.db.query(
      `insert into conversions (id, transfer_id, kind, payout_id, child_payout_id, operator_id, from_asset_id, to_asset_id, bps, part, used, remainder, to_amount,
                                rate_num, rate_den, rate_id, revaluation, converted_at, marketplace_id, customer_id)
       select gen_random_uuid(), transfer_id, kind, payout_id, child_payout_id, operator_id, from_asset_id, to_asset_id, bps, part, used, remainder, to_amount,
              rate_num, rate_den, rate_id, revaluation, converted_at, marketplace_id, customer_id
         from conversions where kind = 'deposit' and customer_id = 'bd' limit 1`,
    );
    await expect(twice).rejects.toThrow(/conversions_transfer_pair_uq|duplicate key/);
  });

  it("holds: dust left by conversions does not keep a later customer's deposit from being converted", async () => {
    for (let i = 0; i < 12; i++) {
      await customer("b", `dust${i}`);
      await s.settle(1n, `dust wire ${i}`, `dust${i}`, "b"); // 1 unit: worth half a unit of USD at 0.5, converts to nothing
    }
    await manualRate(tusd, usd, 1n, 2n); // TUSD at 0.5 USD
    await new Promise((r) => setTimeout(r, 5));
    await customer("b", "late");
    await s.settle(100n * USD, "wire for late", "late", "b");
    // Pages of 5 accounts: the late customer is on the third page, behind 12 accounts of dust.
    for (let tick = 0; tick < 3; tick++) await convertDeposits(s.w.db, s.w.settlements, log, 5);
    // Past the first page of accounts (ordered by id), all dust that converts to 0.
    expect((await convertibleDeposits(s.w.db, { limit: 1000 })).filter((r) => r.customer_id.startsWith("dust")).length).toBe(12);
    expect(await customerBalance("b", "late", usd)).toEqual({ credits: 50n * USD, debits: 0n });
  }, 120_000);
  it("holds: money received after the pricing currency that already paid the customer's usage is not converted (a claimed balance left behind stays in its asset)", async () => {
    // A marketplace of its own, so that it has no pricing currency yet.
    const zk = await s.ownMarketplace("z");
    expectStatus(await s.api.call("POST", "/v1/operators", { key: zk, body: { id: "oz", name: "oz" } }), 201);
    const ok = await s.key("operator", "oz");
    const wallet = privateKeyToAccount(generatePrivateKey());
    const ch = expectStatus(
      await s.api.call("POST", "/v1/operators/oz/payout-address-challenges", { key: ok, body: { chain_id: 31337, address: wallet.address } }),
      201,
    ).body;
    const signature = await wallet.signMessage({ message: ch.message });
    expectStatus(
      await s.api.call("PUT", "/v1/operators/oz/payout-address", {
        key: ok,
        body: { chain_id: 31337, address: wallet.address, challenge_id: ch.id, signature },
      }),
      200,
    );
    expectStatus(await s.api.call("POST", "/v1/customers", { key: zk, body: { id: "zc", billing: "prepaid" } }), 201);
    await s.deposit("zc", 100n * USD, zk); // claimed by the marketplace: its debt, not money received
    await s.usage("oz", "zc", 100n * USD, { key: zk }); // oz earns 89 TUSD, unfunded
    await setMarketplacePricing(s.w.db, "z", usd.id, s.w.db.clock.now());
    await s.settle(100n * USD, "wire for zc", "zc", "z"); // the only money received: it funds zc's usage
    const payout = await s.api.call("POST", "/v1/payouts", { key: ok, body: { asset: "TUSD", amount: (89n * USD).toString() } });
    expectStatus(payout, 201); // oz is paid out of it
    // zc's balance in TUSD is 100 (the claim), and 100 was received since the pricing currency: but
    // that money paid the usage, so none of it is the customer's to convert.
    expect(await customerBalance("z", "zc", tusd)).toEqual({ credits: 200n * USD, debits: 100n * USD });
    const judged: JudgedDeposits = new Map();
    await convertDeposits(s.w.db, s.w.settlements, log, undefined, judged);
    expect(await usedFrom("zc")).toBe(0n);
    expect(await customerBalance("z", "zc", usd)).toEqual({ credits: 0n, debits: 0n });
    const account = (await accountOf("z", "zc", tusd))!;
    expect(judged.has(account)).toBe(true); // not judged again until something changes
    // A row read before (a worker's stale page) converts nothing either: the amount is judged again inside.
    const stale = {
      account_id: account,
      marketplace_id: "z",
      customer_id: "zc",
      billing: "prepaid" as const,
      asset_id: tusd.id,
      pricing_asset_id: usd.id,
      convertible: (100n * USD).toString(),
      state: "",
    };
    expect(await convertDeposit(s.w.db, stale, tusd, usd, await manualRate(tusd, usd, 1n, 1n))).toBe(false);
    expect(await usedFrom("zc")).toBe(0n);
    expect(await paidBeyondFunds(s.w.db)).toEqual([]);
    // Money received beyond what the usage used is the customer's: it is converted, and only it.
    await s.settle(30n * USD, "second wire for zc", "zc", "z");
    await convertDeposits(s.w.db, s.w.settlements, log, undefined, judged); // judged again: the balance changed
    expect(await usedFrom("zc")).toBe(30n * USD);
    expect(await customerBalance("z", "zc", usd)).toEqual({ credits: 30n * USD, debits: 0n });
    expect(await paidBeyondFunds(s.w.db)).toEqual([]);
    expect((await verifyLedger(s.w.db)).violations.filter((v) => v.check === "funded_payouts")).toEqual([]);
  });
  it("holds: money a hold gave back is the customer's again: converted, and only what its usage did not use", async () => {
    const zk = await s.key("marketplace", "z");
    // Received after z priced in USD, then a hold of all of it opened and closed unused: all of it converts.
    expectStatus(await s.api.call("POST", "/v1/customers", { key: zk, body: { id: "zh", billing: "prepaid" } }), 201);
    await s.settle(100n * USD, "wire for zh", "zh", "z");
    const unused = expectStatus(
      await s.api.call("POST", "/v1/holds", { key: zk, body: { customer_id: "zh", asset: "TUSD", amount: (100n * USD).toString() } }),
      201,
    ).body.id as string;
    expectStatus(await s.api.call("POST", `/v1/holds/${unused}/close`, { key: zk, body: {} }), 200);
    await convertDeposits(s.w.db, s.w.settlements, log);
    expect(await usedFrom("zh")).toBe(100n * USD);
    // Before the pricing currency: a claimed 100, a hold of 100 of which usage takes 60, closed; then
    // pricing, then 100 received. The usage used 60 of the customer's money: 40 of it converts.
    const yk = await s.ownMarketplace("y");
    expectStatus(await s.api.call("POST", "/v1/operators", { key: yk, body: { id: "oy", name: "oy" } }), 201);
    expectStatus(await s.api.call("POST", "/v1/customers", { key: yk, body: { id: "yh", billing: "prepaid" } }), 201);
    await s.deposit("yh", 100n * USD, yk);
    const h = expectStatus(await s.api.call("POST", "/v1/holds", { key: yk, body: { customer_id: "yh", asset: "TUSD", amount: (100n * USD).toString() } }), 201)
      .body.id as string;
    expectStatus(await s.api.call("POST", "/v1/usage", { key: yk, body: s.record("oy", "yh", 60n * USD, { hold_id: h }) }), 201);
    expectStatus(await s.api.call("POST", `/v1/holds/${h}/close`, { key: yk, body: {} }), 200);
    await setMarketplacePricing(s.w.db, "y", usd.id, s.w.db.clock.now());
    await s.settle(100n * USD, "wire for yh", "yh", "y");
    await convertDeposits(s.w.db, s.w.settlements, log);
    expect(await usedFrom("yh")).toBe(40n * USD);
    expect(await customerBalance("y", "yh", usd)).toEqual({ credits: 40n * USD, debits: 0n });
    expect(await paidBeyondFunds(s.w.db)).toEqual([]);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "holds: a deposit conversion waits for the marketplace's usage being written, as a payout's judgment does",
    async () => {
      const zk = await s.key("marketplace", "z");
      expectStatus(await s.api.call("POST", "/v1/customers", { key: zk, body: { id: "zd", billing: "prepaid" } }), 201);
      await s.settle(50n * USD, "wire for zd", "zd", "z");
      const [row] = (await convertibleDeposits(s.w.db, { limit: 1000 })).filter((r) => r.customer_id === "zd");
      expect(row?.convertible).toBe((50n * USD).toString());
      // Usage of z being written: its funding lock held shared by another connection.
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let held!: () => void;
      const isHeld = new Promise<void>((r) => (held = r));
      const writing = s.w.db.transaction(async (t) => {
        await t.query("select pg_advisory_xact_lock_shared(hashtextextended('usage-funding:z', 0))");
        held();
        await released;
      });
      await isHeld;
      let done = false;
      const conversion = convertDeposit(s.w.db, row!, tusd, usd, await manualRate(tusd, usd, 1n, 1n)).finally(() => (done = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(done, "converted while usage of the marketplace was being written").toBe(false);
      release();
      await writing;
      expect(await conversion).toBe(true);
      expect(await usedFrom("zd")).toBe(50n * USD);
    },
  );
});
