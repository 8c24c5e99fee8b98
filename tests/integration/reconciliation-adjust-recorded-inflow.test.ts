import { parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { depositAddressMessage } from "../../src/domain/payouts.js";
import { ensureAccounts } from "../../src/db/ensure-accounts.js";
import { chart, specKey } from "../../src/domain/chart.js";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import { treasuryCheck } from "../../src/services/reconcile.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { fundingWorld, payVault, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus } from "../support/http.js";
import { TOKEN } from "../support/payout-world.js";

let world: FundingWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/**
 * A reconciliation run stores what it saw: a payment into the vault that was not credited then (a
 * receipt proposal named its transaction) is an `unexpected_on_chain` item of that run for good.
 * Once the ledger has recorded the payment since (credited to the customer after the proposal was
 * rejected, or recorded by the receipt), adjusting that item books the same money a second time:
 * the treasury's ledger balance counts the payment twice.
 */
describe("an adjustment of an inflow the ledger recorded since the run is refused", () => {
  it("while a receipt proposal names the transaction, and once the deposit is credited after its rejection", async () => {
    const s = (world = await fundingWorld());
    let proposal = "";
    const { hash, item, run, adjust } = await unexplainedPayment(
      s,
      async (x) => {
        const signature = await x.signMessage({ message: depositAddressMessage({ marketplaceId: "m", customerId: "d", chainId: 31337n, address: x.address }) });
        expectStatus(
          await s.api.call("POST", "/v1/customers/d/deposit-addresses", { key: s.keys.market, body: { chain_id: 31337, address: x.address, signature } }),
          201,
        );
      },
      async (h) => {
        proposal = (await s.proposeReceipt(1_000n * USD, `Base tx ${h}`)).id;
      },
    );
    // Named by the receipt proposal: not credited; finance's run shows it as an item no ledger entry explains yet.
    expect(await s.w.db.query("select tx_hash from chain_deposits")).toEqual([]);
    expect(item.chain_amount).toBe((1_000n * USD).toString());

    // While the proposal stands, the payment is being recorded as a receipt.
    const standing = await adjust();
    expect(standing.status).toBe(400);
    expect(standing.body.code).toBe("invalid_request");
    expect(standing.body.detail).toContain(proposal);

    // Rejected: the next pass credits customer d with the payment.
    expectStatus(await s.api.call("POST", `/v1/proposals/${proposal}/reject`, { key: s.keys.finance2, body: { reason: "not a settlement" } }), 200);
    await s.w.worker().tick();
    expect(await s.w.db.query("select tx_hash, customer_id from chain_deposits")).toEqual([{ tx_hash: hash.toLowerCase(), customer_id: "d" }]);
    const before = (await treasuryCheck(s.w.db, s.w.settlements, 31337n, TOKEN)).unexplained;

    // The run's item still says unexpected; adjusting it would book the payment a second time.
    const credited = await adjust();
    expect(credited.status).toBe(400);
    expect(credited.body.code).toBe("invalid_request");
    expect(credited.body.detail).toContain(hash.toLowerCase());
    expect(await s.w.db.query("select id from proposals where kind = 'reconciliation_adjustment'")).toEqual([]);
    expect((await treasuryCheck(s.w.db, s.w.settlements, 31337n, TOKEN)).unexplained).toBe(before);
    // A note still settles it.
    expectStatus(
      await s.api.call("POST", `/v1/reconciliations/${run.id}/items/${item.id}/resolve`, {
        key: s.keys.finance,
        body: { note: "credited to customer d after the receipt proposal was rejected" },
      }),
      200,
    );
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  }, 120_000);

  it("a receipt naming a payment an adjustment recorded is refused", async () => {
    const s = (world = await fundingWorld());
    // From an address no customer registered: the scanner does not credit it.
    const { hash, item, adjust } = await unexplainedPayment(s);
    const proposed = expectStatus(await adjust(), 200).body;
    expectStatus(await s.approve(proposed.proposal_id, s.keys.finance2), 200);
    const before = (await treasuryCheck(s.w.db, s.w.settlements, 31337n, TOKEN)).unexplained;

    // The marketplace then says the payment was its settlement: the money is in the books already.
    const again = await s.receipt(1_000n * USD, `Base tx ${hash}`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("receipt_exists");
    expect(again.body.detail).toContain(item.id);
    expect((await treasuryCheck(s.w.db, s.w.settlements, 31337n, TOKEN)).unexplained).toBe(before);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  }, 120_000);

  it("a payment an adjustment recorded is not credited to a customer when its sender registers later", async () => {
    const s = (world = await fundingWorld());
    // From an address no customer registered: the scanner does not credit it; a run shows it unexplained.
    const { x, hash, item, adjust, reconcile } = await unexplainedPayment(s);
    const proposed = expectStatus(await adjust(), 200).body;
    expectStatus(await s.approve(proposed.proposal_id, s.keys.finance2), 200);
    const before = (await treasuryCheck(s.w.db, s.w.settlements, 31337n, TOKEN)).unexplained;

    // The sender then registers as customer d's deposit address, and finance runs the same blocks again.
    const signature = await x.signMessage({ message: depositAddressMessage({ marketplaceId: "m", customerId: "d", chainId: 31337n, address: x.address }) });
    expectStatus(
      await s.api.call("POST", "/v1/customers/d/deposit-addresses", { key: s.keys.market, body: { chain_id: 31337, address: x.address, signature } }),
      201,
    );
    const again = await reconcile();
    await s.w.worker().tick();
    // The payment is in the books once, through the adjustment: no customer is credited with it too.
    expect(await s.w.db.query("select tx_hash from chain_deposits")).toEqual([]);
    expect((await treasuryCheck(s.w.db, s.w.settlements, 31337n, TOKEN)).unexplained).toBe(before);
    const shown = expectStatus(await s.api.call("GET", `/v1/reconciliations/${again.id}`, { key: s.keys.finance }), 200).body.items as {
      tx_hash: string;
      status: string;
      detail: string;
    }[];
    const mine = shown.find((i) => i.tx_hash === hash.toLowerCase())!;
    expect(mine.status).toBe("matched");
    expect(mine.detail).toContain(item.id);
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  }, 120_000);
});

/**
 * An adjusted inflow is in the books for good: the scanner does not credit it to a customer who
 * registers its sender later, and later runs show it matched. An adjustment of part of it (1 unit
 * of a 1,000 USD payment) left the rest in no account, for good and out of sight: the customer was
 * never credited, no adjustment could book the rest (one per payment), and every later run said
 * `matched` for the whole payment.
 */
describe("an inflow is adjusted in full", () => {
  it("refuses an adjustment of part of an unexplained payment; the whole of it is booked once", async () => {
    const s = (world = await fundingWorld());
    const { hash, item, adjust } = await unexplainedPayment(s);

    const part = await adjust(1n);
    expect(part.status).toBe(400);
    expect(part.body).toMatchObject({ code: "invalid_request", errors: [{ path: "adjustment.amount" }] });
    expect(await s.w.db.query("select id from proposals where kind = 'reconciliation_adjustment'")).toEqual([]);

    // The whole payment, once.
    const proposed = expectStatus(await adjust(1_000n * USD), 200).body;
    expectStatus(await s.approve(proposed.proposal_id, s.keys.finance2), 200);
    const [booked] = await s.w.db.query<{ amount: string }>(
      "select e.posted_amount::text as amount from reconciliation_items i join entries e on e.transfer_id = i.adjustment_transfer_id where i.id = $1 limit 1",
      [item.id],
    );
    expect(booked!.amount).toBe((1_000n * USD).toString());
    expect((await verifyLedger(s.w.db)).violations).toEqual([]);

    // Written past the service (by hand, or by a version that took part of a payment): verify names it.
    await s.w.db.query("update reconciliation_items set chain_amount = chain_amount + 1 where id = $1", [item.id]);
    expect((await verifyLedger(s.w.db)).violations).toEqual([
      {
        check: "adjusted_inflows",
        detail: expect.stringMatching(new RegExp(`^reconciliation item ${item.id}: .* of 1000000001 was adjusted for 1000000000$`)),
      },
    ]);
    await s.w.db.query("update reconciliation_items set chain_amount = chain_amount - 1 where id = $1", [item.id]);
    await s.w.db.query(
      `insert into chain_deposits (chain_id, tx_hash, log_index, asset_id, from_address, amount, block_number, marketplace_id, customer_id, transfer_id)
       select r.chain_id, lower(i.tx_hash), i.log_index, r.asset_id, i.chain_address, i.chain_amount, i.block_number, 'm', 'd', i.adjustment_transfer_id
         from reconciliation_items i join reconciliations r on r.id = i.reconciliation_id where i.id = $1`,
      [item.id],
    );
    expect((await verifyLedger(s.w.db)).violations).toContainEqual({
      check: "adjusted_inflows",
      detail: expect.stringContaining(`reconciliation item ${item.id}: the payment in transaction ${hash.toLowerCase()}`),
    });
  }, 120_000);
});

/**
 * A payment of 1,000 USD into the vault from a fresh address (no customer registered it, unless
 * `before` registers it; `paid` runs once it is on chain, before the scanner), scanned, and a
 * finance run over its blocks showing it `unexpected_on_chain`: the run, the item, and an
 * adjustment of the item (treasury → an equity account) to propose.
 */
async function unexplainedPayment(s: FundingWorld, before?: (x: PrivateKeyAccount) => Promise<void>, paid?: (hash: string) => Promise<void>) {
  const x = privateKeyToAccount(generatePrivateKey());
  await s.w.chain.test.setBalance({ address: x.address, value: parseEther("1") });
  await before?.(x);
  const hash = await payVault(s, x, 1_000n * USD);
  await paid?.(hash);
  return { x, hash, ...(await afterPayment(s, hash)) };
}

/** After the payment `hash`: the worker's pass, then the run, the item and the adjustment to propose. */
async function afterPayment(s: FundingWorld, hash: string) {
  await s.w.worker().tick();
  const head = Number(await s.w.chain.public.getBlockNumber());
  const reconcile = async () =>
    expectStatus(
      await s.api.call("POST", "/v1/reconciliations", { key: s.keys.finance, body: { chain_id: 31337, asset: TOKEN, from_block: 0, to_block: head - 1 } }),
      201,
    ).body as { id: string };
  const run = await reconcile();
  const items = expectStatus(await s.api.call("GET", `/v1/reconciliations/${run.id}?status=unexpected_on_chain`, { key: s.keys.finance }), 200).body.items as {
    id: string;
    tx_hash: string;
    chain_amount: string;
  }[];
  const item = items.find((i) => i.tx_hash === hash.toLowerCase())!;
  const asset = (await getAssetByCode(s.w.db, TOKEN))!;
  const equity = expectStatus(
    await s.api.call("POST", "/v1/accounts", { body: { asset_id: asset.id, code: "equity", normal_side: "credit", ref: "equity:unexplained_inflows" } }),
    201,
  ).body;
  const treasury = (await ensureAccounts(s.w.db, [chart.treasury(asset.id, "31337")])).get(specKey(chart.treasury(asset.id, "31337")))!;
  const adjust = (amount = BigInt(item.chain_amount)) =>
    s.api.call("POST", `/v1/reconciliations/${run.id}/items/${item.id}/resolve`, {
      key: s.keys.finance,
      body: { note: "an inflow nobody explained", adjustment: { debit_account_id: treasury, credit_account_id: equity.id, amount: amount.toString() } },
    });
  return { run, item, adjust, reconcile };
}
