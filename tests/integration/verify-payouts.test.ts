import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { ensureAccounts } from "../../src/db/ensure-accounts.js";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import { writeTransfers } from "../../src/db/transfer-writer.js";
import { chart, specKey } from "../../src/domain/chart.js";
import { createPayout, getPayout } from "../../src/services/payouts.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";

/**
 * What the payout worker pays is the payout's row (amount, to_address): verify binds it to the
 * ledger (the hold, the settlement, the in-transit account) and to the operator's proven addresses,
 * and the row's money columns cannot be edited once written.
 */
const U = 1_000_000n;
let w: PayoutWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

let keyN = 0;
const request = (world: PayoutWorld, operatorId: string, amount: bigint) =>
  createPayout(world.db, world.settlements, {
    operatorId,
    asset: TOKEN,
    amount,
    trigger: "request",
    requestedBy: "test",
    idempotencyKey: `vp-${++keyN}`,
  }).then((r) => r.payout);

const checksOf = async (world: PayoutWorld) => (await verifyLedger(world.db)).violations;

describe("verify and the payouts", () => {
  it("refuses an edit of what a payout pays, or its deletion; payouts still move through their states, and verify holds", async () => {
    w = await payoutWorld();
    await w.operator("o", { [TOKEN]: 100n * U });
    const paid = await request(w, "o", 10n * U);
    const waiting = await request(w, "o", 5n * U);
    const thief = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    for (const [column, value] of [
      ["amount", (90n * U).toString()],
      ["to_address", thief],
      ["operator_id", "o2"],
      ["chain_id", "1"],
      ["asset_id", (await getAssetByCode(w.db, "ETH"))!.id],
    ]) {
      await expect(w.db.query(`update payouts set ${column} = $2 where id = $1`, [waiting.id, value]), column).rejects.toThrow(/cannot change/);
    }
    await expect(w.db.query("delete from payouts where id = $1", [waiting.id])).rejects.toThrow(/cannot be deleted/);
    // Its progress does change: noted, paid, confirmed.
    await w.db.query("update payouts set note = 'held back' where id = $1", [waiting.id]);
    expect(await getPayout(w.db, waiting.id)).toMatchObject({ status: "pending", note: "held back" });
    const done = await w.drive([paid.id, waiting.id]);
    expect(done).toMatchObject([
      { status: "confirmed", amount: 10n * U, toAddress: paid.toAddress },
      { status: "confirmed", amount: 5n * U, toAddress: paid.toAddress },
    ]);
    await request(w, "o", 3n * U);
    expect(await w.balance("payouts:in_transit:31337", TOKEN)).toEqual({ debits: 15n * U, credits: 15n * U, debitsPending: 0n, creditsPending: 3n * U });
    expect(await checksOf(w)).toEqual([]);
  }, 120_000);

  it("names a payout edited behind the trigger's back to pay more than its hold to an address its operator never proved; the settlement moves only what was held", async () => {
    w = await payoutWorld();
    await w.operator("o", { [TOKEN]: 100n * U });
    const p = await request(w, "o", 10n * U);
    const thief = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    // Someone who can turn triggers off.
    await w.db.query("alter table payouts disable trigger payouts_money_fixed");
    await w.db.query("update payouts set to_address = $2, amount = $3 where id = $1", [p.id, thief, (90n * U).toString()]);
    await w.db.query("alter table payouts enable trigger payouts_money_fixed");

    const before = await checksOf(w);
    expect(before.map((v) => v.check).sort()).toEqual(["payout_addresses", "payout_holds", "payouts_in_transit"]);
    expect(before.find((v) => v.check === "payout_holds")!.detail).toMatch(new RegExp(`payout ${p.id}: amount 90000000, but its hold holds 10000000`));
    expect(before.find((v) => v.check === "payout_addresses")!.detail).toMatch(new RegExp(`pays ${thief} on chain 31337, an address operator o never proved`));
    expect(before.find((v) => v.check === "payouts_in_transit")!.detail).toMatch(/payouts:in_transit:31337 .* 10000000 pending, for 90000000 in payouts/);

    const [done] = await w.drive([p.id]);
    expect(done!.status).toBe("confirmed");
    // The ledger moves what it held, whatever the row said: in transit is left balanced.
    expect(await w.balance("payouts:in_transit:31337", TOKEN)).toEqual({ debits: 10n * U, credits: 10n * U, debitsPending: 0n, creditsPending: 0n });
    const after = await checksOf(w);
    expect(after.map((v) => v.check).sort()).toEqual(["payout_addresses", "payout_holds"]);
  }, 120_000);

  it("names a confirmed payout whose settlement moved other than its hold, and an in-transit account left with a posted balance", async () => {
    w = await payoutWorld();
    await w.operator("o", { [TOKEN]: 100n * U });
    const p = await request(w, "o", 10n * U);
    const [done] = await w.drive([p.id]);
    expect(done!.status).toBe("confirmed");
    expect(await checksOf(w)).toEqual([]);

    // A move out of in transit that no payout held, named as the payout's settlement.
    const asset = (await getAssetByCode(w.db, TOKEN))!;
    const [moved] = await writeTransfers(w.db, async (tx) => {
      const ids = await ensureAccounts(tx, [chart.payoutsInTransit(asset.id, "31337"), chart.treasury(asset.id, "31337")]);
      return [
        {
          kind: "standard",
          idempotencyKey: "out-of-transit",
          legs: [
            {
              debitAccountId: ids.get(specKey(chart.payoutsInTransit(asset.id, "31337")))!,
              creditAccountId: ids.get(specKey(chart.treasury(asset.id, "31337")))!,
              amount: 80n * U,
            },
          ],
        },
      ];
    });
    expect(moved!.ok).toBe(true);
    await w.db.query("update payouts set settle_transfer_id = $2 where id = $1", [p.id, moved!.ok ? moved!.transfer.id : null]);
    const report = await checksOf(w);
    expect(report.map((v) => v.check).sort()).toEqual(["payout_settlements", "payouts_in_transit"]);
    expect(report.find((v) => v.check === "payout_settlements")!.detail).toMatch(
      new RegExp(`payout ${p.id} is confirmed, but its hold of 10000000 was posted as 10000000 and its settlement moved 80000000`),
    );
    expect(report.find((v) => v.check === "payouts_in_transit")!.detail).toMatch(/payouts:in_transit:31337 .*posted balance -80000000 \(must be 0\)/);
  }, 120_000);
});
