import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { getAsset } from "../db/queries/assets.js";
import { convertibleDeposits, type ConvertibleDepositRow } from "../db/queries/conversion-reports.js";
import { insertConversions, lockConversionPair, postedNets } from "../db/queries/conversions.js";
import { writeTransfers } from "../db/transfer-writer.js";
import type { Asset } from "../domain/assets.js";
import { chart, specKey, type AccountSpec } from "../domain/chart.js";
import { convertAmount, formatRate, revaluationDelta } from "../domain/conversion.js";
import { uuidv7 } from "../domain/ids.js";
import type { LegInput } from "../domain/transfers.js";
import type { Logger } from "../log.js";
import { chooseRate, type ChosenRate } from "./rates.js";

/** Customer balances converted per pass. */
const BATCH = 100;

/**
 * Money a customer paid in another asset than its marketplace's pricing currency (an on-chain
 * deposit of a stablecoin, a receipt finance recorded) is converted into the pricing currency when
 * it has arrived (docs/settlement.md, "Customer funds"), at the rate of the moment, by the same
 * rules as payouts: rounded down for the customer, the remainder left in its balance in the asset
 * paid, the platform's position marked to the rate. Only money received is converted (never a
 * deposit a marketplace merely claimed), and what was converted counts as received in the pricing
 * currency for the operators it pays. Without a usable rate the money waits in the asset paid.
 */
export async function convertDeposits(db: Database, settlements: Settlements, log: Logger): Promise<number> {
  let converted = 0;
  const now = db.clock.now();
  for (const row of await convertibleDeposits(db, BATCH)) {
    const [from, to] = [(await getAsset(db, row.asset_id))!, (await getAsset(db, row.pricing_asset_id))!];
    const choice = await chooseRate(db, settlements, from, to, now);
    if (!choice.ok) {
      log.warn({ worker: "payouts", marketplace: row.marketplace_id, customer: row.customer_id, reason: choice.reason }, "customer funds wait to be converted");
      continue;
    }
    if (await convertDeposit(db, row, from, to, choice.chosen)) converted++;
  }
  return converted;
}

/** Converts one customer's received balance in `from` into `to`; false when there was nothing to convert after all. */
export async function convertDeposit(db: Database, row: ConvertibleDepositRow, from: Asset, to: Asset, chosen: ChosenRate): Promise<boolean> {
  const amount = BigInt(row.convertible);
  const { to: out, used, remainder } = convertAmount(amount, from.scale, to.scale, chosen.rate);
  if (out === 0n) return false;
  const key = `deposit-conversion:${row.account_id}:${chosen.rateId}:${amount}`;
  let revaluation = 0n;
  const [result] = await writeTransfers(
    db,
    async (tx) => {
      await lockConversionPair(tx, to.id, from.id);
      const payer: AccountSpec = chart.customer(from.id, row.marketplace_id, row.customer_id, row.billing === "prepaid");
      const payee: AccountSpec = chart.customer(to.id, row.marketplace_id, row.customer_id, row.billing === "prepaid");
      const position = chart.conversion(from.id, to.code);
      const book = chart.conversion(to.id, from.code);
      const gains = chart.fxGainsLosses(to.id);
      const ids = await ensureAccounts(tx, [payer, payee, position, book, gains]);
      const id = (s: AccountSpec) => ids.get(specKey(s))!;
      const nets = await postedNets(tx, [id(position), id(book)]);
      revaluation = revaluationDelta((nets.get(id(position)) ?? 0n) + used, from.scale, (nets.get(id(book)) ?? 0n) - out, to.scale, chosen.rate);
      const legs: LegInput[] = [
        { debitAccountId: id(payer), creditAccountId: id(position), amount: used },
        { debitAccountId: id(book), creditAccountId: id(payee), amount: out },
      ];
      if (revaluation > 0n) legs.push({ debitAccountId: id(gains), creditAccountId: id(book), amount: revaluation });
      if (revaluation < 0n) legs.push({ debitAccountId: id(book), creditAccountId: id(gains), amount: -revaluation });
      const metadata = {
        conversion: { customer_id: row.customer_id, from: from.code, to: to.code, used: used.toString(), remainder: remainder.toString(), to_amount: out.toString() },
        rate: { value: formatRate(chosen.rate), rate_id: chosen.rateId, source: chosen.source, observed_at: chosen.observedAt.toISOString() },
      };
      return [{ kind: "standard", idempotencyKey: key, metadata, legs }];
    },
    {
      afterWrite: async (tx, [outcome], at) => {
        if (outcome?.kind !== "created") return;
        await recordConversion(tx, { row, from, to, chosen, amount, used, remainder, out, revaluation, transferId: outcome.transfer.id, at });
      },
    },
  );
  return result!.ok && !result!.replayed;
}

async function recordConversion(
  tx: Queryable,
  c: { row: ConvertibleDepositRow; from: Asset; to: Asset; chosen: ChosenRate; amount: bigint; used: bigint; remainder: bigint; out: bigint; revaluation: bigint; transferId: string; at: Date },
): Promise<void> {
  await insertConversions(tx, [
    {
      id: uuidv7(c.at.getTime()),
      transferId: c.transferId,
      kind: "deposit",
      payoutId: null,
      childPayoutId: null,
      operatorId: null,
      marketplaceId: c.row.marketplace_id,
      customerId: c.row.customer_id,
      fromAssetId: c.from.id,
      toAssetId: c.to.id,
      bps: 10_000,
      part: c.amount,
      used: c.used,
      remainder: c.remainder,
      toAmount: c.out,
      rateNum: c.chosen.rate.num,
      rateDen: c.chosen.rate.den,
      rateId: c.chosen.rateId,
      revaluation: c.revaluation,
      convertedAt: c.at,
    },
  ]);
}
