import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeFunctionData } from "viem";
import { chainSettingsFor, deployPriceFeed, deployTestToken, setPriceFeedBroken, updatePriceFeed } from "../../scripts/anvil-chain.js";
import { loadChains } from "../../src/chain/config.js";
import { Settlements } from "../../src/chain/settlement.js";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import { insertRate } from "../../src/db/queries/conversions.js";
import { uuidv7 } from "../../src/domain/ids.js";
import { createAsset } from "../../src/services/create-asset.js";
import { setPayoutPreference } from "../../src/services/payout-preferences.js";
import { createPayout, getPayout, type Payout } from "../../src/services/payouts.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { parseEther } from "viem";
import { TestStablecoin, TestToken } from "../../contracts/artifacts.js";
import { depositAddressMessage } from "../../src/domain/payouts.js";
import { registerDepositAddress } from "../../src/services/chain-deposits.js";
import { createCustomer, createMarketplace } from "../../src/services/marketplaces.js";
import { setMarketplacePricing } from "../../src/db/queries/conversions.js";
import { marketplaceFundingTotals } from "../../src/db/queries/funding.js";
import { conversionReport } from "../../src/services/conversion-reports.js";
import { formatRate } from "../../src/domain/conversion.js";
import { PayoutWorker } from "../../src/workers/payout-worker.js";
import { createLogger } from "../../src/log.js";
import { testClock } from "../support/clock.js";
import { payoutWorld, type PayoutWorld } from "../support/payout-world.js";

/**
 * Hybrid settlement on a local chain (docs/settlement.md): earnings in USD (off-chain, scale 6)
 * paid in the test stablecoin, in native ETH, and 70/30 in the stablecoin and an 18-decimal project
 * token, at rates read from on-chain price feeds (AggregatorV3Interface) when the payout is paid.
 */
let w: PayoutWorld;
let settlements: Settlements;
let worker: PayoutWorker;
const feeds: Record<string, `0x${string}`> = {};
const seconds = (d: Date) => BigInt(Math.floor(d.getTime() / 1000));
const setFeed = (pair: string, answer: bigint, at = testClock.now()) =>
  updatePriceFeed(w.chain.deployerWallet, w.chain.public, feeds[pair]!, answer, seconds(at));

beforeAll(async () => {
  w = await payoutWorld();
  const net = await deployTestToken(w.chain.deployerWallet, w.chain.public, { name: "Network token", symbol: "NET", decimals: 18 });
  await w.chain.send({ to: net, data: encodeFunctionData({ abi: TestToken.abi, functionName: "mint", args: [w.chain.vault, 10n ** 24n] }) });
  await createAsset(w.db, { code: "NET", scale: 18, settlement: { kind: "erc20", chainId: 31337, tokenAddress: net } });
  await createAsset(w.db, { code: "USD", scale: 6, settlement: { kind: "offchain" } });
  for (const [pair, answer] of [
    ["NET/USD", 250_000_000n],
    ["ETH/USD", 300_000_000_000n],
    ["TUSD/USD", 100_000_000n],
  ] as const) {
    feeds[pair] = await deployPriceFeed(w.chain.deployerWallet, w.chain.public, { decimals: 8, description: pair, answer });
    await setFeed(pair, answer);
  }
  const price_feeds = Object.entries(feeds).map(([pair, address]) => ({ base: pair.split("/")[0], quote: "USD", address }));
  settlements = new Settlements(loadChains({ CHAINS: JSON.stringify([chainSettingsFor(w.chain, { price_feeds })]) }, w.env));
  worker = new PayoutWorker(w.db, settlements, { log: createLogger("silent") });
}, 60_000);
afterAll(async () => {
  await w?.close();
});

async function operatorPaidIn(id: string, usd: bigint, splits: { asset: string; bps: number }[]) {
  const op = await w.operator(id, { USD: usd });
  await setPayoutPreference(w.db, settlements, { now: testClock.now(), by: "test-key", requestId: null, operatorId: id, asset: "USD", splits });
  return op;
}

const request = (operatorId: string, amount: bigint, key = `${operatorId}:${amount}:${Math.random()}`) =>
  createPayout(w.db, settlements, { operatorId, asset: "USD", amount, trigger: "request", requestedBy: "test-key", idempotencyKey: key }).then((r) => r.payout);

async function childrenOf(parent: string): Promise<Payout[]> {
  const rows = await w.db.query<{ id: string }>("select id from payouts where parent_payout_id = $1 order by asset_id", [parent]);
  return Promise.all(rows.map(async (r) => (await getPayout(w.db, r.id))!));
}

async function convertAndPay(parent: Payout): Promise<Payout[]> {
  await worker.convert();
  expect((await getPayout(w.db, parent.id))!.status).toBe("converted");
  const children = await childrenOf(parent.id);
  return w.drive(
    children.map((c) => c.id),
    [worker],
  );
}

describe("hybrid settlement: priced in USD, paid in the stablecoin, native ETH or the project token", () => {
  it("pays one operator in the stablecoin, one in ETH and one 70/30 in the stablecoin and NET, at the feeds' rates", async () => {
    const a = await operatorPaidIn("hy-a", 100_000_000n, [{ asset: "TUSD", bps: 10_000 }]);
    const b = await operatorPaidIn("hy-b", 100_000_000n, [{ asset: "ETH", bps: 10_000 }]);
    const c = await operatorPaidIn("hy-c", 100_000_000n, [
      { asset: "TUSD", bps: 7_000 },
      { asset: "NET", bps: 3_000 },
    ]);
    const pa = await request("hy-a", 30_000_000n); // 30 USD
    const pb = await request("hy-b", 30_000_000n);
    const pc = await request("hy-c", 10_000_001n); // 10.000001 USD: the split's rounding shows
    expect([pa.settlement, pb.settlement, pc.settlement]).toEqual(["convert", "convert", "convert"]);
    expect(pc.splits!.map((s) => [s.asset, s.bps])).toEqual([
      ["TUSD", 7000],
      ["NET", 3000],
    ]);
    await worker.convert();
    for (const p of [pa, pb, pc]) expect((await getPayout(w.db, p.id))!.status).toBe("converted");
    const [ca, cb, cc] = await Promise.all([childrenOf(pa.id), childrenOf(pb.id), childrenOf(pc.id)]);
    const paid = await w.drive(
      [...ca!, ...cb!, ...cc!].map((p) => p.id),
      [worker],
    );
    expect(paid.every((p) => p.status === "confirmed")).toBe(true);
    // 30 USD at 1 USD per TUSD: 30 TUSD.
    expect(ca!.map((p) => [p.assetCode, p.amount])).toEqual([["TUSD", 30_000_000n]]);
    expect(await w.chain.tokenBalance(a.address)).toBe(30_000_000n);
    // 30 USD at 3000 USD per ETH: 0.01 ETH.
    expect(cb!.map((p) => [p.assetCode, p.amount])).toEqual([["ETH", 10n ** 16n]]);
    expect(await w.chain.nativeBalance(b.address)).toBe(10n ** 16n);
    // 10.000001 USD: 7.000001 (the split's leftover unit goes to the first part) in TUSD, 3 USD at 2.5 = 1.2 NET.
    const byAsset = Object.fromEntries(cc!.map((p) => [p.assetCode, p.amount]));
    expect(byAsset).toEqual({ TUSD: 7_000_001n, NET: 1_200_000_000_000_000_000n });
    expect(await w.chain.tokenBalance(c.address)).toBe(7_000_001n);
    // The operators' USD payables: what was asked for left them, nothing else.
    expect((await w.balance("operator:hy-a:payable", "USD")).debits).toBe(30_000_000n);
    expect((await w.balance("operator:hy-c:payable", "USD")).debits).toBe(10_000_001n);
    // The platform's conversion accounts: USD in, tokens out.
    expect(await w.balance("conversion:NET", "USD")).toMatchObject({ credits: 3_000_000n });
    expect(await w.balance("conversion:USD", "NET")).toMatchObject({ debits: 1_200_000_000_000_000_000n });
  }, 120_000);

  it("converts at the rate when the payout is paid, not when it was requested", async () => {
    await operatorPaidIn("hy-rate", 50_000_000n, [{ asset: "NET", bps: 10_000 }]);
    const p = await request("hy-rate", 10_000_000n); // 10 USD
    await setFeed("NET/USD", 200_000_000n); // NET falls to 2.00 USD before the worker converts
    const [child] = await convertAndPay(p);
    expect(child!.amount).toBe(5n * 10n ** 18n); // 10 / 2.00
    const [row] = await w.db.query<{ rate_num: string; rate_den: string; source: string }>(
      "select c.rate_num::text, c.rate_den::text, r.source from conversions c join rates r on r.id = c.rate_id where c.payout_id = $1",
      [p.id],
    );
    expect(row).toEqual({ rate_num: "1", rate_den: "2", source: "feed" });
    await setFeed("NET/USD", 250_000_000n);
  }, 60_000);

  it("waits, saying why, while the feed is stale, reverts, or disagrees with finance's rate; nothing is converted", async () => {
    await operatorPaidIn("hy-wait", 50_000_000n, [{ asset: "NET", bps: 10_000 }]);
    const p = await request("hy-wait", 5_000_000n);
    await setFeed("NET/USD", 250_000_000n, new Date(testClock.now().getTime() - 2 * 3_600_000));
    await worker.convert();
    let now = (await getPayout(w.db, p.id))!;
    expect(now.status).toBe("pending");
    expect(now.note).toMatch(/waiting to convert: no rate for USD→NET observed within the last 3600 s: the latest is stale: feed rate 2\.5 USD\/NET/);

    await setFeed("NET/USD", 250_000_000n);
    await setPriceFeedBroken(w.chain.deployerWallet, w.chain.public, feeds["NET/USD"]!, true);
    await worker.convert();
    now = (await getPayout(w.db, p.id))!;
    expect(now.status).toBe("pending");
    expect(now.note).toMatch(/the price feed gave no price .*FeedBroken/);
    await setPriceFeedBroken(w.chain.deployerWallet, w.chain.public, feeds["NET/USD"]!, false);

    // Finance's approved rate (2.60) is 4% from the feed's (2.50): more than the bound of 100 bps.
    const [net, usd] = [(await getAssetByCode(w.db, "NET"))!, (await getAssetByCode(w.db, "USD"))!];
    await insertRate(w.db, {
      id: uuidv7(),
      baseAssetId: net.id,
      quoteAssetId: usd.id,
      num: 13n,
      den: 5n,
      observedAt: testClock.now(),
      source: "manual",
      sourceRef: uuidv7(),
      recordedAt: testClock.now(),
    });
    await worker.convert();
    now = (await getPayout(w.db, p.id))!;
    expect(now.status).toBe("pending");
    expect(now.note).toMatch(/disagree by 400 bps, more than the bound of 100 bps/);
    expect(await childrenOf(p.id)).toEqual([]);

    // Within the bound (2.51), the feed's rate is used.
    await insertRate(w.db, {
      id: uuidv7(),
      baseAssetId: net.id,
      quoteAssetId: usd.id,
      num: 251n,
      den: 100n,
      observedAt: testClock.now(),
      source: "manual",
      sourceRef: uuidv7(),
      recordedAt: testClock.now(),
    });
    const [child] = await convertAndPay(p);
    expect(child!.amount).toBe(2n * 10n ** 18n); // 5 USD / 2.50
  }, 60_000);

  it("converts a customer's stablecoin deposit into its marketplace's pricing currency once received, and counts it as received there", async () => {
    await createMarketplace(w.db, { id: "mk-usd", name: "priced in USD" });
    await setMarketplacePricing(w.db, "mk-usd", (await getAssetByCode(w.db, "USD"))!.id, testClock.now());
    await createCustomer(w.db, { marketplaceId: "mk-usd", id: "buyer", billing: "prepaid" });
    const payer = privateKeyToAccount(generatePrivateKey());
    await w.chain.test.setBalance({ address: payer.address, value: parseEther("1") });
    await w.chain.send({ to: w.chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [payer.address, 5_000_000n] }) });
    const message = depositAddressMessage({ marketplaceId: "mk-usd", customerId: "buyer", chainId: 31337n, address: payer.address });
    await registerDepositAddress(w.db, settlements, {
      marketplaceId: "mk-usd",
      customerId: "buyer",
      chainId: 31337n,
      address: payer.address,
      signature: await payer.signMessage({ message }),
      createdBy: "test",
    });
    const pay = (amount: bigint) =>
      w.chain.wallet(payer).writeContract({
        address: w.chain.token,
        abi: TestStablecoin.abi,
        functionName: "transfer",
        args: [w.chain.vault, amount],
        chain: w.chain.deployerWallet.chain,
        account: payer,
      });
    const balanceOf = async (asset: string) =>
      (
        await w.db.query<{ c: string; d: string }>(
          `select b.credits_posted::text as c, b.debits_posted::text as d from accounts a join account_balances b on b.account_id = a.id
            join assets s on s.id = a.asset_id where a.marketplace_id = 'mk-usd' and a.ref = 'customer:buyer' and s.code = $1`,
          [asset],
        )
      )[0];
    // TUSD at 0.999 USD: 4 TUSD is 3.996 USD.
    await setFeed("TUSD/USD", 99_900_000n);
    await pay(4_000_000n);
    await w.chain.test.mine({ blocks: 2 });
    await worker.tick();
    expect(await balanceOf("TUSD")).toEqual({ c: "4000000", d: "4000000" });
    expect(await balanceOf("USD")).toEqual({ c: "3996000", d: "0" });
    expect(await marketplaceFundingTotals(w.db, "mk-usd", (await getAssetByCode(w.db, "USD"))!.id)).toMatchObject({ received: "3996000" });
    // A stale rate: the next deposit waits in TUSD, credited but not converted.
    await setFeed("TUSD/USD", 100_000_000n, new Date(testClock.now().getTime() - 2 * 3_600_000));
    await pay(1_000_000n);
    await w.chain.test.mine({ blocks: 2 });
    await worker.tick();
    expect(await balanceOf("TUSD")).toEqual({ c: "5000000", d: "4000000" });
    await setFeed("TUSD/USD", 100_000_000n);
    await worker.tick();
    expect(await balanceOf("USD")).toEqual({ c: "4996000", d: "0" });
    // Ticking again converts nothing more: only money received, once.
    await worker.tick();
    expect(await balanceOf("TUSD")).toEqual({ c: "5000000", d: "5000000" });
    expect(await w.db.query("select * from conversions where kind = 'deposit'")).toHaveLength(2);
  }, 60_000);

  it("reports what was converted at which rates, the platform's position in each token and its gains or losses", async () => {
    const now = testClock.now();
    const report = await conversionReport(w.db, new Date(now.getTime() - 86_400_000), new Date(now.getTime() + 86_400_000), now);
    const net = report.pairs.find((p) => p.from.code === "USD" && p.to.code === "NET")!;
    // 3 USD at 2.5, 10 USD at 2.0 and 5 USD at 2.5: 8.2 NET for 18 USD.
    expect(net).toMatchObject({ conversions: 3, used: 18_000_000n, toAmount: 8_200_000_000_000_000_000n, remainder: 0n, bySource: { feed: 3, manual: 0 } });
    expect(net.averageRate).toBe(formatRate({ num: 82n, den: 180n }));
    const position = report.positions.find((p) => p.asset.code === "NET")!;
    expect(position.position).toBe(-8_200_000_000_000_000_000n);
    expect(position.latestRate).toBe("2.51"); // finance's rate, observed after the feed's last round
    // Marked at each conversion, the book is the position at the last rate used: 8.2 NET at 2.5 USD.
    expect(position.book).toBe(20_500_000n);
    expect(position.valueAtLatest).toBe(-20_582_000n);
    expect(position.unrealised).toBe(-82_000n);
    // The NET marks: 1.2 NET from 2.5 to 2.0 (a gain of 0.60 USD), then 8.2 NET from 2.0 to 2.5 (a loss of 3.10 USD);
    // the TUSD marks of the deposits: 37.000001 TUSD given out at 1.00, marked to 0.999 and back (a gain of 0.004 USD).
    expect(report.gainsLosses.find((g) => g.asset === "USD")!.net).toBe(-2_500_000n + 4_000n);
  });

  it("keeps the books: every asset balances and every conversion agrees with its rate; verify finds one that does not", async () => {
    const report = await verifyLedger(w.db);
    expect(report.ok, JSON.stringify(report)).toBe(true);
    expect(Number((await w.db.query<{ n: string }>("select count(*)::text as n from conversions where rate_id is not null"))[0]!.n)).toBeGreaterThan(3);
    // A conversion recorded one unit richer than its rate gives (and than its transfer booked).
    await w.db.query(
      `insert into conversions (id, transfer_id, kind, payout_id, child_payout_id, operator_id, from_asset_id, to_asset_id, bps, part, used, remainder, to_amount, rate_num, rate_den, rate_id, revaluation, converted_at)
       select gen_random_uuid(), gen_random_uuid(), kind, payout_id, child_payout_id, operator_id, from_asset_id, to_asset_id, bps, part, used, remainder, to_amount + 1, rate_num, rate_den, rate_id, revaluation, converted_at
         from conversions where rate_id is not null limit 1`,
    );
    const broken = await verifyLedger(w.db);
    expect(broken.violations.filter((v) => v.check === "conversions").map((v) => v.detail)).toEqual([
      expect.stringMatching(/at the rate gives \d+ for \d+ \(remainder \d+\), not \d+ for/),
    ]);
  });
});
