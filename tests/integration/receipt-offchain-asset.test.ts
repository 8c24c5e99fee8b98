import { parseEther, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { depositAddressMessage } from "../../src/domain/payouts.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { fundingWorld, payVault, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";

let world: FundingWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/**
 * A marketplace priced in an off-chain unit (USD) settles what it owes in that unit, so a payment
 * it makes on chain in a token is recorded as a USD receipt naming the transaction. A transaction
 * carries no off-chain unit: such a receipt stands for a token the transaction paid into the
 * vault. It was judged per asset, as if USD and TUSD were two payments in one transaction: the
 * marketplace paid 1,000 TUSD from a wallet it had registered as its customer's deposit address,
 * the scanner credited the TUSD to that customer, and the USD receipt of the same payment was
 * recorded as well. One payment funded two operators' earnings, in two assets.
 */
async function setup(): Promise<{ s: FundingWorld; x: PrivateKeyAccount }> {
  const s = (world = await fundingWorld());
  expectStatus(await s.api.call("POST", "/v1/assets", { body: { code: "USD", scale: 6, settlement: { kind: "offchain" } } }), 201);
  // Claimed deposits spent on usage: o earns on customer c in USD, o2 on customer d in TUSD; nothing received yet.
  expectStatus(await s.api.call("POST", "/v1/customers/c/deposits", { key: s.keys.market, body: { asset: "USD", amount: (1_000n * USD).toString() } }), 201);
  await s.deposit("d", 1_000n * USD);
  await s.usage("o", "c", 1_000n * USD, { extra: { asset: "USD" } });
  await s.usage("o2", "d", 1_000n * USD);
  // The marketplace's wallet x, registered (with its signature) as customer d's deposit address.
  const x = privateKeyToAccount(generatePrivateKey());
  await s.w.chain.test.setBalance({ address: x.address, value: parseEther("1") });
  const signature = await x.signMessage({ message: depositAddressMessage({ marketplaceId: "m", customerId: "d", chainId: 31337n, address: x.address }) });
  expectStatus(
    await s.api.call("POST", "/v1/customers/d/deposit-addresses", { key: s.keys.market, body: { chain_id: 31337, address: x.address, signature } }),
    201,
  );
  return { s, x };
}

/** The USD receipt of the marketplace's payment: proposed by finance (its answer). */
const usdReceipt = (s: FundingWorld, hash: Hex) =>
  s.api.call("POST", "/v1/marketplaces/m/receipts", {
    key: s.keys.finance,
    body: { asset: "USD", amount: (1_000n * USD).toString(), reference: `settlement paid on chain, tx ${hash}` },
  });

/** What o (USD) and o2 (TUSD) may be paid now, in smallest units of either (both have 6 decimals). */
async function payableNow(s: FundingWorld): Promise<bigint> {
  let total = 0n;
  for (const o of ["o", "o2"]) {
    const rows = expectStatus(await s.api.call("GET", `/v1/operators/${o}/balances`, { key: s.keys[o] }), 200).body.data as { payable_now: string }[];
    for (const r of rows) total += BigInt(r.payable_now);
  }
  return total;
}

describe("a receipt in an off-chain unit naming an on-chain payment", () => {
  it("keeps the scanner from crediting the token that payment carried, while it stands", async () => {
    const { s, x } = await setup();
    const hash = await payVault(s, x, 1_000n * USD);
    const proposal = expectStatus(await usdReceipt(s, hash), 201).body;
    expectStatus(await s.approve(proposal.id, s.keys.finance2), 200);
    await s.w.worker().tick();
    expect(await s.w.db.query("select tx_hash from chain_deposits")).toEqual([]);
    // 1,000 came in once: 890 of earnings are payable (o's, in USD), not twice that.
    expect(await payableNow(s)).toBe(890n * USD);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  }, 120_000);

  it("is refused once the scanner credited the payment to a customer", async () => {
    const { s, x } = await setup();
    const hash = await payVault(s, x, 1_000n * USD);
    await s.w.worker().tick();
    expect(await s.w.db.query("select customer_id from chain_deposits")).toEqual([{ customer_id: "d" }]);
    const r = await usdReceipt(s, hash);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("receipt_exists");
    expect(await payableNow(s)).toBe(890n * USD);
  }, 120_000);

  it("rejected, gives the payment back to the scanner, once", async () => {
    const { s, x } = await setup();
    const hash = await payVault(s, x, 1_000n * USD);
    const proposal = expectStatus(await usdReceipt(s, hash), 201).body;
    await s.w.worker().tick();
    expect(await s.w.db.query("select tx_hash from chain_deposits")).toEqual([]);
    expectStatus(await s.api.call("POST", `/v1/proposals/${proposal.id}/reject`, { key: s.keys.finance2, body: { reason: "not a settlement" } }), 200);
    await s.w.worker().tick();
    await s.w.worker().tick();
    expect(await s.w.db.query("select tx_hash, customer_id from chain_deposits")).toEqual([{ tx_hash: hash.toLowerCase(), customer_id: "d" }]);
    expect(await payableNow(s)).toBe(890n * USD);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  }, 120_000);
});
